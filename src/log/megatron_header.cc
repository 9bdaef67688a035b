// Megatron-LM's header and event lines (training-logs.md sec. 2.2): the world
// size line (megatron/training/arguments.py L567-576 @d98e8a64), the
// argument dump (_print_args L1990-2001), the parameter count
// (training.py L2447-2455), micro-batches, and the checkpoint, evaluation
// and exit lines of checkpointing.py / training.py.

#include "log/log_line.h"
#include "log/megatron_parser.h"

namespace mfu::log_internal {
namespace {

bool IsTrue(std::string_view value) {
  return value == "True" || value == "true";
}

void SetInt(int64_t& field, std::string_view value) {
  std::optional<double> v = ParseLogNumber(value);
  if (v && *v >= 0 && *v < 9e18)
    field = static_cast<int64_t>(*v);
}

// "using world size: 8, data-parallel size: 1, context-parallel size: 1,
// hierarchical context-parallel sizes: None, tensor-model-parallel size: 8,
// pipeline-model-parallel size: 1" (older: "data-parallel-size: 1").
void WorldSizeLine(std::string_view text, LogHeader& h) {
  ForEachLogField(text, ',', [&](std::string_view key, std::string_view value) {
    if (key == "using world size")
      SetInt(h.world_size, value);
    else if (StartsWith(key, "data-parallel"))
      SetInt(h.data_parallel, value);
    else if (StartsWith(key, "context-parallel"))
      SetInt(h.context_parallel, value);
    else if (StartsWith(key, "tensor-model-parallel"))
      SetInt(h.tensor_parallel, value);
    else if (StartsWith(key, "pipeline-model-parallel"))
      SetInt(h.pipeline_parallel, value);
  });
}

// The step of "... at iteration     100 ..." / "... from iteration 100 ...".
int64_t IterationAfter(std::string_view text, std::string_view marker) {
  size_t at = FindLog(text, marker);
  if (at == std::string_view::npos)
    return -1;
  std::string_view rest = text.substr(at + marker.size());
  int64_t n = -1;
  return ConsumeInt(rest, n) ? n : -1;
}

LogEvent MakeEvent(LogEventKind kind, const CleanLine& line, std::string_view text, int64_t step, double time_s) {
  LogEvent event;
  event.kind = kind;
  event.line = line.line;
  event.step = step;
  event.time_s = time_s;
  event.detail = EventDetail(text);
  return event;
}

void AddEvent(TimelineBuilder& out, LogEventKind kind, const CleanLine& line, std::string_view text, int64_t step,
              double time_s) {
  out.AddEvent(MakeEvent(kind, line, text, step, time_s));
}

}  // namespace

// "  num_layers ...................................... 24" between the
// "arguments" and "end of arguments" rules.
bool MegatronLmParser::ConsumeArgument(std::string_view text, TimelineBuilder& out) {
  if (FindLog(text, "end of arguments") != std::string_view::npos) {
    in_arguments_ = false;
    return true;
  }
  size_t space = text.find(' ');
  if (space == std::string_view::npos)
    return true;
  std::string_view key = text.substr(0, space);
  std::string_view value = text.substr(space);
  size_t v = value.find_first_not_of(" .");
  value = v == std::string_view::npos ? std::string_view() : TrimLog(value.substr(v));
  LogHeader& h = out.header();
  struct IntKey {
    std::string_view name;
    int64_t LogHeader::*field;
  };
  static constexpr IntKey kInts[] = {
      {"world_size", &LogHeader::world_size},
      {"micro_batch_size", &LogHeader::micro_batch},
      {"global_batch_size", &LogHeader::global_batch},
      {"seq_length", &LogHeader::seq_len},
      {"num_layers", &LogHeader::num_layers},
      {"hidden_size", &LogHeader::hidden_size},
      {"num_attention_heads", &LogHeader::num_attention_heads},
      {"num_query_groups", &LogHeader::num_query_groups},
      {"ffn_hidden_size", &LogHeader::ffn_hidden_size},
      {"padded_vocab_size", &LogHeader::vocab_size},
      {"tensor_model_parallel_size", &LogHeader::tensor_parallel},
      {"pipeline_model_parallel_size", &LogHeader::pipeline_parallel},
      {"context_parallel_size", &LogHeader::context_parallel},
      {"data_parallel_size", &LogHeader::data_parallel},
      {"num_experts", &LogHeader::num_experts},
      {"moe_router_topk", &LogHeader::moe_router_topk},
      {"moe_ffn_hidden_size", &LogHeader::moe_ffn_hidden_size},
      {"log_interval", &LogHeader::log_interval},
      {"train_iters", &LogHeader::train_iters},
  };
  for (const IntKey& k : kInts) {
    if (key == k.name) {
      SetInt(h.*k.field, value);
      return true;
    }
  }
  if (key == "swiglu") {
    h.swiglu = IsTrue(value);
  } else if (key == "fp8") {
    if (!value.empty() && value != "None") {
      h.precision = "fp8";
      saw_fp8_ = true;
    }
  } else if ((key == "bf16" || key == "fp16") && IsTrue(value) && !saw_fp8_) {
    h.precision = std::string(key);
  } else if (key == "recompute_granularity") {
    h.recompute = value == "None" ? "" : std::string(value);
  }
  return true;
}

void MegatronLmParser::FlushPendingEvent(TimelineBuilder& out) {
  if (pending_event_) {
    out.AddEvent(std::move(*pending_event_));
    pending_event_.reset();
  }
}

// megatron/core/timers.py L338-355: "(min, max) time across ranks (ms):" or
// "max time across ranks (ms):", then "    {name:.<48}: ({min:.2f}, {max:.2f})"
// or ": {max:.2f}". The slowest rank's time is the save's duration.
bool MegatronLmParser::ConsumeTimer(std::string_view text, TimelineBuilder& out) {
  const bool save = StartsWith(text, "save-checkpoint ");
  if (!save && !StartsWith(text, "load-checkpoint "))
    return false;
  size_t colon = text.rfind(": ");
  if (colon == std::string_view::npos)
    return false;
  std::string_view value = TrimLog(text.substr(colon + 2));
  if (!value.empty() && value.front() == '(' && value.back() == ')') {
    size_t comma = value.find(',');
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1, value.size() - comma - 2);
  }
  std::optional<double> ms = ParseLogNumber(value);
  const LogEventKind kind = save ? LogEventKind::kCheckpointSave : LogEventKind::kCheckpointLoad;
  if (ms && *ms >= 0 && pending_event_ && pending_event_->kind == kind) {
    pending_event_->duration_s = *ms / 1000.0;
    FlushPendingEvent(out);
  }
  return true;
}

