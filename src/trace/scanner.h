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
  // `max_event_bytes`: the longest event kept (tests pass a small one).
  explicit TraceScanner(uint64_t max_event_bytes = kMaxEventBytes) : max_event_bytes_(max_event_bytes) {}

  // Scans stream bytes [pos(), base + size) where `data` holds stream offsets
  // [base, base + size). Appends complete event spans to `events`.
  void Scan(const char* data, uint64_t base, size_t size, std::vector<EventSpan>& events,
            DiagnosticCounter& diagnostics);

  // First stream offset the next Scan() still needs: the start of an event
  // that is not complete yet, or pos().
  // Between events nothing is kept: the gap (whitespace, commas, stray
  // elements) is checked incrementally, so gigabytes of whitespace cost one
  // pass and no memory. An event longer than kMaxEventBytes is not kept
  // either: it is skipped and counted (event_too_large).
  uint64_t KeepFrom() const {
    if (event_start_ != kNone)
      return oversized_ ? pos_ : event_start_;
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

 public:
  // The longest event kept (a 100 MB kernel name is malformed input; the span
  // length must also fit 32 bits).
  static constexpr uint64_t kMaxEventBytes = 64u << 20;

 private:
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
  bool CloseAtEventDepth(char c, uint64_t offset, std::vector<EventSpan>& events, DiagnosticCounter& diagnostics) {
    if (depth_ != 2)
      return false;
    if (c == '}' && event_start_ != kNone) {
      if (oversized_ || offset + 1 - event_start_ > max_event_bytes_) {
        diagnostics.Add(DiagnosticId::k_event_too_large, event_start_,
                        std::to_string(offset + 1 - event_start_) + " bytes");
      } else {
        events.push_back({event_start_, static_cast<uint32_t>(offset + 1 - event_start_)});
      }
      oversized_ = false;
      event_start_ = kNone;
      EndGap(offset + 1);
      return true;
    }
    if (c != ']')
      return false;
    EndGap(offset + 1);  // end of a stray nested array element
    return true;
  }
  // A new gap between elements starts at stream offset `at`.
  void EndGap(uint64_t at) {
    last_event_end_ = at;
    gap_separated_ = true;
    gap_in_string_ = false;
    gap_escaped_ = false;
  }
  // At the end of a chunk: checks the open gap so far (nothing of it is kept),
  // and gives up keeping an event that outgrew kMaxEventBytes.
  void SettleChunkEnd(const char* data, uint64_t base, uint64_t end, DiagnosticCounter& diagnostics);
  // Handles a structural byte outside strings; returns false to stop.
  void OnStructural(char c, uint64_t offset, std::vector<EventSpan>& events, DiagnosticCounter& diagnostics,
                    const char* where, const char* data_end);

  uint64_t max_event_bytes_;
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
  bool bare_array_ = false;      // the document is a bare JSON array of events
  uint64_t last_event_end_ = 0;  // stream offset up to which the gap after the last element is checked
  // CheckGap's state at last_event_end_ (the gap may span chunks).
  bool gap_separated_ = true;
  bool gap_in_string_ = false;
  bool gap_escaped_ = false;
  bool oversized_ = false;          // the open event passed kMaxEventBytes: its bytes are no longer kept
  std::vector<uint32_t> brackets_;  // ScanEventsFast's scratch
};

}  // namespace mfu::trace
