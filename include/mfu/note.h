#pragma once

// The note vocabulary every job result shares (a header of its own so that
// the lowest job headers, flops.h and memory.h, can carry notes without
// result.h, which depends on them).

#include <cstdint>
#include <string>

namespace mfu {

// What a result depends on beyond what the request said, and what a reader
// should doubt: one vocabulary for every job. Text renders one line per note
// ("assumed: ...", "warning: ..."); JSON renders "notes": [{"kind", "code",
// "message"}]. Codes are stable identifiers scripts may test
// ("default_global_batch", "mfu_above_peak", "unvalidated_family", ...);
// messages are one sentence and name request fields as Param("x") does.
enum class NoteKind : uint8_t {
  kAssumption = 0,  // a default that changes the answer
  kWarning,         // an implausible or unvalidated figure
};

const char* NoteKindName(NoteKind kind);  // "assumption", "warning"

struct Note {
  NoteKind kind = NoteKind::kWarning;
  std::string code;
  std::string message;
};

}  // namespace mfu