bool MegatronLmParser::ConsumeHeaderOrEvent(std::string_view text, double time_s, const CleanLine& line,
                                            TimelineBuilder& out) {
  LogHeader& h = out.header();
  switch (text[0]) {
    case '-':
      if (FindLog(text, " arguments ") != std::string_view::npos &&
          FindLog(text, "end of arguments") == std::string_view::npos) {
        in_arguments_ = true;
        out.NewAttempt(line.line);
        out.CountHeader();
        AddEvent(out, LogEventKind::kJobStart, line, "arguments", -1, time_s);
        return true;
      }
      return false;
    case 'u':
      if (StartsWith(text, "using world size:")) {
        WorldSizeLine(text, h);
        out.CountHeader();
        return true;
      }
      if (StartsWith(text, "using torch.") && FindLog(text, "for parameters") != std::string_view::npos) {
        if (h.precision.empty())
          h.precision = StartsWith(text, "using torch.bfloat16")  ? "bf16"
                        : StartsWith(text, "using torch.float16") ? "fp16"
                                                                  : "fp32";
        return true;
      }
      return false;
    case '>':
      // " > number of parameters on (tensor, pipeline) model parallel rank
      // (4, 0): 941594624": the first rank's shard as printed.
      if (StartsWith(text, "> number of parameters on")) {
        size_t colon = text.rfind(": ");
        std::optional<double> v =
            colon == std::string_view::npos ? std::nullopt : ParseLogNumber(text.substr(colon + 2));
        if (v && std::isnan(h.parameters))
          h.parameters = *v;
        out.CountHeader();
        return true;
      }
      return false;
    case 's':
      if (ConsumeTimer(text, out))
        return true;
      if (StartsWith(text, "setting number of micro-batches to constant")) {
        SetInt(h.grad_accum, text.substr(text.rfind(' ') + 1));
        out.CountHeader();
        return true;
      }
      if (StartsWith(text, "successfully saved checkpoint")) {
        FlushPendingEvent(out);
        pending_event_ =
            MakeEvent(LogEventKind::kCheckpointSave, line, text, IterationAfter(text, "iteration"), time_s);
        return true;
      }
      if (StartsWith(text, "successfully loaded checkpoint")) {
        FlushPendingEvent(out);
        pending_event_ =
            MakeEvent(LogEventKind::kCheckpointLoad, line, text, IterationAfter(text, "at iteration"), time_s);
        return true;
      }
      if (StartsWith(text, "saving checkpoint at iteration"))
        return true;  // the save's start; its end carries the event
      return false;
    case 'v':
      // " validation loss at iteration 100 | lm loss value: ... |"
      if (StartsWith(text, "validation loss at iteration")) {
        AddEvent(out, LogEventKind::kEvaluation, line, text, IterationAfter(text, "at iteration"), time_s);
        return true;
      }
      return false;
    case 'l':
      if (ConsumeTimer(text, out))
        return true;
      if (StartsWith(text, "loading checkpoint from"))
        return true;
      return false;
    case 'e':
      if (StartsWith(text, "exiting program")) {
        AddEvent(out, LogEventKind::kJobEnd, line, text, IterationAfter(text, "iteration"), time_s);
        return true;
      }
      return false;
    case '[': {
      // "[after training is done] datetime: 2024-07-16 23:14:01"
      if (StartsWith(text, "[after training is done] datetime:")) {
        std::optional<double> t = ParseLogTimestamp(text.substr(35));
        AddEvent(out, LogEventKind::kJobEnd, line, text, -1, t ? *t : time_s);
        return true;
      }
      return false;
    }
    default:
      return false;
  }
}

}  // namespace mfu::log_internal
