#pragma once

// One reader per event source; ReadGoodputEvents (goodput_events.cc)
// detects the source by content and dispatches. Each returns events in
// source order with `source` and `line` set; errors name origin, line and
// field.

#include <string_view>
#include <vector>

#include "mfu/goodput.h"
#include "mfu/status.h"

namespace mfu::goodput_internal {

// Detection: true when the first lines of `text` look like the source.
bool LooksLikeMegatronProgress(std::string_view text);
bool LooksLikeGoodputJsonl(std::string_view text);
bool LooksLikeSacct(std::string_view text);
bool LooksLikeSlurmJobComp(std::string_view text);

StatusOr<std::vector<GoodputEvent>> ReadMegatronProgress(std::string_view text, std::string_view origin);
StatusOr<std::vector<GoodputEvent>> ReadGoodputJsonl(std::string_view text, std::string_view origin);
// sacct --parsable2 with a header line naming at least JobID, State, Start,
// End (Submit, Elapsed, Restarts, NodeList, ExitCode where present); job
// steps (JobID "123.batch") are folded into their job; each requeued
// attempt (sacct -D --duplicates) is one attempt.
StatusOr<std::vector<GoodputEvent>> ReadSacct(std::string_view text, std::string_view origin);
// jobcomp/filetxt records: "JobId=123 UserId=.. JobState=COMPLETED ... StartTime=.. EndTime=..".
StatusOr<std::vector<GoodputEvent>> ReadSlurmJobComp(std::string_view text, std::string_view origin);

}  // namespace mfu::goodput_internal
