#include "cli/vocabulary.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace mfu::cli {
namespace {

// Upper bounds that no real job reaches: they only catch typos and 1e308.
constexpr double kMaxCount = 1e9;     // sequences, tokens per sequence, model sizes
constexpr double kMaxGpus = 1e7;      // GPUs in one job
constexpr double kMaxParallel = 1e6;  // one parallel dimension
constexpr double kMaxRate = 1e15;     // tokens/s
constexpr double kMaxSeconds = 1e7;   // about 4 months
constexpr double kMaxTokens = 1e18;   // a token budget

#define MODEL_CMDS "flops calc memory predict plan infer log"
#define TRAIN_CMDS "predict plan"
#define ANY_JSON "flops calc memory trace predict plan calibrate kernels infer hw models clusters fleet goodput log"

using K = ValueKind;

const std::vector<FlagSpec> kVocabulary = {
    // The model.
    {"model: preset name or config.json", "--model", "-m", "", MODEL_CMDS " trace", K::kText},
    {"generic model: decoder layers", "--layers", "", "", MODEL_CMDS, K::kInteger, 1, kMaxCount},
    {"generic model: hidden size", "--hidden", "", "", MODEL_CMDS, K::kInteger, 1, kMaxCount},
    {"generic model: attention heads", "--heads", "", "", MODEL_CMDS, K::kInteger, 1, kMaxCount},
    {"generic model: key/value heads", "--kv-heads", "", "", MODEL_CMDS, K::kInteger, 1, kMaxCount},
    {"generic model: head dimension", "--head-dim", "", "", MODEL_CMDS, K::kInteger, 1, kMaxCount},
    {"generic model: MLP intermediate size", "--ffn", "", "", MODEL_CMDS, K::kInteger, 1, kMaxCount},
    {"generic model: vocabulary size", "--vocab", "", "", MODEL_CMDS, K::kInteger, 1, kMaxCount},
    {"generic model: routed experts", "--experts", "", "", MODEL_CMDS, K::kInteger, 1, kMaxCount},
    {"generic model: experts per token", "--top-k", "", "--topk", MODEL_CMDS, K::kInteger, 1, kMaxCount},
    {"generic model: per-expert intermediate size", "--moe-ffn", "", "", MODEL_CMDS, K::kInteger, 1, kMaxCount},
    {"generic model: shared-expert intermediate size", "--shared-ffn", "", "", MODEL_CMDS, K::kInteger, 1, kMaxCount},
    {"generic model: MLP kind (gated, plain)", "--mlp", "", "", MODEL_CMDS, K::kText},
    {"generic model: norm (rmsnorm, layernorm)", "--norm", "", "", MODEL_CMDS, K::kText},
    {"generic model: tied embeddings", "--tied", "", "", MODEL_CMDS, K::kSwitch},
    {"generic model: biases", "--bias", "", "", MODEL_CMDS, K::kSwitch},
    {"generic model: learned position rows", "--position-embeddings", "", "", MODEL_CMDS, K::kInteger, 1, kMaxCount},
    // The hardware.
    {"GPU: accelerator id, alias or name", "--gpu", "-g", "", "calc predict plan infer trace log", K::kText},
    {"accelerator table file", "--hardware-file", "", "", "calc predict plan infer trace hw fleet log", K::kText},
    {"cluster preset", "--cluster", "", "", TRAIN_CMDS " infer", K::kText},
    {"cluster table file", "--cluster-file", "", "", TRAIN_CMDS " calibrate kernels clusters", K::kText},
    {"GPU count of the job (infer: of one replica)", "--gpus", "-n", "", "calc memory predict plan infer log",
     K::kInteger, 1, kMaxGpus},
    {"node count", "--nodes", "", "", TRAIN_CMDS, K::kInteger, 1, kMaxGpus},
    // The sequence and the batch.
    {"sequence length (tokens per sequence)", "--seq-len", "-s", "", "flops calc memory predict plan trace log",
     K::kInteger, 1, kMaxCount},
    {"micro batch (sequences per micro-batch)", "--micro-batch", "", "--mbs", "memory predict", K::kInteger, 1,
     kMaxCount},
    {"micro batch: the sizes to try", "--micro-batch", "", "--mbs", "plan", K::kIntegerList, 1, kMaxCount},
    {"global batch (sequences per optimizer step)", "--global-batch", "", "--gbs", "calc memory predict plan log",
     K::kInteger, 1, kMaxCount},
    {"global batch (sequences per optimizer step)", "--global-batch", "", "--batch -b", "flops", K::kInteger, 1,
     kMaxCount},
    {"trace: sequences one rank processed per step", "--batch", "", "", "trace", K::kInteger, 1, kMaxCount},
    {"inference: concurrent requests", "--batch", "-b", "", "infer", K::kInteger, 1, kMaxCount},
    {"inference: the engine's batch cap", "--max-batch", "", "", "infer", K::kInteger, 1, kMaxCount},
    {"trace: tokens one rank processed per step", "--tokens-per-step", "", "", "trace", K::kScaled, 0, kMaxCount},
    // Precisions.
    {"precision of the GEMMs / MFU denominator", "--precision", "-p", "", "calc predict plan trace log", K::kText},
    {"precision of the linear layers' GEMMs", "--precision", "-p", "", "memory", K::kText},
    {"stored weight precision", "--weight-precision", "", "--weight-dtype", "memory " TRAIN_CMDS " infer", K::kText},
    {"main gradient precision", "--grad-precision", "", "--grad-dtype", "memory " TRAIN_CMDS, K::kText},
    {"KV-cache precision", "--kv-precision", "", "--kv-dtype", "memory infer", K::kText},
    {"training framework whose stored dtypes are counted", "--state", "", "", "memory " TRAIN_CMDS, K::kText},
    {"optimizer (adam, adam-fp32, sgd)", "--optimizer", "", "", "memory", K::kText},
    // What is counted.
    {"FLOPs convention", "--convention", "-c", "", "flops calc predict plan infer trace log", K::kText},
    {"activation recompute", "--recompute", "", "", "flops calc memory predict trace log", K::kText},
    {"activation recompute: the modes to try", "--recompute", "", "", "plan", K::kTextList},
    {"what selective recompute covers (Megatron's modules)", "--recompute-modules", "", "", "memory predict plan",
     K::kText},
    {"inference phase (prefill, decode)", "--inference", "", "", "flops", K::kText},
    {"trace: forward only", "--inference", "", "", "trace", K::kSwitch},
    {"decode: keys each new token attends to (memory: KV context)", "--context", "", "", "flops memory", K::kInteger, 1,
     kMaxCount},
    {"prefill: tokens already cached", "--cached", "", "", "flops", K::kInteger, 0, kMaxCount},
    {"MLA execution (absorbed, naive)", "--mla", "", "", "flops infer", K::kText},
    {"DiT: video frames", "--frames", "", "", "flops", K::kInteger, 1, kMaxCount},
    {"DiT: video height (pixels)", "--height", "", "", "flops", K::kInteger, 1, kMaxCount},
    {"DiT: video width (pixels)", "--width", "", "", "flops", K::kInteger, 1, kMaxCount},
    // Throughput and time.
    {"whole-job tokens/s", "--tokens-per-sec", "", "", "calc", K::kScaled, 0, kMaxRate},
    {"tokens/s per GPU", "--tokens-per-sec-per-gpu", "", "", "calc", K::kScaled, 0, kMaxRate},
    {"seconds per optimizer step", "--step-time", "", "", "calc", K::kPositive, 0, kMaxSeconds},
    {"trace: step window (cpu, gpu)", "--step-window", "", "--step-time", "trace", K::kText},
    // Parallel layout.
    {"tensor parallel size", "--tp", "", "", "memory predict infer", K::kInteger, 1, kMaxParallel},
    {"pipeline parallel size", "--pp", "", "", "memory predict infer", K::kInteger, 1, kMaxParallel},
    {"data parallel size", "--dp", "", "", "predict", K::kInteger, 1, kMaxGpus},
    {"context parallel size", "--cp", "", "", "memory predict", K::kInteger, 1, kMaxParallel},
    {"expert parallel size", "--ep", "", "", "memory predict infer", K::kInteger, 1, kMaxParallel},
    {"attention data parallel over tp (MoE serving)", "--attention-dp", "", "", "infer", K::kSwitch},
    {"expert tensor parallel size", "--etp", "", "", "memory predict", K::kInteger, 1, kMaxParallel},
    {"virtual pipeline stages per GPU", "--vpp", "", "", "memory predict", K::kInteger, 1, kMaxParallel},
    {"ZeRO stage", "--zero", "", "", "memory predict", K::kInteger, 0, 3},
    {"ZeRO stages to try", "--zero", "", "", "plan", K::kIntegerList, 0, 3},
    {"sequence parallelism", "--sp", "", "", "memory", K::kSwitch},
    {"no sequence parallelism", "--no-sp", "", "", "predict", K::kSwitch},
    {"no flash attention", "--no-flash", "", "", "memory", K::kSwitch},
    {"PyTorch FSDP full sharding", "--fsdp", "", "", "predict", K::kSwitch},
    {"TP communication overlapped", "--tp-comm-overlap", "", "", TRAIN_CMDS, K::kSwitch},
    {"TP communication not overlapped", "--no-tp-comm-overlap", "", "", "predict", K::kSwitch},
    {"gradient reduction not overlapped", "--no-dp-overlap", "", "", "predict", K::kSwitch},
    {"largest interleave to try", "--max-vpp", "", "", "plan", K::kInteger, 1, kMaxParallel},
    {"largest context parallel size to try", "--max-cp", "", "", "plan", K::kInteger, 1, kMaxParallel},
    {"tensor parallelism across nodes", "--tp-across-nodes", "", "", "plan", K::kSwitch},
    // The framework and the performance model's tables.
    {"framework profile", "--framework", "", "", "memory " TRAIN_CMDS " infer", K::kText},
    {"framework table file (repeatable)", "--framework-file", "", "", "memory " TRAIN_CMDS " infer calibrate",
     K::kText},
    {"efficiency table file (repeatable)", "--efficiency-file", "", "", TRAIN_CMDS " infer calibrate kernels",
     K::kText},
    {"attention kernel", "--attention", "", "", TRAIN_CMDS, K::kText},
    {"MoE load imbalance (busiest / mean)", "--moe-imbalance", "", "", TRAIN_CMDS, K::kNumber, 1, 64},
    {"MoE dispatch (alltoall, deepep)", "--ep-dispatch", "", "", TRAIN_CMDS, K::kText},
    {"dropout probability of the run", "--dropout", "", "", "memory " TRAIN_CMDS, K::kNumber, 0, 1, true},
    // plan.
    {"configurations listed", "--top", "-k", "", "plan", K::kInteger, 1, 1e6},
    {"kernels listed per class", "--top", "", "", "trace", K::kInteger, 1, 1e6},
    {"token budget to train", "--tokens", "", "", "plan", K::kScaled, 0, kMaxTokens},
    {"USD per GPU-hour", "--price-per-gpu-hour", "", "", "plan", K::kNumber, 0, 1e6},
    {"GPU counts of the scaling table", "--scaling", "", "", "plan", K::kIntegerList, 1, kMaxGpus},
    {"search timing", "--timing", "", "", "plan", K::kSwitch},
    // infer.
    {"prompt tokens per request", "--input-len", "-i", "", "infer", K::kInteger, 1, kMaxCount},
    {"generated tokens per request", "--output-len", "-o", "", "infer", K::kInteger, 1, kMaxCount},
    {"request mix (I:O[:N],... or a CSV)", "--workload", "", "", "infer", K::kText},
    {"chunked prefill token budget (0: off)", "--chunked-prefill", "", "", "infer", K::kInteger, 0, kMaxCount},
    {"speculative decoding: draft tokens per step", "--draft-tokens", "", "", "infer", K::kInteger, 1, 1024},
    {"speculative decoding: acceptance rate", "--acceptance", "-a", "", "infer", K::kNumber, 0, 1, true},
    {"speculative decoding: draft model", "--drafter", "", "", "infer", K::kText},
    {"measured output tokens/s", "--measured-tokens-per-sec", "", "", "infer", K::kPositive, 0, kMaxRate},
    {"measured time to first token (s)", "--measured-ttft", "", "", "infer", K::kPositive, 0, kMaxSeconds},
    {"measured time per output token (s)", "--measured-tpot", "", "", "infer", K::kPositive, 0, kMaxSeconds},
    // trace.
    {"trace files or directories", "PATHS", "", "", "trace", K::kText},
    {"threads", "--threads", "-j", "", "trace", K::kInteger, 1, 4096},
    {"HTA's definitions", "--hta-compat", "", "", "trace", K::kSwitch},
    {"kernel classification rules file", "--kernel-classes", "", "", "trace", K::kText},
    {"keep python_function events", "--python", "", "", "trace", K::kSwitch},
    {"exit 1 on error diagnostics", "--strict", "", "", "trace", K::kSwitch},
    {"more detail", "--verbose", "-v", "", "trace", K::kSwitch},
    {"CSV output directory", "--csv", "", "", "trace fleet log", K::kText},
    {"ranks shown in detail (all, or 0,3)", "--ranks", "", "", "trace", K::kText},
    {"most events per trace file (0: no cap)", "--max-events", "", "", "trace", K::kInteger, 0, 1e12},
    {"no progress line on stderr", "--quiet", "-q", "", "trace", K::kSwitch},
    // calibrate.
    {"measured runs file", "RUNS", "", "", "calibrate", K::kText},
    {"write the fitted efficiency table", "--write", "-w", "", "calibrate", K::kText},
    {"write the vector kernel table", "--write-vector-kernels", "", "", "calibrate", K::kText},
    {"prior table file (repeatable)", "--prior", "", "", "calibrate", K::kText},
    {"pull towards the prior", "--regularization", "", "", "calibrate", K::kNumber, 0, 1e6},
    {"coordinate-descent passes", "--sweeps", "", "", "calibrate", K::kInteger, 1, 1e6},
    {"operator profiles directory", "--operators", "", "", "calibrate", K::kText},
    {"parameters kept fixed", "--fix", "", "", "calibrate", K::kTextList},
    {"source held out (repeatable)", "--hold-out", "", "", "calibrate", K::kText},
    {"fit once per held-out source", "--cross-validate", "", "", "calibrate", K::kSwitch},
    {"only report the accuracy", "--no-fit", "", "", "calibrate", K::kSwitch},
    {"list every run", "--runs-table", "", "", "calibrate", K::kSwitch},
    // kernels.
    {"kernel figures file", "FIGURES", "", "", "kernels", K::kText},
    {"only the median errors", "--summary", "", "", "kernels", K::kSwitch},
    {"validate the fitted table", "--fitted", "", "", "kernels", K::kSwitch},
    // hw, clusters.
    {"only this vendor", "--vendor", "", "", "hw", K::kText},
    {"accelerator or cluster name", "NAME", "", "", "hw clusters", K::kText},
    // Output, every command.
    {"JSON output", "--json", "", "", ANY_JSON, K::kSwitch},
    {"no width limit on text tables", "--wide", "", "", ANY_JSON, K::kSwitch},
    {"output format: text, json (as --json) or csv", "--output-format", "", "", ANY_JSON, K::kText},
    // fleet analyze (telemetry reading and estimation).
    {"telemetry file or URL (exposition or query_range)", "INPUT", "", "", "fleet", K::kText},
    {"precision of the jobs' GEMMs (the dense peak)", "--precision", "", "", "fleet", K::kText},
    {"jobs' own throughput (JSON)", "--jobs", "", "", "fleet", K::kText},
    {"dcgm-exporter's job mapping directory", "--hpc-job-mapping-dir", "", "", "fleet", K::kText},
    {"a job's goodput event file (JOB=FILE)", "--goodput-events", "", "", "fleet", K::kText},
    {"a job's training log (JOB=FILE), its reported MFU", "--job-log", "", "", "fleet", K::kText},
    {"Unix time (s) of the staleness check", "--now", "", "", "fleet", K::kNumber, 0, 1e11},
    {"seconds one snapshot stands for", "--interval", "", "", "fleet", K::kPositive, 0, 86400},
    {"seconds after which a sample is stale", "--stale-after", "", "", "fleet", K::kPositive, 0, kMaxSeconds},
    // fleet serve, rules, dashboard (the exporter).
    {"upstream exporter URL or file", "--upstream", "", "", "fleet", K::kText},
    {"address to serve /metrics on (HOST:PORT)", "--listen", "", "", "fleet", K::kText},
    {"upstream connect and read time-out (s)", "--upstream-timeout", "", "", "fleet", K::kPositive, 0, 3600},
    {"serve the last good snapshot this long (s)", "--max-age", "", "", "fleet", K::kNumber, 0, kMaxSeconds},
    // goodput (durations are text: 24h, 5m, 90s, 1h30m, 2d, 1500ms, seconds).
    {"event files (logs, progress.txt, JSONL, sacct)", "EVENTS", "", "", "goodput", K::kText},
    {"event source format of every file", "--format", "", "", "goodput", K::kText},
    {"steady-state MFU (fraction) for effective MFU", "--mfu", "", "", "goodput", K::kNumber, 0, 1},
    {"no events: intervals from the durations", "--what-if", "", "", "goodput", K::kSwitch},
    {"the job's mean time between failures (duration)", "--mtbf", "", "", "goodput plan", K::kText},
    {"blocking checkpoint save time (duration)", "--checkpoint-time", "", "", "goodput plan", K::kText},
    {"failure to training again (duration)", "--restart-time", "", "", "goodput plan", K::kText},
    {"a checkpoint interval to evaluate (duration)", "--interval", "", "", "goodput", K::kText},
    // log (training logs, #14).
    {"training log files (attempts of one job, in order)", "FILE", "", "", "log", K::kText},
    {"log format (auto, megatron-lm, torchtitan, ...)", "--format", "", "", "log", K::kText},
    {"relative tolerance of logged figures", "--tolerance", "", "", "log", K::kPositive, 0, 10},
};

#undef MODEL_CMDS
#undef TRAIN_CMDS
#undef ANY_JSON

bool InList(std::string_view list, std::string_view word) {
  size_t at = 0;
  while (at < list.size()) {
    size_t end = list.find(' ', at);
    if (end == std::string_view::npos)
      end = list.size();
    if (list.substr(at, end - at) == word)
      return true;
    at = end + 1;
  }
  return false;
}

std::string FormatNumber(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", value);
  return buf;
}

bool ParseDouble(std::string_view text, double& value) {
  if (text.empty())
    return false;
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  value = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && !std::isspace(static_cast<unsigned char>(s[0]));
}

bool ParseInteger(std::string_view text, double& value) {
  size_t i = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
  if (i == text.size() || text.size() > 20)
    return false;
  for (size_t j = i; j < text.size(); ++j) {
    if (text[j] < '0' || text[j] > '9')
      return false;
  }
  return ParseDouble(text, value);
}

bool ParseScaled(std::string_view text, double& value) {
  double scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k':
      case 'K':
        scale = 1e3;
        break;
      case 'm':
      case 'M':
        scale = 1e6;
        break;
      case 'g':
      case 'G':
      case 'b':
      case 'B':
        scale = 1e9;
        break;
      case 't':
      case 'T':
        scale = 1e12;
        break;
      case 'p':
      case 'P':
        scale = 1e15;
        break;
      default:
        break;
    }
  }
  if (scale > 1)
    text.remove_suffix(1);
  if (!ParseDouble(text, value))
    return false;
  value *= scale;
  return true;
}

