#include "goodput/slurm_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <ctime>
#include <map>

#include "base/strings.h"

namespace mfu::goodput_internal {
namespace {

struct StateSpec {
  const char* name;
  const char* code;  // sacct(1)'s short form; "" where it has none
  SlurmStateEnd end;
};

// sacct(1) "JOB STATE CODES" (slurm-client 22.05.8), plus the states
// job_state_string() prints that sacct lists elsewhere (squeue(1)).
constexpr std::array<StateSpec, 24> kStates = {{
    {"BOOT_FAIL", "BF", SlurmStateEnd::kFailure},      {"CANCELLED", "CA", SlurmStateEnd::kNormal},
    {"COMPLETED", "CD", SlurmStateEnd::kNormal},       {"DEADLINE", "DL", SlurmStateEnd::kFailure},
    {"FAILED", "F", SlurmStateEnd::kFailure},          {"NODE_FAIL", "NF", SlurmStateEnd::kFailure},
    {"OUT_OF_MEMORY", "OOM", SlurmStateEnd::kFailure}, {"PENDING", "PD", SlurmStateEnd::kNotEnded},
    {"PREEMPTED", "PR", SlurmStateEnd::kFailure},      {"RUNNING", "R", SlurmStateEnd::kNotEnded},
    {"REQUEUED", "RQ", SlurmStateEnd::kFailure},       {"RESIZING", "RS", SlurmStateEnd::kNotEnded},
    {"REVOKED", "RV", SlurmStateEnd::kNormal},         {"SUSPENDED", "S", SlurmStateEnd::kNotEnded},
    {"TIMEOUT", "TO", SlurmStateEnd::kFailure},        {"COMPLETING", "CG", SlurmStateEnd::kNotEnded},
    {"CONFIGURING", "CF", SlurmStateEnd::kNotEnded},   {"REQUEUE_FED", "RF", SlurmStateEnd::kNotEnded},
    {"REQUEUE_HOLD", "RH", SlurmStateEnd::kNotEnded},  {"RESV_DEL_HOLD", "RD", SlurmStateEnd::kNotEnded},
    {"SIGNALING", "SI", SlurmStateEnd::kNotEnded},     {"SPECIAL_EXIT", "SE", SlurmStateEnd::kFailure},
    {"STAGE_OUT", "SO", SlurmStateEnd::kNotEnded},     {"STOPPED", "ST", SlurmStateEnd::kNotEnded},
}};

bool ParseInt(std::string_view text, int64_t& out) {
  if (text.empty())
    return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out >= 0;
}

// Fixed-width digits at `at` of `text`.
bool Digits(std::string_view text, size_t at, size_t width, int& out) {
  if (at + width > text.size())
    return false;
  int value = 0;
  for (size_t i = at; i < at + width; ++i) {
    if (text[i] < '0' || text[i] > '9')
      return false;
    value = value * 10 + (text[i] - '0');
  }
  out = value;
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool IsLeap(int y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int DaysInMonth(int y, int m) {
  constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[static_cast<size_t>(m - 1)];
}

}  // namespace

StatusOr<std::optional<double>> ParseSlurmTime(std::string_view text) {
  text = base::Trim(text);
  const std::string lower = base::ToLower(text);
  if (lower.empty() || lower == "unknown" || lower == "none")
    return std::optional<double>();
  const Status bad = ParseError(fmt::format("'{}' is not a time (YYYY-MM-DDTHH:MM:SS, Unknown or None)", text));
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (text.size() < 19 || !Digits(text, 0, 4, y) || text[4] != '-' || !Digits(text, 5, 2, mo) || text[7] != '-' ||
      !Digits(text, 8, 2, d) || (text[10] != 'T' && text[10] != ' ') || !Digits(text, 11, 2, h) || text[13] != ':' ||
      !Digits(text, 14, 2, mi) || text[16] != ':' || !Digits(text, 17, 2, s))
    return bad;
  if (mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo) || h > 23 || mi > 59 || s > 60)
    return bad;
  const std::string_view zone = text.substr(19);
  const int64_t civil_s = DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  if (zone == "Z")
    return std::optional<double>(static_cast<double>(civil_s));
  if (!zone.empty()) {
    int zh = 0, zm = 0;
    if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || !Digits(zone, 1, 2, zh) || zone[3] != ':' ||
        !Digits(zone, 4, 2, zm) || zh > 23 || zm > 59)
      return bad;
    const int64_t offset_s = (zone[0] == '-' ? -1 : 1) * (zh * 3600 + zm * 60);
    return std::optional<double>(static_cast<double>(civil_s - offset_s));
  }
  // The controller's local time, as strftime("%FT%T", localtime_r()) wrote
  // it; mktime resolves the daylight-saving flag itself (-1).
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1))
    return bad;
  return std::optional<double>(static_cast<double>(t));
}

