// Fuzzes the Kineto trace parser (scanner, per-event parser, B/E pairing,
// metadata, gzip detection) on one thread: any bytes must give a RankTrace or
// a Status, never a crash, and a RankTrace must satisfy the column-store
// invariants of include/mfu/trace.h, checked below. Seeds:
// fuzz/corpus/trace_json/ (small real traces and hand-made edge cases);
// dictionary: fuzz/trace_json.dict.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "mfu/trace.h"
#include "trace/trace_stats.h"

namespace {

void Fail(const char* what, size_t i) {
  std::fprintf(stderr, "trace_json_fuzzer: invariant violated: %s (event %zu)\n", what, i);
  std::abort();
}

void Check(bool ok, const char* what, size_t i = 0) {
  if (!ok)
    Fail(what, i);
}

bool StringOk(const mfu::RankTrace& t, uint32_t id) {
  return id == mfu::kNoString || id < t.strings.size();
}

void CheckTables(const mfu::RankTrace& t) {
  for (size_t i = 0; i < t.collectives.size(); ++i) {
    const mfu::CollectiveArgs& c = t.collectives[i];
    for (uint32_t s : {c.collective, c.dtype, c.pg_name, c.pg_desc, c.pg_ranks}) {
      Check(StringOk(t, s), "collective string id in range", i);
    }
  }
  for (size_t i = 0; i < t.op_shapes.size(); ++i) {
    for (uint32_t s : t.op_shapes[i].input_types)
      Check(s < t.strings.size(), "input type id in range", i);
    for (uint32_t s : t.op_shapes[i].concrete_inputs)
      Check(s < t.strings.size(), "concrete input id in range", i);
  }
  Check(t.diagnostics.size() == mfu::trace::kNumDiagnostics, "every diagnostic is listed");
  for (const mfu::Diagnostic& d : t.diagnostics) {
    Check(d.examples.size() <= d.count && d.examples.size() <= mfu::trace::kMaxExamples, "examples <= count");
  }
}

void CheckEvents(const mfu::RankTrace& t) {
  const size_t n = t.ts_ns.size();
  Check(t.dur_ns.size() == n && t.kind.size() == n && t.name.size() == n && t.track.size() == n &&
            t.correlation.size() == n && t.external_id.size() == n && t.collective.size() == n && t.shapes.size() == n,
        "columns have equal length");
  for (size_t i = 0; i < n; ++i) {
    Check(t.dur_ns[i] >= 0, "dur >= 0", i);
    int64_t end = 0;
    Check(!__builtin_add_overflow(t.ts_ns[i], t.dur_ns[i], &end), "ts + dur fits in int64", i);
    if (i > 0) {
      Check(t.ts_ns[i - 1] < t.ts_ns[i] || (t.ts_ns[i - 1] == t.ts_ns[i] && t.dur_ns[i - 1] >= t.dur_ns[i]),
            "sorted by (ts, -dur)", i);
    }
    Check(static_cast<size_t>(t.kind[i]) < mfu::kNumTraceEventKinds, "kind in range", i);
    Check(StringOk(t, t.name[i]), "name id in range", i);
    Check(t.track[i] < t.tracks.size(), "track index in range", i);
    Check(t.collective[i] == mfu::kNoIndex || t.collective[i] < t.collectives.size(), "collective index in range", i);
    Check(t.shapes[i] == mfu::kNoIndex || t.shapes[i] < t.op_shapes.size(), "shapes index in range", i);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  mfu::TraceParseOptions options;
  options.threads = 1;
  mfu::StatusOr<mfu::RankTrace> trace = mfu::ParseTraceBuffer(bytes, "fuzz.json", options);
  if (!trace.ok())
    return 0;
  CheckEvents(*trace);
  CheckTables(*trace);
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  Check(gzip || trace->input_bytes == size, "input_bytes counts every byte");
  return 0;
}