bool InRange(const FlagSpec& spec, double v) {
  if (!std::isfinite(v) || v < spec.min)
    return false;
  if ((spec.kind == ValueKind::kScaled || spec.kind == ValueKind::kPositive) && v <= 0)
    return false;
  return spec.max_open ? v < spec.max : v <= spec.max;
}

}  // namespace

const std::vector<FlagSpec>& Vocabulary() {
  return kVocabulary;
}

bool InCommands(std::string_view commands, std::string_view command) {
  return InList(commands, command);
}

const FlagSpec* FindFlag(std::string_view command, std::string_view name) {
  std::string normalized(name);
  for (char& c : normalized) {
    if (c == '_')
      c = '-';
  }
  for (const FlagSpec& spec : kVocabulary) {
    if (!InList(spec.commands, command))
      continue;
    if (normalized == spec.flag || (spec.short_flag[0] != '\0' && normalized == spec.short_flag) ||
        InList(spec.aliases, normalized))
      return &spec;
  }
  return nullptr;
}

std::string DescribeRange(const FlagSpec& spec) {
  std::string upper = FormatNumber(spec.max);
  switch (spec.kind) {
    case ValueKind::kSwitch:
      return "no value";
    case ValueKind::kText:
      return "a non-empty value";
    case ValueKind::kTextList:
      return "a comma-separated list of non-empty values";
    case ValueKind::kScaled:
      return "a finite number > 0 (suffixes k, M, G/B, T, P) up to " + upper;
    case ValueKind::kPositive:
      return "a finite number > 0 up to " + upper;
    case ValueKind::kInteger:
    case ValueKind::kIntegerList: {
      std::string what = spec.min > 0.5 ? "a positive integer" : spec.min > -0.5 ? "an integer >= 0" : "an integer";
      if (spec.max <= 64)
        what = "an integer in [" + FormatNumber(spec.min) + ", " + upper + "]";
      else
        what += " up to " + upper;
      return spec.kind == ValueKind::kIntegerList ? "a comma-separated list of " + what.substr(what.find(' ') + 1) + "s"
                                                  : what;
    }
    case ValueKind::kNumber: {
      if (spec.max_open)
        return "a number in [" + FormatNumber(spec.min) + ", " + upper + ")";
      if (spec.max <= 64)
        return "a number in [" + FormatNumber(spec.min) + ", " + upper + "]";
      return "a finite number >= " + FormatNumber(spec.min) + " up to " + upper;
    }
  }
  return "";
}

