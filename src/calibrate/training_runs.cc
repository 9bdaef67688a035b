#include "mfu/training_runs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <initializer_list>
#include <utility>

#include "base/strings.h"
#include "base/table.h"

namespace mfu {

namespace {

// Read by base/table.h as text cells: a row that cannot describe a run is
// skipped with its reason rather than failing the file, and cells are read
// by meaning (a model family from its name, "14336 per expert", sharding
// prose), so the loader checks the header and locates the rows, and this
// file interprets the cells.
//
// The columns a row is read from. The CSV's other columns (year,
// verification, hfu_pct...) describe the row and are ignored; optional
// columns read as empty when the header lacks them.
const std::vector<std::string> kRequiredColumns = {"row_id", "source",  "model",    "layers",   "hidden",
                                                   "heads",  "seq_len", "gpu_type", "gpu_count"};
const std::vector<std::string> kOptionalColumns = {"attention",
                                                   "compile",
                                                   "cp",
                                                   "dp",
                                                   "ep",
                                                   "ffn",
                                                   "flops_convention",
                                                   "framework",
                                                   "framework_profile",
                                                   "global_batch_seqs",
                                                   "kv_heads",
                                                   "mfu_pct",
                                                   "micro_batch",
                                                   "moe_experts",
                                                   "moe_topk",
                                                   "notes",
                                                   "pp",
                                                   "precision",
                                                   "recompute",
                                                   "seq_parallel",
                                                   "source_ref",
                                                   "step_time_s",
                                                   "tflops_per_gpu",
                                                   "tokens_per_s_per_gpu",
                                                   "tokens_per_s_total",
                                                   "tp",
                                                   "tp_comm_overlap",
                                                   "vocab",
                                                   "vpp",
                                                   "zero_or_fsdp"};

// A row-level problem: the row is skipped with this reason, never fatal.
Status RowError(std::string reason) {
  return InvalidArgumentError(std::move(reason));
}

// One data row: its trimmed cells by column name ("" when empty or when the
// header lacks the column).
using Row = base::TextCells;

bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// Parses a positive integer; empty gives `fallback` (0: the column is required).
StatusOr<int64_t> PositiveInt(const Row& row, const char* column, int64_t fallback) {
  std::string_view text = row.Get(column);
  if (text.empty() && fallback > 0)
    return fallback;
  static constexpr const char* kNotPositive = "'{}' is not a positive integer";
  StatusOr<int64_t> value = base::ParseIntegerCell(text, base::Bounds().Min(1, kNotPositive), kNotPositive);
  if (!value.ok())
    return RowError(std::string("column '") + column + "': " + value.status().message());
  return value;
}

// Parses an optional non-negative number; empty gives 0.
StatusOr<double> OptionalNumber(const Row& row, const char* column) {
  std::string_view text = row.Get(column);
  if (text.empty())
    return 0.0;
  static constexpr const char* kNotANumber = "'{}' is not a number";
  StatusOr<double> value = base::ParseNumberCell(text, base::Bounds().Min(0, kNotANumber), kNotANumber);
  if (!value.ok())
    return RowError(std::string("column '") + column + "': " + value.status().message());
  return value;
}

// The integer `text` starts with ("14336 per expert", "3072 -> 15360"); 0 if none.
int64_t LeadingInt(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() ? value : 0;
}

bool IsAllDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "Narayanan et al. 2021, ..." -> "narayanan2021"; other sources get a slug of
// their first two words ("Megatron-LM README 2024, ..." -> "megatron-lm-readme").
std::string SourceKey(std::string_view source) {
  if (base::StartsWith(source, "Narayanan et al. 2021"))
    return "narayanan2021";
  if (base::StartsWith(source, "Korthikanti"))
    return "korthikanti2022";
  if (Contains(source, "NeMo") && Contains(source, "24.07"))
    return "nemo-24.07";
  if (Contains(source, "mosaicml/llm-foundry"))
    return "llm-foundry";
  if (Contains(source, "torchtitan"))
    return "torchtitan";
  if (Contains(source, "vTrain"))
    return "vtrain";
  std::vector<std::string> words;
  for (const std::string& word : base::Split(source.substr(0, source.find_first_of(",(;:")), ' ')) {
    if (!base::Trim(word).empty() && words.size() < 2)
      words.push_back(base::ToLower(base::Trim(word)));
  }
  std::string slug = base::Join(words, "-");
  for (char& c : slug) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.')
      c = '-';
  }
  return slug.empty() ? "unknown" : slug;
}

// Architecture families of the measured models; each fixes what the CSV does
// not state (MLP gating, norm, biases, tying, position table, default vocab).
enum class Family { kMegatronGpt, kMpt, kLlama, kNemotron };

StatusOr<Family> ModelFamily(std::string_view model, std::string_view source_key) {
  std::string name = base::ToLower(model);
  if (Contains(name, "llama") || source_key == "torchtitan")
    return Family::kLlama;
  if (Contains(name, "mpt") || source_key == "llm-foundry")
    return Family::kMpt;
  if (Contains(name, "nemotron"))
    return Family::kNemotron;
  if (Contains(name, "gpt"))
    return Family::kMegatronGpt;
  return RowError("model '" + std::string(model) + "': unknown architecture family (MLP gating and norm unknown)");
}

// The vocabulary when the column is empty, per training-runs-calibration.md:
// Megatron's GPT default 51,200, MPT's 50,368, Llama 3's 128,256; 0 if none.
int64_t DefaultVocab(Family family, std::string_view model) {
  std::string name = base::ToLower(model);
  switch (family) {
    case Family::kMegatronGpt:
      return 51200;
    case Family::kMpt:
      return 50368;
    case Family::kLlama:
      return Contains(name, "llama 3") || Contains(name, "llama3") || Contains(name, "llama-3") ? 128256 : 0;
    case Family::kNemotron:
      return 0;
  }
  return 0;
}

// Builds the model from the row's dimensions.
StatusOr<ModelSpec> BuildRunModel(const Row& row, std::string_view source_key, int64_t seq_len) {
  GenericModelOptions o;
  o.name = std::string(row.Get("model"));
  MFU_ASSIGN_OR_RETURN(Family family, ModelFamily(o.name, source_key));
  MFU_ASSIGN_OR_RETURN(o.layers, PositiveInt(row, "layers", 0));
  MFU_ASSIGN_OR_RETURN(o.hidden, PositiveInt(row, "hidden", 0));
  MFU_ASSIGN_OR_RETURN(o.heads, PositiveInt(row, "heads", 0));
  MFU_ASSIGN_OR_RETURN(o.kv_heads, PositiveInt(row, "kv_heads", o.heads));
  if (row.Get("vocab").empty()) {
    o.vocab = DefaultVocab(family, o.name);
    if (o.vocab == 0)
      return RowError("column 'vocab': empty, and model '" + o.name + "' has no documented default vocabulary");
  } else {
    MFU_ASSIGN_OR_RETURN(o.vocab, PositiveInt(row, "vocab", 0));
  }
  std::string_view ffn = row.Get("ffn");
  o.ffn = LeadingInt(ffn);  // MoE rows hold "14336 per expert"
  if (!ffn.empty() && o.ffn <= 0)
    return RowError("column 'ffn': '" + std::string(ffn) + "' does not start with a positive integer");
  o.gated_mlp = family == Family::kLlama;
  if (o.gated_mlp && o.ffn == 0)
    return RowError("column 'ffn': empty, and a gated (SwiGLU) MLP has no default size");
  // Megatron GPT: LayerNorm, biases, tied LM head and a learned position table
  // of seq_len rows (Narayanan's parameter count 12lh^2(1 + 13/12h + (V+s)/12lh)
  // has the s*h term). MPT in llm-foundry's benchmark YAMLs: no biases, tied,
  // learned positions too (the published NumParams grows by exactly
  // seq_len*d_model between sequence lengths). Llama: RMSNorm, untied, RoPE.
  // Nemotron: squared-ReLU (not gated) MLP, LayerNorm, no biases, untied, RoPE.
  o.norm = family == Family::kLlama ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  o.bias = family == Family::kMegatronGpt;
  o.tied_embeddings = family == Family::kMegatronGpt || family == Family::kMpt;
  o.position_embeddings = family == Family::kMegatronGpt || family == Family::kMpt ? seq_len : 0;
  if (!row.Get("moe_experts").empty()) {
    MFU_ASSIGN_OR_RETURN(o.experts, PositiveInt(row, "moe_experts", 0));
    MFU_ASSIGN_OR_RETURN(o.top_k, PositiveInt(row, "moe_topk", 0));
    o.moe_ffn = o.ffn;
  }
  StatusOr<ModelSpec> model = BuildGenericModel(o);
  if (!model.ok())
    return RowError("model: " + model.status().message());
  return model;
}

// Which accelerator and cluster a published gpu_type ran on. Both needles
// must occur in the lowercased text.
struct GpuMapping {
  const char* needle;
  const char* also;
  const char* accelerator;
  const char* cluster;
};

// The torchtitan H100 is a 96 GB HBM2e part at 500 W (its own hardware row,
// with its power-cap clock fraction in data/hardware).
// vTrain does not state the A100's memory size; 80 GB is assumed.
constexpr GpuMapping kGpuMappings[] = {
    {"selene", "80gb", "a100-sxm4-80gb", "selene"},
    {"a100_40gb", "roce", "a100-sxm4-40gb", "mosaic-a100-40gb"},
    {"a100_80gb", "roce", "a100-sxm4-80gb", "mosaic-a100-80gb"},
    {"grand teton", "h100", "h100-sxm5-96gb-500w", "grand-teton-h100"},
    {"dgx-h100", "h100", "h100-sxm5-80gb", "dgx-h100"},
    {"vtrain", "a100", "a100-sxm4-80gb", "vtrain-a100"},
};

Status MapGpu(std::string_view gpu_type, TrainingRun& run) {
  std::string text = base::ToLower(gpu_type);
  for (const GpuMapping& m : kGpuMappings) {
    if (Contains(text, m.needle) && Contains(text, m.also)) {
      run.accelerator = m.accelerator;
      run.cluster = m.cluster;
      return Status::Ok();
    }
  }
  return RowError("gpu_type '" + std::string(gpu_type) + "' is not mapped to an accelerator and cluster");
}

// zero_or_fsdp: "FSDP FULL_SHARD ..." / "FSDP 8" -> 3 + fsdp; "ZeRO-3" -> 3;
// "SHARD_GRAD_OP" / "ZeRO-2" -> 2; "ZeRO-1" / "distributed optimizer" -> 1;
// "none (distributed optimizer not used)" -> 0.
Status ParseSharding(std::string_view text, TrainingRun& run) {
  std::string t = base::ToLower(text);
  auto has = [&](std::initializer_list<const char*> parts) {
    return std::any_of(parts.begin(), parts.end(), [&](const char* p) { return Contains(t, p); });
  };
  if (t.empty()) {
    run.zero_stage.reset();  // the framework's
  } else if (base::StartsWith(t, "none") || t == "no") {
    run.zero_stage = 0;
  } else if (has({"shard_grad_op"})) {
    run.zero_stage = 2;
    run.fsdp = true;
  } else if (has({"fsdp", "full shard", "full_shard"})) {
    run.zero_stage = 3;
    run.fsdp = true;
  } else if (has({"zero-3", "zero3", "zero stage 3"})) {
    run.zero_stage = 3;
  } else if (has({"zero-2", "zero2", "zero stage 2"})) {
    run.zero_stage = 2;
  } else if (has({"zero-1", "zero1", "zero stage 1", "distributed optimizer"})) {
    run.zero_stage = 1;
  } else {
    return RowError("column 'zero_or_fsdp': '" + std::string(text) + "' is not a known sharding");
  }
  return Status::Ok();
}

// recompute: "full ..." (Megatron, "full activation checkpointing" in
// llm-foundry, "full AC" in torchtitan), "selective ..." (Megatron's attention
// core; torchtitan's "selective AC" is op-level, mapped to the same mode).
StatusOr<Recompute> ParseRecomputeColumn(std::string_view text) {
  std::string t = base::ToLower(text);
  if (t.empty() || t == "none" || t == "no" || t == "false" || t == "off")
    return Recompute::kNone;
  if (base::StartsWith(t, "full"))
    return Recompute::kFull;
  if (base::StartsWith(t, "selective"))
    return Recompute::kSelective;
  return RowError("column 'recompute': '" + std::string(text) + "' is not full, selective or none");
}

DType ParsePrecision(std::string_view text) {
  std::string t = base::ToLower(text);
  if (Contains(t, "fp8") || Contains(t, "float8"))
    return DType::kFp8;
  if (Contains(t, "fp4"))
    return DType::kFp4;
  if (Contains(t, "fp16") && !Contains(t, "bf16"))
    return DType::kFp16;
  return DType::kBf16;
}

// Tensor, pipeline, context, expert, interleave and data parallel sizes; dp
// is derived only when gpus/(tp*pp*cp) is whole.
Status ParseParallelism(const Row& row, TrainingRun& run) {
  MFU_ASSIGN_OR_RETURN(run.tp, PositiveInt(row, "tp", 1));
  MFU_ASSIGN_OR_RETURN(run.pp, PositiveInt(row, "pp", 1));
  MFU_ASSIGN_OR_RETURN(run.cp, PositiveInt(row, "cp", 1));
  MFU_ASSIGN_OR_RETURN(run.ep, PositiveInt(row, "ep", 1));
  MFU_ASSIGN_OR_RETURN(run.vpp, PositiveInt(row, "vpp", 1));
  int64_t model_parallel = run.tp * run.pp * run.cp;
  if (!row.Get("dp").empty()) {
    MFU_ASSIGN_OR_RETURN(run.dp, PositiveInt(row, "dp", 0));
  } else if (run.gpus % model_parallel == 0) {
    run.dp = run.gpus / model_parallel;
  } else {
    return RowError("no dp, and gpu_count " + std::to_string(run.gpus) +
                    " is not a multiple of tp*pp*cp = " + std::to_string(model_parallel));
  }
  if (model_parallel * run.dp != run.gpus) {
    return RowError("tp*pp*cp*dp = " + std::to_string(model_parallel * run.dp) + " does not match gpu_count " +
                    std::to_string(run.gpus));
  }
  std::string sp = base::ToLower(row.Get("seq_parallel"));
  run.sequence_parallel = sp == "yes" || sp == "true" || sp == "1";
  const std::string overlap = base::ToLower(row.Get("tp_comm_overlap"));
  if (overlap == "yes" || overlap == "true" || overlap == "1")
    run.tp_comm_overlap = true;
  else if (overlap == "no" || overlap == "false" || overlap == "0")
    run.tp_comm_overlap = false;
  else if (!overlap.empty())
    return RowError("column 'tp_comm_overlap': '" + overlap + "' is not yes or no");
  MFU_RETURN_IF_ERROR(ParseSharding(row.Get("zero_or_fsdp"), run));
  MFU_ASSIGN_OR_RETURN(run.recompute, ParseRecomputeColumn(row.Get("recompute")));
  return Status::Ok();
}

// Batch sizes. torchtitan publishes "local batch N" (per data-parallel rank):
// the global batch is N*dp (its tables' "local 32, global 256" with FSDP 8
// confirm it), and N is the micro-batch without pipelining. With PP its
// schedule splits the local batch into one micro-batch per pipeline stage
// unless told otherwise (torchtitan 2024-12 parallelisms/pipelining_utils.py
// build_pipeline_schedule: n_microbatches = pipeline_parallel_degree x
// stages per rank), so the micro-batch is N / (pp x vpp).
void ParseBatch(const Row& row, TrainingRun& run) {
  std::string_view global = row.Get("global_batch_seqs");
  std::string_view micro = row.Get("micro_batch");
  run.global_batch = LeadingInt(global);
  run.micro_batch = IsAllDigits(micro) ? LeadingInt(micro) : 0;
  constexpr std::string_view kLocal = "local batch ";
  if (base::StartsWith(micro, kLocal)) {
    int64_t local = LeadingInt(micro.substr(kLocal.size()));
    const int64_t stages = run.pp * run.vpp;
    if (local % stages == 0)
      run.micro_batch = local / stages;
    if (global.empty())
      run.global_batch = local * run.dp;
  }
}

// FLOPs per token of Narayanan et al. 2021: 96*B*s*l*h^2*(1 + s/(6h) +
// V/(16lh)) per iteration of B*s tokens.
double Megatron2021FlopsPerToken(const ModelSpec& m, int64_t seq_len) {
  double l = static_cast<double>(m.num_layers);
  double h = static_cast<double>(m.hidden);
  double s = static_cast<double>(seq_len);
  double v = static_cast<double>(m.vocab);
  return 96 * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
}

// Sets the measured tokens/s/GPU from the first usable throughput column.
Status ParseThroughput(const Row& row, TrainingRun& run) {
  MFU_ASSIGN_OR_RETURN(double per_gpu, OptionalNumber(row, "tokens_per_s_per_gpu"));
  MFU_ASSIGN_OR_RETURN(double total, OptionalNumber(row, "tokens_per_s_total"));
  MFU_ASSIGN_OR_RETURN(run.published_step_time_s, OptionalNumber(row, "step_time_s"));
  MFU_ASSIGN_OR_RETURN(run.published_tflops_per_gpu, OptionalNumber(row, "tflops_per_gpu"));
  MFU_ASSIGN_OR_RETURN(run.published_mfu_pct, OptionalNumber(row, "mfu_pct"));
  double gpus = static_cast<double>(run.gpus);
  if (per_gpu > 0) {
    run.measured_as = MeasuredAs::kTokensPerSecond;
    run.measured_tokens_per_s_per_gpu = per_gpu;
  } else if (total > 0) {
    run.measured_as = MeasuredAs::kTokensPerSecond;
    run.measured_tokens_per_s_per_gpu = total / gpus;
  } else if (run.published_step_time_s > 0) {
    std::string_view batch = row.Get("global_batch_seqs");
    if (!IsAllDigits(batch)) {
      return RowError("step_time_s needs a single global batch, got global_batch_seqs '" + std::string(batch) + "'");
    }
    run.measured_as = MeasuredAs::kStepTime;
    run.measured_tokens_per_s_per_gpu =
        static_cast<double>(run.global_batch) * static_cast<double>(run.seq_len) / run.published_step_time_s / gpus;
  } else if (run.published_tflops_per_gpu > 0) {
    if (!base::StartsWith(run.flops_convention, "Megatron-2021")) {
      return RowError("tflops_per_gpu in convention '" + run.flops_convention + "' cannot be turned into tokens/s");
    }
    run.measured_as = MeasuredAs::kTflopsMegatron2021;
    run.measured_tokens_per_s_per_gpu =
        run.published_tflops_per_gpu * 1e12 / Megatron2021FlopsPerToken(run.model, run.seq_len);
  } else {
    return RowError("no throughput (tokens_per_s_per_gpu, tokens_per_s_total, step_time_s or tflops_per_gpu)");
  }
  return Status::Ok();
}

// Turns one row into a run; any error is the reason to skip it.
StatusOr<TrainingRun> ParseRun(const Row& row, int row_id) {
  TrainingRun run;
  run.row_id = row_id;
  run.source_ref = std::string(row.Get("source_ref"));
  run.source = SourceKey(row.Get("source"));
  run.framework = std::string(row.Get("framework"));
  run.framework_profile = base::ToLower(base::Trim(row.Get("framework_profile")));
  if (run.framework_profile.empty())
    run.framework_profile = "megatron-core";
  run.attention = base::ToLower(base::Trim(row.Get("attention")));
  run.compile = base::ToLower(base::Trim(row.Get("compile")));
  run.model_name = std::string(row.Get("model"));
  run.gpu_type = std::string(row.Get("gpu_type"));
  run.flops_convention = std::string(row.Get("flops_convention"));
  run.notes = std::string(row.Get("notes"));
  MFU_ASSIGN_OR_RETURN(run.seq_len, PositiveInt(row, "seq_len", 0));
  MFU_ASSIGN_OR_RETURN(run.gpus, PositiveInt(row, "gpu_count", 0));
  MFU_ASSIGN_OR_RETURN(run.model, BuildRunModel(row, run.source, run.seq_len));
  MFU_RETURN_IF_ERROR(MapGpu(run.gpu_type, run));
  MFU_RETURN_IF_ERROR(ParseParallelism(row, run));
  ParseBatch(row, run);
  run.precision = ParsePrecision(row.Get("precision"));
  MFU_RETURN_IF_ERROR(ParseThroughput(row, run));
  return run;
}

}  // namespace

