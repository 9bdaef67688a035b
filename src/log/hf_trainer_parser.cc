// Hugging Face transformers Trainer console output (training-logs.md section 7):
// the per-log dicts ProgressCallback.on_log writes with tqdm.write(str(logs))
// (src/transformers/trainer_callback.py @55093b758b33), the final metrics
// dict and the "***** train metrics *****" block (Trainer.log_metrics,
// metrics_format in trainer_pt_utils.py), and the "***** Running training
// *****" header (trainer.py).
//
// Step ids: the dicts carry none. With the header's steps per epoch S
// (Total optimization steps / Num Epochs, or Total optimization steps when
// the epoch count is sys.maxsize for an iterable dataset) the first record's
// epoch gives the logging interval L = round(epoch x S); later records are
// the next multiple of L when their epoch agrees (within the 2-decimal
// rounding ProgressCallback applies), else re-anchored at the multiple of L
// nearest epoch x S (a clipped log). Without the header, records are
// numbered 1, 2, 3... The physical line and the epoch stay as evidence.
//
// Scopes: per-log train_tokens_per_second is cumulative and GLOBAL
// (num_input_tokens_seen / train_runtime); the interval rate is recomputed
// from consecutive records. The final dict's train_tokens_per_second is PER
// DEVICE, train_samples_per_second global. total_flos is in units of 2^30
// FLOPs in the metrics block ("4454709GF").

#include <cmath>
#include <string>
#include <vector>

#include "log/format_common.h"
#include "log/hf_pydict.h"
#include "log/log_parser.h"

namespace mfu::log_internal {
namespace {

constexpr std::string_view kRunning = "***** Running training *****";
constexpr std::string_view kTrainMetrics = "***** train metrics *****";

// "0:07:05.42" (metrics_format's H:MM:SS.cc for *_runtime) in seconds.
std::optional<double> ParseRuntime(std::string_view s) {
  size_t c1 = s.find(':');
  size_t c2 = c1 == std::string_view::npos ? c1 : s.find(':', c1 + 1);
  if (c2 == std::string_view::npos) {
    return ParseLogNumber(s);
  }
  std::optional<double> h = ParseLogNumber(s.substr(0, c1));
  std::optional<double> m = ParseLogNumber(s.substr(c1 + 1, c2 - c1 - 1));
  std::optional<double> sec = ParseLogNumber(s.substr(c2 + 1));
  if (!h || !m || !sec) {
    return std::nullopt;
  }
  return *h * 3600 + *m * 60 + *sec;
}

class HfTrainerParser final : public FormatParser {
 public:
  LogFormat format() const override { return LogFormat::kHfTrainer; }

  int Signature(std::string_view text) const override {
    size_t brace = text.find("{'");
    if (brace != std::string_view::npos) {
      std::string_view d = text.substr(brace);
      if (d.starts_with("{'loss':") || d.starts_with("{'train_runtime':") || d.starts_with("{'eval_loss':")) {
        return 2;
      }
    }
    std::string_view t = StripLoggerPrefix(text).message;
    return t.starts_with(kRunning) ? 1 : 0;
  }

  bool Consume(const CleanLine& line, TimelineBuilder& out) override {
    // A tqdm bar can be glued before the dict on the same physical line.
    size_t brace = line.text.find("{'");
    if (brace != std::string_view::npos) {
      return ConsumeDict(line.text.substr(brace), line, out);
    }
    LoggerPrefix t = StripLoggerPrefix(line.text);
    if (in_metrics_block_ && ConsumeMetricsLine(t.message, line, out)) {
      return true;
    }
    in_metrics_block_ = false;
    if (t.message.starts_with(kTrainMetrics)) {
      in_metrics_block_ = true;
      return true;
    }
    return ConsumeHeader(t, line, out);
  }

  void Finish(TimelineBuilder& out) override {
    LogHeader& h = out.header();
    if (h.world_size == 0 && final_world_ > 0) {
      h.world_size = final_world_;
    }
    FillThroughputScopes(out);
  }

