#pragma once

// Typed, located access to the keys of a JSON object (a config.json), so that
// every error names the file and the key: "llama.json: key 'hidden_size' must
// be a positive integer, got \"4096\"".

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "mfu/status.h"

namespace mfu::model {

class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string origin) : object_(object), origin_(std::move(origin)) {}

  const std::string& origin() const { return origin_; }
  bool Has(std::string_view key) const;  // present and not null

  // Required positive integer (1 .. 2^40). kInvalidArgument when missing,
  // null, not an integer, or out of range.
  StatusOr<int64_t> PositiveInt(std::string_view key) const;
  // Optional integer; nullopt when missing or null. `min_value` is inclusive.
  StatusOr<std::optional<int64_t>> OptionalInt(std::string_view key, int64_t min_value = 0) const;
  // Optional boolean with a default.
  StatusOr<bool> Bool(std::string_view key, bool default_value) const;
  // Optional number in [0, 1]; nullopt when missing or null.
  StatusOr<std::optional<double>> OptionalProbability(std::string_view key) const;
  // Optional string; nullopt when missing or null.
  StatusOr<std::optional<std::string>> OptionalString(std::string_view key) const;

  Status Error(std::string_view key, std::string_view what) const;

 private:
  const nlohmann::json& object_;
  std::string origin_;
};

}  // namespace mfu::model
