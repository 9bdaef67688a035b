#pragma once

// Every diagnostic the trace parser counts: name, severity, description
// (perfetto's src/trace_processor/storage/stats.h). Each appears in every
// report, zero or not, so users see what was checked.

#include <cstdint>
#include <string_view>

#include "mfu/trace.h"

// X(name, severity, description)
#define MFU_TRACE_DIAGNOSTICS(X)                                                                                \
  X(json_syntax_error, kError, "an event that is not valid JSON was skipped")                                   \
  X(event_not_object, kError, "a traceEvents element that is not a JSON object was skipped")                    \
  X(missing_ph, kError, "an event without a string 'ph' was skipped")                                           \
  X(missing_ts, kError, "an event without a numeric 'ts' was skipped")                                          \
  X(missing_dur, kError, "a complete (X) event without a numeric 'dur' was skipped")                            \
  X(bad_number, kError, "a 'ts' or 'dur' that is not a decimal number was skipped")                             \
  X(truncated_input, kDataLoss, "the input ended inside traceEvents (truncated file); the tail was lost")       \
  X(event_too_large, kDataLoss, "an event longer than 64 MiB was skipped (its bytes are not kept)")             \
  X(long_name_truncated, kDataLoss, "an event name longer than 64 KiB was cut to 64 KiB")                       \
  X(negative_dur, kDataLoss, "a negative 'dur' was clamped to 0")                                               \
  X(unmatched_begin_end, kDataLoss, "a B or E event without its pair was dropped")                              \
  X(bad_arg_type, kDataLoss, "an args value with an unexpected JSON type was ignored")                          \
  X(metadata_unreadable, kDataLoss, "top-level metadata (deviceProperties, distributedInfo) was unreadable")    \
  X(metadata_too_large, kDataLoss, "top-level metadata beyond 64 MiB was not kept")                             \
  X(sub_ns_digits, kInfo, "timestamps with more than 3 fraction digits were truncated to ns")                   \
  X(exponent_number, kInfo, "a 'ts' or 'dur' in exponent notation was read through a double")                   \
  X(uint64_id, kInfo, "ids beyond INT64_MAX were kept by bit pattern")                                          \
  X(flow_events, kInfo, "flow events (s/f/t) were skipped: kernels link through args.correlation")              \
  X(metadata_events, kInfo, "metadata events (M: process and thread names) were skipped")                       \
  X(counter_events, kInfo, "counter events (C) were skipped")                                                   \
  X(python_functions_skipped, kInfo, "python_function events were skipped (keep them with parameter 'python')") \
  X(unknown_phase, kInfo, "events with another phase were skipped")                                             \
  X(unknown_category, kInfo, "complete events with an unknown 'cat' were kept as 'other'")                      \
  X(out_of_order, kInfo, "events were not sorted by ts in the file (sorted after parsing)")                     \
  X(trailing_bytes, kInfo, "bytes after the top-level JSON object were ignored")

namespace mfu::trace {

enum class DiagnosticId : uint8_t {
#define MFU_TRACE_DIAG_ENUM(name, severity, description) k_##name,
  MFU_TRACE_DIAGNOSTICS(MFU_TRACE_DIAG_ENUM)
#undef MFU_TRACE_DIAG_ENUM
      kCount
};
inline constexpr size_t kNumDiagnostics = static_cast<size_t>(DiagnosticId::kCount);
inline constexpr size_t kMaxExamples = 3;

// Counters with the first few examples, mergeable across worker threads.
class DiagnosticCounter {
 public:
  void Add(DiagnosticId id, uint64_t offset, std::string_view text, uint64_t n = 1);
  void Merge(const DiagnosticCounter& other);
  // All diagnostics in table order, zero or not.
  std::vector<Diagnostic> Finish() const;

 private:
  uint64_t counts_[kNumDiagnostics] = {};
  std::vector<DiagnosticExample> examples_[kNumDiagnostics];
};

}  // namespace mfu::trace
