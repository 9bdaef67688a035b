// trainer_state.json, the HF Trainer's checkpointed state
// (TrainerState.save_to_json: json.dumps(asdict(state), indent=2,
// sort_keys=True), transformers src/transformers/trainer_callback.py
// @55093b758b33; training-logs.md section 7.3). log_history holds the on_log dicts
// with "step" added: training records (loss, grad_norm, learning_rate,
// epoch, num_input_tokens_seen, train_runtime in newer versions), eval
// records (eval_loss, eval_runtime) and the final train_runtime record with
// total_flos (FLOPs, a sum over processes). Top level: global_step,
// max_steps, logging_steps, train_batch_size (per device), total_flos.

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "log/format_common.h"
#include "log/log_parser.h"

namespace mfu::log_internal {
namespace {

using Json = nlohmann::json;

std::optional<double> Num(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    return std::nullopt;
  }
  if (it->is_string()) {  // NaN/Infinity, quoted by QuoteNonFinite
    const std::string& s = it->get_ref<const std::string&>();
    if (s == "NaN") {
      return kLogNaN;
    }
    if (s == "Infinity" || s == "-Infinity") {
      return s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
    }
    return std::nullopt;
  }
  if (!it->is_number()) {
    return std::nullopt;
  }
  return it->get<double>();
}

// Python's json.dumps writes NaN, Infinity and -Infinity bare (allow_nan):
// not JSON. Outside strings they become the strings "NaN", "Infinity",
// "-Infinity", which Num reads back.
std::string QuoteNonFinite(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out.push_back(c);
      continue;
    }
    for (std::string_view word :
         {std::string_view("-Infinity"), std::string_view("Infinity"), std::string_view("NaN")}) {
      if (text.substr(i, word.size()) == word) {
        out.push_back('"');
        out.append(word);
        out.push_back('"');
        i += word.size() - 1;
        c = 0;
        break;
      }
    }
    if (c != 0) {
      out.push_back(c);
    }
  }
  return out;
}

std::optional<int64_t> Int(const Json& obj, const char* key) {
  std::optional<double> v = Num(obj, key);
  if (!v || !std::isfinite(*v) || *v < 0 || *v > 9e15 || !IsWhole(*v)) {
    return std::nullopt;
  }
  return static_cast<int64_t>(*v);
}

class HfTrainerStateParser final : public FormatParser {
 public:
  LogFormat format() const override { return LogFormat::kHfTrainerState; }
  bool WholeDocument() const override { return true; }

  int Signature(std::string_view text) const override {
    if (text.find("\"log_history\":") != std::string_view::npos) {
      return 2;
    }
    return text.find("\"global_step\":") != std::string_view::npos ||
                   text.find("\"best_model_checkpoint\":") != std::string_view::npos
               ? 1
               : 0;
  }

  bool Consume(const CleanLine& line, TimelineBuilder& out) override {
    (void)line;
    (void)out;
    return false;
  }

  Status ConsumeDocument(std::string_view text, std::string_view origin, TimelineBuilder& out) override {
    std::string cleaned = QuoteNonFinite(text);
    Json doc = Json::parse(cleaned.begin(), cleaned.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) {
      return ParseError(std::string(origin) + ": not a JSON object (trainer_state.json)");
    }
    auto history = doc.find("log_history");
    if (history == doc.end() || !history->is_array()) {
      return ParseError(std::string(origin) + ": trainer_state.json has no 'log_history' array");
    }
    LogHeader& h = out.header();
    if (std::optional<int64_t> v = Int(doc, "max_steps")) {
      h.train_iters = *v;
    }
    if (std::optional<int64_t> v = Int(doc, "logging_steps")) {
      h.log_interval = *v;
    }
    if (std::optional<int64_t> v = Int(doc, "train_batch_size")) {
      h.micro_batch = *v;
    }
    out.CountHeader();
    double top_flos = Num(doc, "total_flos").value_or(kLogNaN);
    int64_t index = 0;
    for (const Json& entry : *history) {
      ++index;
      if (!entry.is_object()) {
        out.CountPartial();
        continue;
      }
      MFU_RETURN_IF_ERROR(ConsumeEntry(entry, index, out));
    }
    // The top-level total_flos is the state's running sum: the last step's.
    if (!std::isnan(top_flos)) {
      for (auto it = out.mutable_steps().rbegin(); it != out.mutable_steps().rend(); ++it) {
        if (!it->validation) {
          if (std::isnan(it->logged_total_flos)) {
            it->logged_total_flos = top_flos;
          }
          break;
        }
      }
    }
    return Status::Ok();
  }

