// Fuzzes the training-log readers (line cleaning, detection, every format's
// parser, whole-document JSON): for auto-detection and every format that has
// a reader, any bytes give a timeline or one error, never a crash, and
// reading the input whole or in chunks (of a size taken from the input)
// gives the same result. Seeds: fuzz/corpus/training_log/ (small lines of
// each format and the prefixes, ANSI codes and tqdm redraws around them).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "log/log_parser.h"
#include "mfu/training_log.h"

namespace {

bool SameDouble(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return !(a < b) && !(b < a);
}

[[noreturn]] void Mismatch(const char* what, mfu::LogFormat format) {
  std::fprintf(stderr, "training_log_fuzzer: whole and chunked reads differ in %s (format %s)\n", what,
               mfu::LogFormatId(format));
  std::abort();
}

void Compare(const mfu::LogTimeline& a, const mfu::LogTimeline& b, mfu::LogFormat forced) {
  if (a.format != b.format || a.attempts != b.attempts)
    Mismatch("format/attempts", forced);
  if (a.stats.lines != b.stats.lines || a.stats.bytes != b.stats.bytes || a.stats.step_lines != b.stats.step_lines ||
      a.stats.duplicate_lines != b.stats.duplicate_lines || a.stats.partial_lines != b.stats.partial_lines)
    Mismatch("stats", forced);
  if (a.steps.size() != b.steps.size() || a.events.size() != b.events.size())
    Mismatch("sizes", forced);
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const mfu::LogStep& x = a.steps[i];
    const mfu::LogStep& y = b.steps[i];
    if (x.step != y.step || x.line != y.line || x.attempt != y.attempt || x.steps_covered != y.steps_covered ||
        !SameDouble(x.time_s, y.time_s) || !SameDouble(x.step_time_s, y.step_time_s) || !SameDouble(x.loss, y.loss) ||
        !SameDouble(x.logged_tflops_per_gpu, y.logged_tflops_per_gpu) || !SameDouble(x.samples_per_s, y.samples_per_s))
      Mismatch("a step", forced);
    if (x.steps_covered < 1)
      Mismatch("steps_covered < 1", forced);
  }
  for (size_t i = 0; i < a.events.size(); ++i) {
    if (a.events[i].kind != b.events[i].kind || a.events[i].line != b.events[i].line ||
        a.events[i].detail != b.events[i].detail || a.events[i].detail.size() > 200)
      Mismatch("an event", forced);
  }
}

void RunOne(std::string_view text, mfu::LogFormat format, size_t chunk) {
  mfu::LogReadOptions options;
  options.format = format;
  options.max_steps = 10000;
  mfu::StatusOr<mfu::LogTimeline> whole = mfu::ReadTrainingLog(text, "fuzz.log", options);
  mfu::TrainingLogReader reader("fuzz.log", options);
  mfu::Status fed = mfu::Status::Ok();
  for (size_t at = 0; at < text.size() && fed.ok(); at += chunk)
    fed = reader.Feed(text.substr(at, chunk));
  mfu::StatusOr<mfu::LogTimeline> pieces = fed.ok() ? reader.Finish() : mfu::StatusOr<mfu::LogTimeline>(fed);
  if (whole.ok() != pieces.ok())
    Mismatch("ok-ness", format);
  if (!whole.ok()) {
    if (whole.status().message() != pieces.status().message() || whole.status().message().empty() ||
        whole.status().message().find('\n') != std::string::npos)
      Mismatch("the error", format);
    return;
  }
  Compare(*whole, *pieces, format);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 20))
    return 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t chunk = size == 0 ? 1 : 1 + data[0] % 61;
  RunOne(text, mfu::LogFormat::kAuto, chunk);
  for (int f = 1; f < static_cast<int>(mfu::LogFormat::kCount); ++f) {
    const auto format = static_cast<mfu::LogFormat>(f);
    if (mfu::log_internal::MakeLogParser(format) != nullptr)
      RunOne(text, format, chunk);
  }
  return 0;
}
