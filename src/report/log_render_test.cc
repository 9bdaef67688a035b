// The streamed JSON and CSV of `mfu log` (WriteLogJson, WriteLogStepsCsv):
// parsed back, every value is the one put in (NaN as null / an empty
// field), the document is exactly what nlohmann::json prints for the same
// tree (re-dumping the parse gives the same bytes: sorted keys, its number
// format), and the stream receives it in pieces, never the whole document.

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "mfu/report_log.h"

namespace mfu {
namespace {

using nlohmann::json;

// Counts what a stream hands over and keeps it; the largest single write
// shows whether the writer held the document whole.
class RecordingBuf final : public std::streambuf {
 public:
  std::string text;
  size_t writes = 0;
  size_t largest_write = 0;

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    ++writes;
    largest_write = std::max(largest_write, static_cast<size_t>(n));
    text.append(s, static_cast<size_t>(n));
    return n;
  }
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof()))
      text.push_back(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }
};

// Values whose printing differs between formatters: integral doubles
// ("1024.0"), small and large exponents, negative zero, the extremes.
const std::vector<double> kNumbers = {0.1,  1024.0,        1e-5,    1e15,   1e16,
                                      -0.0, 123456789.125, 0.39731, 5e-324, std::numeric_limits<double>::max()};

LogAnalysis Sample(size_t steps) {
  LogAnalysis a;
  a.timeline.origin = "run \"a\".log";
  a.timeline.format = LogFormat::kTorchtitan;
  a.timeline.attempts = 2;
  a.throughput_source = "tokens_per_s_per_gpu";
  for (size_t i = 0; i < steps; ++i) {
    LogStep s;
    s.step = static_cast<int64_t>(i) + 1;
    s.line = 3 * static_cast<int64_t>(i) + 7;
    s.attempt = i < steps / 2 ? 0 : 1;
    s.validation = i % 5 == 4;
    s.steps_covered = 10;
    s.time_s = 1768548744.0 + static_cast<double>(i);
    s.step_time_s = 1.2345;
    s.tokens_per_s_per_gpu = kNumbers[i % kNumbers.size()];
    s.loss = i % 3 == 0 ? kLogNaN : 3.25;                    // NaN -> null
    s.logged_mfu = std::numeric_limits<double>::infinity();  // not finite -> null
    s.mfu = 0.3973;
    s.skipped_iterations = static_cast<int32_t>(i % 2);
    a.timeline.steps.push_back(s);
  }
  LogFinding f;
  f.kind = "restart";
  f.step = 5;
  f.line = 22;
  f.attempt = 1;
  f.origin = "run \"a\".log";
  f.message = "quote \" backslash \\ newline \n tab \t control \x01 bad utf-8 \xff end";
  f.evidence = "[titan] step: 5";
  a.findings.push_back(f);
  LogFinding header;
  header.kind = "missing_input";
  header.message = "pass --model";
  a.findings.push_back(header);
  return a;
}

std::string Streamed(const LogAnalysis& a, RecordingBuf* record = nullptr) {
  RecordingBuf local;
  RecordingBuf& buf = record ? *record : local;
  std::ostream out(&buf);
  WriteLogJson(a, out);
  return buf.text;
}

TEST(LogRenderJson, StreamedDocumentParsesToTheValuesPutIn) {
  const LogAnalysis a = Sample(20);
  const json j = json::parse(Streamed(a));
  EXPECT_EQ(j["origin"], "run \"a\".log");
  EXPECT_EQ(j["format"], "torchtitan");
  EXPECT_EQ(j["attempts"], 2);
  ASSERT_EQ(j["steps"].size(), 20u);
  for (size_t i = 0; i < 20; ++i) {
    const json& s = j["steps"][i];
    SCOPED_TRACE(i);
    EXPECT_EQ(s["step"], static_cast<int64_t>(i) + 1);
    EXPECT_EQ(s["line"], 3 * static_cast<int64_t>(i) + 7);
    EXPECT_EQ(s["attempt"], i < 10 ? 0 : 1);
    EXPECT_EQ(s["validation"], i % 5 == 4);
    EXPECT_EQ(s["steps_covered"], 10);
    EXPECT_EQ(s["skipped_iterations"], static_cast<int>(i % 2));
    EXPECT_EQ(s["time_s"].get<double>(), 1768548744.0 + static_cast<double>(i));
    EXPECT_EQ(s["step_time_s"].get<double>(), 1.2345);
    // Round trip exact, negative zero included.
    const double want = kNumbers[i % kNumbers.size()];
    EXPECT_EQ(s["tokens_per_s_per_gpu"].get<double>(), want);
    EXPECT_EQ(std::signbit(s["tokens_per_s_per_gpu"].get<double>()), std::signbit(want));
    if (i % 3 == 0)
      EXPECT_TRUE(s["loss"].is_null());
    else
      EXPECT_EQ(s["loss"].get<double>(), 3.25);
    EXPECT_TRUE(s["logged_mfu"].is_null());
    EXPECT_TRUE(s["grad_norm"].is_null());
    EXPECT_EQ(s["mfu"].get<double>(), 0.3973);
    EXPECT_EQ(s.size(), 21u);  // docs/logs.md: the step's fields
  }
  ASSERT_EQ(j["findings"].size(), 2u);
  EXPECT_EQ(j["findings"][0]["kind"], "restart");
  EXPECT_EQ(j["findings"][0]["step"], 5);
  EXPECT_EQ(j["findings"][0]["line"], 22);
  // Invalid UTF-8 becomes U+FFFD, as JsonText's replace handler does.
  EXPECT_EQ(j["findings"][0]["message"],
            "quote \" backslash \\ newline \n tab \t control \x01 bad utf-8 \xef\xbf\xbd end");
  EXPECT_TRUE(j["findings"][1]["step"].is_null());
  EXPECT_TRUE(j["findings"][1]["line"].is_null());
  EXPECT_TRUE(j["findings"][1]["origin"].is_null());
}