 private:
  // `index`: the entry's 1-based position in log_history (its evidence; a
  // JSON document has no meaningful line).
  Status ConsumeEntry(const Json& entry, int64_t index, TimelineBuilder& out) {
    std::optional<int64_t> step = Int(entry, "step");
    if (!step) {
      out.CountPartial();
      return Status::Ok();
    }
    if (Num(entry, "train_loss") || (Num(entry, "train_runtime") && !Num(entry, "loss"))) {
      LogEvent e;
      e.kind = LogEventKind::kJobEnd;
      e.line = index;
      e.attempt = out.attempt();
      e.step = *step;
      e.duration_s = Num(entry, "train_runtime").value_or(kLogNaN);
      e.detail = entry.dump().substr(0, 200);
      out.AddEvent(std::move(e));
      if (std::optional<double> flos = Num(entry, "total_flos")) {
        for (auto it = out.mutable_steps().rbegin(); it != out.mutable_steps().rend(); ++it) {
          if (!it->validation) {
            it->logged_total_flos = *flos;
            break;
          }
        }
      }
      return Status::Ok();
    }
    LogStep s;
    s.step = *step;
    s.line = index;
    if (std::optional<double> eval = Num(entry, "eval_loss")) {
      s.validation = true;
      s.loss = *eval;
      LogEvent e;
      e.kind = LogEventKind::kEvaluation;
      e.line = index;
      e.attempt = out.attempt();
      e.step = *step;
      e.duration_s = Num(entry, "eval_runtime").value_or(kLogNaN);
      e.detail = entry.dump().substr(0, 200);
      out.AddEvent(std::move(e));
    } else if (std::optional<double> loss = Num(entry, "loss")) {
      s.loss = *loss;
    } else {
      return Status::Ok();  // another callback's record (e.g. a custom metric)
    }
    s.grad_norm = Num(entry, "grad_norm").value_or(kLogNaN);
    s.learning_rate = Num(entry, "learning_rate").value_or(kLogNaN);
    s.consumed_tokens = Num(entry, "num_input_tokens_seen").value_or(kLogNaN);
    s.logged_total_flos = Num(entry, "total_flos").value_or(kLogNaN);
    if (!s.validation) {
      std::optional<double> runtime = Num(entry, "train_runtime");
      if (runtime && *runtime > prev_runtime_s_ && s.step > prev_step_) {
        double dt = *runtime - prev_runtime_s_;
        s.step_time_s = dt / static_cast<double>(s.step - prev_step_);
        s.steps_covered = static_cast<int32_t>(std::min<int64_t>(s.step - prev_step_, 1 << 30));
        if (!std::isnan(s.consumed_tokens) && s.consumed_tokens >= prev_tokens_) {
          s.tokens_per_s = (s.consumed_tokens - prev_tokens_) / dt;
        }
        prev_runtime_s_ = *runtime;
        prev_tokens_ = std::isnan(s.consumed_tokens) ? prev_tokens_ : s.consumed_tokens;
      }
      prev_step_ = s.step;
    }
    return out.AddStep(std::move(s), "");
  }

  int64_t prev_step_ = 0;
  double prev_runtime_s_ = 0;
  double prev_tokens_ = 0;
};

}  // namespace

std::unique_ptr<FormatParser> MakeHfTrainerStateParser() {
  return std::make_unique<HfTrainerStateParser>();
}

}  // namespace mfu::log_internal
