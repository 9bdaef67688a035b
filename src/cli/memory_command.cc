// mfu memory: training memory (weights, gradients, optimizer, activations)
// per GPU for a parallel layout, beside the unsharded model, and the KV
// cache of a model.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <ostream>
#include <string>
#include <tuple>

#include "base/strings.h"
#include "cli/command.h"
#include "cli/model_flags.h"
#include "report/json_common.h"
#include "mfu/memory.h"
#include "report/table.h"

namespace mfu::cli {
namespace {

struct MemoryOptions {
  ModelFlags model;
  int64_t seq_len = 4096;
  int64_t micro_batch = 1;
  std::string recompute = "none";
  bool no_flash = false;
  bool sp = false;
  std::string state = "megatron";
  std::string weight_dtype;  // empty: the state's
  std::string grad_dtype;    // empty: the state's
  std::string optimizer = "adam";
  std::string kv_dtype = "bf16";
  int64_t context = 0;
  bool json = false;
  // The parallel layout (mfu predict's flags).
  int64_t gpus = 0;  // 0: tp x pp x cp
  int64_t tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1, etp = 1;
  int zero = 1;
  int64_t global_batch = 0;  // 0: dp x micro-batch
};

// --state, then the dtype and optimizer overrides.
StatusOr<TrainingStateDtypes> ResolveState(const MemoryOptions& o) {
  StatusOr<TrainingStateDtypes> preset = TrainingStatePreset(o.state);
  if (!preset.ok())
    return InvalidArgumentError("--state: " + preset.status().message());
  TrainingStateDtypes d = *preset;
  for (auto [flag, text, dtype] : {std::tuple{"--weight-dtype", &o.weight_dtype, &d.weights},
                                   std::tuple{"--grad-dtype", &o.grad_dtype, &d.main_grads}}) {
    if (text->empty())
      continue;
    StatusOr<DType> parsed = ParseDType(*text);
    if (!parsed.ok())
      return InvalidArgumentError(std::string(flag) + ": " + parsed.status().message());
    *dtype = *parsed;
  }
  if (o.optimizer == "adam-fp32" && d.weights != DType::kFp32) {
    return InvalidArgumentError("--optimizer adam-fp32 means fp32 weights; add --weight-dtype fp32 or use adam");
  }
  if (o.optimizer == "sgd")
    d.moments_per_param = 1;
  return d;
}

// The layout flags, checked against the model (messages name the flag).
StatusOr<ParallelLayout> ResolveLayout(const MemoryOptions& o, const ModelSpec& spec, int64_t seq_len) {
  ParallelLayout l;
  l.tp = o.tp;
  l.pp = o.pp;
  l.vpp = o.vpp;
  l.cp = o.cp;
  l.ep = o.ep;
  l.etp = o.etp;
  l.zero_stage = o.zero;
  // Default: no data parallelism (1 when a degree is out of range: the check names it).
  const bool sane = std::min({o.tp, o.pp, o.cp}) >= 1 && std::max({o.tp, o.pp, o.cp}) <= (1 << 20);
  l.gpus = o.gpus != 0 ? o.gpus : (sane ? o.tp * o.pp * o.cp : 1);
  if (Status s = ValidateParallelLayout(spec, seq_len, l); !s.ok())
    return InvalidArgumentError("--" + s.message());
  if (o.micro_batch < 1 || o.micro_batch > (1 << 24))
    return InvalidArgumentError(fmt::format("--micro-batch {} must be in [1, 2^24]", o.micro_batch));
  const int64_t dp = l.gpus / (l.tp * l.pp * l.cp);
  const int64_t gbs = o.global_batch != 0 ? o.global_batch : dp * o.micro_batch;
  if (gbs < 1 || gbs % (dp * o.micro_batch) != 0) {
    return InvalidArgumentError(
        fmt::format("--gbs {} is not a positive multiple of dp x micro-batch = {}", gbs, dp * o.micro_batch));
  }
  l.micro_batches = gbs / (dp * o.micro_batch);
  return l;
}

std::string OptimizerNote(const TrainingStateDtypes& d) {
  std::string note = d.moments_per_param == 1 ? "sgd: " : "adam: ";
  if (d.fp32_master && d.weights != DType::kFp32)
    note += "fp32 master + ";
  if (d.fp32_grad_copy && d.main_grads != DType::kFp32)
    note += "fp32 grad copy + ";
  return note +
         fmt::format("{} {} moment{}", d.moments_per_param, DTypeName(d.moments), d.moments_per_param == 1 ? "" : "s");
}

double BytesPerParam(const TrainingStateDtypes& d) {
  StateSharding one;
  one.dense_params = 1;
  return TrainingStateBytes(d, 0, one).total_bytes();
}

std::string StateLine(const MemoryOptions& o, const TrainingStateDtypes& d) {
  return fmt::format("{}: weights {}, main grads {}, {} = {} B/param unsharded{}", o.state, DTypeName(d.weights),
                     DTypeName(d.main_grads), OptimizerNote(d), base::FormatNumber(BytesPerParam(d)),
                     o.state == "megatron" ? " [default; --state torchtitan-fsdp|deepspeed|bf16]" : "");
}

std::string LayoutLine(const ParallelLayout& l, const TrainingMemoryPerGpu& g) {
  return fmt::format(
      "{} GPU{}: tp {} pp {}{} cp {} dp {}{} zero {}; most loaded stage: {} layers, {} of {} micro-batch{} in flight",
      l.gpus, l.gpus == 1 ? "" : "s", l.tp, l.pp, l.vpp > 1 ? fmt::format(" (vpp {})", l.vpp) : "", l.cp, g.dp,
      l.ep * l.etp > 1 ? fmt::format(" ep {} etp {}", l.ep, l.etp) : "", l.zero_stage,
      base::FormatNumber(g.layers_per_stage), base::FormatNumber(g.micro_batches_in_flight), l.micro_batches,
      l.micro_batches == 1 ? "" : "es");
}

// ", / 8 (ZeRO-1)" when stage `from` shards this part over more than one rank.
std::string ShardNote(int zero, int from, double shard) {
  return zero >= from && shard > 1 ? fmt::format(", / {} (ZeRO-{})", base::FormatNumber(shard), zero) : "";
}

nlohmann::json PerGpuJson(const ParallelLayout& l, const TrainingMemoryPerGpu& g) {
  return {{"weights_bytes", g.state.weights_bytes},
          {"gradients_bytes", g.state.gradients_bytes},
          {"optimizer_bytes", g.state.optimizer_bytes},
          {"activations_per_layer_bytes", g.activations_per_layer_bytes},
          {"activations_bytes", g.activations_bytes},
          {"output_layer_activations_bytes", g.output_layer_activations_bytes},
          {"total_bytes", g.total_bytes()},
          {"dense_params", g.dense_params},
          {"expert_params", g.expert_params},
          {"layers_per_stage", g.layers_per_stage},
          {"micro_batches_in_flight", g.micro_batches_in_flight},
          {"layout",
           {{"gpus", l.gpus},
            {"tp", l.tp},
            {"pp", l.pp},
            {"vpp", l.vpp},
            {"cp", l.cp},
            {"dp", g.dp},
            {"ep", l.ep},
            {"etp", l.etp},
            {"zero", l.zero_stage},
            {"micro_batches", l.micro_batches}}}};
}

// The per-GPU and unsharded columns.
struct Estimates {
  TrainingStateDtypes state;
  ParallelLayout layout;
  TrainingMemoryOptions options;
  TrainingMemory per_rank;   // whole-model state, activations per TP rank (the JSON `training` block)
  TrainingMemory unsharded;  // everything on one GPU (tp 1)
  TrainingMemoryPerGpu per_gpu;
};

report::Table TrainingTable(const MemoryOptions& o, const Estimates& e) {
  const TrainingMemoryPerGpu& g = e.per_gpu;
  const TrainingMemory& u = e.unsharded;
  const TrainingStateDtypes& d = e.state;
  const int zero = e.layout.zero_stage;
  using report::Bytes;
  report::Table t({"memory", "per GPU", "unsharded", "note"});
  std::string weights_note = DTypeName(d.weights) + ShardNote(zero, 3, g.sharding.dense_shard);
  if (zero >= 3)
    weights_note += fmt::format(" + 2 gathered layers in {}", DTypeName(d.compute));
  t.AddRow({"weights", Bytes(g.state.weights_bytes), Bytes(u.weights_bytes), weights_note});
  t.AddRow({"gradients", Bytes(g.state.gradients_bytes), Bytes(u.gradients_bytes),
            DTypeName(d.main_grads) + ShardNote(zero, 2, g.sharding.dense_shard)});
  t.AddRow({"optimizer states", Bytes(g.state.optimizer_bytes), Bytes(u.optimizer_bytes),
            OptimizerNote(d) + ShardNote(zero, 1, g.sharding.dense_shard)});
  t.AddRow({"activations / layer", Bytes(g.activations_per_layer_bytes), Bytes(u.activations_per_layer_bytes),
            fmt::format("per TP{} rank, micro-batch {}, recompute {}{}", e.layout.cp > 1 ? "/CP" : "", o.micro_batch,
                        RecomputeName(e.options.recompute), e.options.flash_attention ? ", flash" : "")});
  t.AddRow({"activations (layers)", Bytes(g.activations_bytes - g.output_layer_activations_bytes),
            Bytes(u.activations_bytes), "per GPU: the stage's layers x micro-batches in flight"});
  t.AddRow({"output layer + logits", Bytes(g.output_layer_activations_bytes), Bytes(u.output_layer_activations_bytes),
            e.layout.pp > 1 ? "fp32 logits (not on the first stage)" : "fp32 logits"});
  t.AddSeparator();
  t.AddRow({"total", Bytes(g.total_bytes()), Bytes(u.total_bytes()),
            "before framework buffers, allocator slack, CUDA context"});
  return t;
}

class MemoryCommand final : public Command {
 public:
  const char* name() const override { return "memory"; }
  const char* summary() const override {
    return "Training memory per GPU (weights, gradients, optimizer, activations) and KV cache";
  }

