// Every bracket finder this CPU can run against a byte-at-a-time reference
// (a backslash escapes the next byte, an unescaped quote toggles the string
// state, brackets count outside strings even when escaped, which only valid
// JSON could rule out: the rules of simdjson's stage 1), on random JSON-like bytes and on
// block-boundary cases, with the state carried across calls.
#include "trace/bracket_finder.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace mfu::trace {
namespace {

std::vector<uint32_t> Reference(const std::string& s) {
  std::vector<uint32_t> out;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool bracket = c == '{' || c == '}' || c == '[' || c == ']';
    if (escaped) {  // an escaped quote is text; an escaped bracket still counts
      escaped = false;
      if (!in_string && bracket)
        out.push_back(static_cast<uint32_t>(i));
      continue;
    }
    if (c == '\\') {
      escaped = true;
      continue;
    }
    if (c == '"') {
      in_string = !in_string;
      continue;
    }
    if (!in_string && bracket)
      out.push_back(static_cast<uint32_t>(i));
  }
  return out;
}

// Runs `find` over s in calls of `piece` bytes (a multiple of 64).
std::vector<uint32_t> FindAll(BracketFinder find, const std::string& s, size_t piece) {
  std::vector<uint32_t> out, buffer(piece);
  BlockState st;
  for (size_t at = 0; at < s.size(); at += piece) {
    const size_t n = std::min(piece, s.size() - at);
    const size_t count = find(s.data() + at, n, buffer.data(), st);
    for (size_t k = 0; k < count; ++k)
      out.push_back(static_cast<uint32_t>(at) + buffer[k]);
  }
  return out;
}

TEST(BracketFinder, EveryImplementationMatchesTheReference) {
  const std::vector<BracketFinderImpl> impls = AvailableBracketFinders();
  ASSERT_GE(impls.size(), 1u);
  std::mt19937_64 rng(3);
  const std::string alphabet = "{}[]\"\\\\\\ a:,0";
  for (int round = 0; round < 300; ++round) {
    std::string s(64 * (1 + rng() % 40), ' ');
    for (char& c : s)
      c = alphabet[rng() % alphabet.size()];
    const std::vector<uint32_t> expected = Reference(s);
    for (const auto& impl : impls) {
      for (size_t piece : {size_t{64}, size_t{128}, s.size()})
        ASSERT_EQ(FindAll(impl.find, s, piece), expected) << impl.name << " round " << round << " piece " << piece;
    }
  }
}

TEST(BracketFinder, RunsOfBackslashesAcrossBlockBoundaries) {
  for (size_t run = 1; run <= 130; ++run) {
    for (size_t start : {size_t{0}, size_t{1}, size_t{60}, size_t{63}, size_t{64}, size_t{100}}) {
      std::string s(256, 'x');
      s[0] = '"';
      for (size_t i = 0; i < run && start + 1 + i < s.size(); ++i)
        s[start + 1 + i] = '\\';
      if (start + 1 + run < s.size())
        s[start + 1 + run] = '"';
      s[250] = '{';
      s[251] = '"';
      s[252] = '[';
      const std::vector<uint32_t> expected = Reference(s);
      for (const auto& impl : AvailableBracketFinders())
        ASSERT_EQ(FindAll(impl.find, s, 64), expected) << impl.name << " run " << run << " start " << start;
    }
  }
}

TEST(BracketFinder, BestIsOneOfTheAvailable) {
  bool found = false;
  for (const auto& impl : AvailableBracketFinders())
    found |= impl.find == BestBracketFinder();
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace mfu::trace
