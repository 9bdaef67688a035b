// Composer / llm-foundry console (mosaicml/composer @6405188,
// composer/loggers/console_logger.py L206-248; training-logs.md section 10): a
// record "[batch=N/M]:" (or "[epoch=E][batch=N/M]:", "[token=..]",
// "[sample=..]") followed by one "\t Train <key>: <value>" line per metric
// (floats {:.4f}); under srun each physical line has its own prefix, which
// the core removes. The old form (2022-23) repeats the progress on every
// line: "[epoch=0][batch=16/625]: wall_clock/train: 17.1607". A record
// ends at the next record, at a line that is neither, or at Finish.
//
// Keys (SpeedMonitor, composer/callbacks/speed_monitor.py L300-375):
// throughput/device/tokens_per_sec (per device), throughput/tokens_per_sec
// and throughput/samples_per_sec (whole job), throughput/device/flops_per_sec,
// throughput/device/mfu (a FRACTION), time/train (cumulative, hours by
// default; old wall_clock/train in seconds), loss/train/total, time/token
// and time/sample (cumulative counts), memory/reserved_mem (GB; bytes in the
// old form), lr-*.

#include <cmath>
#include <string>

#include "log/format_common.h"
#include "log/log_parser.h"

namespace mfu::log_internal {
namespace {

struct Progress {
  int64_t batch = -1;  // N of [batch=N/M], -1 when the unit is not batches
  int64_t total = 0;
  size_t length = 0;  // characters through "]:"
};

// "[epoch=0][batch=16/625]:" / "[batch=1/100]:" / "[token=2048/10000]:".
std::optional<Progress> ParseProgress(std::string_view t) {
  size_t i = 0;
  if (t.starts_with("[epoch=")) {
    i = t.find(']');
    if (i == std::string_view::npos) {
      return std::nullopt;
    }
    ++i;
  }
  std::string_view rest = t.substr(i);
  Progress p;
  std::string_view unit;
  for (std::string_view u : {std::string_view("[batch="), std::string_view("[token="), std::string_view("[sample=")}) {
    if (rest.starts_with(u)) {
      unit = u;
    }
  }
  if (unit.empty()) {
    return std::nullopt;
  }
  size_t slash = rest.find('/');
  size_t close = rest.find("]:");
  if (slash == std::string_view::npos || close == std::string_view::npos || slash > close) {
    return std::nullopt;
  }
  std::optional<int64_t> n = AsInt(ParseLogNumber(rest.substr(unit.size(), slash - unit.size())));
  std::optional<int64_t> m = AsInt(ParseLogNumber(rest.substr(slash + 1, close - slash - 1)));
  if (!n || !m) {
    return std::nullopt;
  }
  p.batch = unit == "[batch=" ? *n : -1;
  p.total = *m;
  p.length = i + close + 2;
  return p;
}

class ComposerParser final : public FormatParser {
 public:
  LogFormat format() const override { return LogFormat::kComposer; }

  int Signature(std::string_view text) const override { return ParseProgress(text) ? 2 : 0; }

  bool Consume(const CleanLine& line, TimelineBuilder& out) override {
    std::string_view text = line.text;
    if (std::optional<Progress> p = ParseProgress(text)) {
      std::string_view rest = text.substr(p->length);
      bool same = pending_ && p->batch == pending_batch_ && !rest.empty() && pending_total_ == p->total;
      if (!same) {
        Flush(out);
        Start(*p, line);
      }
      if (!rest.empty()) {
        Metric(rest, out);  // the old one-line-per-metric form
      }
      return true;
    }
    std::string_view t = text;
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) {
      t.remove_prefix(1);
    }
    // The core trims the line, so "\t Train key: value" arrives as "Train key: value".
    if (pending_ && (t.starts_with("Train ") || t.starts_with("Eval ")) && t.find(": ") != std::string_view::npos) {
      if (t.starts_with("Eval ")) {
        pending_eval_ = true;
      }
      Metric(t.substr(t.find(' ') + 1), out);
      return true;
    }
    Flush(out);
    return false;
  }

  void Finish(TimelineBuilder& out) override {
    Flush(out);
    FillThroughputScopes(out);
  }