  void Register(CLI::App& app) override {
    o_.model.Register(app);
    seq_len_option_ =
        app.add_option("--seq-len,-s", o_.seq_len, "Sequence length [default: 4096; DiT: 81 frames at 720p]");
    app.add_option("--micro-batch,--mbs", o_.micro_batch, "Sequences per micro-batch")->capture_default_str();
    app.add_option("--recompute", o_.recompute, "none, selective, selective-literal, full")->capture_default_str();
    app.add_flag("--no-flash", o_.no_flash, "Attention stores the a*s^2 softmax (no flash attention)");
    app.add_flag("--sp", o_.sp, "Sequence parallelism (shards the replicated activations)");
    app.add_option(
           "--state", o_.state,
           "Stored dtypes per parameter: megatron (18 B), torchtitan-fsdp (16 B), deepspeed (16 B), bf16 (16 B)")
        ->capture_default_str();
    app.add_option("--weight-dtype", o_.weight_dtype, "Stored weight dtype [default: the --state's]");
    app.add_option("--grad-dtype", o_.grad_dtype, "Main gradient dtype [default: the --state's]");
    app.add_option("--optimizer", o_.optimizer, "adam (mixed precision), adam-fp32, sgd")
        ->check(CLI::IsMember({"adam", "adam-fp32", "sgd"}))
        ->capture_default_str();
    app.add_option("--kv-dtype", o_.kv_dtype, "KV-cache dtype")->capture_default_str();
    app.add_option("--context", o_.context, "KV cache context length [default: --seq-len]");
    app.add_flag("--json", o_.json, "Machine-readable output (docs/cli.md)");
    auto* g = app.add_option_group("Parallelism", "The layout (as mfu predict): memory of the most loaded GPU");
    g->add_option("--gpus,-n", o_.gpus, "GPUs in the job [default: tp x pp x cp]");
    g->add_option("--tp", o_.tp, "Tensor-parallel degree")->capture_default_str();
    g->add_option("--pp", o_.pp, "Pipeline-parallel degree")->capture_default_str();
    g->add_option("--vpp", o_.vpp, "Virtual pipeline stages per GPU (interleaved 1F1B)")->capture_default_str();
    g->add_option("--cp", o_.cp, "Context-parallel degree")->capture_default_str();
    g->add_option("--ep", o_.ep, "Expert-parallel degree (MoE)")->capture_default_str();
    g->add_option("--etp", o_.etp, "Expert tensor-parallel degree (MoE)")->capture_default_str();
    g->add_option("--zero", o_.zero, "ZeRO stage over dp x cp: 0, 1 (distributed optimizer), 2, 3 (FSDP)")
        ->capture_default_str();
    g->add_option("--gbs", o_.global_batch, "Global batch (sequences per step) [default: dp x micro-batch]");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(ModelSpec spec, o_.model.Resolve());
    MFU_ASSIGN_OR_RETURN(Estimates e, Estimate(spec));
    MFU_ASSIGN_OR_RETURN(DType kv_dtype, ParseDType(o_.kv_dtype));
    const ParamCounts params = CountParams(spec);
    nlohmann::json j = report::JsonEnvelope();
    j["model"] = report::ModelJson(spec);
    j["params"] = report::ParamsJson(params);
    j["training"] = TrainingJson(e);
    j["per_gpu"] = PerGpuJson(e.layout, e.per_gpu);
    report::Table kv_table({"KV cache", "bytes", "note"});
    if (spec.arch == ArchKind::kDecoder) {
      int64_t context = o_.context > 0 ? o_.context : o_.seq_len;
      MFU_ASSIGN_OR_RETURN(KvCacheSize kv, ComputeKvCache(spec, kv_dtype, context));
      j["kv_cache"] = {{"dtype", DTypeName(kv_dtype)},
                       {"bytes_per_token", kv.bytes_per_token},
                       {"context", context},
                       {"bytes_per_sequence", kv.bytes_per_sequence}};
      kv_table.AddRow({"per token", report::Bytes(kv.bytes_per_token), DTypeName(kv_dtype)});
      kv_table.AddRow({"per sequence", report::Bytes(kv.bytes_per_sequence),
                       fmt::format("context {} (sliding windows capped)", context)});
    }
    if (o_.json) {
      report::PrintJson(ctx.out, j);
      return Status::Ok();
    }
    report::PrintModelSummary(ctx.out, spec, params);
    ctx.out << "state       " << StateLine(o_, e.state) << "\n";
    ctx.out << "layout      " << LayoutLine(e.layout, e.per_gpu) << "\n\n";
    TrainingTable(o_, e).Print(ctx.out);
    if (spec.arch == ArchKind::kDecoder) {
      ctx.out << "\n";
      kv_table.Print(ctx.out);
    }
    return Status::Ok();
  }

