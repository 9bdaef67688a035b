#include "model/json_fields.h"

#include <cmath>

namespace mfu::model {
namespace {
constexpr int64_t kMaxDimension = int64_t{1} << 40;

// True for finite doubles with no fractional part within the dimension range.
bool IsIntegralInRange(double v) {
  return std::isfinite(v) && std::fabs(v) <= static_cast<double>(kMaxDimension) &&
         !(std::fabs(v - std::trunc(v)) > 0.0);
}

std::string Shown(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}
}  // namespace

bool JsonFields::Has(std::string_view key) const {
  auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

Status JsonFields::Error(std::string_view key, std::string_view what) const {
  return InvalidArgumentError(origin_ + ": key '" + std::string(key) + "' " + std::string(what));
}

StatusOr<int64_t> JsonFields::PositiveInt(std::string_view key) const {
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null())
    return Error(key, "is missing");
  // JSON writers sometimes emit 4096.0; accept integral floats.
  if (it->is_number_float()) {
    double v = it->get<double>();
    if (v >= 1 && IsIntegralInRange(v))
      return static_cast<int64_t>(v);
    return Error(key, "must be a positive integer, got " + Shown(*it));
  }
  if (it->is_number_unsigned() || it->is_number_integer()) {
    if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(kMaxDimension)) {
      return Error(key, "is absurdly large: " + Shown(*it));
    }
    int64_t v = it->get<int64_t>();
    if (v < 1)
      return Error(key, "must be a positive integer, got " + Shown(*it));
    if (v > kMaxDimension)
      return Error(key, "is absurdly large: " + Shown(*it));
    return v;
  }
  return Error(key, "must be a positive integer, got " + Shown(*it));
}

StatusOr<std::optional<int64_t>> JsonFields::OptionalInt(std::string_view key, int64_t min_value) const {
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null())
    return std::optional<int64_t>();
  bool integral = it->is_number_integer() || it->is_number_unsigned() ||
                  (it->is_number_float() && IsIntegralInRange(it->get<double>()));
  if (!integral)
    return Error(key, "must be an integer, got " + Shown(*it));
  if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(kMaxDimension)) {
    return Error(key, "is absurdly large: " + Shown(*it));
  }
  int64_t v = it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>();
  if (v < min_value)
    return Error(key, "must be >= " + std::to_string(min_value) + ", got " + Shown(*it));
  if (v > kMaxDimension)
    return Error(key, "is absurdly large: " + Shown(*it));
  return std::optional<int64_t>(v);
}

StatusOr<bool> JsonFields::Bool(std::string_view key, bool default_value) const {
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null())
    return default_value;
  if (!it->is_boolean())
    return Error(key, "must be true or false, got " + Shown(*it));
  return it->get<bool>();
}

StatusOr<std::optional<double>> JsonFields::OptionalProbability(std::string_view key) const {
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null())
    return std::optional<double>();
  if (!it->is_number())
    return Error(key, "must be a number in [0, 1], got " + Shown(*it));
  const double p = it->get<double>();
  if (!(p >= 0 && p <= 1))
    return Error(key, "must be a number in [0, 1], got " + Shown(*it));
  return std::optional<double>(p);
}

StatusOr<std::optional<std::string>> JsonFields::OptionalString(std::string_view key) const {
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null())
    return std::optional<std::string>();
  if (!it->is_string())
    return Error(key, "must be a string, got " + Shown(*it));
  return std::optional<std::string>(it->get<std::string>());
}

}  // namespace mfu::model
