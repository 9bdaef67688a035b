// TimelineBuilder (one rank kept, duplicates dropped, restarts as attempts)
// and the number/timestamp readers every parser shares.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "log/log_line.h"
#include "log/log_parser.h"

namespace mfu::log_internal {
namespace {

// Distinct rank prefixes remembered; more are counted as one "other".
constexpr size_t kMaxRanksKept = 4096;
// Kept steps searched back for the last one of the same kind (training or
// validation): bounded, so the search stays O(1) per line.
constexpr size_t kLastStepWindow = 64;
// Events compared for a repeat printed by another rank.
constexpr size_t kEventRepeatWindow = 16;

bool SameTime(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return !(a < b) && !(b < a);
}

}  // namespace

TimelineBuilder::TimelineBuilder(int64_t max_steps) : max_steps_(max_steps) {}

Status TimelineBuilder::AddStep(LogStep step, std::string_view rank) {
  ++stats_.step_lines;
  // Past the cap the count stays at kMaxRanksKept and no search is made
  // (a hostile log of distinct prefixes stays linear).
  if (ranks_.size() < kMaxRanksKept && std::find(ranks_.begin(), ranks_.end(), rank) == ranks_.end())
    ranks_.emplace_back(rank);
  if (!rank_chosen_) {
    rank_chosen_ = true;
    chosen_rank_ = std::string(rank);
  }
  const bool chosen = rank == chosen_rank_;
  // The last kept step of the current attempt, validation lines aside.
  const LogStep* last = nullptr;
  size_t looked = 0;
  for (auto it = steps_.rbegin(); it != steps_.rend() && it->attempt == attempt_ && looked < kLastStepWindow;
       ++it, ++looked) {
    if (it->validation == step.validation) {
      last = &*it;
      break;
    }
  }
  if (last != nullptr) {
    if (!chosen && step.step <= last->step) {
      ++stats_.duplicate_lines;  // another rank's copy of a kept step
      return Status::Ok();
    }
    if (chosen && step.step == last->step) {
      ++stats_.duplicate_lines;  // the same line printed twice (tee + file)
      return Status::Ok();
    }
    if (chosen && step.step < last->step && !step.validation)
      ++attempt_;  // the step id went back: a restart
  } else if (!chosen && !steps_.empty() && steps_.back().attempt == attempt_ - 1 && step.step <= steps_.back().step) {
    ++stats_.duplicate_lines;  // another rank still printing the previous attempt
    return Status::Ok();
  }
  if (static_cast<int64_t>(steps_.size()) >= max_steps_)
    return OutOfRangeError("more than " + std::to_string(max_steps_) + " step lines (the limit)");
  step.attempt = attempt_;
  steps_.push_back(step);
  return Status::Ok();
}

void TimelineBuilder::AddEvent(LogEvent event) {
  event.attempt = attempt_;
  const size_t n = std::min(events_.size(), kEventRepeatWindow);
  for (size_t i = events_.size() - n; i < events_.size(); ++i) {
    const LogEvent& e = events_[i];
    if (e.kind == event.kind && e.step == event.step && e.attempt == event.attempt && e.detail == event.detail &&
        SameTime(e.time_s, event.time_s))
      return;  // the same record printed by another rank
  }
  if (events_.size() < static_cast<size_t>(std::max<int64_t>(max_steps_, 1024)))
    events_.push_back(std::move(event));
}

void TimelineBuilder::NewAttempt(int64_t line) {
  (void)line;
  if (!steps_.empty() && steps_.back().attempt == attempt_) {
    ++attempt_;
    rank_chosen_ = false;  // the new run's launcher may label lines differently
  }
}

LogTimeline TimelineBuilder::Take(std::string_view origin, LogFormat format) {
  LogTimeline out;
  out.origin = std::string(origin);
  out.format = format;
  out.header = std::move(header_);
  out.steps = std::move(steps_);
  out.events = std::move(events_);
  out.attempts = attempt_ + 1;
  stats_.ranks_seen = static_cast<int64_t>(ranks_.size());
  stats_.chosen_rank = chosen_rank_;
  out.stats = std::move(stats_);
  return out;
}

std::optional<double> ParseLogNumber(std::string_view text) {
  text = TrimLog(text);
  if (text.empty() || text.size() > 64)
    return std::nullopt;
  double scale = 1;
  bool suffix = true;
  if (text.back() == '%') {
    text.remove_suffix(1);
  } else {
    switch (text.back()) {
      case 'K':
      case 'k':
        scale = 1e3;
        break;
      case 'M':
        scale = 1e6;
        break;
      case 'B':
      case 'G':
        scale = 1e9;
        break;
      case 'T':
        scale = 1e12;
        break;
      default:
        suffix = false;
        break;
    }
    // "2.05K", but not "inf"/"nan" spelt in capitals.
    if (suffix && text.size() > 1 && (text[text.size() - 2] >= '0' && text[text.size() - 2] <= '9'))
      text.remove_suffix(1);
    else
      scale = 1;
  }
  text = TrimLog(text);
  if (!text.empty() && text[0] == '+')
    text.remove_prefix(1);
  char buffer[72];
  size_t n = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ',') {
      // A thousands separator sits between digits: "6,785".
      if (i == 0 || i + 1 >= text.size() || text[i - 1] < '0' || text[i - 1] > '9' || text[i + 1] < '0' ||
          text[i + 1] > '9')
        return std::nullopt;
      continue;
    }
    buffer[n++] = c;
  }
  if (n == 0)
    return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(buffer, buffer + n, value);
  if (ec != std::errc() || end != buffer + n)
    return std::nullopt;
  return value * scale;
}

std::optional<double> ParseLogTimestamp(std::string_view text) {
  text = TrimLog(text);
  // "[2024-07-16 22:14:01]" is read too (Megatron's brackets).
  if (text.size() > 2 && text.front() == '[' && text.back() == ']')
    text = text.substr(1, text.size() - 2);
  double time_s = 0;
  if (text.empty() || TimestampLength(text, time_s) != text.size())
    return std::nullopt;
  return time_s;
}

}  // namespace mfu::log_internal
