// Megatron-Bridge (training-logs.md sec. 3): the "Step Time" line of
// src/megatron/bridge/training/utils/train_utils.py training_log
// (L1049-1051 @067f987) paired with the Megatron-style iteration line of the
// same interval (L1088-1140), and the functional tests' golden-values JSON
// (tests/functional_tests/test_groups/recipes/golden_values/*.json), read as
// one document.

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "log/log_line.h"
#include "log/megatron_parser.h"

namespace mfu::log_internal {
namespace {

// How far apart (in physical lines) the Step Time line and its iteration
// line may be: rank 0 and the last rank print them at the same moment, but
// other output can come between.
constexpr int64_t kPairLines = 64;

// f"Step Time : {elapsed_time_per_iteration:.2f}s GPU utilization:
// {per_gpu_tf:.1f}MODEL_TFLOP/s/GPU" (before 23fc54521, 2025-11-07, the
// unit read "TFLOP/s/GPU"). False when `text` is not one.
bool ParseStepTime(std::string_view text, double& step_time_s, double& tflops) {
  if (!ConsumePrefix(text, "Step Time :"))
    return false;
  text = TrimLog(text);
  size_t s = text.find("s GPU utilization:");
  if (s == std::string_view::npos)
    return false;
  std::optional<double> t = ParseLogNumber(text.substr(0, s));
  text = TrimLog(text.substr(s + 18));
  size_t unit = text.find("TFLOP/s/GPU");
  if (unit == std::string_view::npos)
    return false;
  std::string_view number = text.substr(0, unit);
  if (number.size() >= 6 && number.substr(number.size() - 6) == "MODEL_")
    number.remove_suffix(6);
  std::optional<double> f = ParseLogNumber(number);
  if (!t || !f)
    return false;
  step_time_s = *t;
  tflops = *f;
  return true;
}

class MegatronBridgeParser final : public MegatronLmParser {
 public:
  LogFormat format() const override { return LogFormat::kMegatronBridge; }

  int Signature(std::string_view text) const override {
    if (!text.empty() && (text[0] == '{' || text[0] == '[')) {
      // The golden-values document: per-step objects with these keys.
      if (FindLog(text, "\"elapsed time per iteration (ms)\"") != std::string_view::npos ||
          FindLog(text, "\"GPU utilization\"") != std::string_view::npos)
        return 2;
    }
    double t = 0;
    double f = 0;
    if (ParseStepTime(text, t, f))
      return 2;
    // The iteration line alone is Megatron-LM's too: a hint only.
    return MegatronLmParser::Signature(text) > 0 ? 1 : 0;
  }

  bool Consume(const CleanLine& line, TimelineBuilder& out) override {
    std::string_view text = line.text;
    if (text[0] == 'S') {
      double step_time_s = 0;
      double tflops = 0;
      if (ParseStepTime(text, step_time_s, tflops)) {
        PairStepTime(line, step_time_s, tflops, out);
        return true;
      }
    }
    const size_t before = out.steps().size();
    const bool consumed = MegatronLmParser::Consume(line, out);
    if (out.steps().size() > before) {
      LogStep& step = out.mutable_steps().back();
      if (pending_line_ > 0 && line.line - pending_line_ <= kPairLines) {
        FillFromStepTime(step, pending_time_s_, pending_tflops_);
        pending_line_ = 0;
      } else {
        last_step_line_ = line.line;
      }
    }
    return consumed;
  }

  bool WholeDocument() const override { return true; }

  Status ConsumeDocument(std::string_view text, std::string_view origin, TimelineBuilder& out) override {
    (void)origin;
    nlohmann::json doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
      return ParseError("not a Megatron-Bridge golden-values JSON object");
    for (const auto& [key, value] : doc.items()) {
      std::string_view k = key;
      int64_t step_id = 0;
      if (!ConsumeInt(k, step_id) || !k.empty() || !value.is_object())
        continue;  // "alloc", "max_alloc": job-wide memory, not a step
      LogStep step;
      step.step = step_id;
      step.loss = Number(value, "lm loss");
      const double ms = Number(value, "elapsed time per iteration (ms)");
      step.step_time_s = ms / 1000.0;
      step.logged_tflops_per_gpu = Number(value, "GPU utilization");
      if (std::isnan(step.loss) && std::isnan(ms) && std::isnan(step.logged_tflops_per_gpu)) {
        out.CountPartial();
        continue;
      }
      ++out.stats().lines;
      pending_steps_.push_back(step);
    }
    // nlohmann keeps object keys sorted as strings ("10" < "2"): by step.
    std::sort(pending_steps_.begin(), pending_steps_.end(),
              [](const LogStep& a, const LogStep& b) { return a.step < b.step; });
    for (const LogStep& step : pending_steps_)
      (void)out.AddStep(step, "");
    pending_steps_.clear();
    return Status::Ok();
  }

 private:
  static double Number(const nlohmann::json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_number() ? it->get<double>() : kLogNaN;
  }

  static void FillFromStepTime(LogStep& step, double step_time_s, double tflops) {
    if (std::isnan(step.logged_tflops_per_gpu))
      step.logged_tflops_per_gpu = tflops;
    if (std::isnan(step.step_time_s))
      step.step_time_s = step_time_s;
  }

  // The Step Time line before its iteration line (the usual order) waits;
  // after it, it fills the step just kept.
  void PairStepTime(const CleanLine& line, double step_time_s, double tflops, TimelineBuilder& out) {
    if (last_step_line_ > 0 && line.line - last_step_line_ <= kPairLines && !out.steps().empty() &&
        std::isnan(out.steps().back().logged_tflops_per_gpu)) {
      FillFromStepTime(out.mutable_steps().back(), step_time_s, tflops);
      last_step_line_ = 0;
      return;
    }
    pending_line_ = line.line;
    pending_time_s_ = step_time_s;
    pending_tflops_ = tflops;
  }

  int64_t pending_line_ = 0;
  double pending_time_s_ = kLogNaN;
  double pending_tflops_ = kLogNaN;
  int64_t last_step_line_ = 0;
  std::vector<LogStep> pending_steps_;
};

}  // namespace

std::unique_ptr<FormatParser> MakeMegatronBridgeParser() {
  return std::make_unique<MegatronBridgeParser>();
}

}  // namespace mfu::log_internal
