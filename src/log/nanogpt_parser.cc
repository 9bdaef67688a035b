// nanoGPT (karpathy/nanoGPT @3adf61e, training-logs.md section 9): train.py's
// step line "iter {iter_num}: loss {lossf:.4f}, time {dt*1000:.2f}ms, mfu
// {running_mfu*100:.2f}%" (L325-327), the eval line "step {iter_num}: train
// loss {:.4f}, val loss {:.4f}" (L264), "saving checkpoint to {out_dir}"
// (L281), the header "tokens per iteration will be: {tokens_per_iter:,}"
// (L102), model.py's "number of parameters: %.2fM", and the configurator's
// echo ("Overriding: batch_size = 64", and the config file's "n_layer = 6"
// lines after "Overriding config with ...").
//
// Units: time is ms per optimizer step (all grad-accum micro-steps, and the
// eval/checkpoint at the top of the loop); mfu is an EMA (alpha 0.1) of the
// per-GPU MFU against A100's 312e12 whatever the GPU, and -100.00% for the
// first 5 local iterations (running_mfu starts at -1): not computed -> NaN.

#include <cmath>
#include <string>

#include "log/format_common.h"
#include "log/log_parser.h"

namespace mfu::log_internal {
namespace {

class NanoGptParser final : public FormatParser {
 public:
  LogFormat format() const override { return LogFormat::kNanoGpt; }

  int Signature(std::string_view text) const override {
    if (IsIterLine(text)) {
      return 2;
    }
    return text.starts_with("tokens per iteration will be: ") ? 1 : 0;
  }

  bool Consume(const CleanLine& line, TimelineBuilder& out) override {
    std::string_view text = line.text;
    if (IsIterLine(text)) {
      return ConsumeIter(text, line, out);
    }
    if (text.starts_with("step ") && text.find(": train loss ") != std::string_view::npos) {
      return ConsumeEval(text, line, out);
    }
    if (text.starts_with("saving checkpoint to ")) {
      LogEvent e;
      e.kind = LogEventKind::kCheckpointSave;
      e.line = line.line;
      e.attempt = out.attempt();
      e.step = last_eval_step_;  // saved right after the eval at the top of the loop
      e.detail = std::string(text.substr(0, 200));
      out.AddEvent(std::move(e));
      return true;
    }
    return ConsumeHeader(text, out);
  }

  void Finish(TimelineBuilder& out) override {
    LogHeader& h = out.header();
    if (h.tokens_per_step == 0) {
      // tokens per iteration = grad_accum (global, before the DDP split) x batch x block (L102)
      h.tokens_per_step = CheckedProduct(h.grad_accum, h.micro_batch, h.seq_len);
    }
    for (LogStep& s : out.mutable_steps()) {
      if (h.tokens_per_step > 0 && !std::isnan(s.step_time_s) && s.step_time_s > 0 && std::isnan(s.tokens_per_s)) {
        s.tokens_per_s = static_cast<double>(h.tokens_per_step) / s.step_time_s;
      }
    }
    FillThroughputScopes(out);
  }

 private:
  static bool IsIterLine(std::string_view t) {
    return t.starts_with("iter ") && t.find(": loss ") != std::string_view::npos &&
           t.find(", time ") != std::string_view::npos;
  }

  bool ConsumeIter(std::string_view text, const CleanLine& line, TimelineBuilder& out) {
    std::optional<int64_t> step = IntAfter(text, "iter ");
    std::optional<double> loss = NumberAfter(text, ": loss ");
    std::optional<std::string_view> time = After(text, ", time ");
    if (!step || !loss || !time || time->find("ms") == std::string_view::npos) {
      out.CountPartial();
      return true;
    }
    std::optional<double> ms = ParseLogNumber(time->substr(0, time->find("ms")));
    if (!ms) {
      out.CountPartial();
      return true;
    }
    LogStep s;
    s.step = *step;
    s.line = line.line;
    s.loss = *loss;
    s.step_time_s = *ms / 1000.0;
    std::optional<double> mfu = PercentAfter(text, ", mfu ");
    if (mfu && *mfu > -0.99995) {  // -100.00%: not computed yet
      s.logged_mfu = *mfu;
    }
    // iter ids jump by log_interval: each line is one optimizer step, timed alone
    Status st = out.AddStep(std::move(s), line.rank);
    (void)st;
    return true;
  }

