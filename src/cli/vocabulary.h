#pragma once

// The CLI's one flag vocabulary: every flag of every command, by concept, with
// its canonical spelling, its short option, the hidden old spellings still
// accepted for one release, the kind of value it takes and the allowed range.
// The table is what docs/cli.md's vocabulary table documents; main.cc checks
// every value against it before CLI11 sees the command line, so a zero,
// negative, NaN, infinite, empty or absurd number never reaches a command
// (no "0 means not given").

#include <string>
#include <string_view>
#include <vector>

namespace mfu::cli {

enum class ValueKind {
  kSwitch,       // no value
  kText,         // a non-empty string (names, paths, enum values checked later)
  kInteger,      // an integer in [min, max]
  kNumber,       // a finite number in [min, max] (max_open: below max)
  kPositive,     // a finite number > 0, <= max
  kScaled,       // a finite number > 0 with an optional k/M/G/B/T/P suffix, <= max
  kIntegerList,  // comma-separated integers, each in [min, max]
  kTextList,     // comma-separated non-empty strings
};

struct FlagSpec {
  const char* meaning;     // "global batch (sequences per optimizer step)"
  const char* flag;        // canonical, "--global-batch"
  const char* short_flag;  // "-b" or ""
  const char* aliases;     // hidden old spellings, space-separated: "--gbs --batch"
  const char* commands;    // the commands it belongs to, space-separated ("hw list"-style paths as "hw")
  ValueKind kind;
  double min = 0;
  double max = 0;
  bool max_open = false;  // kNumber: value < max
};

// Every row, in documentation order.
const std::vector<FlagSpec>& Vocabulary();

// The row for `name` (a canonical flag, short option or alias, dashes or
// underscores) in `command`; nullptr if the command has no such flag.
const FlagSpec* FindFlag(std::string_view command, std::string_view name);

// "a positive integer", "an integer in [0, 3]", "a finite number >= 0", ...
std::string DescribeRange(const FlagSpec& spec);

// "" when `value` is acceptable for `spec`, else the one-line error
// "--global-batch must be a positive integer (got 0)".
std::string CheckValue(const FlagSpec& spec, std::string_view value);

// True if `command` is among the space-separated `commands`.
bool InCommands(std::string_view commands, std::string_view command);

}  // namespace mfu::cli
