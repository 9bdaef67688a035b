#pragma once

// Stage 2 of the trace pipeline: one event object (a span found by the
// scanner) -> typed columns. Each worker thread owns a TraceBuilder; the
// reader merges them and sorts by (ts, -dur, file offset), so the result does
// not depend on the number of threads.

#include <simdjson.h>

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/huge_pages.h"
#include "mfu/trace.h"
#include "trace/trace_stats.h"

namespace mfu::trace {

// A pid or tid as written: an integer, or a string interned in the builder.
struct TrackKey {
  int64_t pid = 0;
  int64_t tid = 0;
  bool pid_is_string = false;
  bool tid_is_string = false;
  bool operator==(const TrackKey&) const = default;
};
struct TrackKeyHash {
  size_t operator()(const TrackKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.pid) * 0x9E3779B97F4A7C15ull;
    h ^= static_cast<uint64_t>(k.tid) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    return static_cast<size_t>(h ^ (k.pid_is_string ? 1u : 0u) ^ (k.tid_is_string ? 2u : 0u));
  }
};

// Begin/end (B/E) events, paired after the merge.
struct BeginEnd {
  int64_t ts_ns = 0;
  uint64_t offset = 0;
  uint32_t name = kNoString;
  uint32_t track = 0;
  TraceEventKind kind = TraceEventKind::kOther;
  bool begin = true;
};

struct TraceBuilder {
  // Columns in file order (RankTrace's, plus the file offset for sorting).
  std::vector<int64_t> ts_ns, dur_ns, correlation, external_id;
  std::vector<TraceEventKind> kind;
  std::vector<uint32_t> name, track, collective, shapes;
  std::vector<uint64_t> offset;

  StringTable strings;
  std::vector<TraceTrack> tracks;
  std::vector<TrackKey> track_keys;
  std::unordered_map<TrackKey, uint32_t, TrackKeyHash> track_index;
  std::vector<CollectiveArgs> collectives;
  std::vector<OpShapes> op_shapes;
  std::vector<BeginEnd> begin_end;
  DiagnosticCounter diagnostics;
  int64_t last_ts_ns = INT64_MIN;
  // The first event this builder saw (file order within the builder).
  uint64_t first_offset = UINT64_MAX;
  int64_t first_ts_ns = kNoId;  // kNoId unless a complete non-"Trace" event
  bool out_of_order = false;

  simdjson::ondemand::parser parser;
  bool keep_python_functions = false;

  size_t size() const { return ts_ns.size(); }
  // Capacity for about `events` events on huge pages (an estimate: the
  // columns still grow past it).
  void Reserve(size_t events) {
    for (auto* c : {&ts_ns, &dur_ns, &correlation, &external_id})
      ReserveHuge(*c, events);
    for (auto* c : {&name, &track, &collective, &shapes})
      ReserveHuge(*c, events);
    ReserveHuge(kind, events);
    ReserveHuge(offset, events);
  }
};

// Event names longer than this are cut (diagnostic long_name_truncated).
inline constexpr size_t kMaxNameBytes = 64u << 10;

// Parses the event at `data` (`length` bytes, `capacity` readable bytes from
// `data`, capacity >= length + SIMDJSON_PADDING) found at stream `offset`.
// Malformed events are counted in the builder's diagnostics and skipped.
void ParseEvent(TraceBuilder& builder, const char* data, size_t length, size_t capacity, uint64_t offset);

// "12.345" microseconds -> 12345 ns, exactly, for integer and decimal
// notation; exponent notation goes through a double. False if not a number.
bool ParseMicrosToNs(std::string_view text, int64_t& ns, bool& truncated, bool& via_double);

}  // namespace mfu::trace
