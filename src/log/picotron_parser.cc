// picotron (huggingface/picotron, training-logs.md section 13): train.py's step
// line "[rank {r}] Step: {step:<5d} | Loss: {loss:6.4f} | Global batch
// size: {to_readable_format(tokens_per_step):>7s} | Tokens/s: .. |
// Tokens/s/GPU: .. | Tokens: {trained}[/max] | MFU: {mfu:5.2f}% | Memory
// usage: {:6.2f}GB", numbers with K/M/B/T suffixes (to_readable_format).
// Variants print "Time/step: Xms", "LR:", "GradNorm:", "Memory:", or join
// the parts with ", ". "Global batch size" counts TOKENS per step.
// Tokens/s is the whole job, Tokens/s/GPU = Tokens/s / world size, so
// their ratio is the world size.

#include <cmath>
#include <optional>

#include "log/format_common.h"
#include "log/log_parser.h"

namespace mfu::log_internal {
namespace {

class PicotronParser final : public FormatParser {
 public:
  LogFormat format() const override { return LogFormat::kPicotron; }

  int Signature(std::string_view text) const override {
    std::string_view t = StripRank(text);
    return t.starts_with("Step: ") && t.find("Loss: ") != std::string_view::npos &&
                   t.find("Tokens/s") != std::string_view::npos
               ? 2
               : 0;
  }

  bool Consume(const CleanLine& line, TimelineBuilder& out) override {
    std::string_view text = StripRank(line.text);
    if (!text.starts_with("Step: ") || text.find("Loss: ") == std::string_view::npos) {
      return false;
    }
    std::optional<LogStep> parsed = StepWithLoss(IntAfter(text, "Step: "), NumberAfter(text, "Loss: "), line.line, out);
    if (!parsed) {
      return true;
    }
    LogStep& s = *parsed;
    std::optional<double> per_step = NumberAfter(text, "Global batch size: ");
    if (!per_step) {
      per_step = NumberAfter(text, "Global batch size (with seq_len): ");
    }
    std::optional<double> tps = NumberAfter(text, "Tokens/s: ");
    std::optional<double> tps_gpu = NumberAfter(text, "Tokens/s/GPU: ");
    if (tps) {
      s.tokens_per_s = *tps;
    }
    if (tps_gpu) {
      s.tokens_per_s_per_gpu = *tps_gpu;
    }
    if (std::optional<std::string_view> tokens = After(text, "Tokens: ")) {
      std::string_view tok = Token(*tokens);
      if (std::optional<double> t = ParseLogNumber(tok.substr(0, tok.find('/')))) {
        s.consumed_tokens = *t;
      }
    }
    if (std::optional<std::string_view> ms = After(text, "Time/step: ");
        ms && ms->find("ms") != std::string_view::npos) {
      if (std::optional<double> v = ParseLogNumber(ms->substr(0, ms->find("ms")))) {
        s.step_time_s = *v / 1000.0;
      }
    }
    if (std::isnan(s.step_time_s) && per_step && tps && *tps > 0) {
      s.step_time_s = *per_step / *tps;  // Tokens/s = tokens_per_step / step_duration
    }
    if (std::optional<double> mfu = PercentAfter(text, "MFU: ")) {
      s.logged_mfu = *mfu;
    }
    if (std::optional<double> lr = NumberAfter(text, "LR: ")) {
      s.learning_rate = *lr;
    }
    if (std::optional<double> g = NumberAfter(text, "GradNorm: ")) {
      s.grad_norm = *g;
    }
    std::optional<std::string_view> mem = After(text, "Memory usage: ");
    if (!mem) {
      mem = After(text, "Memory: ");
    }
    if (mem && mem->find("GB") != std::string_view::npos) {
      if (std::optional<double> gb = ParseLogNumber(mem->substr(0, mem->find("GB")))) {
        s.memory_gib = *gb * 1e9 / 1073741824.0;  // memory_reserved() / 1e9: decimal GB
      }
    }
    LogHeader& h = out.header();
    if (per_step && h.tokens_per_step == 0 && *per_step >= 1 && *per_step < 1e15) {
      h.tokens_per_step = std::llround(*per_step);  // 2-3 significant digits (2.05K)
    }
    if (tps && tps_gpu && *tps_gpu > 0 && h.world_size == 0) {
      double world = *tps / *tps_gpu;
      // both are rounded to 3-4 digits: accept a ratio within 1% of an integer
      if (world >= 0.99 && world < 1e7 && std::fabs(world - std::round(world)) < 0.01 * world) {
        h.world_size = std::llround(world);
      }
    }
    Status st = out.AddStep(std::move(s), line.rank);
    (void)st;
    return true;
  }

 private:
  // "[rank 2] " (the global rank that printed; only one rank prints).
  static std::string_view StripRank(std::string_view t) {
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) {
      t.remove_prefix(1);
    }
    if (t.starts_with("[rank ")) {
      size_t close = t.find("] ");
      if (close != std::string_view::npos && close < 16) {
        t = t.substr(close + 2);
      }
    }
    return t;
  }
};

}  // namespace

std::unique_ptr<FormatParser> MakePicotronParser() {
  return std::make_unique<PicotronParser>();
}

}  // namespace mfu::log_internal