std::vector<std::string> TrainingRunSet::Sources() const {
  std::vector<std::string> sources;
  for (const TrainingRun& r : runs) {
    if (std::find(sources.begin(), sources.end(), r.source) == sources.end())
      sources.push_back(r.source);
  }
  return sources;
}

StatusOr<TrainingRunSet> ParseTrainingRuns(std::string_view csv_text, std::string_view origin) {
  static const base::TableSchema<Row> kSchema =
      base::TextCellsSchema(kRequiredColumns, kOptionalColumns, /*ignore_unknown=*/true);
  MFU_ASSIGN_OR_RETURN(std::vector<base::TableRow<Row>> rows, base::ParseTableRows(kSchema, csv_text, origin));
  TrainingRunSet set;
  for (const base::TableRow<Row>& cells : rows) {
    const Row& row = cells.value;
    StatusOr<int64_t> row_id = PositiveInt(row, "row_id", 0);
    if (!row_id.ok()) {
      set.skipped.push_back({0, "line " + std::to_string(cells.line) + ": " + row_id.status().message()});
      continue;
    }
    int id = static_cast<int>(std::min<int64_t>(*row_id, 1 << 30));
    StatusOr<TrainingRun> run = ParseRun(row, id);
    if (run.ok()) {
      set.runs.push_back(std::move(run).value());
    } else {
      set.skipped.push_back({id, "row " + std::to_string(id) + ": " + run.status().message()});
    }
  }
  return set;
}

StatusOr<TrainingRunSet> ReadTrainingRuns(const FileSystem& fs, const std::string& path) {
  MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  return ParseTrainingRuns(text, path);
}

}  // namespace mfu
