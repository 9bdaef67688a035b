#include "log/hf_pydict.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace mfu::log_internal {
namespace {

class PyReader {
 public:
  explicit PyReader(std::string_view s) : s_(s) {}
  size_t pos() const { return i_; }

  void Blanks() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) {
      ++i_;
    }
  }
  bool Eat(char c) {
    Blanks();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }

  // 'text' or "text" with backslash escapes kept verbatim but one level.
  std::optional<std::string> String() {
    Blanks();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) {
      return std::nullopt;
    }
    char quote = s_[i_++];
    std::string out;
    while (i_ < s_.size() && s_[i_] != quote) {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
        ++i_;
      }
      out.push_back(s_[i_++]);
    }
    if (i_ >= s_.size()) {
      return std::nullopt;
    }
    ++i_;
    return out;
  }

  std::optional<PyValue> Value(int depth) {
    Blanks();
    if (i_ >= s_.size()) {
      return std::nullopt;
    }
    PyValue v;
    char c = s_[i_];
    if (c == '\'' || c == '"') {
      std::optional<std::string> str = String();
      if (!str) {
        return std::nullopt;
      }
      v.kind = PyValue::Kind::kString;
      v.text = std::move(*str);
      return v;
    }
    if (c == '{' || c == '[' || c == '(') {
      if (depth >= 32 || !SkipNested(depth)) {
        return std::nullopt;
      }
      return v;  // kOther
    }
    size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']' && s_[i_] != ')' && s_[i_] != ' ') {
      ++i_;
    }
    std::string_view word = s_.substr(start, i_ - start);
    return Word(word);
  }

 private:
  static std::optional<PyValue> Word(std::string_view word) {
    PyValue v;
    v.kind = PyValue::Kind::kNumber;
    bool negative = !word.empty() && word[0] == '-';
    std::string_view mag = negative ? word.substr(1) : word;
    if (word == "True" || word == "False") {
      v.number = word == "True" ? 1 : 0;
    } else if (word == "None") {
      v.kind = PyValue::Kind::kNone;
    } else if (mag == "nan") {
      v.number = std::numeric_limits<double>::quiet_NaN();
    } else if (mag == "inf") {
      v.number = negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    } else {
      const char* end = word.data() + word.size();
      auto [ptr, ec] = std::from_chars(word.data(), end, v.number);
      if (ec != std::errc() || ptr != end || word.empty()) {
        return std::nullopt;
      }
    }
    return v;
  }

  bool SkipNested(int depth) {
    char open = s_[i_++];
    char close = open == '{' ? '}' : (open == '[' ? ']' : ')');
    for (;;) {
      Blanks();
      if (i_ >= s_.size()) {
        return false;
      }
      if (s_[i_] == close) {
        ++i_;
        return true;
      }
      if (open == '{') {
        if (!Value(depth + 1) || !Eat(':')) {
          return false;
        }
      }
      if (!Value(depth + 1)) {
        return false;
      }
      Blanks();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
      }
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

std::optional<std::vector<PyItem>> ParsePyDict(std::string_view text, size_t* consumed) {
  PyReader r(text);
  if (!r.Eat('{')) {
    return std::nullopt;
  }
  std::vector<PyItem> items;
  if (r.Eat('}')) {
    if (consumed != nullptr) {
      *consumed = r.pos();
    }
    return items;
  }
  for (;;) {
    std::optional<std::string> key = r.String();
    if (!key || !r.Eat(':')) {
      return std::nullopt;
    }
    std::optional<PyValue> value = r.Value(1);
    if (!value) {
      return std::nullopt;
    }
    items.push_back(PyItem{std::move(*key), std::move(*value)});
    if (r.Eat('}')) {
      break;
    }
    if (!r.Eat(',')) {
      return std::nullopt;
    }
  }
  if (consumed != nullptr) {
    *consumed = r.pos();
  }
  return items;
}

std::optional<double> PyNumber(const std::vector<PyItem>& items, std::string_view key) {
  for (const PyItem& item : items) {
    if (item.key == key) {
      if (item.value.kind == PyValue::Kind::kNumber) {
        return item.value.number;
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

bool PyHas(const std::vector<PyItem>& items, std::string_view key) {
  for (const PyItem& item : items) {
    if (item.key == key) {
      return true;
    }
  }
  return false;
}

}  // namespace mfu::log_internal
