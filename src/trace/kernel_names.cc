// Readable kernel names (mfu/trace_kernel_names.h).

#include <algorithm>
#include <cctype>
#include <map>

#include "mfu/trace_kernel_names.h"

namespace mfu {
namespace {

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// The index just past the bracket that closes the one at `open` (`name`'s
// size when it never closes). Inside a template list both <> and () nest
// ("->" closes nothing); inside a parameter list only () does.
size_t SkipBracketed(std::string_view name, size_t open) {
  const bool angle = name[open] == '<';
  int depth = 0;
  for (size_t i = open; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '(' || (angle && c == '<')) {
      ++depth;
    } else if (c == ')' || (angle && c == '>' && (i == 0 || name[i - 1] != '-'))) {
      if (--depth == 0)
        return i + 1;
    }
  }
  return name.size();
}

std::string StripSignature(std::string_view name) {
  if (name.starts_with("void "))
    name.remove_prefix(5);
  static constexpr std::string_view kAnonymous = "(anonymous namespace)::";
  std::string out;
  for (size_t i = 0; i < name.size();) {
    if (name.substr(i).starts_with(kAnonymous)) {
      i += kAnonymous.size();
      continue;
    }
    const char c = name[i];
    const bool after_name = i > 0 && (IsIdentChar(name[i - 1]) || name[i - 1] == '>');
    if (c == '<' && i > 0 && IsIdentChar(name[i - 1]) && !out.ends_with("operator")) {
      out += "<...>";
      i = SkipBracketed(name, i);
    } else if (c == '(' && after_name) {
      i = SkipBracketed(name, i);  // a parameter list: dropped
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

std::string Cut(std::string s, size_t max_len) {
  if (max_len == 0 || s.size() <= max_len)
    return s;
  max_len = std::max<size_t>(max_len, 8);
  return s.substr(0, max_len - 3) + "...";
}

}  // namespace

std::string ShortKernelName(std::string_view name, size_t max_len) {
  return Cut(StripSignature(name), max_len);
}

std::vector<std::string> ShortKernelNames(std::span<const std::string> names, size_t max_len) {
  std::vector<std::string> shorts;
  std::map<std::string, std::vector<std::string>> originals;  // short -> distinct names, in order
  for (const std::string& name : names) {
    shorts.push_back(ShortKernelName(name, max_len));
    auto& list = originals[shorts.back()];
    if (std::find(list.begin(), list.end(), name) == list.end())
      list.push_back(name);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const auto& list = originals[shorts[i]];
    if (list.size() < 2)
      continue;
    const size_t n = static_cast<size_t>(std::find(list.begin(), list.end(), names[i]) - list.begin()) + 1;
    const std::string suffix = " [" + std::to_string(n) + "]";
    const size_t room = max_len == 0 ? 0 : (max_len > suffix.size() + 8 ? max_len - suffix.size() : 8);
    shorts[i] = ShortKernelName(names[i], room) + suffix;
  }
  return shorts;
}

}  // namespace mfu
