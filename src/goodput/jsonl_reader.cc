// Google ml-goodput-measurement records, one JSON object per line, and the
// writer of the same records (goodput.h WriteGoodputJsonl).
//
// Keys as GoodputRecorder writes them (AI-Hypercomputer/ml-goodput-measurement
// ml_goodput_measurement/src/goodput.py, the module constants _JOB_NAME ..
// _CUSTOM_BADPUT_EVENT_END_TIME; v0.2.3 @57092cf per
// ../shared/reference/telemetry-goodput-inference.md section 2.1): job_name,
// step_count + step_start_time, job_start_time, job_end_time,
// tpu_init_start_time/_end_time, training_prep_start_time/_end_time,
// data_loading_start_time/_end_time, custom_badput_event_type +
// custom_badput_event_start_time/_end_time. Times are Unix seconds (float).
// Google has no checkpoint keys in the recorder (its checkpoint badput comes
// from Orbax's logger), so these keys are mfu's own, documented in
// docs/goodput.md: step_end_time, job_failed_time, queued_time,
// checkpoint_save_start_time/_end_time, checkpoint_save_async_time,
// checkpoint_restore_start_time/_end_time, mfu_duration_s, mfu_detail.

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "goodput/goodput_readers.h"
#include "goodput/goodput_text.h"

namespace mfu {
namespace goodput_internal {
namespace {

using nlohmann::json;
using K = GoodputEventKind;

struct TimeKey {
  const char* key;
  K kind;
};

// Every time key, in the order events of one record are emitted.
constexpr TimeKey kTimeKeys[] = {
    {"queued_time", K::kQueued},
    {"job_start_time", K::kJobStart},
    {"tpu_init_start_time", K::kInitBegin},
    {"tpu_init_end_time", K::kInitEnd},
    {"training_prep_start_time", K::kInitBegin},
    {"training_prep_end_time", K::kInitEnd},
    {"checkpoint_restore_start_time", K::kCheckpointRestoreBegin},
    {"checkpoint_restore_end_time", K::kCheckpointRestoreEnd},
    {"data_loading_start_time", K::kDataLoadingBegin},
    {"data_loading_end_time", K::kDataLoadingEnd},
    {"custom_badput_event_start_time", K::kCustomBegin},
    {"custom_badput_event_end_time", K::kCustomEnd},
    {"checkpoint_save_start_time", K::kCheckpointSaveBegin},
    {"checkpoint_save_end_time", K::kCheckpointSaveEnd},
    {"checkpoint_save_async_time", K::kCheckpointSaveAsync},
    {"job_end_time", K::kJobEnd},
    {"job_failed_time", K::kJobFailed},
};

// The key the writer uses for `kind` (the first in kTimeKeys).
const char* KeyOf(K kind) {
  for (const TimeKey& k : kTimeKeys) {
    if (k.kind == kind)
      return k.key;
  }
  return nullptr;
}

// Google's step records give starts only: a step ends when the next starts
// (or the job ends); the last step of a run that never ended is not counted
// (goodput.py _get_total_productive_training_time).
struct PendingStep {
  bool active = false;
  int64_t step = 0;
  double start = 0;
  std::string attempt;
  int64_t line = 0;
};

class Reader {
 public:
  explicit Reader(std::string_view origin) : origin_(origin) {}

  Status Record(const json& j, int64_t line) {
    if (!j.is_object())
      return Bad(line, "record", "not a JSON object");
    std::string attempt;
    if (auto it = j.find("job_name"); it != j.end()) {
      if (!it->is_string())
        return Bad(line, "job_name", "not a string");
      attempt = it->get<std::string>();
    }
    std::optional<int64_t> step;
    if (auto it = j.find("step_count"); it != j.end()) {
      if (!it->is_number_integer() || it->get<int64_t>() < 0)
        return Bad(line, "step_count", "not a non-negative integer");
      step = it->get<int64_t>();
    }
    double duration = kLogNaN;
    MFU_RETURN_IF_ERROR(Number(j, "mfu_duration_s", line, duration));
    if (std::isfinite(duration) && duration < 0)
      return Bad(line, "mfu_duration_s", "negative");
    std::string detail;
    for (const char* key : {"mfu_detail", "custom_badput_event_type"}) {
      if (auto it = j.find(key); it != j.end()) {
        if (!it->is_string())
          return Bad(line, key, "not a string");
        detail = it->get<std::string>();
      }
    }
    GoodputEvent base;
    base.attempt = attempt;
    base.source = origin_;
    base.line = line;
    base.detail = detail;
    MFU_RETURN_IF_ERROR(StepRecord(j, line, step, duration, base));
    for (const TimeKey& k : kTimeKeys) {
      double t = kLogNaN;
      MFU_RETURN_IF_ERROR(Number(j, k.key, line, t));
      if (!std::isfinite(t))
        continue;
      GoodputEvent e = base;
      e.kind = k.kind;
      e.time_s = t;
      e.duration_s = duration;
      e.step = step.value_or(-1);
      if (k.kind == K::kJobStart)
        pending_.active = false;  // a restart: the open step never finished
      if ((k.kind == K::kJobEnd || k.kind == K::kJobFailed) && pending_.active) {
        if (k.kind == K::kJobEnd)
          Flush(t);
        pending_.active = false;
      }
      events_.push_back(std::move(e));
    }
    return Status::Ok();
  }