 private:
  bool ConsumeHeader(const LoggerPrefix& t, const CleanLine& line, TimelineBuilder& out) {
    std::string_view text = t.message;
    LogHeader& h = out.header();
    if (text.starts_with("***** Running ")) {
      in_train_banner_ = text.starts_with(kRunning);  // not "Running Evaluation/Prediction"
    }
    if (text.starts_with(kRunning)) {
      if (records_ > 0) {
        out.NewAttempt(line.line);  // a second train() call or a resumed job
      }
      bool repeat = start_seen_ && records_ == 0;  // another rank's copy of the header
      records_ = 0;
      last_step_ = 0;
      saw_final_ = false;
      prev_ = Prev{};
      out.CountHeader();
      if (repeat) {
        return true;
      }
      start_seen_ = true;
      start_time_s_ = t.time_s;
      LogEvent e;
      e.kind = LogEventKind::kJobStart;
      e.line = line.line;
      e.attempt = out.attempt();
      e.time_s = t.time_s;
      e.detail = std::string(kRunning);
      out.AddEvent(std::move(e));
      return true;
    }
    if (std::optional<double> v = NumberAfter(text, "Num examples = ")) {
      if (!in_train_banner_) {
        return false;  // the evaluation banner's count
      }
      num_examples_ = *v;
    } else if (std::optional<double> epochs = NumberAfter(text, "Num Epochs = ")) {
      num_epochs_ = *epochs;
    } else if (std::optional<int64_t> b = IntAfter(text, "Instantaneous batch size per device = ")) {
      h.micro_batch = *b;
    } else if (std::optional<int64_t> g =
                   IntAfter(text, "Total train batch size (w. parallel, distributed & accumulation) = ")) {
      h.global_batch = *g;
    } else if (std::optional<int64_t> a = IntAfter(text, "Gradient Accumulation steps = ")) {
      h.grad_accum = *a;
    } else if (std::optional<int64_t> n = IntAfter(text, "Total optimization steps = ")) {
      h.train_iters = *n;
    } else if (std::optional<double> p = NumberAfter(text, "Number of trainable parameters = ")) {
      h.parameters = *p;
    } else if (std::optional<int64_t> s = IntAfter(text, "Continuing training from global step ")) {
      last_step_ = *s;  // resumed: records continue after the checkpoint's step
      return true;
    } else if (text.starts_with("Saving model checkpoint to ")) {
      LogEvent e;
      e.kind = LogEventKind::kCheckpointSave;
      e.line = line.line;
      e.attempt = out.attempt();
      e.time_s = t.time_s;
      e.step = StepFromPath(text, last_step_);
      e.detail = std::string(text.substr(0, 200));
      out.AddEvent(std::move(e));
      return true;
    } else {
      return false;
    }
    // world size = total batch / (per-device batch x accumulation)
    int64_t per_rank = CheckedProduct(h.micro_batch, h.grad_accum);
    if (h.global_batch > 0 && per_rank > 0 && h.global_batch % per_rank == 0) {
      h.world_size = h.global_batch / per_rank;
      h.data_parallel = h.world_size;
    }
    out.CountHeader();
    return true;
  }

  static int64_t StepFromPath(std::string_view text, int64_t fallback) {
    std::optional<int64_t> s = IntAfter(text, "checkpoint-");
    return s ? *s : fallback;
  }

  // Steps per epoch from the header, 0 when unknown.
  double StepsPerEpoch(const LogHeader& h) const {
    if (h.train_iters <= 0) {
      return 0;
    }
    double steps = static_cast<double>(h.train_iters);
    if (num_epochs_ >= 1 && num_epochs_ < 1e6) {
      return steps / num_epochs_;
    }
    if (num_examples_ > 0 && h.global_batch > 0) {
      return std::ceil(num_examples_ / static_cast<double>(h.global_batch));
    }
    return steps;
  }

