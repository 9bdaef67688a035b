#pragma once

// Small string helpers shared by every module.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/status.h"

namespace mfu::base {

std::string ToLower(std::string_view s);
std::string_view Trim(std::string_view s);
std::vector<std::string> Split(std::string_view s, char sep);
bool StartsWith(std::string_view s, std::string_view prefix);
// StartsWith ignoring ASCII case of `s`; `prefix_lower` is lower case.
bool StartsWithNoCase(std::string_view s, std::string_view prefix_lower);

// Levenshtein distance, for "did you mean" suggestions (ninja's
// SpellcheckString).
int EditDistance(std::string_view a, std::string_view b);

// Returns the candidate closest to `word` when it is close enough to be a
// plausible typo, else "".
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

// Joins `items` with `sep`.
std::string Join(const std::vector<std::string>& items, std::string_view sep);

// Parses a positive count with an optional SI suffix (k, M, G/B, T, P; case-
// insensitive), e.g. "15T" -> 1.5e13, "8k" -> 8000, "2.5e6". `what` names the
// flag or field for the error message. Rejects NaN, infinities, negatives.
StatusOr<double> ParseScaledNumber(std::string_view text, std::string_view what);

// Formats `value` with an SI suffix and `digits` significant digits, e.g.
// 5.79e10 -> "57.9G".
std::string FormatSi(double value, int digits = 3);

// The shortest text that reads back as `value` (std::to_chars), e.g. 0.75.
std::string FormatNumber(double value);
// Formats an integer with thousands separators: 8030261248 -> "8,030,261,248".
std::string FormatThousands(double value);

}  // namespace mfu::base