 private:
  StatusOr<Estimates> Estimate(const ModelSpec& spec) const {
    Estimates e;
    MFU_ASSIGN_OR_RETURN(e.state, ResolveState(o_));
    TrainingMemoryOptions& m = e.options;
    m.state = e.state;
    MFU_ASSIGN_OR_RETURN(m.recompute, ParseRecompute(o_.recompute));
    m.seq_len = o_.seq_len;
    if (seq_len_option_->count() == 0 && spec.arch == ArchKind::kDiT) {
      MFU_ASSIGN_OR_RETURN(m.seq_len, DefaultDitTokens(spec));
    }
    m.micro_batch = o_.micro_batch;
    m.flash_attention = !o_.no_flash;
    m.tensor_parallel = o_.tp;
    m.sequence_parallel = o_.sp;
    if (o_.sp && o_.tp == 1)
      return InvalidArgumentError("--sp needs --tp > 1");
    MFU_ASSIGN_OR_RETURN(e.layout, ResolveLayout(o_, spec, m.seq_len));
    MFU_ASSIGN_OR_RETURN(e.per_rank, EstimateTrainingMemory(spec, m));
    MFU_ASSIGN_OR_RETURN(e.per_gpu, EstimateTrainingMemoryPerGpu(spec, m, e.layout));
    TrainingMemoryOptions whole = m;
    whole.tensor_parallel = 1;
    whole.sequence_parallel = false;
    MFU_ASSIGN_OR_RETURN(e.unsharded, EstimateTrainingMemory(spec, whole));
    return e;
  }