TEST(LogRenderJson, BytesAreWhatTheDomPrints) {
  // nlohmann::json printed the whole document before the writer streamed
  // it; re-dumping the parse must give the same bytes (key order, number
  // format, indentation, escapes).
  for (size_t steps : {size_t{0}, size_t{1}, size_t{20}}) {
    const std::string text = Streamed(Sample(steps));
    const json j = json::parse(text);
    EXPECT_EQ(j.dump(2, ' ', false, json::error_handler_t::replace) + "\n", text) << steps << " steps";
  }
  LogAnalysis none = Sample(3);
  none.findings.clear();
  const std::string text = Streamed(none);
  EXPECT_NE(text.find("\"findings\": [],"), std::string::npos);
  EXPECT_EQ(json::parse(text).dump(2, ' ', false, json::error_handler_t::replace) + "\n", text);
}

TEST(LogRenderJson, LongTimelineIsStreamedInPieces) {
  // 20,000 steps are about 12 MB of JSON: the stream must get it in pieces
  // of the writer's buffer (64 KiB and one step), never as one string.
  RecordingBuf record;
  const std::string text = Streamed(Sample(20000), &record);
  EXPECT_GT(text.size(), size_t{10} << 20);
  EXPECT_GT(record.writes, 100u);
  EXPECT_LT(record.largest_write, size_t{80} << 10);
  const json j = json::parse(text);
  ASSERT_EQ(j["steps"].size(), 20000u);
  EXPECT_EQ(j["steps"][19999]["step"], 20000);
  EXPECT_EQ(RenderLogJson(Sample(20000)), text);
}

TEST(LogRenderCsv, StepsRowsStreamed) {
  const LogAnalysis a = Sample(4);
  std::ostringstream out;
  WriteLogStepsCsv(a, out);
  std::istringstream in(out.str());
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line,
            "step,line,attempt,validation,time_s,step_time_s,tokens_per_s_per_gpu,tokens_per_s,samples_per_s,loss,"
            "logged_tflops_per_gpu,logged_mfu,tflops_per_gpu,mfu,mfu_megatron,hfu");
  // Step 1: loss NaN, logged MFU infinite -> empty; %.6g of each figure.
  std::getline(in, line);
  EXPECT_EQ(line, "1,7,0,0,1.76855e+09,1.2345,0.1,,,,,,,0.3973,,");
  std::getline(in, line);
  EXPECT_EQ(line, "2,10,0,0,1.76855e+09,1.2345,1024,,,3.25,,,,0.3973,,");
  EXPECT_EQ(RenderLogCsv(a)[0].second, out.str());
}

TEST(LogRenderCsv, FindingsQuoted) {
  std::ostringstream out;
  WriteLogFindingsCsv(Sample(1), out);
  EXPECT_EQ(out.str().substr(0, out.str().find('\n')), "kind,step,line,origin,message,evidence");
  EXPECT_NE(out.str().find("restart,5,22,\"run \"\"a\"\".log\",\"quote \"\" backslash"), std::string::npos);
  EXPECT_NE(out.str().find("\nmissing_input,,,,pass --model,\n"), std::string::npos);
}

// The text names what the reader can pass as the library's parameters, and a
// front end's TextOptions::parameter respells them before lines are laid out
// (Sample has no model, GPU, GPU count, sequence length or batch).
TEST(LogRenderText, NamesParametersInTheFrontEndsSpelling) {
  const LogAnalysis a = Sample(3);
  const std::string library = RenderLogText(a);
  EXPECT_NE(library.find("unknown (pass parameter 'model')"), std::string::npos) << library;
  EXPECT_NE(library.find("unknown (pass parameter 'seq_len')"), std::string::npos) << library;
  TextOptions cli;
  cli.parameter = [](std::string_view name, bool) { return "--" + std::string(name); };
  const std::string text = RenderLogText(a, cli);
  EXPECT_NE(text.find("unknown (pass --model)"), std::string::npos) << text;
  EXPECT_NE(text.find("unknown (pass --global_batch)"), std::string::npos) << text;
  EXPECT_EQ(text.find("parameter '"), std::string::npos) << text;
}

}  // namespace
}  // namespace mfu
