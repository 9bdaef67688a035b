#include "log/format_common.h"

#include <cmath>

namespace mfu::log_internal {
namespace {

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

std::string_view SkipBlanks(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) {
    ++i;
  }
  return s.substr(i);
}

}  // namespace

std::optional<std::string_view> After(std::string_view text, std::string_view key) {
  size_t at = text.find(key);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  return SkipBlanks(text.substr(at + key.size()));
}

std::string_view Token(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '|' || c == ')' || c == ']' || c == ':' ||
        (c == ',' && !(i + 1 < text.size() && IsDigit(text[i + 1])))) {
      break;
    }
    ++i;
  }
  return text.substr(0, i);
}

std::optional<double> NumberAfter(std::string_view text, std::string_view key) {
  std::optional<std::string_view> rest = After(text, key);
  if (!rest) {
    return std::nullopt;
  }
  return ParseLogNumber(Token(*rest));
}

std::optional<double> PercentAfter(std::string_view text, std::string_view key) {
  std::optional<std::string_view> rest = After(text, key);
  if (!rest) {
    return std::nullopt;
  }
  std::string_view tok = Token(*rest);
  if (tok.empty() || tok.back() != '%') {
    return std::nullopt;
  }
  std::optional<double> percent = ParseLogNumber(tok.substr(0, tok.size() - 1));
  if (!percent) {
    return std::nullopt;
  }
  return *percent / 100.0;
}

std::optional<int64_t> AsInt(std::optional<double> value) {
  if (!value || !std::isfinite(*value) || *value < 0 || *value > 9007199254740992.0 || !IsWhole(*value)) {
    return std::nullopt;
  }
  return static_cast<int64_t>(*value);
}

int64_t CheckedProduct(int64_t a, int64_t b, int64_t c) {
  int64_t ab = 0;
  int64_t abc = 0;
  if (a <= 0 || b <= 0 || c <= 0 || __builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc)) {
    return 0;
  }
  return abc;
}

std::optional<int64_t> IntAfter(std::string_view text, std::string_view key) {
  return AsInt(NumberAfter(text, key));
}

LogEvent MakeEvent(LogEventKind kind, int64_t line, const TimelineBuilder& out, int64_t step) {
  LogEvent e;
  e.kind = kind;
  e.line = line;
  e.attempt = out.attempt();
  e.step = step;
  return e;
}

std::optional<LogStep> StepWithLoss(std::optional<int64_t> step, std::optional<double> loss, int64_t line,
                                    TimelineBuilder& out) {
  if (!step || !loss) {
    out.CountPartial();
    return std::nullopt;
  }
  LogStep s;
  s.step = *step;
  s.line = line;
  s.loss = *loss;
  return s;
}

LogStep* LastTrainStep(TimelineBuilder& out) {
  std::vector<LogStep>& steps = out.mutable_steps();
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    if (!it->validation) {
      return &*it;
    }
  }
  return nullptr;
}

void FillThroughputScopes(TimelineBuilder& out) {
  int64_t world = out.header().world_size;
  if (world <= 0) {
    return;
  }
  double n = static_cast<double>(world);
  for (LogStep& s : out.mutable_steps()) {
    if (std::isnan(s.tokens_per_s) && !std::isnan(s.tokens_per_s_per_gpu)) {
      s.tokens_per_s = s.tokens_per_s_per_gpu * n;
    } else if (std::isnan(s.tokens_per_s_per_gpu) && !std::isnan(s.tokens_per_s)) {
      s.tokens_per_s_per_gpu = s.tokens_per_s / n;
    }
  }
}

void FillStepTimesFromTimestamps(TimelineBuilder& out, const std::vector<double>& attempt_start_time_s) {
  const LogStep* prev = nullptr;
  for (LogStep& s : out.mutable_steps()) {
    if (s.validation) {
      continue;
    }
    bool same_attempt = prev != nullptr && prev->attempt == s.attempt;
    if (std::isnan(s.step_time_s) && !std::isnan(s.time_s)) {
      if (same_attempt && !std::isnan(prev->time_s) && s.step > prev->step && s.time_s >= prev->time_s) {
        int64_t covered = s.step - prev->step;
        s.step_time_s = (s.time_s - prev->time_s) / static_cast<double>(covered);
        s.steps_covered = static_cast<int32_t>(covered < (1 << 30) ? covered : (1 << 30));
      } else if (!same_attempt && s.attempt >= 0 && static_cast<size_t>(s.attempt) < attempt_start_time_s.size()) {
        double start = attempt_start_time_s[static_cast<size_t>(s.attempt)];
        if (!std::isnan(start) && s.time_s >= start) {
          s.step_time_s = s.time_s - start;
        }
      }
    }
    prev = &s;
  }
}

}  // namespace mfu::log_internal
