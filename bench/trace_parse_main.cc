// trace_parse_main: parses Kineto traces with mfu::ParseTraceFile and prints
// one line per file (events, MB, seconds, MB/s, events/s, diagnostics). The
// driver of bench/run_trace_bench.sh and tools/check_shared_traces.sh until
// `mfu trace` exists.
//
//   trace_parse_main [--threads N] [--python] [--strict] FILE...
//
// Exit code: 0 when every file parsed (and, with --strict, has no
// error-severity diagnostic), 1 otherwise, 2 on a usage error.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mfu/trace.h"

namespace {

constexpr const char* kUsage = "usage: trace_parse_main [--threads N] [--python] [--strict] FILE...\n";

// "errors=0 data_loss=2 [negative_dur=2 flow_events=10]": the totals by
// severity, then every non-zero counter.
std::string DiagnosticSummary(const mfu::RankTrace& trace) {
  uint64_t by_severity[3] = {0, 0, 0};
  std::string counters;
  for (const mfu::Diagnostic& d : trace.diagnostics) {
    if (d.count == 0)
      continue;
    by_severity[static_cast<size_t>(d.severity)] += d.count;
    if (!counters.empty())
      counters += ' ';
    counters += std::string(d.name) + "=" + std::to_string(d.count);
  }
  return "errors=" + std::to_string(by_severity[static_cast<size_t>(mfu::Severity::kError)]) +
         " data_loss=" + std::to_string(by_severity[static_cast<size_t>(mfu::Severity::kDataLoss)]) + " [" + counters +
         "]";
}

// The first example of the first error-severity diagnostic, for the log.
std::string FirstError(const mfu::RankTrace& trace) {
  for (const mfu::Diagnostic& d : trace.diagnostics) {
    if (d.severity == mfu::Severity::kError && d.count > 0 && !d.examples.empty()) {
      return std::string(d.name) + " at byte " + std::to_string(d.examples[0].byte_offset) + ": " +
             d.examples[0].snippet;
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  mfu::TraceParseOptions options;
  bool strict = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      options.threads = std::atoi(argv[++i]);
    } else if (arg.starts_with("--threads=")) {
      options.threads = std::atoi(arg.c_str() + 10);
    } else if (arg == "--python") {
      options.keep_python_functions = true;
    } else if (arg == "--strict") {
      strict = true;
    } else if (arg.starts_with("-")) {
      std::fprintf(stderr, "trace_parse_main: unknown option %s\n%s", arg.c_str(), kUsage);
      return 2;
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty() || options.threads < 1) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  int failures = 0;
  for (const std::string& path : files) {
    const auto start = std::chrono::steady_clock::now();
    mfu::StatusOr<mfu::RankTrace> trace = mfu::ParseTraceFile(mfu::RealFileSystem(), path, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!trace.ok()) {
      std::printf("FAIL %s: %s\n", path.c_str(), trace.status().message().c_str());
      ++failures;
      continue;
    }
    const double mb = static_cast<double>(trace->input_bytes) / 1e6;
    const bool bad = strict && trace->error_count() > 0;
    failures += bad ? 1 : 0;
    std::printf("%s %s: %zu events, %.1f MB, %.3f s, %.1f MB/s, %.3g events/s, threads %d, %s\n", bad ? "FAIL" : "ok  ",
                path.c_str(), trace->num_events(), mb, seconds, mb / seconds,
                static_cast<double>(trace->num_events()) / seconds, options.threads, DiagnosticSummary(*trace).c_str());
    if (bad)
      std::printf("     first error: %s\n", FirstError(*trace).c_str());
  }
  return failures == 0 ? 0 : 1;
}