  int64_t StepOf(double epoch, const LogHeader& h) {
    double per_epoch = StepsPerEpoch(h);
    if (per_epoch <= 0 || !std::isfinite(epoch)) {
      return last_step_ + 1;  // no header: records are numbered
    }
    double estimate = epoch * per_epoch;
    if (!(estimate >= 0 && estimate < 1e15)) {
      return last_step_ + 1;  // a negative or absurd epoch: count the record
    }
    double tolerance = 0.005 * per_epoch * 1.001 + 0.01;  // epoch is printed to 2 decimals
    if (interval_ > 0) {
      int64_t next = (last_step_ / interval_ + 1) * interval_;
      if (std::fabs(static_cast<double>(next) - estimate) <= tolerance) {
        return next;
      }
      int64_t k = std::llround(estimate / static_cast<double>(interval_));  // re-anchor (clipped log)
      return std::max<int64_t>(1, k * interval_);
    }
    int64_t s = std::max<int64_t>(1, std::llround(estimate));
    if (s <= last_step_) {
      s = last_step_ + 1;
    }
    if (last_step_ > 0 || s > 1) {
      // 1, L, 2L, ... under logging_first_step; else L, 2L, ...
      interval_ = (last_step_ == 1 && s > 2) ? s : s - last_step_;
    }
    return s;
  }

  bool ConsumeDict(std::string_view text, const CleanLine& line, TimelineBuilder& out) {
    std::optional<std::vector<PyItem>> items = ParsePyDict(text);
    if (!items) {
      // A cut-short record is counted; any other dict (a config echo) is not ours.
      bool record = text.starts_with("{'loss':") || text.starts_with("{'train_runtime':") ||
                    text.starts_with("{'eval_loss':") || text.starts_with("{'eval_");
      if (record) {
        out.CountPartial();
      }
      return record;
    }
    if (PyHas(*items, "train_loss") || PyHas(*items, "train_samples_per_second")) {
      return ConsumeFinal(*items, line, out);
    }
    if (PyHas(*items, "eval_loss")) {
      return ConsumeEval(*items, line, out);
    }
    std::optional<double> loss = PyNumber(*items, "loss");
    if (!loss) {
      return false;
    }
    LogStep s;
    std::optional<double> epoch = PyNumber(*items, "epoch");
    s.step = StepOf(epoch ? *epoch : kLogNaN, out.header());
    s.line = line.line;
    s.loss = *loss;
    if (std::optional<double> v = PyNumber(*items, "grad_norm")) {
      s.grad_norm = *v;
    }
    if (std::optional<double> v = PyNumber(*items, "learning_rate")) {
      s.learning_rate = *v;
    }
    if (std::optional<double> v = PyNumber(*items, "total_flos")) {
      s.logged_total_flos = *v;  // PrinterCallback keeps it in some versions
    }
    std::optional<double> tokens = PyNumber(*items, "num_input_tokens_seen");
    std::optional<double> runtime = PyNumber(*items, "train_runtime");
    if (tokens) {
      s.consumed_tokens = *tokens;
    }
    if (runtime) {
      if (!std::isnan(start_time_s_)) {
        s.time_s = start_time_s_ + *runtime;
      }
      double dt = *runtime - prev_.runtime_s;
      int64_t dsteps = s.step - prev_.step;
      if (dt > 0 && dsteps > 0) {
        s.step_time_s = dt / static_cast<double>(dsteps);
        s.steps_covered = static_cast<int32_t>(std::min<int64_t>(dsteps, 1 << 30));
        if (tokens && *tokens >= prev_.tokens) {
          s.tokens_per_s = (*tokens - prev_.tokens) / dt;  // whole job, this interval
        }
      }
      prev_ = Prev{s.step, *runtime, tokens ? *tokens : 0};
    }
    last_step_ = s.step;
    ++records_;
    Status st = out.AddStep(std::move(s), line.rank);
    (void)st;
    return true;
  }

  bool ConsumeEval(const std::vector<PyItem>& items, const CleanLine& line, TimelineBuilder& out) {
    LogStep s;
    s.step = last_step_;
    s.line = line.line;
    s.validation = true;
    s.loss = PyNumber(items, "eval_loss").value_or(kLogNaN);
    Status st = out.AddStep(std::move(s), line.rank);
    (void)st;
    LogEvent e = MakeEvent(LogEventKind::kEvaluation, line.line, out, last_step_);
    if (std::optional<double> d = PyNumber(items, "eval_runtime")) {
      e.duration_s = *d;
    }
    e.detail = std::string(line.text.substr(0, 200));
    out.AddEvent(std::move(e));
    return true;
  }

