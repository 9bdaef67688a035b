// DType names, spellings and sizes (declared in mfu/hwdb.h).

#include <array>
#include <string>
#include <string_view>

#include "base/strings.h"
#include "mfu/hwdb.h"

namespace mfu {

namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  double bytes;
};

constexpr std::array<DTypeInfo, kNumDTypes> kDTypes = {{
    {DType::kFp64, "fp64", 8},
    {DType::kFp64Tensor, "fp64_tensor", 8},
    {DType::kFp32, "fp32", 4},
    {DType::kTf32, "tf32", 4},  // stored as fp32; only the math is narrower
    {DType::kBf16, "bf16", 2},
    {DType::kFp16, "fp16", 2},
    {DType::kFp8, "fp8", 1},
    {DType::kFp6, "fp6", 0.75},
    {DType::kFp4, "fp4", 0.5},
    {DType::kInt8, "int8", 1},
}};

// DTypeName and DTypeBytes index kDTypes by the enum value.
constexpr bool TableFollowsEnumOrder() {
  for (size_t i = 0; i < kDTypes.size(); ++i) {
    if (static_cast<size_t>(kDTypes[i].dtype) != i)
      return false;
  }
  return true;
}
static_assert(TableFollowsEnumOrder());

struct Spelling {
  std::string_view text;
  DType dtype;
};

// Lowercase, with '-' already turned into '_'. Covers PyTorch dtype names
// ("bfloat16", "float8_e4m3fn") and Kineto's "Input type" strings
// ("c10::BFloat16", "c10::Half", "float"), whose prefixes are stripped first.
constexpr Spelling kSpellings[] = {
    {"double", DType::kFp64},
    {"float64", DType::kFp64},
    {"f64", DType::kFp64},
    {"fp64_tensor", DType::kFp64Tensor},
    {"float", DType::kFp32},
    {"float32", DType::kFp32},
    {"f32", DType::kFp32},
    {"tensorfloat32", DType::kTf32},
    {"bfloat16", DType::kBf16},
    {"float16", DType::kFp16},
    {"half", DType::kFp16},
    {"f16", DType::kFp16},
    {"float8", DType::kFp8},
    {"fp8_e4m3", DType::kFp8},
    {"fp8_e5m2", DType::kFp8},
    {"e4m3", DType::kFp8},
    {"e5m2", DType::kFp8},
    {"float8_e4m3fn", DType::kFp8},
    {"float8_e5m2", DType::kFp8},
    {"float8_e4m3fnuz", DType::kFp8},
    {"float8_e5m2fnuz", DType::kFp8},
    {"mxfp8", DType::kFp8},
    {"mxfp6", DType::kFp6},
    {"mxfp4", DType::kFp4},
    {"nvfp4", DType::kFp4},
    {"i8", DType::kInt8},
};

}  // namespace

const char* DTypeName(DType dtype) {
  return kDTypes[static_cast<size_t>(dtype)].name;
}

double DTypeBytes(DType dtype) {
  return kDTypes[static_cast<size_t>(dtype)].bytes;
}

StatusOr<DType> ParseStorageDType(std::string_view text) {
  const std::string t = base::ToLower(base::Trim(text));
  if (t == "int4" || t == "nvfp4" || t == "mxfp4")
    return DType::kFp4;
  return ParseDType(t);
}

std::string StorageDTypeName(std::string_view text) {
  const std::string t = base::ToLower(base::Trim(text));
  if (t == "int4" || t == "nvfp4" || t == "mxfp4")
    return t;
  StatusOr<DType> parsed = ParseDType(t);
  return parsed.ok() ? DTypeName(*parsed) : "";
}

StatusOr<DType> ParseDType(std::string_view text) {
  std::string t = base::ToLower(base::Trim(text));
  for (std::string_view prefix : {"torch.", "c10::"}) {
    if (base::StartsWith(t, prefix))
      t.erase(0, prefix.size());
  }
  for (char& c : t) {
    if (c == '-')
      c = '_';
  }
  for (const DTypeInfo& info : kDTypes) {
    if (t == info.name)
      return info.dtype;
  }
  for (const Spelling& s : kSpellings) {
    if (t == s.text)
      return s.dtype;
  }
  std::vector<std::string> names;
  for (const DTypeInfo& info : kDTypes)
    names.emplace_back(info.name);
  return InvalidArgumentError("unknown dtype '" + std::string(text) + "' (accepted: " + base::Join(names, ", ") + ")");
}

}  // namespace mfu
