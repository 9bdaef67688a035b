// Stage 3b: the merge of per-thread builders: string and track ids
// remapped, B/E pairs completed, base time applied, the sort on keys and
// the gather of every column in key order. See docs/trace.md.

#include "trace/trace_merge.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include "base/parallel.h"
#include "trace/sort_keys.h"

namespace mfu::trace {
namespace {

// Absolute time = base + ts, before sorting; an event whose start or end
// would leave the int64 range (absurd input) is clamped and counted.
uint64_t ApplyBaseTime(TraceBuilder& b, int64_t base_ns) {
  uint64_t clamped = 0;
  for (size_t i = 0; i < b.ts_ns.size(); ++i) {
    int64_t ts = 0, end = 0;
    if (__builtin_add_overflow(b.ts_ns[i], base_ns, &ts)) {
      ts = b.ts_ns[i] > 0 ? INT64_MAX : INT64_MIN;
      ++clamped;
    }
    b.ts_ns[i] = ts;
    if (__builtin_add_overflow(ts, b.dur_ns[i], &end)) {
      b.dur_ns[i] = INT64_MAX - ts;
      ++clamped;
    }
  }
  return clamped;
}

// How a builder's local ids map to the merged trace's.
struct IdMaps {
  std::vector<uint32_t> strings, tracks;
  uint32_t collective_base = 0, shapes_base = 0;
  bool identity = false;  // the B/E pairs: ids already global
};

// Gathers column `column` of every builder into `out` in key order,
// applying `map` to each value.
template <typename T, typename Map>
void Gather(std::vector<T>& out, const std::vector<SortKey>& keys,
            const std::vector<std::unique_ptr<TraceBuilder>>& sources, std::vector<T> TraceBuilder::*column, Map map) {
  ResizeHuge(out, keys.size());
  for (size_t k = 0; k < keys.size(); ++k) {
    const SortKey& key = keys[k];
    out[k] = map(key.source, ((*sources[key.source]).*column)[key.index]);
  }
  // Free the sources' column now: the next column's output then reuses
  // recently freed pages (first touches of fresh memory are a large share of
  // a big parse's time, especially in virtual machines).
  for (const auto& s : sources)
    std::vector<T>().swap((*s).*column);
}

// Interns builder `b`'s strings and tracks into `out` (the ids into `m`),
// appends its collectives and shapes with their string ids remapped, and
// its B/E events, ids remapped, to `begin_end`.
void MergeBuilderIds(TraceBuilder& b, IdMaps& m, RankTrace& out,
                     std::unordered_map<std::string, uint32_t>& track_by_name, std::vector<BeginEnd>& begin_end) {
  m.strings.resize(b.strings.size());
  for (uint32_t i = 0; i < b.strings.size(); ++i)
    m.strings[i] = out.strings.Intern(b.strings.Get(i));
  m.tracks.resize(b.tracks.size());
  for (uint32_t i = 0; i < b.tracks.size(); ++i) {
    const TraceTrack& t = b.tracks[i];
    auto [it, inserted] = track_by_name.try_emplace(t.pid + "\t" + t.tid, static_cast<uint32_t>(out.tracks.size()));
    if (inserted) {
      out.tracks.push_back(t);
    } else if (t.gpu && !out.tracks[it->second].gpu) {
      out.tracks[it->second] = t;
    }
    m.tracks[i] = it->second;
  }
  m.collective_base = static_cast<uint32_t>(out.collectives.size());
  for (CollectiveArgs c : b.collectives) {
    for (uint32_t* id : {&c.collective, &c.dtype, &c.pg_name, &c.pg_desc, &c.pg_ranks}) {
      if (*id != kNoString)
        *id = m.strings[*id];
    }
    out.collectives.push_back(c);
  }
  m.shapes_base = static_cast<uint32_t>(out.op_shapes.size());
  for (OpShapes& shape : b.op_shapes) {
    for (uint32_t& t : shape.input_types)
      t = m.strings[t];
    for (uint32_t& t : shape.concrete_inputs)
      t = m.strings[t];
    out.op_shapes.push_back(std::move(shape));
  }
  for (BeginEnd be : b.begin_end) {
    be.name = be.name == kNoString ? kNoString : m.strings[be.name];
    be.track = m.tracks[be.track];
    begin_end.push_back(be);
  }
}

// B/E pairs: per track, in time order, a stack of open B events. Returns
// the completed pairs as one more source, with global ids; unmatched and
// overflowing events go to `diagnostics`.
std::unique_ptr<TraceBuilder> PairBeginEnd(std::vector<BeginEnd>& begin_end, DiagnosticCounter& diagnostics) {
  auto pairs = std::make_unique<TraceBuilder>();
  std::sort(begin_end.begin(), begin_end.end(), [](const BeginEnd& a, const BeginEnd& b) {
    return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.offset < b.offset;
  });
  std::unordered_map<uint32_t, std::vector<BeginEnd>> open;
  for (const BeginEnd& be : begin_end) {
    auto& stack = open[be.track];
    if (be.begin) {
      stack.push_back(be);
      continue;
    }
    if (stack.empty()) {
      diagnostics.Add(DiagnosticId::k_unmatched_begin_end, be.offset, "E without B");
      continue;
    }
    BeginEnd b = stack.back();
    stack.pop_back();
    int64_t dur = 0;
    if (__builtin_sub_overflow(be.ts_ns, b.ts_ns, &dur)) {
      diagnostics.Add(DiagnosticId::k_bad_number, be.offset, "B/E duration beyond the int64 ns range");
      continue;
    }
    pairs->ts_ns.push_back(b.ts_ns);
    pairs->dur_ns.push_back(dur);
    pairs->kind.push_back(b.kind);
    pairs->name.push_back(b.name);
    pairs->track.push_back(b.track);
    pairs->correlation.push_back(kNoId);
    pairs->external_id.push_back(kNoId);
    pairs->collective.push_back(kNoIndex);
    pairs->shapes.push_back(kNoIndex);
    pairs->offset.push_back(b.offset);
  }
  for (auto& [track, stack] : open) {
    for (const BeginEnd& b : stack)
      diagnostics.Add(DiagnosticId::k_unmatched_begin_end, b.offset, "B without E");
  }
  return pairs;
}

// Base time and sort keys, one builder per thread, grouped by (builder,
// kind): Kineto writes each category in time order, so the groups are
// nearly sorted runs for SortKeys to merge. Returns the keys, sorted; frees
// the builders' ts, dur and offset columns (the keys hold them).
std::vector<SortKey> SortedKeys(std::vector<std::unique_ptr<TraceBuilder>>& builders, RankTrace& out,
                                DiagnosticCounter& diagnostics, int threads) {
  constexpr size_t kKinds = kNumTraceEventKinds;
  std::vector<size_t> group_starts(builders.size() * kKinds + 1, 0);
  for (size_t s = 0; s < builders.size(); ++s) {
    for (TraceEventKind k : builders[s]->kind)
      ++group_starts[s * kKinds + static_cast<size_t>(k) + 1];
  }
  for (size_t g = 1; g < group_starts.size(); ++g)
    group_starts[g] += group_starts[g - 1];
  const size_t total = group_starts.back();
  group_starts.pop_back();
  std::vector<SortKey> keys;
  ResizeHuge(keys, total);
  std::vector<uint64_t> clamped_by(builders.size(), 0);
  ParallelFor(builders.size(), threads, [&](size_t s) {
    TraceBuilder& b = *builders[s];
    clamped_by[s] = ApplyBaseTime(b, out.base_time_ns);
    size_t cursor[kKinds];
    std::copy_n(group_starts.begin() + static_cast<ptrdiff_t>(s * kKinds), kKinds, cursor);
    for (size_t i = 0; i < b.size(); ++i) {
      keys[cursor[static_cast<size_t>(b.kind[i])]++] = {b.ts_ns[i], -b.dur_ns[i], b.offset[i], static_cast<uint32_t>(i),
                                                        static_cast<uint32_t>(s)};
    }
    // The keys hold these three columns now (ts and -dur are gathered back
    // from them): freeing them here takes 24 of the builder's 57 bytes per
    // event off the merge's peak, which is the parse's.
    std::vector<int64_t>().swap(b.ts_ns);
    std::vector<int64_t>().swap(b.dur_ns);
    std::vector<uint64_t>().swap(b.offset);
  });
  uint64_t clamped = 0;
  for (uint64_t c : clamped_by)
    clamped += c;
  if (clamped > 0)
    diagnostics.Add(DiagnosticId::k_bad_number, 0, "timestamp beyond the int64 ns range", clamped);
  if (out.first_event_ts_ns != kNoId &&
      __builtin_add_overflow(out.first_event_ts_ns, out.base_time_ns, &out.first_event_ts_ns)) {
    out.first_event_ts_ns = kNoId;
  }
  SortKeys(keys, group_starts, threads);
  return keys;
}

// Gathers every column into `out` in the order of `keys`, ids remapped by
// `maps`; frees the builders, then the keys.
void GatherColumns(std::vector<SortKey>& keys, std::vector<std::unique_ptr<TraceBuilder>>& builders,
                   const std::vector<IdMaps>& maps, RankTrace& out, int threads) {
  const size_t total = keys.size();
  auto same = [](uint32_t, auto v) { return v; };
  auto string_id = [&maps](uint32_t s, uint32_t v) {
    return maps[s].identity || v == kNoString ? v : maps[s].strings[v];
  };
  auto track_id = [&maps](uint32_t s, uint32_t v) { return maps[s].identity ? v : maps[s].tracks[v]; };
  auto collective_id = [&maps](uint32_t s, uint32_t v) { return v == kNoIndex ? v : v + maps[s].collective_base; };
  auto shapes_id = [&maps](uint32_t s, uint32_t v) { return v == kNoIndex ? v : v + maps[s].shapes_base; };
  // The builder columns first (each output replaces its source), the two
  // columns held by the keys last, so the keys and the outputs of ts and dur
  // never coexist with the builders' columns.
  ParallelFor(2, threads >= 2 && total > 100000 ? 2 : 1, [&](size_t half) {
    if (half == 0) {
      Gather(out.kind, keys, builders, &TraceBuilder::kind, same);
      Gather(out.name, keys, builders, &TraceBuilder::name, string_id);
    } else {
      Gather(out.track, keys, builders, &TraceBuilder::track, track_id);
      Gather(out.correlation, keys, builders, &TraceBuilder::correlation, same);
      Gather(out.external_id, keys, builders, &TraceBuilder::external_id, same);
      Gather(out.collective, keys, builders, &TraceBuilder::collective, collective_id);
      Gather(out.shapes, keys, builders, &TraceBuilder::shapes, shapes_id);
    }
  });
  builders.clear();
  ParallelFor(2, threads >= 2 && total > 100000 ? 2 : 1, [&](size_t half) {
    if (half == 0) {
      ResizeHuge(out.ts_ns, keys.size());
      for (size_t k = 0; k < keys.size(); ++k)
        out.ts_ns[k] = keys[k].ts;
    } else {
      ResizeHuge(out.dur_ns, keys.size());
      for (size_t k = 0; k < keys.size(); ++k)
        out.dur_ns[k] = -keys[k].neg_dur;
    }
  });
  std::vector<SortKey>().swap(keys);
}

}  // namespace

void MergeAndSort(std::vector<std::unique_ptr<TraceBuilder>>& builders, RankTrace& out, DiagnosticCounter& diagnostics,
                  int threads) {
  std::vector<IdMaps> maps(builders.size() + 1);
  std::unordered_map<std::string, uint32_t> track_by_name;  // "pid\ttid" -> global track
  bool out_of_order = false;
  std::vector<BeginEnd> begin_end;
  uint64_t first_offset = UINT64_MAX;
  for (size_t s = 0; s < builders.size(); ++s) {
    TraceBuilder& b = *builders[s];
    if (b.first_offset < first_offset) {
      first_offset = b.first_offset;
      out.first_event_ts_ns = b.first_ts_ns;
    }
    MergeBuilderIds(b, maps[s], out, track_by_name, begin_end);
    out_of_order |= b.out_of_order;
    diagnostics.Merge(b.diagnostics);
  }
  builders.push_back(PairBeginEnd(begin_end, diagnostics));
  maps.back().identity = true;
  std::vector<SortKey> keys = SortedKeys(builders, out, diagnostics, threads);
  GatherColumns(keys, builders, maps, out, threads);
  if (out_of_order)
    diagnostics.Add(DiagnosticId::k_out_of_order, 0, "");
}

}  // namespace mfu::trace
