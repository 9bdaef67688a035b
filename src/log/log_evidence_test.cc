// The evidence pass of AnalyzeTrainingLogFiles on a log of several 4 MiB
// chunks: chunks before the next wanted line are only counted (the word-wise
// newline count), so the line numbers after them must still land on the
// right lines, at and across chunk boundaries.

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "log/analysis_test_util.h"
#include "mfu/file_system.h"
#include "testing/log_gen.h"

namespace mfu {
namespace {

// Line `n` (1-based) of `text`, as AttachEvidence shows it: no ANSI codes
// here, no surrounding blanks, cut to 237 characters and "..." past 240.
std::string ExpectedEvidence(std::string_view text, int64_t n) {
  size_t at = 0;
  for (int64_t line = 1; line < n; ++line)
    at = text.find('\n', at) + 1;
  std::string s(text.substr(at, text.find('\n', at) - at));
  return s.size() > 240 ? s.substr(0, 237) + "..." : s;
}

TEST(LogEvidence, LinesFoundPastSkippedChunks) {
  // Three copies of a 60,000-line generated Megatron-LM log (about 7.7 MB
  // each): each later copy starts again at iteration 1, a restart whose
  // evidence is the copy's first iteration line, line 25 of the copy
  // (one iteration line per 25 lines, log_gen.h).
  testing::LogGenOptions options;
  options.lines = 60000;
  const std::string one = testing::GenerateMixedLogText(options);
  ASSERT_GT(one.size(), size_t{4} << 20);
  const std::string text = one + one + one;
  InMemoryFileSystem fs;
  fs.AddFile("big.log", text);
  auto a = AnalyzeTrainingLogFiles(fs, {"big.log"}, {}, log_test::Db(), {});
  ASSERT_TRUE(a.ok()) << a.status().message();
  std::vector<const LogFinding*> restarts;
  for (const LogFinding& f : a->findings) {
    if (f.kind == "restart")
      restarts.push_back(&f);
  }
  ASSERT_EQ(restarts.size(), 2u);
  EXPECT_EQ(restarts[0]->line, 60025);
  EXPECT_EQ(restarts[1]->line, 120025);
  for (const LogFinding* f : restarts) {
    SCOPED_TRACE(f->line);
    EXPECT_EQ(f->evidence, ExpectedEvidence(text, f->line));
    EXPECT_NE(f->evidence.find("iteration        1/"), std::string::npos) << f->evidence;
  }
}

}  // namespace
}  // namespace mfu