 private:
  void Start(const Progress& p, const CleanLine& line) {
    pending_ = true;
    pending_eval_ = false;
    pending_batch_ = p.batch;
    pending_total_ = p.total;
    step_ = LogStep{};
    step_.step = p.batch;
    step_.line = line.line;
    rank_ = std::string(line.rank);
    train_hours_ = kLogNaN;
    train_seconds_ = kLogNaN;
    time_batch_ = -1;
  }

  // "key: value" of one metric.
  void Metric(std::string_view kv, TimelineBuilder& out) {
    size_t colon = kv.rfind(": ");
    if (colon == std::string_view::npos) {
      return;
    }
    std::string_view key = kv.substr(0, colon);
    while (!key.empty() && key.front() == ' ') {
      key.remove_prefix(1);
    }
    std::optional<double> v = ParseLogNumber(Token(kv.substr(colon + 2)));
    if (!v) {
      return;
    }
    LogStep& s = step_;
    if (key == "throughput/device/tokens_per_sec") {
      s.tokens_per_s_per_gpu = *v;
    } else if (key == "throughput/tokens_per_sec") {
      s.tokens_per_s = *v;
    } else if (key == "throughput/samples_per_sec") {
      s.samples_per_s = *v;
    } else if (key == "throughput/device/flops_per_sec") {
      s.logged_tflops_per_gpu = *v / 1e12;
    } else if (key == "throughput/device/mfu") {
      s.logged_mfu = *v;  // already a fraction
    } else if (key == "loss/train/total") {
      s.loss = *v;
    } else if (key.find("CrossEntropy") != std::string_view::npos && std::isnan(s.loss)) {
      s.loss = *v;  // eval records and old llm-foundry names
    } else if (key == "time/train") {
      train_hours_ = *v;
    } else if (key == "wall_clock/train") {
      train_seconds_ = *v;
    } else if (key == "time/batch" || key == "trainer/global_step") {
      time_batch_ = static_cast<int64_t>(*v);
    } else if (key == "time/token") {
      s.consumed_tokens = *v;
    } else if (key == "time/sample") {
      s.consumed_samples = static_cast<int64_t>(*v);
    } else if (key == "memory/reserved_mem") {
      // GB since 2023 (memory_monitor: bytes / 1e9), raw bytes before
      s.memory_gib = (*v > 1e6 ? *v : *v * 1e9) / 1073741824.0;
    } else if (key.starts_with("lr-")) {
      s.learning_rate = *v;
    } else if (key == "trainer/device_train_microbatch_size") {
      out.header().micro_batch = static_cast<int64_t>(*v);
    }
  }

  void Flush(TimelineBuilder& out) {
    if (!pending_) {
      return;
    }
    pending_ = false;
    LogStep s = step_;
    if (s.step < 0) {
      s.step = time_batch_ >= 0 ? time_batch_ : records_ + 1;
    }
    double train_s = !std::isnan(train_hours_) ? train_hours_ * 3600.0 : train_seconds_;
    if (!std::isnan(train_s)) {
      if (s.step > prev_step_ && train_s >= prev_train_s_ && !pending_eval_) {
        s.step_time_s = (train_s - prev_train_s_) / static_cast<double>(s.step - prev_step_);
        s.steps_covered = static_cast<int32_t>(std::min<int64_t>(s.step - prev_step_, 1 << 30));
      }
      prev_train_s_ = train_s;
      prev_step_ = s.step;
    }
    if (pending_eval_) {
      s.validation = true;
    }
    if (out.header().train_iters == 0 && pending_batch_ >= 0) {
      out.header().train_iters = pending_total_;
    }
    ++records_;
    Status st = out.AddStep(std::move(s), rank_);
    (void)st;
  }

  bool pending_ = false;
  bool pending_eval_ = false;
  int64_t pending_batch_ = -1;
  int64_t pending_total_ = 0;
  LogStep step_;
  std::string rank_;
  double train_hours_ = kLogNaN;
  double train_seconds_ = kLogNaN;
  int64_t time_batch_ = -1;
  int64_t records_ = 0;
  int64_t prev_step_ = 0;  // the first record is timed from the start (time/train 0)
  double prev_train_s_ = 0;
};

}  // namespace

std::unique_ptr<FormatParser> MakeComposerParser() {
  return std::make_unique<ComposerParser>();
}

}  // namespace mfu::log_internal
