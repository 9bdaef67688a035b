// DeepSpeed (training-logs.md sec. 6): the ThroughputTimer line of
// deepspeed/utils/timer.py (L199-294 @edaa722) in its three forms,
//   current (0f0e38c52, 2022-12-16): "epoch={}/micro_step={}/global_step={}, RunningAvgSamplesPerSec={},
//                                     CurrSamplesPerSec={}, MemAllocated={}GB, MaxMemAllocated={}GB"
//   2022 (5bd09a8f8):                 "{}/{}, RunningAvgSamplesPerSec={}, CurrSamplesPerSec={}, MemAllocated=..."
//   2020 (08804d905):                 "{}/{}, SamplesPerSec={}"
// (samples/s of the global batch, train_batch_size()); the engine's
// "[Rank 0] step={}, skipped={}, lr={}, mom={}" (engine.py L3653-3656; 2020:
// "rank:0 step=..."); the config dump ("DeepSpeedEngine configuration:",
// old "DeepSpeedLight configuration:"); and the flops-profiler summary
// (deepspeed/profiling/flops_profiler/profiler.py L286-399) as one step.

#include <cmath>
#include <cstring>

#include "log/log_line.h"
#include "log/log_parser.h"

namespace mfu::log_internal {
namespace {

// "value" of "key=value" up to the next ',' in `text`, "" when absent.
std::string_view KeyValue(std::string_view text, std::string_view key) {
  size_t at = FindLog(text, key);
  if (at == std::string_view::npos)
    return {};
  std::string_view rest = text.substr(at + key.size());
  return TrimLog(rest.substr(0, rest.find(',')));
}

// number_to_string's "81.9 TFLOPS", "76.67 ms", "336.23 M", "34.09 us":
// the value in base units (FLOPS, s, parameters).
std::optional<double> ProfilerNumber(std::string_view text) {
  text = TrimLog(text);
  size_t space = text.find(' ');
  std::optional<double> v = ParseLogNumber(text.substr(0, space));
  if (!v || space == std::string_view::npos)
    return v;
  std::string_view unit = TrimLog(text.substr(space + 1));
  double scale = 1;
  if (!unit.empty()) {
    switch (unit[0]) {
      case 'T':
        scale = 1e12;
        break;
      case 'G':
        scale = 1e9;
        break;
      case 'M':
        scale = unit.size() > 1 && unit[1] == 'A' ? 1 : 1e6;  // "MACs" has no prefix
        break;
      case 'K':
        scale = 1e3;
        break;
      case 'm':
        scale = unit == "ms" ? 1e-3 : 1;
        break;
      case 'u':
        scale = 1e-6;
        break;
      default:
        break;
    }
  }
  return *v * scale;
}

// The flops-profiler summary, collected line by line.
struct ProfileBlock {
  bool open = false;
  int64_t line = 0;
  int64_t step = -1;
  int64_t world_size = 0;
  int64_t dp = 0;
  int64_t mp = 0;
  int64_t batch_per_gpu = 0;
  double params = kLogNaN;
  double iter_latency_s = kLogNaN;
  double fwd_bwd_latency_s = kLogNaN;
  double flops_per_gpu = kLogNaN;          // "FLOPS per GPU = ... / iter latency"
  double fwd_bwd_flops_per_gpu = kLogNaN;  // "fwd+bwd FLOPS per GPU = ..."
  double samples_per_s = kLogNaN;          // per GPU (batch per GPU / iter latency)
  double fwd_latency_s = kLogNaN;
  double bwd_latency_s = kLogNaN;
};

class DeepSpeedParser final : public FormatParser {
 public:
  LogFormat format() const override { return LogFormat::kDeepSpeed; }

