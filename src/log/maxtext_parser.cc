// MaxText (AI-Hypercomputer/maxtext @e591f30, training-logs.md section 8): the
// step line of MetricLogger._log_training_metrics
// (src/maxtext/common/metric_logger.py L160-230): ", "-joined parts
// "[Rampup Batch Size Phase]", "completed step: N" (0-based), "seconds: s",
// "live slice count: n", "TFLOP/s/device: x", "Tokens/s/device: y",
// "total_weights: w", "loss: l", "lm_loss", "perplexity", "moe_lb_loss",
// "mtp_loss"; "completed profiler activation/deactivation step: N" on
// profiler boundary steps (no timing). Since 1a19a7b73 (2025-12-22) the line
// goes through absl and may carry a glog prefix. Header lines:
// "Num_devices: 4", "number parameters: 15.933 billion", "Per train step:"
// then " Total TFLOPs: 764.67" (per device per step), "Config param
// per_device_batch_size: 24.0", "Config param max_target_length: 2048".

#include <cmath>
#include <string>

#include "log/format_common.h"
#include "log/log_parser.h"

namespace mfu::log_internal {
namespace {

constexpr std::string_view kStep = "completed step: ";
constexpr std::string_view kProfilerStep = "completed profiler activation/deactivation step: ";

class MaxTextParser final : public FormatParser {
 public:
  LogFormat format() const override { return LogFormat::kMaxText; }

  int Signature(std::string_view text) const override {
    std::string_view t = StripLoggerPrefix(text).message;
    size_t at = t.find(kStep);
    if (at != std::string_view::npos && t.find("seconds: ", at) != std::string_view::npos) {
      return 2;
    }
    return t.starts_with("Num_devices: ") || t.starts_with("number parameters: ") ? 1 : 0;
  }

  bool Consume(const CleanLine& line, TimelineBuilder& out) override {
    LoggerPrefix t = StripLoggerPrefix(line.text);
    std::string_view text = t.message;
    if (text.starts_with("[Rampup Batch Size Phase]")) {
      text = text.substr(text.find(']') + 1);
      while (!text.empty() && (text.front() == ',' || text.front() == ' ')) {
        text.remove_prefix(1);
      }
    }
    if (text.starts_with(kStep) || text.starts_with(kProfilerStep)) {
      return ConsumeStep(text, t.year_missing ? kLogNaN : t.time_s, line, out);
    }
    return ConsumeHeader(text, line, out);
  }

  void Finish(TimelineBuilder& out) override {
    LogHeader& h = out.header();
    if (h.tokens_per_step == 0 && h.micro_batch > 0 && h.seq_len > 0 && h.world_size > 0) {
      h.tokens_per_step = h.micro_batch * h.seq_len * h.world_size;
    }
    FillThroughputScopes(out);
  }

 private:
  bool ConsumeStep(std::string_view text, double time_s, const CleanLine& line, TimelineBuilder& out) {
    bool profiler = text.starts_with(kProfilerStep);
    std::optional<int64_t> step = IntAfter(text, profiler ? kProfilerStep : kStep);
    std::optional<double> loss = NumberAfter(text, ", loss: ");
    std::optional<double> seconds = NumberAfter(text, "seconds: ");
    if (!step || (!profiler && !seconds)) {
      out.CountPartial();
      return true;
    }
    LogStep s;
    s.step = *step;
    s.line = line.line;
    s.time_s = time_s;
    if (seconds) {
      s.step_time_s = *seconds;
    }
    if (loss) {
      s.loss = *loss;
    }
    if (std::optional<double> v = NumberAfter(text, "TFLOP/s/device: ")) {
      s.logged_tflops_per_gpu = *v;
    }
    if (std::optional<double> v = NumberAfter(text, "Tokens/s/device: ")) {
      s.tokens_per_s_per_gpu = *v;
    }
    Status st = out.AddStep(std::move(s), line.rank);
    (void)st;
    return true;
  }

  bool ConsumeHeader(std::string_view text, const CleanLine& line, TimelineBuilder& out) {
    LogHeader& h = out.header();
    if (text.starts_with("Num_devices: ")) {
      std::optional<int64_t> n = IntAfter(text, "Num_devices: ");
      if (!n) {
        return false;
      }
      h.world_size = *n;
    } else if (text.starts_with("number parameters: ")) {
      std::optional<double> n = NumberAfter(text, "number parameters: ");
      if (!n) {
        return false;
      }
      double scale = text.find(" billion") != std::string_view::npos ? 1e9 : 1;
      h.parameters = *n * scale;
    } else if (text.starts_with("Per train step:")) {
      per_train_step_ = true;
      return true;
    } else if (per_train_step_ && text.starts_with("Total TFLOPs: ")) {
      per_train_step_ = false;
      std::optional<double> tf = NumberAfter(text, "Total TFLOPs: ");
      if (!tf) {
        return false;
      }
      h.logged_flops_per_step_per_gpu = *tf * 1e12;
      h.logged_flops_line = line.line;
    } else if (text.starts_with("Config param per_device_batch_size: ")) {
      std::optional<double> b = NumberAfter(text, "per_device_batch_size: ");
      if (!b || *b <= 0) {
        return false;
      }
      // fractional per-device batches exist (0.5): keep the integer part only when exact
      h.micro_batch = *b < 9e15 && IsWhole(*b) ? static_cast<int64_t>(*b) : 0;
    } else if (text.starts_with("Config param max_target_length: ")) {
      std::optional<int64_t> s = IntAfter(text, "max_target_length: ");
      if (!s) {
        return false;
      }
      h.seq_len = *s;
    } else if (text.starts_with("Config param steps: ")) {
      std::optional<int64_t> s = IntAfter(text, "steps: ");
      if (!s) {
        return false;
      }
      h.train_iters = *s;
    } else if (text.starts_with("Config param gradient_accumulation_steps: ")) {
      std::optional<int64_t> s = IntAfter(text, "gradient_accumulation_steps: ");
      if (!s) {
        return false;
      }
      h.grad_accum = *s;
    } else {
      per_train_step_ = false;
      return false;
    }
    out.CountHeader();
    return true;
  }

  bool per_train_step_ = false;
};

}  // namespace

std::unique_ptr<FormatParser> MakeMaxTextParser() {
  return std::make_unique<MaxTextParser>();
}

}  // namespace mfu::log_internal
