#pragma once

// A Python dict literal as the HF Trainer prints its logs (`str(dict)`:
// single quotes, nan, inf, True/False, None, negative exponents), read
// without evaluation. Nested lists/dicts are skipped, not kept.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mfu::log_internal {

struct PyValue {
  enum class Kind { kNumber, kString, kNone, kOther } kind = Kind::kOther;
  double number = 0;  // kNumber (True = 1, False = 0; nan, inf as such)
  std::string text;   // kString
};

struct PyItem {
  std::string key;
  PyValue value;
};

// Parses the dict that starts at `text[0] == '{'`; `consumed` gets the
// length through the closing '}'. nullopt when malformed or cut short (a
// partial line), or nested deeper than 32.
std::optional<std::vector<PyItem>> ParsePyDict(std::string_view text, size_t* consumed = nullptr);

// The number under `key`, nullopt when absent or not a number.
std::optional<double> PyNumber(const std::vector<PyItem>& items, std::string_view key);
bool PyHas(const std::vector<PyItem>& items, std::string_view key);

}  // namespace mfu::log_internal
