// The memory job (mfu/memory.h EstimateMemory): the request's state,
// layout and shapes resolved and estimated per GPU and unsharded.

#include <algorithm>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>

#include "base/param.h"
#include "flops/job_common.h"
#include "mfu/memory.h"

namespace mfu {
namespace {

using base::Param;
using flops_internal::kDefaultSeqLen;

// The framework's state, then the dtype and optimizer overrides.
StatusOr<TrainingStateDtypes> ResolveState(const MemoryRequest& r) {
  MFU_ASSIGN_OR_RETURN(TrainingStateDtypes d, OverrideStateDTypes(r.framework_state, r.weight_dtype, r.grad_dtype));
  if (r.optimizer == "adam-fp32" && d.weights != DType::kFp32) {
    return InvalidArgumentError(Param("optimizer") + " adam-fp32 means fp32 weights; add " + Param("weight_dtype") +
                                " fp32 or use adam");
  }
  if (r.optimizer == "sgd")
    d.moments_per_param = 1;
  return d;
}

// ValidateParallelLayout's messages start with the field's name.
Status NamingTheParameter(const Status& s) {
  const std::string& m = s.message();
  const std::string field = m.substr(0, m.find(' '));
  for (const char* name : {"gpus", "tp", "pp", "vpp", "cp", "ep", "etp", "zero", "micro_batches"}) {
    if (field == name)
      return InvalidArgumentError(Param(field) + m.substr(field.size()));
  }
  return s;
}

// The layout, checked against the model.
StatusOr<ParallelLayout> ResolveLayout(const MemoryRequest& r, int64_t seq_len) {
  // Default: no data parallelism (1 when a degree is out of range: the check names it).
  const bool sane = std::min({r.tp, r.pp, r.cp}) >= 1 && std::max({r.tp, r.pp, r.cp}) <= (1 << 20);
  const int64_t gpus = r.gpus != 0 ? r.gpus : (sane ? r.tp * r.pp * r.cp : 1);
  // clang-format off
  ParallelLayout l{.gpus = gpus, .tp = r.tp, .pp = r.pp, .vpp = r.vpp, .cp = r.cp, .ep = r.ep, .etp = r.etp,
                   .zero_stage = r.zero.value_or(1)};
  // clang-format on
  if (Status s = ValidateParallelLayout(r.model, seq_len, l); !s.ok())
    return NamingTheParameter(s);
  if (r.micro_batch < 1 || r.micro_batch > (1 << 24))
    return InvalidArgumentError(Param("micro_batch") + " " + std::to_string(r.micro_batch) + " must be in [1, 2^24]");
  const int64_t dp = l.gpus / (l.tp * l.pp * l.cp);
  const int64_t gbs = r.global_batch != 0 ? r.global_batch : dp * r.micro_batch;
  if (gbs < 1 || gbs % (dp * r.micro_batch) != 0) {
    return InvalidArgumentError(
        Param("gbs") + " " + std::to_string(gbs) +
        " is not a positive multiple of dp x micro-batch = " + std::to_string(dp * r.micro_batch));
  }
  l.micro_batches = gbs / (dp * r.micro_batch);
  return l;
}

StatusOr<TrainingMemoryOptions> ResolveOptions(const MemoryRequest& r, const TrainingStateDtypes& state) {
  TrainingMemoryOptions m;
  m.state = state;
  MFU_ASSIGN_OR_RETURN(m.recompute, ParseRecompute(r.recompute));
  m.seq_len = r.seq_len.value_or(kDefaultSeqLen);
  if (!r.seq_len && r.model.arch == ArchKind::kDiT) {
    MFU_ASSIGN_OR_RETURN(m.seq_len, DefaultDitTokens(r.model));
  }
  m.micro_batch = r.micro_batch;
  m.flash_attention = r.flash_attention;
  m.tensor_parallel = r.tp;
  m.sequence_parallel = r.sequence_parallel;
  if (r.sequence_parallel && r.tp == 1)
    return InvalidArgumentError(Param("sp") + " needs " + Param("tp") + " > 1");
  if (!r.recompute_modules.empty()) {
    StatusOr<uint32_t> modules = ParseRecomputeModules(r.recompute_modules);
    if (!modules.ok())
      return InvalidArgumentError(Param("recompute_modules") + ": " + modules.status().message());
    MFU_RETURN_IF_ERROR(CheckRecomputeModules(r.model, *modules, m.recompute));
    m.recompute_modules = *modules;
  }
  StatusOr<DType> precision = ParseDType(r.precision);
  if (!precision.ok())
    return InvalidArgumentError(Param("precision") + ": " + precision.status().message());
  if (*precision == DType::kFp8 || *precision == DType::kFp4)
    m.linear_input_bytes = r.fp8_saved_input_bytes;
  return m;
}

// The defaults that change the answer: sequence length, KV context, the
// training state and optimizer.
void AddNotes(const MemoryRequest& r, MemoryReport& e) {
  if (!r.seq_len) {
    e.notes.push_back({NoteKind::kAssumption, "default_seq_len",
                       "sequence length not given: " + std::to_string(e.options.seq_len) +
                           " tokens for the activations; give " + Param("seq_len") + " for the job's"});
  }
  if (e.kv_cache && r.context == 0) {
    e.notes.push_back({NoteKind::kAssumption, "default_context",
                       "KV cache context not given: the sequence length, " + std::to_string(e.kv_context) +
                           " tokens; give " + Param("context") + " for the serving context"});
  }
  if (r.framework == "megatron-core" && r.state.empty() && r.optimizer == "adam" && r.weight_dtype.empty() &&
      r.grad_dtype.empty()) {
    char bytes[32];
    std::snprintf(bytes, sizeof bytes, "%.0f", e.state_bytes_per_param);
    e.notes.push_back({NoteKind::kAssumption, "default_state",
                       std::string("training state: Megatron-Core's mixed precision with Adam (") + bytes +
                           " bytes per parameter before sharding), the default framework; give " + Param("framework") +
                           " (torchtitan, composer, deepspeed, ...) or " + Param("optimizer") + " for another"});
  }
}

}  // namespace

StatusOr<TrainingStateDtypes> OverrideStateDTypes(TrainingStateDtypes d, const std::string& weight_dtype,
                                                  const std::string& grad_dtype) {
  for (auto [param, text, dtype, name] : {std::tuple{"weight_dtype", &weight_dtype, &d.weights, &d.weights_name},
                                          std::tuple{"grad_dtype", &grad_dtype, &d.main_grads, &d.main_grads_name}}) {
    if (text->empty())
      continue;
    StatusOr<DType> parsed = ParseStorageDType(*text);
    if (!parsed.ok())
      return InvalidArgumentError(Param(param) + ": " + parsed.status().message());
    *dtype = *parsed;
    *name = StorageDTypeName(*text);
  }
  return d;
}

double StateBytesPerParam(const TrainingStateDtypes& dtypes) {
  StateSharding one;
  one.dense_params = 1;
  return TrainingStateBytes(dtypes, 0, one).total_bytes();
}

StatusOr<MemoryReport> EstimateMemory(const MemoryRequest& r) {
  // 0 is "not given" (derived) for these; a negative value is never read as that.
  for (auto [name, value] :
       {std::pair{"context", r.context}, std::pair{"gpus", r.gpus}, std::pair{"gbs", r.global_batch}}) {
    if (value < 0)
      return InvalidArgumentError(Param(name) + " must be >= 1, got " + std::to_string(value));
  }
  if (r.seq_len && (*r.seq_len < 1 || *r.seq_len > (int64_t{1} << 24)))
    return InvalidArgumentError(Param("seq_len") + " must be in [1, 2^24], got " + std::to_string(*r.seq_len));
  // Beyond the model's maximum is a data error (kOutOfRange, exit 1), as in
  // flops, calc and infer: the value is valid, this model cannot take it.
  const int64_t max_tokens = r.model.arch == ArchKind::kDecoder ? r.model.max_position_embeddings : 0;
  for (auto [name, value] : {std::pair{"seq_len", r.seq_len.value_or(0)}, std::pair{"context", r.context}}) {
    if (max_tokens > 0 && value > max_tokens) {
      return OutOfRangeError(Param(name) + " " + std::to_string(value) + " exceeds the model's " +
                             "max_position_embeddings (" + std::to_string(max_tokens) + ")");
    }
  }
  MemoryReport e;
  e.model = r.model;
  MFU_RETURN_IF_ERROR(ApplyDropout(r.dropout, e.model));
  e.state = r.state.empty() ? r.framework : r.state;
  e.optimizer = r.optimizer;
  MFU_ASSIGN_OR_RETURN(e.dtypes, ResolveState(r));
  e.state_bytes_per_param = StateBytesPerParam(e.dtypes);
  MFU_ASSIGN_OR_RETURN(e.options, ResolveOptions(r, e.dtypes));
  MFU_ASSIGN_OR_RETURN(e.layout, ResolveLayout(r, e.options.seq_len));
  MFU_ASSIGN_OR_RETURN(e.per_rank, EstimateTrainingMemory(e.model, e.options));
  MFU_ASSIGN_OR_RETURN(e.per_gpu, EstimateTrainingMemoryPerGpu(e.model, e.options, e.layout));
  TrainingMemoryOptions whole = e.options;
  whole.tensor_parallel = 1;
  whole.sequence_parallel = false;
  MFU_ASSIGN_OR_RETURN(e.unsharded, EstimateTrainingMemory(e.model, whole));
  MFU_ASSIGN_OR_RETURN(e.kv_dtype, ParseStorageDType(r.kv_dtype));
  e.params = CountParams(r.model);
  if (r.model.arch == ArchKind::kDecoder) {
    e.kv_context = r.context > 0 ? r.context : r.seq_len.value_or(kDefaultSeqLen);
    MFU_ASSIGN_OR_RETURN(e.kv_cache, ComputeKvCache(r.model, e.kv_dtype, e.kv_context));
  }
  AddNotes(r, e);
  return e;
}

}  // namespace mfu