  int Signature(std::string_view text) const override {
    std::string_view message = StripLoggerPrefix(text).message;
    if (FindLog(message, "RunningAvgSamplesPerSec=") != std::string_view::npos ||
        FindLog(message, ", SamplesPerSec=") != std::string_view::npos ||
        FindLog(message, "DeepSpeed Flops Profiler") != std::string_view::npos)
      return 2;
    if (FindLog(message, "DeepSpeedEngine configuration") != std::string_view::npos ||
        FindLog(message, "DeepSpeedLight configuration") != std::string_view::npos ||
        StartsWith(message, "[Rank 0] step=") || StartsWith(message, "rank:0 step="))
      return 1;
    return 0;
  }

  bool Consume(const CleanLine& line, TimelineBuilder& out) override {
    std::string_view text = line.text;
    double time_s = kLogNaN;
    if (text[0] == '[') {
      LoggerPrefix prefix = StripLoggerPrefix(text);
      text = prefix.message;
      time_s = prefix.time_s;
      if (text.empty())
        return false;
    }
    if (profile_.open && ConsumeProfileLine(text, line, out))
      return true;
    const char c = text[0];
    if (c == 'e' && StartsWith(text, "epoch="))
      return ConsumeThroughput(text, time_s, line, out);
    if (c >= '0' && c <= '9' && FindLog(text, "SamplesPerSec=") != std::string_view::npos)
      return ConsumeThroughput(text, time_s, line, out);
    if ((c == '[' && StartsWith(text, "[Rank ")) || (c == 'r' && StartsWith(text, "rank:")))
      return ConsumeRankStep(text, time_s, line, out);
    if (c == '-' && FindLog(text, "DeepSpeed Flops Profiler") != std::string_view::npos) {
      FlushProfile(out);
      profile_ = ProfileBlock{};
      profile_.open = true;
      profile_.line = line.line;
      return true;
    }
    if (c == 'D' &&
        (StartsWith(text, "DeepSpeedEngine configuration") || StartsWith(text, "DeepSpeedLight configuration"))) {
      out.CountHeader();
      return true;
    }
    return ConsumeConfig(text, out);
  }

  void Finish(TimelineBuilder& out) override { FlushProfile(out); }

 private:
  // The config dump's "  train_batch_size ............. 16", 2020's
  // "train_micro_batch_size_per_gpu  4", its JSON '"train_batch_size":4,'
  // and the launcher's "dist_world_size=1".
  bool ConsumeConfig(std::string_view text, TimelineBuilder& out) {
    const char c = text[0];
    if (c != 't' && c != 'g' && c != 'w' && c != '"' && c != 'd')
      return false;
    if (c == '"')
      text.remove_prefix(1);
    LogHeader& h = out.header();
    struct Key {
      std::string_view name;
      int64_t LogHeader::*field;
    };
    static constexpr Key kKeys[] = {
        {"train_batch_size", &LogHeader::global_batch},
        {"train_micro_batch_size_per_gpu", &LogHeader::micro_batch},
        {"gradient_accumulation_steps", &LogHeader::grad_accum},
        {"world_size", &LogHeader::world_size},
        {"dist_world_size", &LogHeader::world_size},
    };
    for (const Key& k : kKeys) {
      std::string_view rest = text;
      if (!ConsumePrefix(rest, k.name) || rest.empty())
        continue;
      if (rest[0] != ' ' && rest[0] != '"' && rest[0] != '=' && rest[0] != ':')
        continue;
      size_t v = rest.find_first_not_of(" .\":=");
      if (v == std::string_view::npos)
        return false;
      rest = rest.substr(v);
      int64_t n = 0;
      if (!ConsumeInt(rest, n))
        return false;
      h.*k.field = n;
      out.CountHeader();
      return true;
    }
    return false;
  }

