// Wrapping of text lines (report/table.h): the width rules every renderer's
// label lines and notes follow.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/table.h"

namespace mfu::report {
namespace {

TEST(WrapText, BreaksAtSpacesWithinTheWidth) {
  const std::vector<std::string> lines = WrapText("one two three four five", 9);
  EXPECT_EQ(lines, (std::vector<std::string>{"one two", "three", "four five"}));
}

TEST(WrapText, SplitsAWordLongerThanTheWidth) {
  EXPECT_EQ(WrapText("abcdefghij", 4), (std::vector<std::string>{"abcd", "efgh", "ij"}));
}

TEST(WrapText, NoLimitIsOneLine) {
  EXPECT_EQ(WrapText("a b c", 0), (std::vector<std::string>{"a b c"}));
}

TEST(WrapText, KeepsALibraryFieldNameOnOneLine) {
  // "parameter 'global_batch'" is rewritten by the CLI into --global-batch;
  // broken across lines it could not be.
  const std::vector<std::string> lines = WrapText("give parameter 'global_batch' for the job", 26);
  ASSERT_GE(lines.size(), 2u);
  bool whole = false;
  for (const std::string& line : lines)
    whole = whole || line.find("parameter 'global_batch'") != std::string::npos;
  EXPECT_TRUE(whole) << lines[0] << " | " << lines[1];
}

TEST(LabelLine, IndentsContinuationLinesUnderTheText) {
  // 12-column label, 40 columns: 28 for the text.
  const std::string out = LabelLine("setup", "sequence 8192, bf16 GEMMs, FLOPs convention megatron", 40);
  EXPECT_EQ(out,
            "setup       sequence 8192, bf16 GEMMs,\n"
            "            FLOPs convention megatron\n");
}

TEST(LabelLine, EveryLineFitsTheWidth) {
  const std::string text(300, 'x');
  const std::string out = LabelLine("framework", text + " " + text, 80);
  size_t start = 0;
  while (start < out.size()) {
    const size_t end = out.find('\n', start);
    EXPECT_LE(end - start, 80u);
    start = end + 1;
  }
}

TEST(WrapParagraph, EndsEveryLineWithANewline) {
  EXPECT_EQ(WrapParagraph("at batch 433 (KV capacity): 2184 output tokens/s", 24),
            "at batch 433 (KV\ncapacity): 2184 output\ntokens/s\n");
}

}  // namespace
}  // namespace mfu::report
