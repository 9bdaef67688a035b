// Megatron-LM / Megatron-Bridge progress.txt (--log-progress): one
// tab-separated record per event, written by rank 0 through
// append_to_progress_log (Megatron-LM megatron/training/utils/log_utils.py
// L114-135 @d98e8a64; Megatron-Bridge reuses it):
//   f"{datetime.now().strftime('%Y-%m-%d %H:%M:%S')}\tJob ID: {job_id}\t# GPUs: {num_gpus}\t{string}\n"
// Events: "Starting job" (training.py L1606), "Saved checkpoint" and
// "Saving async checkpoint" followed by "\tIteration: N\tJob throughput:
// X TFLOP/s/GPU\t..." (training.py L3722-3753; Bridge prints
// MODEL_TFLOP/s/GPU), "Saved async checkpoint\tIteration: N", "Saved async
// local checkpoint\tIteration: N", "Deleted checkpoint\tIteration: N"
// (checkpointing.py L1042-1110, L1439-1442). ../shared/reference/training-logs.md section 2.3, section 3.3.

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "goodput/goodput_readers.h"
#include "goodput/goodput_text.h"

namespace mfu::goodput_internal {
namespace {

constexpr std::string_view kJobIdField = "Job ID:";
constexpr std::string_view kGpusField = "# GPUs:";

std::vector<std::string_view> SplitTabs(std::string_view line) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (true) {
    size_t tab = line.find('\t', at);
    out.push_back(Trim(line.substr(at, tab == std::string_view::npos ? std::string_view::npos : tab - at)));
    if (tab == std::string_view::npos)
      break;
    at = tab + 1;
  }
  return out;
}

// The value of "Key: value" among `fields`, or nullopt.
std::optional<std::string_view> Field(const std::vector<std::string_view>& fields, std::string_view key) {
  for (std::string_view f : fields) {
    if (f.substr(0, key.size()) == key)
      return Trim(f.substr(key.size()));
  }
  return std::nullopt;
}

}  // namespace

bool LooksLikeMegatronProgress(std::string_view text) {
  LineCursor lines(text);
  std::string_view line;
  for (int n = 0; n < 20 && lines.Next(line); ++n) {
    std::vector<std::string_view> f = SplitTabs(line);
    if (f.size() >= 4 && ParseTimestamp(f[0]) && f[1].substr(0, kJobIdField.size()) == kJobIdField &&
        f[2].substr(0, kGpusField.size()) == kGpusField)
      return true;
  }
  return false;
}

StatusOr<std::vector<GoodputEvent>> ReadMegatronProgress(std::string_view text, std::string_view origin) {
  std::vector<GoodputEvent> events;
  LineCursor lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    const int64_t number = lines.line_number();
    if (Trim(line).empty())
      continue;
    std::vector<std::string_view> f = SplitTabs(line);
    auto bad = [&](std::string_view field, std::string_view why) {
      return ParseError(fmt::format("{}:{}: {}: {}", origin, number, field, why));
    };
    if (f.size() < 4)
      return bad("record", "expected '<time>\\tJob ID: ..\\t# GPUs: ..\\t<event>' (tab-separated)");
    std::optional<double> t = ParseTimestamp(f[0]);
    if (!t)
      return bad("timestamp", fmt::format("'{}' is not a '%Y-%m-%d %H:%M:%S' time", Clip(f[0])));
    std::optional<std::string_view> job = Field(f, kJobIdField);
    if (!job)
      return bad("Job ID", "missing");
    GoodputEvent e;
    e.time_s = *t;
    e.attempt = std::string(*job);
    e.source = std::string(origin);
    e.line = number;
    const std::string_view what = f[3];
    std::optional<int64_t> iteration;
    if (std::optional<std::string_view> it = Field(f, "Iteration:")) {
      iteration = ParseInteger(*it);
      if (!iteration || *iteration < 0)
        return bad("Iteration", fmt::format("'{}' is not a step number", Clip(*it)));
    }
    auto need_iteration = [&]() -> Status {
      return iteration ? Status::Ok() : bad("Iteration", fmt::format("missing after '{}'", what));
    };
    if (what == "Starting job") {
      e.kind = GoodputEventKind::kJobStart;
      events.push_back(e);
    } else if (what == "Saved checkpoint" || what == "Saving async checkpoint") {
      MFU_RETURN_IF_ERROR(need_iteration());
      // The iteration ended before the record: a step as well as a save.
      e.step = *iteration;
      e.kind = GoodputEventKind::kStep;
      events.push_back(e);
      if (what == "Saved checkpoint") {
        e.kind = GoodputEventKind::kCheckpointSaveEnd;
        e.detail = "blocking save (duration not in progress.txt)";
        events.push_back(e);
      }
    } else if (what == "Saved async checkpoint" || what == "Saved async local checkpoint") {
      MFU_RETURN_IF_ERROR(need_iteration());
      e.step = *iteration;
      e.kind = GoodputEventKind::kCheckpointSaveAsync;
      e.detail = std::string(what);
      events.push_back(e);
    }
    // "Deleted checkpoint" and unknown event strings carry no time.
  }
  if (events.empty())
    return InvalidArgumentError(fmt::format("{}: no progress.txt event found", origin));
  return events;
}

}  // namespace mfu::goodput_internal