  bool ConsumeThroughput(std::string_view text, double time_s, const CleanLine& line, TimelineBuilder& out) {
    LogStep step;
    step.line = line.line;
    step.time_s = time_s;
    const LogHeader& h = out.header();
    std::string_view global = KeyValue(text, "global_step=");
    int64_t id = 0;
    if (!global.empty()) {
      if (!ConsumeInt(global, id)) {
        out.CountPartial();
        return true;
      }
    } else {
      // "{epoch}/{micro_step}, ...": the optimizer step from micro-steps.
      std::string_view rest = text;
      int64_t epoch = 0;
      int64_t micro = 0;
      if (!ConsumeInt(rest, epoch) || !ConsumePrefix(rest, "/") || !ConsumeInt(rest, micro)) {
        out.CountPartial();
        return true;
      }
      id = h.grad_accum > 1 ? micro / h.grad_accum : micro;
    }
    step.step = id;
    std::string_view current = KeyValue(text, "CurrSamplesPerSec=");
    if (current.empty())
      current = KeyValue(text, "SamplesPerSec=");
    std::optional<double> samples = ParseLogNumber(current);
    if (!samples) {
      out.CountPartial();
      return true;
    }
    step.samples_per_s = *samples;
    if (h.global_batch > 0 && *samples > 0)
      step.step_time_s = static_cast<double>(h.global_batch) / *samples;
    std::string_view mem = KeyValue(text, "MaxMemAllocated=");
    if (!mem.empty() && mem.back() == 'B' && mem.size() > 2)
      mem.remove_suffix(2);  // "GB"
    if (std::optional<double> m = ParseLogNumber(mem))
      step.memory_gib = *m;
    SetCovered(step, out);
    (void)out.AddStep(step, line.rank);
    return true;
  }

  // "[Rank 0] step=10, skipped=0, lr=[0.001], mom=[...]": fills the step
  // of the same id, else adds one. skipped is cumulative.
  bool ConsumeRankStep(std::string_view text, double time_s, const CleanLine& line, TimelineBuilder& out) {
    std::string_view id_text = KeyValue(text, "step=");
    int64_t id = 0;
    if (!ConsumeInt(id_text, id))
      return false;
    std::string_view skipped_text = KeyValue(text, "skipped=");
    int64_t skipped = 0;
    const bool have_skipped = ConsumeInt(skipped_text, skipped);
    double lr = kLogNaN;
    std::string_view lr_text = KeyValue(text, "lr=[");
    if (std::optional<double> v = ParseLogNumber(lr_text.substr(0, lr_text.find(']'))))
      lr = *v;
    const int32_t new_skips =
        have_skipped ? static_cast<int32_t>(std::clamp<int64_t>(skipped - skipped_total_, 0, 1 << 30)) : 0;
    if (have_skipped)
      skipped_total_ = std::max(skipped_total_, skipped);
    std::vector<LogStep>& kept = out.mutable_steps();
    for (size_t i = kept.size(), n = 0; i > 0 && n < 4; --i, ++n) {
      LogStep& s = kept[i - 1];
      if (s.attempt != out.attempt())
        break;
      if (s.step == id) {
        if (std::isnan(s.learning_rate))
          s.learning_rate = lr;
        s.skipped_iterations = std::max(s.skipped_iterations, new_skips);
        return true;
      }
    }
    if (!kept.empty() && kept.back().attempt == out.attempt() && id < kept.back().step)
      return true;  // an older step's report: nothing new
    LogStep step;
    step.step = id;
    step.line = line.line;
    step.time_s = time_s;
    step.learning_rate = lr;
    step.skipped_iterations = new_skips;
    SetCovered(step, out);
    (void)out.AddStep(step, line.rank);
    return true;
  }

  static void SetCovered(LogStep& step, const TimelineBuilder& out) {
    const std::vector<LogStep>& kept = out.steps();
    if (!kept.empty() && kept.back().attempt == out.attempt() && step.step > kept.back().step)
      step.steps_covered = static_cast<int32_t>(std::min<int64_t>(step.step - kept.back().step, 1 << 30));
  }