std::string CheckValue(const FlagSpec& spec, std::string_view value) {
  const auto error = [&] {
    return std::string(spec.flag) + " must be " + DescribeRange(spec) + " (got " +
           (value.empty() ? std::string("an empty value") : std::string(value)) + ")";
  };
  double v = 0;
  switch (spec.kind) {
    case ValueKind::kSwitch:
      return "";
    case ValueKind::kText:
      return value.empty() ? error() : "";
    case ValueKind::kTextList:
    case ValueKind::kIntegerList: {
      if (value.empty())
        return error();
      size_t at = 0;
      while (at <= value.size()) {
        size_t end = value.find(',', at);
        if (end == std::string_view::npos)
          end = value.size();
        std::string_view item = value.substr(at, end - at);
        if (item.empty())
          return error();
        if (spec.kind == ValueKind::kIntegerList && (!ParseInteger(item, v) || !InRange(spec, v)))
          return error();
        at = end + 1;
      }
      return "";
    }
    case ValueKind::kInteger:
      return ParseInteger(value, v) && InRange(spec, v) ? "" : error();
    case ValueKind::kNumber:
    case ValueKind::kPositive:
      return ParseDouble(value, v) && InRange(spec, v) ? "" : error();
    case ValueKind::kScaled:
      return ParseScaled(value, v) && InRange(spec, v) ? "" : error();
  }
  return "";
}

}  // namespace mfu::cli
