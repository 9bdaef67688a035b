// sacct --parsable2 (and --parsable) output to goodput events. Format:
// sacct(1) of slurm-client 22.05.8 (Debian bookworm,
// /usr/share/man/man1/sacct.1.gz): "-P, --parsable2: Output will be '|'
// delimited without a '|' at the end"; JobID "JobID[.JobStep]", array jobs
// "ArrayJobID_ArrayTaskID", heterogeneous jobs "HetJobID+HetJobOffset";
// times "YYYY-MM-DDTHH:MM:SS" or "Unknown"; Elapsed "[DD-[HH:]]MM:SS";
// "-D, --duplicates" lists every requeued attempt of a job, one row each.

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/strings.h"
#include "goodput/goodput_readers.h"
#include "goodput/slurm_fields.h"

namespace mfu::goodput_internal {
namespace {

enum Column : size_t {
  kJobId = 0,
  kState,
  kStart,
  kEnd,
  kSubmit,
  kElapsed,
  kRestarts,
  kExitCode,
  kNodeList,
  kNNodes,
  kAllocTres,
  kNumColumns
};
constexpr std::array<const char*, kNumColumns> kColumnNames = {
    "JobID", "State", "Start", "End", "Submit", "Elapsed", "Restarts", "ExitCode", "NodeList", "NNodes", "AllocTRES",
};
constexpr size_t kNoColumn = static_cast<size_t>(-1);

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t begin = 0;
  for (;;) {
    const size_t bar = line.find('|', begin);
    out.push_back(line.substr(begin, bar == std::string_view::npos ? std::string_view::npos : bar - begin));
    if (bar == std::string_view::npos)
      break;
    begin = bar + 1;
  }
  return out;
}

// A JobID split: "123.batch" -> job "123", step "batch"; "123_4" -> job
// "123_4"; "123+1.0" -> job "123", het component "1", step "0".
struct JobIdParts {
  std::string job;
  std::string component;  // het offset, "" when not heterogeneous
  std::string step;       // "" for the job's own row
};

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<JobIdParts> SplitJobId(std::string_view id) {
  JobIdParts out;
  const size_t dot = id.find('.');
  if (dot != std::string_view::npos) {
    out.step = std::string(id.substr(dot + 1));
    id = id.substr(0, dot);
    if (out.step.empty())
      return std::nullopt;
  }
  if (const size_t plus = id.find('+'); plus != std::string_view::npos) {
    if (!AllDigits(id.substr(plus + 1)))
      return std::nullopt;
    out.component = std::string(id.substr(plus + 1));
    id = id.substr(0, plus);
  }
  const size_t under = id.find('_');
  const std::string_view base = id.substr(0, under);
  if (!AllDigits(base))
    return std::nullopt;
  if (under != std::string_view::npos) {
    const std::string_view task = id.substr(under + 1);
    const bool pending_range = task.size() >= 2 && task.front() == '[' && task.back() == ']';
    if (!AllDigits(task) && !pending_range)
      return std::nullopt;
  }
  out.job = std::string(id);
  return out;
}

struct Row {
  JobIdParts id;
  SlurmAttempt attempt;
  int64_t restarts = 0;
};

class SacctReader {
 public:
  explicit SacctReader(std::string_view origin) : origin_(origin) {}

  StatusOr<std::vector<GoodputEvent>> Read(std::string_view text) {
    int64_t line_no = 0;
    bool have_header = false;
    for (size_t pos = 0; pos <= text.size();) {
      const size_t nl = text.find('\n', pos);
      const std::string_view line =
          StripCr(text.substr(pos, nl == std::string_view::npos ? text.size() - pos : nl - pos));
      pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
      ++line_no;
      if (base::Trim(line).empty())
        continue;
      if (!have_header) {
        MFU_RETURN_IF_ERROR(ReadHeader(line, line_no));
        have_header = true;
        continue;
      }
      MFU_RETURN_IF_ERROR(ReadRow(line, line_no));
    }
    if (!have_header)
      return InvalidArgumentError(fmt::format("{}: empty, no sacct header line", origin_));
    return Events();
  }

 private:
  Status Error(int64_t line, std::string_view message) const {
    return ParseError(fmt::format("{}:{}: {}", origin_, line, message));
  }