  bool ConsumeProfileLine(std::string_view text, const CleanLine& line, TimelineBuilder& out) {
    (void)line;
    if (StartsWith(text, "Profile Summary at step")) {
      std::string_view rest = text.substr(23);
      int64_t n = -1;
      if (ConsumeInt(rest, n))
        profile_.step = n;
      return true;
    }
    if (FindLog(text, "Aggregated Profile") != std::string_view::npos ||
        FindLog(text, "Detailed Profile") != std::string_view::npos ||
        StartsWith(text, "------------------------------------------------------------------------------")) {
      FlushProfile(out);
      return true;
    }
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return false;
    std::string_view key = TrimLog(text.substr(0, colon));
    std::optional<double> v = ProfilerNumber(text.substr(colon + 1));
    if (!v)
      return true;  // notation lines of the summary
    auto as_int = [](double x) { return x >= 0 && x < 9e18 ? static_cast<int64_t>(x) : 0; };
    if (key == "world size")
      profile_.world_size = as_int(*v);
    else if (key == "data parallel size")
      profile_.dp = as_int(*v);
    else if (key == "model parallel size")
      profile_.mp = as_int(*v);
    else if (key == "batch size per GPU")
      profile_.batch_per_gpu = as_int(*v);
    else if (StartsWith(key, "params of model"))
      profile_.params = *v;
    else if (key == "fwd latency")
      profile_.fwd_latency_s = *v;
    else if (key == "bwd latency")
      profile_.bwd_latency_s = *v;
    else if (key == "iter latency")
      profile_.iter_latency_s = *v;
    else if (StartsWith(key, "fwd+bwd FLOPS per GPU"))
      profile_.fwd_bwd_flops_per_gpu = *v;
    else if (StartsWith(key, "FLOPS per GPU"))
      profile_.flops_per_gpu = *v;
    else if (key == "samples/second")
      profile_.samples_per_s = *v;
    return true;
  }

  // The summary as one step entry: TFLOP/s per GPU from "FLOPS per GPU =
  // ... / iter latency" (current profiler) or "fwd+bwd FLOPS per GPU"
  // (older wording), the step time from the iter latency.
  void FlushProfile(TimelineBuilder& out) {
    if (!profile_.open)
      return;
    profile_.open = false;
    LogHeader& h = out.header();
    if (profile_.world_size > 0)
      h.world_size = profile_.world_size;
    if (profile_.dp > 0)
      h.data_parallel = profile_.dp;
    if (profile_.mp > 0 && h.tensor_parallel == 0)
      h.tensor_parallel = profile_.mp;
    if (profile_.batch_per_gpu > 0)
      h.micro_batch = profile_.batch_per_gpu;
    if (!std::isnan(profile_.params))
      h.parameters = profile_.params;
    const double flops = !std::isnan(profile_.flops_per_gpu) ? profile_.flops_per_gpu : profile_.fwd_bwd_flops_per_gpu;
    if (std::isnan(flops) && std::isnan(profile_.iter_latency_s))
      return;
    LogStep step;
    step.step = profile_.step >= 0 ? profile_.step : 0;
    step.line = profile_.line;
    step.logged_tflops_per_gpu = flops / 1e12;
    step.step_time_s = !std::isnan(profile_.iter_latency_s) ? profile_.iter_latency_s
                       : (!std::isnan(profile_.fwd_latency_s) && !std::isnan(profile_.bwd_latency_s))
                           ? profile_.fwd_latency_s + profile_.bwd_latency_s
                           : kLogNaN;
    if (!std::isnan(profile_.samples_per_s))
      step.samples_per_s = profile_.samples_per_s * static_cast<double>(std::max<int64_t>(profile_.dp, 1));
    (void)out.AddStep(step, "");
  }

  ProfileBlock profile_;
  int64_t skipped_total_ = 0;
};

}  // namespace

std::unique_ptr<FormatParser> MakeDeepSpeedParser() {
  return std::make_unique<DeepSpeedParser>();
}

}  // namespace mfu::log_internal
