#pragma once

// A deliberately simple reference Kineto parser for the differential fuzzer
// (trace_differential_fuzzer.cc): the whole document through nlohmann::json
// (SAX, keeping the source text of floats), then the rules below, event by
// event, with no chunking, no SIMD and no threads. It states what
// mfu::ParseTraceBuffer must produce; where the two differ, one has a bug.
//
// Inputs it declines (no comparison is made; the fast parser still runs):
//  D1. not valid JSON per nlohmann (RFC 8259, UTF-8 checked), incl. gzip, or
//      holding a NUL byte (where nlohmann stops reading);
//  D2. an object with a duplicate key (JSON leaves the meaning open);
//  D3. an object key written with a backslash escape ("p\u0068"): the fast
//      parser matches keys on their raw bytes, by design;
//  D4. nesting deeper than 512 (simdjson's per-event depth limit is 1024);
//  D5. a ts, dur or baseTimeNanoseconds sum within 1% of the int64 ns range
//      (overflow there is the fuzzers' UBSan's job, not a semantic question).
//
// Rules for a document it accepts:
//  R1. The events are the root array (Chrome's array format), or the array
//      under the root object's key "traceEvents"; anything else is not a
//      trace (the fast parser must return an error).
//  R2. Each element: not an object -> error (skipped). "ph" must be a string
//      of exactly one byte, else error. s/f/t (flows), M, C and any other
//      phase than X, i, I, B, E are skipped silently.
//  R3. Kind: i and I are instants; X, B and E take the kind of their "cat"
//      string (table in the .cc; missing or non-string cat = "" = other);
//      python_function X/B/E events are skipped.
//  R4. "ts" must be a JSON number, else error; "dur" too for X (not read for
//      the others). Microseconds -> ns exactly: integer part * 1000 plus the
//      first three fraction digits (truncated toward zero, sign applied to
//      the whole); exponent notation goes through strtod and llround(v *
//      1000), and needs |v| <= 9e15. A number out of that range is an error.
//      A negative dur becomes 0. Instants have dur 0.
//  R5. B/E: paired per track (the pid and tid as text, "pid\ttid"; integers in
//      decimal, finite floats truncated to an integer when |v| < 9e18, other
//      values "0"), in (ts, document order) order, each E closing the latest
//      open B; the pair is one event with the B's name and kind. Unpaired
//      ones are dropped (data loss, not an error).
//  R6. An integer top-level "baseTimeNanoseconds" (object root only) is added
//      to every ts.
//  R7. The result is an error iff R1 fails, or no event is kept while some
//      element was an error.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/trace.h"

namespace mfu::fuzz {

struct ReferenceEvent {
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  std::string name;
  bool has_name = false;
  TraceEventKind kind = TraceEventKind::kOther;
};

enum class ReferenceVerdict { kDeclined, kNotATrace, kTrace };

struct ReferenceTrace {
  ReferenceVerdict verdict = ReferenceVerdict::kDeclined;
  std::string why;                     // the D rule that declined, or ""
  std::vector<ReferenceEvent> events;  // X, instants and paired B/E, in no order
  uint64_t complete_events = 0;        // X events kept
  uint64_t errors = 0;                 // elements skipped as errors (R2, R4)
  bool expect_error() const { return verdict == ReferenceVerdict::kNotATrace || (events.empty() && errors > 0); }
};

// Applies the rules above to `json`. Never throws.
ReferenceTrace ParseReferenceTrace(std::string_view json);

}  // namespace mfu::fuzz