  bool ConsumeEval(std::string_view text, const CleanLine& line, TimelineBuilder& out) {
    std::optional<int64_t> step = IntAfter(text, "step ");
    if (!step) {
      return false;
    }
    last_eval_step_ = *step;
    if (std::optional<double> val = NumberAfter(text, ", val loss ")) {
      LogStep s;
      s.step = *step;
      s.line = line.line;
      s.loss = *val;
      s.validation = true;
      Status st = out.AddStep(std::move(s), line.rank);
      (void)st;
    }
    LogEvent e = MakeEvent(LogEventKind::kEvaluation, line.line, out, *step);
    e.detail = std::string(text.substr(0, 200));
    out.AddEvent(std::move(e));
    return true;
  }

  // "Overriding: n_layer = 4", or a bare "n_layer = 4" from the echoed
  // config file; only the keys that describe the model and batch.
  bool ConsumeHeader(std::string_view text, TimelineBuilder& out) {
    LogHeader& h = out.header();
    if (std::optional<int64_t> t = IntAfter(text, "tokens per iteration will be: ")) {
      h.tokens_per_step = *t;
      out.CountHeader();
      return true;
    }
    if (text.starts_with("number of parameters: ")) {
      std::optional<std::string_view> rest = After(text, "number of parameters: ");
      std::string_view tok = Token(*rest);
      if (!tok.empty() && tok.back() == 'M') {
        if (std::optional<double> m = ParseLogNumber(tok.substr(0, tok.size() - 1))) {
          h.parameters = *m * 1e6;  // model.py prints %.2fM (wpe excluded)
          out.CountHeader();
          return true;
        }
      }
      return false;
    }
    if (std::optional<int64_t> v = IntAfter(text, "found vocab_size = ")) {
      h.vocab_size = *v;
      out.CountHeader();
      return true;
    }
    if (text.starts_with("Overriding: ")) {
      text = text.substr(12);
    }
    size_t eq = text.find(" = ");
    if (eq == std::string_view::npos) {
      return false;
    }
    std::string_view key = text.substr(0, eq);
    std::string_view value = text.substr(eq + 3);
    std::optional<int64_t> v = AsInt(ParseLogNumber(Token(value)));
    int64_t* field = nullptr;
    if (key == "batch_size") {
      field = &h.micro_batch;
    } else if (key == "block_size") {
      field = &h.seq_len;
    } else if (key == "n_layer") {
      field = &h.num_layers;
    } else if (key == "n_head") {
      field = &h.num_attention_heads;
    } else if (key == "n_embd") {
      field = &h.hidden_size;
    } else if (key == "gradient_accumulation_steps") {
      field = &h.grad_accum;
    } else if (key == "max_iters") {
      field = &h.train_iters;
    } else if (key == "log_interval") {
      field = &h.log_interval;
    } else if (key == "dtype") {
      std::string_view d = Token(value);
      if (d.size() >= 2 && (d.front() == '\'' || d.front() == '"')) {
        d = d.substr(1, d.size() - 2);
      }
      h.precision = d == "bfloat16" ? "bf16" : d == "float16" ? "fp16" : d == "float32" ? "fp32" : std::string(d);
      out.CountHeader();
      return true;
    }
    if (field == nullptr || !v) {
      return false;
    }
    *field = *v;
    out.CountHeader();
    return true;
  }

  int64_t last_eval_step_ = -1;
};

}  // namespace

std::unique_ptr<FormatParser> MakeNanoGptParser() {
  return std::make_unique<NanoGptParser>();
}

}  // namespace mfu::log_internal