  Status ReadHeader(std::string_view line, int64_t line_no) {
    header_ = SplitFields(line);
    trailing_bar_ = header_.size() > 1 && header_.back().empty();
    if (trailing_bar_)
      header_.pop_back();
    columns_.fill(kNoColumn);
    for (size_t i = 0; i < header_.size(); ++i) {
      const std::string name = base::ToLower(base::Trim(header_[i]));
      for (size_t c = 0; c < kNumColumns; ++c) {
        if (name == base::ToLower(kColumnNames[c]) && columns_[c] == kNoColumn)
          columns_[c] = i;
      }
      if (name == "jobidraw" && columns_[kJobId] == kNoColumn)
        columns_[kJobId] = i;
    }
    for (size_t c : {kJobId, kState, kStart, kEnd}) {
      if (columns_[c] == kNoColumn)
        return Error(line_no, fmt::format("header has no '{}' column (sacct --parsable2 output needs JobID, State, "
                                          "Start and End: sacct -P -D -o JobID,State,Submit,Start,End,...)",
                                          kColumnNames[c]));
    }
    return Status::Ok();
  }

  std::string_view Field(const std::vector<std::string_view>& fields, Column c) const {
    return columns_[c] == kNoColumn ? std::string_view() : base::Trim(fields[columns_[c]]);
  }

  StatusOr<std::optional<double>> Time(const std::vector<std::string_view>& fields, Column c, int64_t line) const {
    StatusOr<std::optional<double>> t = ParseSlurmTime(Field(fields, c));
    if (!t.ok())
      return Error(line, fmt::format("column '{}': {}", kColumnNames[c], t.status().message()));
    return t;
  }

  Status ReadRow(std::string_view line, int64_t line_no) {
    std::vector<std::string_view> fields = SplitFields(line);
    if (trailing_bar_ && fields.size() == header_.size() + 1 && fields.back().empty())
      fields.pop_back();
    if (fields.size() != header_.size())
      return Error(line_no,
                   fmt::format("{} fields, the header has {} (a '|' inside a field?)", fields.size(), header_.size()));
    Row row;
    const std::string_view id = Field(fields, kJobId);
    std::optional<JobIdParts> parts = SplitJobId(id);
    if (!parts)
      return Error(line_no, fmt::format("column 'JobID': '{}' is not a job id (123, 123.batch, 123_4, 123+0)", id));
    row.id = std::move(*parts);
    SlurmAttempt& a = row.attempt;
    a.job_id = row.id.job;
    a.line = line_no;
    a.state = std::string(Field(fields, kState));
    std::optional<std::string> state_name = SlurmStateName(a.state);
    if (!state_name)
      return Error(line_no, fmt::format("column 'State': '{}' is not a Slurm job state", a.state));
    a.state_name = *state_name;
    MFU_ASSIGN_OR_RETURN(a.submit_s, Time(fields, kSubmit, line_no));
    MFU_ASSIGN_OR_RETURN(a.start_s, Time(fields, kStart, line_no));
    MFU_ASSIGN_OR_RETURN(a.end_s, Time(fields, kEnd, line_no));
    if (const std::string_view elapsed = Field(fields, kElapsed); !elapsed.empty()) {
      StatusOr<double> s = ParseSlurmElapsed(elapsed);
      if (!s.ok())
        return Error(line_no, fmt::format("column 'Elapsed': {}", s.status().message()));
      // An ended attempt whose End was not recorded ended Elapsed after Start.
      if (!a.end_s && a.start_s && SlurmStateEndKind(a.state_name) != SlurmStateEnd::kNotEnded)
        a.end_s = *a.start_s + *s;
    }
    if (a.start_s && a.end_s && *a.end_s < *a.start_s)
      return Error(line_no, "column 'End': before Start");
    if (const std::string_view restarts = Field(fields, kRestarts); !restarts.empty()) {
      const auto [p, ec] = std::from_chars(restarts.data(), restarts.data() + restarts.size(), row.restarts);
      if (ec != std::errc() || p != restarts.data() + restarts.size() || row.restarts < 0)
        return Error(line_no, fmt::format("column 'Restarts': '{}' is not a count", restarts));
    }
    MFU_RETURN_IF_ERROR(ReadExitCode(fields, line_no, a));
    a.start_detail = NodeDetail(fields);
    const std::string key = row.id.job;
    if (jobs_.find(key) == jobs_.end())
      order_.push_back(key);
    jobs_[key].push_back(std::move(row));
    return Status::Ok();
  }

  Status ReadExitCode(const std::vector<std::string_view>& fields, int64_t line_no, SlurmAttempt& a) const {
    const std::string_view code = Field(fields, kExitCode);
    if (code.empty())
      return Status::Ok();
    const size_t colon = code.find(':');
    if (colon == std::string_view::npos || !AllDigits(code.substr(0, colon)) || !AllDigits(code.substr(colon + 1)))
      return Error(line_no, fmt::format("column 'ExitCode': '{}' is not exit:signal", code));
    if (code != "0:0")
      a.state += fmt::format(" (exit {})", code);
    return Status::Ok();
  }