  std::vector<GoodputEvent> Finish() { return std::move(events_); }

 private:
  Status StepRecord(const json& j, int64_t line, std::optional<int64_t> step, double duration,
                    const GoodputEvent& base) {
    double start = kLogNaN, end = kLogNaN;
    MFU_RETURN_IF_ERROR(Number(j, "step_start_time", line, start));
    MFU_RETURN_IF_ERROR(Number(j, "step_end_time", line, end));
    if (!std::isfinite(start) && !std::isfinite(end))
      return Status::Ok();
    if (!step)
      return Bad(line, "step_count", "missing on a step record");
    if (std::isfinite(end)) {  // mfu's complete step record
      GoodputEvent e = base;
      e.kind = K::kStep;
      e.step = *step;
      e.time_s = end;
      // A start after the end (clocks going back) leaves the duration unknown.
      e.duration_s =
          std::isfinite(duration) ? duration : (std::isfinite(start) && end >= start ? end - start : kLogNaN);
      events_.push_back(std::move(e));
      pending_.active = false;
      return Status::Ok();
    }
    if (pending_.active && *step > pending_.step)
      Flush(start);
    pending_ = {true, *step, start, base.attempt, line};
    return Status::Ok();
  }

  void Flush(double end) {
    GoodputEvent e;
    e.kind = K::kStep;
    e.step = pending_.step;
    e.time_s = end;
    // The next step starting before this one (records out of order, a clock
    // going back) leaves this step's duration unknown, never negative.
    e.duration_s = end >= pending_.start ? end - pending_.start : kLogNaN;
    e.attempt = pending_.attempt;
    e.source = origin_;
    e.line = pending_.line;
    events_.push_back(std::move(e));
    pending_.active = false;
  }

  Status Number(const json& j, const char* key, int64_t line, double& out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
      return Status::Ok();
    if (!it->is_number())
      return Bad(line, key, "not a number");
    out = it->get<double>();
    if (!std::isfinite(out))
      return Bad(line, key, "not finite");
    return Status::Ok();
  }

  Status Bad(int64_t line, std::string_view field, std::string_view why) const {
    return ParseError(fmt::format("{}:{}: {}: {}", origin_, line, field, why));
  }

  std::string origin_;
  std::vector<GoodputEvent> events_;
  PendingStep pending_;
};

}  // namespace

bool LooksLikeGoodputJsonl(std::string_view text) {
  LineCursor lines(text);
  std::string_view line;
  for (int n = 0; n < 20 && lines.Next(line); ++n) {
    line = Trim(line);
    if (line.empty())
      continue;
    if (line.front() != '{')
      return false;
    json j = json::parse(line, nullptr, false);
    if (!j.is_object())
      return false;
    if (j.contains("job_name") || j.contains("step_start_time") || j.contains("job_start_time") ||
        j.contains("step_end_time"))
      return true;
    return false;
  }
  return false;
}

StatusOr<std::vector<GoodputEvent>> ReadGoodputJsonl(std::string_view text, std::string_view origin) {
  Reader reader(origin);
  LineCursor lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    line = Trim(line);
    if (line.empty())
      continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded())
      return ParseError(fmt::format("{}:{}: record: not valid JSON", origin, lines.line_number()));
    MFU_RETURN_IF_ERROR(reader.Record(j, lines.line_number()));
  }
  std::vector<GoodputEvent> events = reader.Finish();
  if (events.empty())
    return InvalidArgumentError(fmt::format("{}: no goodput record with a time key found", origin));
  return events;
}

}  // namespace goodput_internal

std::string WriteGoodputJsonl(std::span<const GoodputEvent> events) {
  using nlohmann::json;
  std::string out;
  for (const GoodputEvent& e : events) {
    json j = json::object();
    j["job_name"] = e.attempt;
    if (e.kind == GoodputEventKind::kStep) {
      j["step_count"] = e.step;
      if (std::isfinite(e.duration_s))
        j["step_start_time"] = e.time_s - e.duration_s;
      j["step_end_time"] = e.time_s;
    } else if (const char* key = goodput_internal::KeyOf(e.kind)) {
      j[key] = e.time_s;
      if (e.step >= 0)
        j["step_count"] = e.step;
    } else {
      continue;
    }
    if (std::isfinite(e.duration_s))
      j["mfu_duration_s"] = e.duration_s;
    if (e.kind == GoodputEventKind::kCustomBegin || e.kind == GoodputEventKind::kCustomEnd)
      j["custom_badput_event_type"] = e.detail;
    else if (!e.detail.empty())
      j["mfu_detail"] = e.detail;
    out += j.dump(-1, ' ', false, json::error_handler_t::replace);
    out += '\n';
  }
  return out;
}

}  // namespace mfu
