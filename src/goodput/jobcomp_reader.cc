// Slurm's job-completion log (JobCompType=jobcomp/filetxt) to goodput
// events. slurmctld appends one line per ended job (each requeue ends one):
// the JOB_FORMAT of src/plugins/jobcomp/filetxt/jobcomp_filetxt.c
// (SchedMD/slurm at 07df9429be3b1d81e0ce1c769432c4f180fabb91):
//   "JobId=%lu UserId=%s(%lu) GroupId=%s(%lu) Name=%s JobState=%s
//    Partition=%s TimeLimit=%s StartTime=%s EndTime=%s NodeList=%s
//    NodeCnt=%u ProcCnt=%u WorkDir=%s ReservationName=%s Tres=%s Account=%s
//    QOS=%s WcKey=%s Cluster=%s SubmitTime=%s EligibleTime=%s%s%s
//    DerivedExitCode=%s ExitCode=%s \n"
// with times strftime("%FT%T") of the local time, "Unknown" for 0 (and
// StartTime "Unknown" for a job cancelled while pending), SubmitTime
// "unknown" when not recorded, and " ArrayJobId=%u ArrayTaskId=%u" /
// " HetJobId=%u HetJobOffset=%u" where they apply. Values are not quoted:
// a job name or directory with spaces continues the previous value.

#include <fmt/format.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/strings.h"
#include "goodput/goodput_readers.h"
#include "goodput/slurm_fields.h"

namespace mfu::goodput_internal {
namespace {

// "Key=" at the start of `token`, Key letters only (jobcomp's keys are).
bool StartsWithKey(std::string_view token) {
  const size_t eq = token.find('=');
  if (eq == 0 || eq == std::string_view::npos)
    return false;
  for (size_t i = 0; i < eq; ++i) {
    const char c = token[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
      return false;
  }
  return true;
}

// The Key=Value fields of one record; a space-separated token that is not
// "Key=..." belongs to the previous value.
std::map<std::string, std::string, std::less<>> SplitRecord(std::string_view line) {
  std::map<std::string, std::string, std::less<>> out;
  std::string* last = nullptr;
  for (size_t pos = 0; pos < line.size();) {
    const size_t space = line.find(' ', pos);
    const std::string_view token =
        line.substr(pos, space == std::string_view::npos ? std::string_view::npos : space - pos);
    pos = space == std::string_view::npos ? line.size() : space + 1;
    if (token.empty())
      continue;
    if (StartsWithKey(token)) {
      const size_t eq = token.find('=');
      last = &out[std::string(token.substr(0, eq))];
      *last = std::string(token.substr(eq + 1));
    } else if (last != nullptr) {
      *last += " ";
      *last += token;
    }
  }
  return out;
}

bool IsRecord(std::string_view line) {
  line = base::Trim(line);
  return base::StartsWith(line, "JobId=") && line.find(" JobState=") != std::string_view::npos;
}

}  // namespace

bool LooksLikeSlurmJobComp(std::string_view text) {
  int64_t lines = 0;
  for (size_t pos = 0; pos < text.size() && lines < 5;) {
    const size_t nl = text.find('\n', pos);
    const std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (base::Trim(line).empty())
      continue;
    ++lines;
    if (IsRecord(line))
      return true;
  }
  return false;
}

StatusOr<std::vector<GoodputEvent>> ReadSlurmJobComp(std::string_view text, std::string_view origin) {
  std::vector<SlurmAttempt> attempts;
  int64_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t nl = text.find('\n', pos);
    const std::string_view line =
        StripCr(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (base::Trim(line).empty())
      continue;
    auto error = [&](std::string_view message) {
      return ParseError(fmt::format("{}:{}: {}", origin, line_no, message));
    };
    if (!IsRecord(line))
      return error("not a jobcomp/filetxt record (JobId=... JobState=... StartTime=... EndTime=...)");
    const auto fields = SplitRecord(base::Trim(line));
    auto get = [&](std::string_view key) -> std::optional<std::string_view> {
      auto it = fields.find(key);
      return it == fields.end() ? std::nullopt : std::optional<std::string_view>(it->second);
    };
    for (const char* key : {"JobId", "JobState", "StartTime", "EndTime"}) {
      if (!get(key))
        return error(fmt::format("field '{}' missing", key));
    }
    SlurmAttempt a;
    a.line = line_no;
    a.job_id = std::string(*get("JobId"));
    if (a.job_id.empty() || a.job_id.find_first_not_of("0123456789") != std::string::npos)
      return error(fmt::format("field 'JobId': '{}' is not a job id", a.job_id));
    // An array task or a heterogeneous component is named as sacct names it.
    if (auto task = get("ArrayTaskId"); task && get("ArrayJobId"))
      a.job_id = fmt::format("{}_{}", *get("ArrayJobId"), *task);
    else if (auto het = get("HetJobId"); het && *het != "0")
      a.job_id = std::string(*het);
    a.state = std::string(*get("JobState"));
    std::optional<std::string> state_name = SlurmStateName(a.state);
    if (!state_name)
      return error(fmt::format("field 'JobState': '{}' is not a Slurm job state", a.state));
    a.state_name = *state_name;
    for (const auto& [key, slot] : {std::pair<const char*, std::optional<double>*>{"SubmitTime", &a.submit_s},
                                    {"StartTime", &a.start_s},
                                    {"EndTime", &a.end_s}}) {
      StatusOr<std::optional<double>> t = ParseSlurmTime(get(key).value_or(""));
      if (!t.ok())
        return error(fmt::format("field '{}': {}", key, t.status().message()));
      *slot = *t;
    }
    if (a.start_s && a.end_s && *a.end_s < *a.start_s)
      return error("field 'EndTime': before StartTime");
    if (auto code = get("ExitCode"); code && *code != "0:0" && !code->empty())
      a.state += fmt::format(" (exit {})", *code);
    const std::string nodes(get("NodeCnt").value_or(""));
    const std::string list(get("NodeList").value_or(""));
    a.start_detail = nodes.empty() ? list : (list.empty() ? "nodes=" + nodes : "nodes=" + nodes + " " + list);
    // A record is written when an attempt ends; one in a state that has not
    // ended (slurmctld 22.05 logs a requeued job as PENDING) was requeued.
    if (a.start_s && a.end_s && SlurmStateEndKind(a.state_name) == SlurmStateEnd::kNotEnded) {
      a.state = fmt::format("REQUEUED (logged as {})", a.state);
      a.state_name = "REQUEUED";
    }
    attempts.push_back(std::move(a));
  }
  if (attempts.empty())
    return InvalidArgumentError(fmt::format("{}: no jobcomp/filetxt record", origin));
  LinkAttempts(attempts);
  std::vector<GoodputEvent> out;
  for (const SlurmAttempt& a : attempts)
    AppendAttemptEvents(a, origin, out);
  return out;
}

}  // namespace mfu::goodput_internal