  std::string NodeDetail(const std::vector<std::string_view>& fields) const {
    std::string nodes(Field(fields, kNNodes));
    if (nodes.empty()) {
      // AllocTRES "billing=8,cpu=8,mem=16G,node=2".
      for (const std::string& tres : base::Split(Field(fields, kAllocTres), ','))
        if (base::StartsWith(tres, "node="))
          nodes = tres.substr(5);
    }
    std::string out = nodes.empty() ? "" : "nodes=" + nodes;
    const std::string_view list = Field(fields, kNodeList);
    if (!list.empty() && list != "None assigned")
      out += (out.empty() ? "" : " ") + std::string(list);
    return out;
  }

  // One job's rows to attempts: its own rows (one per attempt with -D),
  // heterogeneous components merged attempt by attempt; a job listed only
  // by its steps is one attempt spanning them.
  std::vector<SlurmAttempt> Attempts(const std::vector<Row>& rows) const {
    std::map<std::string, std::vector<const Row*>> by_component;
    std::vector<const Row*> steps;
    for (const Row& r : rows)
      (r.id.step.empty() ? by_component[r.id.component] : steps).push_back(&r);
    std::vector<SlurmAttempt> out;
    if (by_component.empty()) {
      SlurmAttempt a = steps.front()->attempt;
      for (const Row* s : steps) {
        a.start_s = Earliest(a.start_s, s->attempt.start_s);
        a.end_s = Latest(a.end_s, s->attempt.end_s);
        if (s->id.step == "batch") {
          a.state = s->attempt.state;
          a.state_name = s->attempt.state_name;
        }
      }
      out.push_back(a);
      return out;
    }
    int64_t restarts = 0;
    for (const auto& [component, list] : by_component) {
      for (size_t i = 0; i < list.size(); ++i) {
        restarts = std::max(restarts, list[i]->restarts);
        if (i >= out.size()) {
          out.push_back(list[i]->attempt);
          continue;
        }
        SlurmAttempt& a = out[i];
        const SlurmAttempt& b = list[i]->attempt;
        a.submit_s = Earliest(a.submit_s, b.submit_s);
        a.start_s = Earliest(a.start_s, b.start_s);
        a.end_s = Latest(a.end_s, b.end_s);
        if (SlurmStateEndKind(b.state_name) == SlurmStateEnd::kFailure) {
          a.state = b.state;
          a.state_name = b.state_name;
        }
      }
    }
    if (restarts + 1 > static_cast<int64_t>(out.size()) && !out.empty()) {
      SlurmAttempt& last = out.back();
      last.start_detail += fmt::format("{}requeued {} times; the earlier attempts are not listed (sacct -D lists them)",
                                       last.start_detail.empty() ? "" : "; ", restarts);
    }
    return out;
  }

  static std::optional<double> Earliest(std::optional<double> a, std::optional<double> b) {
    return !a ? b : (!b ? a : std::optional<double>(std::min(*a, *b)));
  }
  static std::optional<double> Latest(std::optional<double> a, std::optional<double> b) {
    return !a ? b : (!b ? a : std::optional<double>(std::max(*a, *b)));
  }

  StatusOr<std::vector<GoodputEvent>> Events() const {
    std::vector<GoodputEvent> out;
    for (const std::string& job : order_) {
      std::vector<SlurmAttempt> attempts = Attempts(jobs_.at(job));
      LinkAttempts(attempts);
      for (const SlurmAttempt& a : attempts)
        AppendAttemptEvents(a, origin_, out);
    }
    if (out.empty())
      return InvalidArgumentError(
          fmt::format("{}: no job in the sacct output has a Submit, Start or End time", origin_));
    return out;
  }

  std::string_view origin_;
  std::vector<std::string_view> header_;
  bool trailing_bar_ = false;
  std::array<size_t, kNumColumns> columns_{};
  std::map<std::string, std::vector<Row>> jobs_;
  std::vector<std::string> order_;  // jobs in order of first appearance
};

}  // namespace

bool LooksLikeSacct(std::string_view text) {
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos)
    return false;
  const size_t nl = text.find('\n', start);
  const std::string header = base::ToLower(text.substr(start, nl == std::string_view::npos ? nl : nl - start));
  if (header.find('|') == std::string::npos)
    return false;
  bool job_id = false, state = false;
  for (std::string_view f : SplitFields(header)) {
    f = base::Trim(f);
    job_id = job_id || f == "jobid" || f == "jobidraw";
    state = state || f == "state";
  }
  return job_id && state;
}

StatusOr<std::vector<GoodputEvent>> ReadSacct(std::string_view text, std::string_view origin) {
  return SacctReader(origin).Read(text);
}

}  // namespace mfu::goodput_internal