  nlohmann::json TrainingJson(const Estimates& e) const {
    const TrainingMemory& mem = e.per_rank;
    const TrainingMemoryOptions& m = e.options;
    return {{"weights_bytes", mem.weights_bytes},
            {"gradients_bytes", mem.gradients_bytes},
            {"optimizer_bytes", mem.optimizer_bytes},
            {"activations_per_layer_bytes", mem.activations_per_layer_bytes},
            {"activations_bytes", mem.activations_bytes},
            {"output_layer_activations_bytes", mem.output_layer_activations_bytes},
            {"total_bytes", e.unsharded.total_bytes()},
            {"state_bytes_per_param", BytesPerParam(e.state)},
            {"seq_len", m.seq_len},
            {"state", o_.state},
            {"optimizer", o_.optimizer},
            {"weight_dtype", DTypeName(e.state.weights)},
            {"grad_dtype", DTypeName(e.state.main_grads)},
            {"micro_batch", m.micro_batch},
            {"recompute", RecomputeName(m.recompute)},
            {"flash_attention", m.flash_attention},
            {"tp", m.tensor_parallel},
            {"sp", m.sequence_parallel}};
  }

  MemoryOptions o_;
  CLI::Option* seq_len_option_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> MakeMemoryCommand() {
  return std::make_unique<MemoryCommand>();
}

}  // namespace mfu::cli