  // {'train_runtime': 425.4295, 'train_samples_per_second': 5.641, ...,
  // 'train_tokens_per_second': 1925.584 (per device), 'train_loss': ...}
  bool ConsumeFinal(const std::vector<PyItem>& items, const CleanLine& line, TimelineBuilder& out) {
    saw_final_ = true;
    LogEvent e = MakeEvent(LogEventKind::kJobEnd, line.line, out, last_step_);
    std::optional<double> runtime = PyNumber(items, "train_runtime");
    if (runtime) {
      e.duration_s = *runtime;
      if (!std::isnan(start_time_s_)) {
        e.time_s = start_time_s_ + *runtime;
      }
    }
    e.detail = std::string(line.text.substr(0, 200));
    out.AddEvent(std::move(e));
    std::optional<double> per_device = PyNumber(items, "train_tokens_per_second");
    std::optional<double> tokens = PyNumber(items, "num_input_tokens_seen");
    if (per_device && tokens && runtime && *per_device > 0 && *runtime > 0) {
      double world = *tokens / *runtime / *per_device;  // tokens/s = seen / runtime / world (section 7.2)
      if (world >= 0.5 && world < 1e7 && std::fabs(world - std::round(world)) < 0.05) {
        final_world_ = std::llround(world);
      }
    }
    if (std::optional<double> flos = PyNumber(items, "total_flos")) {
      SetTotalFlos(out, *flos);
    }
    return true;
  }

  // "  total_flos               =  4454709GF", "  train_runtime = 0:07:05.42".
  bool ConsumeMetricsLine(std::string_view text, const CleanLine& line, TimelineBuilder& out) {
    size_t eq = text.find(" = ");
    if (eq == std::string_view::npos) {
      return false;
    }
    std::string_view key = text.substr(0, eq);
    while (!key.empty() && key.back() == ' ') {
      key.remove_suffix(1);
    }
    std::string_view value = text.substr(eq + 3);
    while (!value.empty() && value.front() == ' ') {
      value.remove_prefix(1);
    }
    if (key == "total_flos" && value.ends_with("GF")) {
      if (std::optional<double> gf = ParseLogNumber(value.substr(0, value.size() - 2))) {
        SetTotalFlos(out, *gf * 1073741824.0);  // int(v) >> 30, units of 2^30 FLOPs
      }
    } else if (key == "train_runtime") {
      std::optional<double> r = ParseRuntime(value);
      if (r && !saw_final_) {  // no final dict printed: the block is the job's end
        saw_final_ = true;
        LogEvent e = MakeEvent(LogEventKind::kJobEnd, line.line, out, last_step_);
        e.duration_s = *r;
        e.detail = std::string(text.substr(0, 200));
        out.AddEvent(std::move(e));
      }
    }
    return true;
  }

  static void SetTotalFlos(TimelineBuilder& out, double flos) {
    if (LogStep* last = LastTrainStep(out); last != nullptr && std::isnan(last->logged_total_flos)) {
      last->logged_total_flos = flos;
    }
  }

  struct Prev {
    int64_t step = 0;
    double runtime_s = 0;
    double tokens = 0;
  };

  double num_examples_ = 0;
  double num_epochs_ = 0;
  int64_t interval_ = 0;
  int64_t last_step_ = 0;
  int64_t records_ = 0;
  int64_t final_world_ = 0;
  bool saw_final_ = false;
  bool start_seen_ = false;
  bool in_train_banner_ = false;
  double start_time_s_ = kLogNaN;
  bool in_metrics_block_ = false;
  Prev prev_;
};

}  // namespace

std::unique_ptr<FormatParser> MakeHfTrainerParser() {
  return std::make_unique<HfTrainerParser>();
}

}  // namespace mfu::log_internal
