// Differential fuzzer: mfu::ParseTraceBuffer (chunked structural scan, simdjson
// on demand per event) against the simple nlohmann-based reference parser in
// reference_trace_parser.h, whose rules define the expected result. For every
// input the reference accepts as valid JSON, both must agree on success, the
// number of events kept (complete X, instants and B/E pairs), the multiset of
// (ts_ns, dur_ns, name, kind), and the fast parser must report no syntax error,
// truncation or trailing bytes. A third party: the same bytes through
// ParseTraceFile (the mmap path for plain JSON, via an anonymous memfd, so no
// file system is touched) must give exactly what ParseTraceBuffer (the copying
// chunked path) gives, for every input. Seeds: fuzz/corpus/trace_differential/.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "mfu/trace.h"
#include "reference_trace_parser.h"

namespace {

// (ts, dur, has name, name, kind): one event, comparable.
using Key = std::tuple<int64_t, int64_t, bool, std::string, int>;

[[noreturn]] void Disagree(const std::string& what) {
  std::fprintf(stderr, "trace_differential_fuzzer: fast parser and reference disagree: %s\n", what.c_str());
  std::abort();
}

uint64_t Count(const mfu::RankTrace& t, std::string_view name) {
  for (const mfu::Diagnostic& d : t.diagnostics) {
    if (name == d.name)
      return d.count;
  }
  Disagree("no diagnostic named " + std::string(name));
}

std::string Describe(const Key& k) {
  return "ts_ns=" + std::to_string(std::get<0>(k)) + " dur_ns=" + std::to_string(std::get<1>(k)) +
         " name=" + (std::get<2>(k) ? "\"" + std::get<3>(k) + "\"" : "(none)") +
         " kind=" + mfu::TraceEventKindName(static_cast<mfu::TraceEventKind>(std::get<4>(k)));
}

void Compare(const mfu::RankTrace& fast, const mfu::fuzz::ReferenceTrace& ref) {
  for (const char* name : {"json_syntax_error", "truncated_input", "trailing_bytes"}) {
    if (Count(fast, name) != 0)
      Disagree(std::string("valid JSON, yet the fast parser counted ") + name);
  }
  std::vector<Key> got, want;
  for (size_t i = 0; i < fast.num_events(); ++i) {
    got.emplace_back(fast.ts_ns[i], fast.dur_ns[i], fast.name[i] != mfu::kNoString, std::string(fast.event_name(i)),
                     static_cast<int>(fast.kind[i]));
  }
  for (const mfu::fuzz::ReferenceEvent& e : ref.events) {
    want.emplace_back(e.ts_ns, e.dur_ns, e.has_name, e.name, static_cast<int>(e.kind));
  }
  if (got.size() != want.size()) {
    Disagree("fast kept " + std::to_string(got.size()) + " events, reference " + std::to_string(want.size()) + " (" +
             std::to_string(ref.complete_events) + " complete)");
  }
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i])
      Disagree("event " + Describe(got[i]) + " vs reference " + Describe(want[i]));
  }
}

// `bytes` through ParseTraceFile, from an anonymous in-memory file.
mfu::StatusOr<mfu::RankTrace> ParseViaFile(std::string_view bytes) {
  const int fd = memfd_create("trace_differential", 0);
  if (fd < 0)
    return mfu::InternalError("memfd_create failed");
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      close(fd);
      return mfu::InternalError("write to memfd failed");
    }
    done += static_cast<size_t>(n);
  }
  mfu::StatusOr<mfu::RankTrace> trace =
      mfu::ParseTraceFile(mfu::RealFileSystem(), "/proc/self/fd/" + std::to_string(fd));
  close(fd);
  return trace;
}

// The buffer and file paths must agree on everything but the path.
void CompareFastPaths(const mfu::StatusOr<mfu::RankTrace>& buffer, const mfu::StatusOr<mfu::RankTrace>& file) {
  if (!file.ok() && file.status().code() == mfu::StatusCode::kInternal)
    return;  // no memfd here
  if (buffer.ok() != file.ok()) {
    Disagree(std::string("ParseTraceBuffer ") + (buffer.ok() ? "succeeded" : "failed") + ", ParseTraceFile " +
             (file.ok() ? "succeeded" : "failed: " + file.status().message()));
  }
  if (!buffer.ok())
    return;
  const mfu::RankTrace& a = *buffer;
  const mfu::RankTrace& b = *file;
  if (a.num_events() != b.num_events() || a.ts_ns != b.ts_ns || a.dur_ns != b.dur_ns || a.kind != b.kind ||
      a.correlation != b.correlation || a.external_id != b.external_id) {
    Disagree("ParseTraceBuffer and ParseTraceFile give different event columns");
  }
  for (size_t i = 0; i < a.num_events(); ++i) {
    if (a.event_name(i) != b.event_name(i))
      Disagree("ParseTraceBuffer and ParseTraceFile name events differently");
  }
  if (a.rank != b.rank || a.base_time_ns != b.base_time_ns || a.input_bytes != b.input_bytes) {
    Disagree("ParseTraceBuffer and ParseTraceFile read different metadata");
  }
  for (size_t i = 0; i < a.diagnostics.size(); ++i) {
    if (a.diagnostics[i].count != b.diagnostics[i].count) {
      Disagree(std::string("ParseTraceBuffer and ParseTraceFile count ") + a.diagnostics[i].name + " differently");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  mfu::StatusOr<mfu::RankTrace> fast = mfu::ParseTraceBuffer(bytes, "fuzz.json");
  CompareFastPaths(fast, ParseViaFile(bytes));
  const mfu::fuzz::ReferenceTrace ref = mfu::fuzz::ParseReferenceTrace(bytes);
  if (std::getenv("MFU_FUZZ_VERBOSE") != nullptr) {  // what was compared, for corpus reviews
    std::fprintf(stderr, "reference: %s%s, %zu events (%llu complete), %llu errors; fast: %s, %zu events\n",
                 ref.verdict == mfu::fuzz::ReferenceVerdict::kTrace       ? "trace"
                 : ref.verdict == mfu::fuzz::ReferenceVerdict::kNotATrace ? "not a trace"
                                                                          : "declined: ",
                 ref.why.c_str(), ref.events.size(), static_cast<unsigned long long>(ref.complete_events),
                 static_cast<unsigned long long>(ref.errors), fast.ok() ? "ok" : fast.status().message().c_str(),
                 fast.ok() ? fast->num_events() : size_t{0});
  }
  if (ref.verdict == mfu::fuzz::ReferenceVerdict::kDeclined)
    return 0;
  if (fast.ok() == ref.expect_error()) {
    Disagree(fast.ok() ? "the fast parser succeeded; the reference expects an error (" + std::to_string(ref.errors) +
                             " bad elements, none kept)"
                       : "the fast parser failed (" + fast.status().message() + "); the reference kept " +
                             std::to_string(ref.events.size()) + " events");
  }
  if (fast.ok())
    Compare(*fast, ref);
  return 0;
}
