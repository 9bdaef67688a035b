#pragma once

// Stage 1 of the trace pipeline: a streaming structural scanner over a
// Kineto JSON document. It finds the top-level "traceEvents" array and the
// byte span of each event object in it, without parsing values, so event
// parsing can run on bounded chunks (and on several threads) while the rest of
// the document (deviceProperties, distributedInfo, baseTimeNanoseconds, which
// may come before or after the events) is kept as a small JSON text.
//
// Positions are offsets in the whole decompressed stream, so input can arrive
// in chunks of any size: the caller keeps the bytes from KeepFrom() on and
// passes them again with the next chunk.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/trace_stats.h"

namespace mfu::trace {

struct EventSpan {
  uint64_t offset = 0;  // stream offset of '{'
  uint32_t length = 0;  // through the matching '}'
};

class TraceScanner {
 public:
  // Scans stream bytes [pos(), base + size) where `data` holds stream offsets
  // [base, base + size). Appends complete event spans to `events`.
  void Scan(const char* data, uint64_t base, size_t size, std::vector<EventSpan>& events,
            DiagnosticCounter& diagnostics);

  // First stream offset the next Scan() still needs: the start of an event
  // that is not complete yet, or pos().
  // Between events the bytes since the last one are kept too, so stray
  // elements spanning two chunks are still seen (and counted) whole.
  uint64_t KeepFrom() const {
    if (event_start_ != kNone)
      return event_start_;
    if (mode_ == Mode::kEvents)
      return std::min(pos_, last_event_end_);
    return pos_;
  }
  uint64_t pos() const { return pos_; }

  bool saw_events() const { return saw_events_; }
  bool inside_events() const { return mode_ == Mode::kEvents; }
  bool finished() const { return mode_ == Mode::kAfter; }
  // The document without the events: {"schemaVersion":1, ..., "traceEvents":[], ...}.
  const std::string& metadata_json() const { return metadata_; }
  bool metadata_truncated() const { return metadata_truncated_; }

 private:
  enum class Mode : uint8_t { kBefore, kObject, kEvents, kAfter };
  static constexpr uint64_t kNone = ~uint64_t{0};
  static constexpr size_t kMaxMetadataBytes = 64u << 20;

  void AppendMetadata(const char* begin, const char* end);
  void AppendText(std::string_view text) { AppendMetadata(text.data(), text.data() + text.size()); }
  // Inside the events array: 64-byte blocks through the SIMD bracket finder
  // (bracket_finder.h), as simdjson's stage 1 does. Returns where it stopped
  // (fewer than 64 bytes left, or the array closed).
  const char* ScanEventsFast(const char* p, const char* end, const char* data, uint64_t base,
                             std::vector<EventSpan>& events, DiagnosticCounter& diagnostics);
  // Counts a non-object element when stream bytes [from, to) between two
  // array elements hold anything but whitespace and commas.
  void CheckGap(const char* data, uint64_t base, uint64_t from, uint64_t to, DiagnosticCounter& diagnostics);
  // A close at depth 2 (after the decrement) inside the events array: an
  // event's '}' (its span appended) or a stray nested array's ']'. False when
  // `c` closes something else.
  bool CloseAtEventDepth(char c, uint64_t offset, std::vector<EventSpan>& events) {
    if (depth_ != 2)
      return false;
    if (c == '}' && event_start_ != kNone) {
      events.push_back({event_start_, static_cast<uint32_t>(offset + 1 - event_start_)});
      event_start_ = kNone;
      last_event_end_ = offset + 1;
      return true;
    }
    if (c != ']')
      return false;
    last_event_end_ = offset + 1;  // end of a stray nested array element
    return true;
  }
  // Handles a structural byte outside strings; returns false to stop.
  void OnStructural(char c, uint64_t offset, std::vector<EventSpan>& events, DiagnosticCounter& diagnostics,
                    const char* where, const char* data_end);

  Mode mode_ = Mode::kBefore;
  uint64_t pos_ = 0;
  int depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
  bool string_at_depth1_ = false;
  std::string key_;  // the depth-1 string being read (capped)
  bool last_key_is_events_ = false;
  bool saw_events_ = false;
  uint64_t event_start_ = kNone;
  std::string metadata_;
  bool metadata_truncated_ = false;
  bool bare_array_ = false;         // the document is a bare JSON array of events
  uint64_t last_event_end_ = 0;     // stream offset after the last event's '}'
  std::vector<uint32_t> brackets_;  // ScanEventsFast's scratch
};

}  // namespace mfu::trace