StatusOr<double> ParseSlurmElapsed(std::string_view text) {
  text = base::Trim(text);
  const Status bad = ParseError(fmt::format("'{}' is not an elapsed time ([DD-[HH:]]MM:SS)", text));
  int64_t days = 0;
  if (const size_t dash = text.find('-'); dash != std::string_view::npos) {
    if (!ParseInt(text.substr(0, dash), days))
      return bad;
    text = text.substr(dash + 1);
  }
  std::vector<std::string> parts = base::Split(text, ':');
  if (parts.size() < 2 || parts.size() > 3)
    return bad;
  std::array<int64_t, 3> hms{};
  const size_t skip = 3 - parts.size();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!ParseInt(parts[i], hms[skip + i]))
      return bad;
  }
  if (hms[1] > 59 || hms[2] > 59)
    return bad;
  return static_cast<double>(days * 86400 + hms[0] * 3600 + hms[1] * 60 + hms[2]);
}

std::optional<std::string> SlurmStateName(std::string_view state) {
  state = base::Trim(state);
  const size_t end = state.find_first_of(" +");
  const std::string word = base::ToLower(state.substr(0, end));
  for (const StateSpec& spec : kStates) {
    if (word == base::ToLower(spec.name) || word == base::ToLower(spec.code))
      return std::string(spec.name);
  }
  return std::nullopt;
}

SlurmStateEnd SlurmStateEndKind(std::string_view state_name) {
  for (const StateSpec& spec : kStates) {
    if (state_name == spec.name)
      return spec.end;
  }
  return SlurmStateEnd::kNotEnded;
}

void AppendAttemptEvents(const SlurmAttempt& attempt, std::string_view origin, std::vector<GoodputEvent>& out) {
  auto add = [&](GoodputEventKind kind, double time_s, std::string detail) {
    GoodputEvent e;
    e.kind = kind;
    e.time_s = time_s;
    e.attempt = attempt.job_id;
    e.source = std::string(origin);
    e.line = attempt.line;
    e.detail = std::move(detail);
    out.push_back(std::move(e));
  };
  if (attempt.submit_s)
    add(GoodputEventKind::kQueued, *attempt.submit_s, "");
  if (attempt.start_s)
    add(GoodputEventKind::kJobStart, *attempt.start_s, attempt.start_detail);
  const SlurmStateEnd end = SlurmStateEndKind(attempt.state_name);
  // A job cancelled while pending never started: it ended no attempt.
  if (attempt.end_s && attempt.start_s && end != SlurmStateEnd::kNotEnded) {
    double end_s = *attempt.end_s + 1;
    // A next attempt started in the second this one ended in: this one ends
    // when it starts (ComputeGoodput takes an end at the instant of the
    // next start as the open attempt's).
    if (attempt.next_start_s && *attempt.next_start_s >= *attempt.end_s)
      end_s = std::min(end_s, std::max(*attempt.start_s, *attempt.next_start_s));
    add(end == SlurmStateEnd::kFailure ? GoodputEventKind::kJobFailed : GoodputEventKind::kJobEnd, end_s,
        attempt.state);
  }
}

void LinkAttempts(std::vector<SlurmAttempt>& attempts) {
  std::map<std::string, size_t> last;  // job id -> index of its latest attempt so far
  for (size_t i = 0; i < attempts.size(); ++i) {
    auto [it, inserted] = last.try_emplace(attempts[i].job_id, i);
    if (!inserted) {
      attempts[it->second].next_start_s = attempts[i].start_s;
      it->second = i;
    }
  }
}

}  // namespace mfu::goodput_internal
