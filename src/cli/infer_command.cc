// mfu infer: throughput, latency, MFU and memory-bandwidth utilization of LLM
// inference (prefill, decode, batching, KV cache, speculative decoding), and
// what a measured serving throughput implies.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/csv.h"
#include "base/file_system.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/model_flags.h"
#include "report/json_common.h"
#include "mfu/cluster.h"
#include "mfu/framework.h"
#include "mfu/inference.h"
#include "report/table.h"

namespace mfu::cli {
namespace {

class InferCommand final : public Command {
 public:
  const char* name() const override { return "infer"; }
  const char* summary() const override {
    return "Inference: prefill/decode throughput, latency, MFU, MBU, KV capacity, speculative decoding";
  }

  void Register(CLI::App& app) override {
    model_.Register(app);
    gpu_.Register(app, /*required=*/false);
    app.add_option("--cluster", cluster_, "Cluster preset for the NVLink figures (data/clusters/clusters.csv)");
    app.add_option("--gpus,-n", gpus_, "GPUs serving one replica (must equal tp x pp)");
    app.add_option("--tp", tp_, "Tensor parallel size")->capture_default_str();
    app.add_option("--pp", pp_, "Pipeline parallel size")->capture_default_str();
    app.add_option("--ep", ep_, "Expert parallel size (MoE) [default: experts sharded by tp]")->capture_default_str();
    app.add_option("--weight-precision", weight_precision_, "bf16, fp16, fp8, int8, int4/fp4")->capture_default_str();
    app.add_option("--kv-precision", kv_precision_, "bf16, fp16, fp8")->capture_default_str();
    app.add_option("--input-len,-i", input_len_, "Prompt tokens per request");
    app.add_option("--output-len,-o", output_len_, "Generated tokens per request");
    app.add_option(
        "--workload", workload_,
        "Request shapes, each at its largest batch, and their mix: I:O[:N],... (I input and O output tokens, "
        "N requests, a weight, default 1) or a CSV with input_len, output_len[, requests]");
    app.add_option("--batch,-b", batch_, "Concurrent requests [default: the largest that fits the KV cache]");
    app.add_option("--framework", framework_,
                   "Serving framework (data/frameworks/frameworks.csv: tensorrt-llm, vllm, sglang): attention kernel, "
                   "how prompts and decode share forward passes, batch cap")
        ->capture_default_str();
    app.add_option("--framework-file", framework_files_, "CSV adding or changing framework profiles; repeatable")
        ->allow_extra_args(false);
    chunked_option_ = app.add_option(
        "--chunked-prefill", chunked_prefill_,
        "Split prompts into chunks filling a TOKENS budget per forward pass with the decode tokens; 0: prompts whole "
        "[default: the framework's: off for tensorrt-llm, 8192 for vllm and sglang on an H100]");
    max_batch_option_ = app.add_option(
        "--max-batch", max_batch_,
        "The engine's batch cap [default: the framework's: tensorrt-llm 2048, vllm 1024 (256 below 70 GB or on A100), "
        "sglang 2048]");
    app.add_option("--mla", mla_, "MLA decode: absorbed or naive")->capture_default_str();
    app.add_option("--convention,-c", convention_, "FLOPs convention of the MFU numerator")->capture_default_str();
    app.add_option("--efficiency-file", efficiency_files_,
                   "CSV overriding efficiency or vector kernel parameters (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--draft-tokens,-k", draft_tokens_, "Speculative decoding: draft tokens per step");
    app.add_option("--acceptance,-a", acceptance_, "Speculative decoding: per-token acceptance rate in [0, 1)");
    app.add_option("--drafter", drafter_, "Draft model (preset or config.json) [default: self-drafting heads]");
    app.add_option("--measured-tokens-per-sec", measured_,
                   "A measured output throughput (whole replica): the MFU and MBU it implies");
    app.add_option("--measured-ttft", measured_ttft_,
                   "A measured time to first token (s, one request of --input-len): the prefill MFU it implies");
    app.add_option("--measured-tpot", measured_tpot_,
                   "A measured time per output token (s) at the batch: the decode MFU and MBU it implies");
    app.add_flag("--json", json_, "Machine-readable output (docs/infer.md)");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(ModelSpec spec, model_.Resolve());
    MFU_ASSIGN_OR_RETURN(HardwareDb hw, gpu_.LoadDb());
    MFU_ASSIGN_OR_RETURN(ClusterDb clusters, ClusterDb::LoadBuiltin());
    MFU_ASSIGN_OR_RETURN(EfficiencyDb efficiency, EfficiencyDb::LoadBuiltin());
    for (const std::string& file : efficiency_files_)
      MFU_RETURN_IF_ERROR(efficiency.AddFile(file));
    InferenceSetup s;
    s.model = &spec;
    if (!cluster_.empty()) {
      MFU_ASSIGN_OR_RETURN(s.cluster, clusters.Find(cluster_));
      MFU_ASSIGN_OR_RETURN(s.gpu, hw.Find(s.cluster->accelerator));
      if (!gpu_.gpu.empty()) {
        MFU_ASSIGN_OR_RETURN(const Accelerator* g, hw.Find(gpu_.gpu));
        if (g != s.gpu)
          return InvalidArgumentError("--gpu " + gpu_.gpu + " contradicts --cluster " + cluster_);
      }
    } else if (!gpu_.gpu.empty()) {
      MFU_ASSIGN_OR_RETURN(s.gpu, hw.Find(gpu_.gpu));
    } else {
      return InvalidArgumentError("give --gpu or --cluster");
    }
    if (gpus_ != 0 && gpus_ != tp_ * pp_) {
      return InvalidArgumentError("--gpus " + std::to_string(gpus_) + " but tp x pp = " + std::to_string(tp_ * pp_) +
                                  " (one replica; data-parallel replicas scale throughput linearly)");
    }
    s.tp = tp_;
    s.pp = pp_;
    s.ep = ep_;
    MFU_ASSIGN_OR_RETURN(s.weight_dtype, ParsePrecision(weight_precision_, "--weight-precision"));
    MFU_ASSIGN_OR_RETURN(s.kv_dtype, ParsePrecision(kv_precision_, "--kv-precision"));
    if (mla_ != "absorbed" && mla_ != "naive")
      return InvalidArgumentError("--mla must be absorbed or naive");
    s.mla = mla_ == "absorbed" ? MlaMode::kAbsorbed : MlaMode::kNonAbsorbed;
    MFU_ASSIGN_OR_RETURN(s.convention, ParseConvention(convention_));
    s.efficiency = efficiency.For(s.gpu->id);
    MFU_RETURN_IF_ERROR(ResolveFramework(s));
    const bool single = input_len_ != 0 || output_len_ != 0 || workload_.empty();
    if (single && (input_len_ < 1 || output_len_ < 1)) {
      return InvalidArgumentError(workload_.empty() ? "give --input-len and --output-len (each >= 1), or --workload"
                                                    : "--input-len and --output-len must be >= 1");
    }
    std::vector<WorkloadPair> pairs;
    if (!workload_.empty()) {
      MFU_ASSIGN_OR_RETURN(pairs, ParseWorkload(workload_));
      if (!single && (draft_tokens_ != 0 || measured_ > 0 || measured_ < 0 || measured_ttft_ > 0 ||
                      measured_ttft_ < 0 || measured_tpot_ > 0 || measured_tpot_ < 0)) {
        return InvalidArgumentError(
            "--draft-tokens and --measured-* need one request shape: give --input-len and --output-len");
      }
    }
    if (batch_ < 0)
      return InvalidArgumentError("--batch must be positive");
    MFU_ASSIGN_OR_RETURN(InferenceModel m, InferenceModel::Create(s));
    const InferenceMemory mem = m.Memory();
    if (!mem.fits()) {
      return NotFoundError(fmt::format(
          "{} does not fit: {} of weights per GPU on {} x {} ({} of HBM); use more "
          "--tp/--pp or lower --weight-precision",
          spec.name, report::Bytes(mem.weights_bytes), m.gpus(), s.gpu->id, report::Bytes(mem.capacity_bytes)));
    }
    std::optional<WorkloadMix> mix;
    if (!pairs.empty()) {
      MFU_ASSIGN_OR_RETURN(WorkloadMix x, m.Mix(pairs, static_cast<double>(batch_)));
      mix = std::move(x);
    }
    if (!single)
      return PrintMixOnly(ctx, spec, s, m, mem, pairs, *mix);
    const auto in = static_cast<double>(input_len_), out = static_cast<double>(output_len_);
    MFU_ASSIGN_OR_RETURN(WorkloadResult w, m.Workload(in, out, static_cast<double>(batch_)));

    // Decode sweep at the workload's mean context, prefill over prompt lengths.
    const double mean_context = in + out / 2;
    std::vector<double> batches;
    for (double b = 1; b <= w.batch; b *= 2)
      batches.push_back(b);
    if (batches.empty() || batches.back() < w.batch)
      batches.push_back(w.batch);
    std::vector<double> prompts;
    for (double p = 128; p < in; p *= 4)
      prompts.push_back(p);
    prompts.push_back(in);

    std::unique_ptr<ModelSpec> drafter_spec;
    std::unique_ptr<InferenceModel> drafter;
    std::optional<SpeculativeResult> spec_result;
    if (draft_tokens_ > 0) {
      if (!drafter_.empty()) {
        MFU_ASSIGN_OR_RETURN(ModelSpec d, LoadModel(drafter_));
        drafter_spec = std::make_unique<ModelSpec>(std::move(d));
        InferenceSetup ds = s;
        ds.model = drafter_spec.get();
        ds.tp = 1;
        ds.pp = 1;
        ds.ep = 1;
        MFU_ASSIGN_OR_RETURN(InferenceModel dm, InferenceModel::Create(ds));
        drafter = std::make_unique<InferenceModel>(std::move(dm));
      }
      MFU_ASSIGN_OR_RETURN(SpeculativeResult r,
                           m.Speculative(w.batch, mean_context, draft_tokens_, acceptance_, drafter.get()));
      spec_result = r;
    } else if (acceptance_ > 0 || acceptance_ < 0 || !drafter_.empty()) {
      return InvalidArgumentError("--acceptance and --drafter go with --draft-tokens");
    }
    std::optional<MeasuredInference> measured;
    if (measured_ > 0 || measured_ < 0) {
      MFU_ASSIGN_OR_RETURN(MeasuredInference r, m.FromMeasurement(in, out, measured_, static_cast<double>(batch_)));
      measured = r;
    }
    std::optional<StepUtilization> ttft, tpot;
    if (measured_ttft_ > 0 || measured_ttft_ < 0) {
      MFU_ASSIGN_OR_RETURN(StepUtilization u, m.Utilization(m.Prefill(1, in), measured_ttft_));
      ttft = u;
    }
    if (measured_tpot_ > 0 || measured_tpot_ < 0) {
      MFU_ASSIGN_OR_RETURN(StepUtilization u,
                           m.Utilization(m.Decode(w.batch / static_cast<double>(s.pp), mean_context), measured_tpot_));
      tpot = u;
    }
    const double crossover = m.ComputeBoundBatch(mean_context);

    if (json_) {
      nlohmann::json j = HeaderJson(spec, s, m);
      j["input_len"] = input_len_;
      j["output_len"] = output_len_;
      j["batch"] = w.batch;
      j["batch_reason"] = w.batch_reason;
      j["decode_batch"] = w.decode_batch;
      j["prefill_tokens"] = w.prefill_tokens;
      j["prefill_round_share"] = w.prefill_round_share;
      j["output_tokens_per_s"] = w.output_tokens_per_s;
      j["ttft_s"] = w.ttft_s;
      j["tpot_s"] = w.tpot_s;
      j["mfu"] = w.mfu;
      j["mbu"] = w.mbu;
      j["kv_capacity_tokens"] = mem.kv_capacity_tokens;
      j["memory_per_gpu"] = {{"weights_bytes", mem.weights_bytes},
                             {"kv_bytes_per_token", mem.kv_bytes_per_token},
                             {"reserved_bytes", mem.reserved_bytes},
                             {"capacity_bytes", mem.capacity_bytes}};
      j["compute_bound_batch"] = crossover > 0 ? nlohmann::json(crossover) : nlohmann::json(nullptr);
      j["decode_sweep"] = nlohmann::json::array();
      for (double b : batches) {
        const StepCost c = m.Decode(b, mean_context);
        j["decode_sweep"].push_back({{"batch", b},
                                     {"tpot_s", c.time_s},
                                     {"output_tokens_per_s", static_cast<double>(s.pp) * b / c.time_s},
                                     {"mfu", c.model_flops / (c.time_s * m.peak_flops())},
                                     {"mbu", c.total_bytes() / (c.time_s * s.gpu->memory_bw_tbps * 1e12)},
                                     {"compute_bound", c.compute_bound}});
      }
      j["prefill"] = nlohmann::json::array();
      for (double p : prompts) {
        const StepCost c = m.Prefill(1, p);
        j["prefill"].push_back(
            {{"prompt_len", p}, {"time_s", c.time_s}, {"mfu", c.model_flops / (c.time_s * m.peak_flops())}});
      }
      if (spec_result) {
        j["speculative"] = {{"draft_tokens", draft_tokens_},
                            {"acceptance", acceptance_},
                            {"drafter", drafter_.empty() ? "self-drafting heads" : drafter_},
                            {"tokens_per_step", spec_result->tokens_per_step},
                            {"tpot_s", spec_result->tpot_s},
                            {"speedup", spec_result->speedup},
                            {"model_flops_utilization", spec_result->model_flops_utilization},
                            {"hardware_flops_utilization", spec_result->hardware_flops_utilization}};
      }
      if (measured) {
        j["measured"] = {{"output_tokens_per_s", measured->output_tokens_per_s},
                         {"batch", measured->batch},
                         {"mfu", measured->mfu},
                         {"mbu", measured->mbu}};
      }
      auto step_json = [](const StepUtilization& u) {
        return nlohmann::json{{"seconds", u.seconds}, {"predicted_s", u.predicted_s}, {"mfu", u.mfu}, {"mbu", u.mbu}};
      };
      if (ttft)
        j["measured_ttft"] = step_json(*ttft);
      if (tpot)
        j["measured_tpot"] = step_json(*tpot);
      if (mix)
        j["workload"] = MixJson(pairs, *mix);
      report::PrintJson(ctx.out, j);
      return Status::Ok();
    }

    std::ostream& o = ctx.out;
    o << fmt::format("model       {} ({} layers{})\n", spec.name, spec.num_layers,
                     spec.is_moe() ? fmt::format(", {} experts top-{}", spec.moe.num_experts, spec.moe.top_k) : "");
    o << fmt::format("hardware    {} x {} (tp {} pp {}{}), weights {}, KV cache {}\n", m.gpus(), s.gpu->id, s.tp, s.pp,
                     s.ep > 1 ? fmt::format(" ep {}", s.ep) : "", DTypeName(s.weight_dtype), DTypeName(s.kv_dtype));
    PrintFramework(o, s);
    o << fmt::format("workload    input {} + output {} tokens per request; FLOPs convention {}\n\n", input_len_,
                     output_len_, ConventionName(s.convention));
    report::Table mt({"memory per GPU", "value"});
    mt.AddRow({"weights", report::Bytes(mem.weights_bytes)});
    mt.AddRow({"reserved (context, activations, buffers)", report::Bytes(mem.reserved_bytes)});
    mt.AddRow({"KV cache per token", report::Bytes(mem.kv_bytes_per_token)});
    mt.AddRow({"KV capacity (90% of the rest)", base::FormatThousands(mem.kv_capacity_tokens) + " tokens"});
    mt.AddRow({"concurrent requests that fit", base::FormatThousands(std::floor(mem.kv_capacity_tokens / (in + out)))});
    mt.Print(o);
    o << fmt::format("\nat batch {} ({}): {} output tokens/s, TTFT {} ms, TPOT {} ms, MFU {}, MBU {}\n",
                     base::FormatThousands(w.batch), w.batch_reason, report::Fixed(w.output_tokens_per_s, 0),
                     report::Fixed(w.ttft_s * 1e3, 1), report::Fixed(w.tpot_s * 1e3, 2), report::Percent(w.mfu),
                     report::Percent(w.mbu));
    o << RoundsLine(s, w);
    o << "\ndecode at the mean context (" << base::FormatThousands(mean_context) << " tokens)\n";
    report::Table dt({"batch", "TPOT ms", "tokens/s", "MFU", "MBU", "bound"});
    for (double b : batches) {
      const StepCost c = m.Decode(b, mean_context);
      dt.AddRow({base::FormatThousands(b), report::Fixed(c.time_s * 1e3, 2),
                 report::Fixed(static_cast<double>(s.pp) * b / c.time_s, 0),
                 report::Percent(c.model_flops / (c.time_s * m.peak_flops())),
                 report::Percent(c.total_bytes() / (c.time_s * s.gpu->memory_bw_tbps * 1e12)),
                 c.compute_bound ? "compute" : "memory"});
    }
    dt.Print(o);
    o << (crossover > 0 ? fmt::format("decode becomes compute-bound at batch {}\n", base::FormatThousands(crossover))
                        : std::string("decode stays memory-bound up to the batch cap\n"));
    o << "\nprefill of one request\n";
    report::Table pt({"prompt tokens", "time ms", "MFU"});
    for (double p : prompts) {
      const StepCost c = m.Prefill(1, p);
      pt.AddRow({base::FormatThousands(p), report::Fixed(c.time_s * 1e3, 2),
                 report::Percent(c.model_flops / (c.time_s * m.peak_flops()))});
    }
    pt.Print(o);
    if (spec_result) {
      o << fmt::format("\nspeculative decoding: k {}, acceptance {}, drafter {}\n", draft_tokens_, acceptance_,
                       drafter_.empty() ? "self-drafting heads" : drafter_);
      o << fmt::format(
          "  {:.2f} tokens per verify step, TPOT {} ms ({:.2f}x), model-FLOPs utilization {}, "
          "hardware-FLOPs utilization {} (rejected positions and drafting included)\n",
          spec_result->tokens_per_step, report::Fixed(spec_result->tpot_s * 1e3, 2), spec_result->speedup,
          report::Percent(spec_result->model_flops_utilization),
          report::Percent(spec_result->hardware_flops_utilization));
    }
    if (measured) {
      o << fmt::format("\nmeasured {} output tokens/s at batch {}: MFU {}, MBU {}\n",
                       report::Fixed(measured->output_tokens_per_s, 0), base::FormatThousands(measured->batch),
                       report::Percent(measured->mfu), report::Percent(measured->mbu));
    }
    if (ttft) {
      o << fmt::format("measured TTFT {} ms (predicted {} ms): prefill MFU {}, MBU {}\n",
                       report::Fixed(ttft->seconds * 1e3, 2), report::Fixed(ttft->predicted_s * 1e3, 2),
                       report::Percent(ttft->mfu), report::Percent(ttft->mbu));
    }
    if (tpot) {
      o << fmt::format("measured TPOT {} ms at batch {} (predicted {} ms): decode MFU {}, MBU {}\n",
                       report::Fixed(tpot->seconds * 1e3, 2), base::FormatThousands(w.batch),
                       report::Fixed(tpot->predicted_s * 1e3, 2), report::Percent(tpot->mfu),
                       report::Percent(tpot->mbu));
    }
    if (mix)
      PrintMix(o, pairs, *mix);
    return Status::Ok();
  }

 private:
  // "I:O[:N],..." or a CSV file with input_len, output_len and an optional
  // requests column.
  static StatusOr<std::vector<WorkloadPair>> ParseWorkload(const std::string& text) {
    std::vector<WorkloadPair> pairs;
    // A bad number on the command line is a usage error (exit 2), in a file
    // a data error (exit 1).
    const bool from_file = text.find(':') == std::string::npos;
    auto number = [from_file](const std::string& field, const std::string& where, double& out) -> Status {
      StatusOr<double> v = base::ParseScaledNumber(base::Trim(field), where);
      if (!v.ok() || !(*v >= 1) || *v > 1e9 || std::floor(*v) < *v) {
        const std::string message = where + ": '" + field + "' is not a whole number in [1, 1e9]";
        return from_file ? ParseError(message) : InvalidArgumentError(message);
      }
      out = *v;
      return Status::Ok();
    };
    if (!from_file) {
      for (const std::string& item : base::Split(text, ',')) {
        const std::vector<std::string> parts = base::Split(item, ':');
        if (parts.size() < 2 || parts.size() > 3)
          return InvalidArgumentError("--workload: '" + item + "' is not INPUT:OUTPUT[:REQUESTS]");
        WorkloadPair p;
        MFU_RETURN_IF_ERROR(number(parts[0], "--workload " + item, p.input_len));
        MFU_RETURN_IF_ERROR(number(parts[1], "--workload " + item, p.output_len));
        if (parts.size() == 3)
          MFU_RETURN_IF_ERROR(number(parts[2], "--workload " + item, p.requests));
        pairs.push_back(p);
      }
      return pairs;
    }
    MFU_ASSIGN_OR_RETURN(std::string content, base::RealFileSystem().ReadFile(text));
    MFU_ASSIGN_OR_RETURN(base::CsvTable table, base::ParseCsv(content, text));
    const int in = table.Column("input_len"), out = table.Column("output_len"), n = table.Column("requests");
    if (in < 0 || out < 0)
      return ParseError(text + ": needs the columns input_len and output_len (and optionally requests)");
    for (size_t r = 0; r < table.rows.size(); ++r) {
      const std::string where = text + ":" + std::to_string(table.line_numbers[r]);
      WorkloadPair p;
      MFU_RETURN_IF_ERROR(number(table.rows[r][static_cast<size_t>(in)], where + " input_len", p.input_len));
      MFU_RETURN_IF_ERROR(number(table.rows[r][static_cast<size_t>(out)], where + " output_len", p.output_len));
      if (n >= 0)
        MFU_RETURN_IF_ERROR(number(table.rows[r][static_cast<size_t>(n)], where + " requests", p.requests));
      pairs.push_back(p);
    }
    if (pairs.empty())
      return ParseError(text + ": no request shapes");
    return pairs;
  }

  // The envelope and what every infer JSON names: model, GPU, layout,
  // precisions, convention.
  static nlohmann::json HeaderJson(const ModelSpec& spec, const InferenceSetup& s, const InferenceModel& m) {
    nlohmann::json j = report::JsonEnvelope();
    j["model"] = spec.name;
    j["gpu"] = {{"id", s.gpu->id}, {"count", m.gpus()}};
    j["layout"] = {{"tp", s.tp}, {"pp", s.pp}, {"ep", s.ep}};
    j["precision"] = {{"weights", DTypeName(s.weight_dtype)}, {"kv", DTypeName(s.kv_dtype)}};
    j["convention"] = ConventionName(s.convention);
    j["framework"] = {{"name", s.framework.name},
                      {"attention", AttentionKernelName(s.framework.attention)},
                      {"chunked_prefill", s.schedule.chunked_prefill},
                      {"mixed", s.schedule.mixed},
                      {"token_budget", s.schedule.token_budget},
                      {"max_batch", s.max_batch}};
    const InferenceValidity v = InferenceValidation(s.gpu->id, s.framework.name);
    j["validation"] = {{"validated", v.validated}, {"note", v.note}};
    return j;
  }

  static nlohmann::json MixJson(const std::vector<WorkloadPair>& pairs, const WorkloadMix& mix) {
    nlohmann::json rows = nlohmann::json::array();
    for (size_t i = 0; i < pairs.size(); ++i) {
      const WorkloadResult& w = mix.pairs[i];
      rows.push_back({{"input_len", pairs[i].input_len},
                      {"output_len", pairs[i].output_len},
                      {"requests", pairs[i].requests},
                      {"batch", w.batch},
                      {"batch_reason", w.batch_reason},
                      {"output_tokens_per_s", w.output_tokens_per_s},
                      {"ttft_s", w.ttft_s},
                      {"tpot_s", w.tpot_s},
                      {"mfu", w.mfu},
                      {"mbu", w.mbu}});
    }
    return {{"pairs", rows},
            {"mix",
             {{"seconds", mix.seconds},
              {"output_tokens_per_s", mix.output_tokens_per_s},
              {"mfu", mix.mfu},
              {"mbu", mix.mbu}}}};
  }

  static void PrintMix(std::ostream& o, const std::vector<WorkloadPair>& pairs, const WorkloadMix& mix) {
    o << "\nworkload (each shape at its largest batch, one shape at a time)\n";
    report::Table t({"input", "output", "requests", "batch", "tokens/s", "TTFT ms", "TPOT ms", "MFU", "MBU"});
    for (size_t i = 0; i < pairs.size(); ++i) {
      const WorkloadResult& w = mix.pairs[i];
      t.AddRow({base::FormatThousands(pairs[i].input_len), base::FormatThousands(pairs[i].output_len),
                base::FormatThousands(pairs[i].requests), base::FormatThousands(w.batch),
                report::Fixed(w.output_tokens_per_s, 0), report::Fixed(w.ttft_s * 1e3, 1),
                report::Fixed(w.tpot_s * 1e3, 2), report::Percent(w.mfu), report::Percent(w.mbu)});
    }
    t.Print(o);
    o << fmt::format("mix (requests weighted as given): {} output tokens/s, MFU {}, MBU {}\n",
                     report::Fixed(mix.output_tokens_per_s, 0), report::Percent(mix.mfu), report::Percent(mix.mbu));
  }

  Status PrintMixOnly(const CommandContext& ctx, const ModelSpec& spec, const InferenceSetup& s,
                      const InferenceModel& m, const InferenceMemory& mem, const std::vector<WorkloadPair>& pairs,
                      const WorkloadMix& mix) const {
    if (json_) {
      nlohmann::json j = HeaderJson(spec, s, m);
      j["kv_capacity_tokens"] = mem.kv_capacity_tokens;
      j["workload"] = MixJson(pairs, mix);
      report::PrintJson(ctx.out, j);
      return Status::Ok();
    }
    std::ostream& o = ctx.out;
    o << fmt::format("model       {} ({} layers)\n", spec.name, spec.num_layers);
    o << fmt::format("hardware    {} x {} (tp {} pp {}), weights {}, KV cache {}, KV capacity {} tokens\n", m.gpus(),
                     s.gpu->id, s.tp, s.pp, DTypeName(s.weight_dtype), DTypeName(s.kv_dtype),
                     base::FormatThousands(mem.kv_capacity_tokens));
    PrintFramework(o, s);
    PrintMix(o, pairs, mix);
    return Status::Ok();
  }

  // --framework (a serving profile) and its scheduling defaults, with
  // --chunked-prefill and --max-batch applied.
  Status ResolveFramework(InferenceSetup& s) {
    MFU_ASSIGN_OR_RETURN(frameworks_, FrameworkDb::LoadBuiltin());
    for (const std::string& file : framework_files_)
      MFU_RETURN_IF_ERROR(frameworks_.AddFile(file));
    StatusOr<const FrameworkProfile*> found = frameworks_.Find(framework_);
    if (!found.ok())
      return InvalidArgumentError("--framework: " + found.status().message());
    s.framework = **found;
    StatusOr<ServingDefaults> d = ServingDefaultsFor(s.framework, *s.gpu);
    if (!d.ok())
      return InvalidArgumentError("--framework: " + d.status().message());
    s.schedule = d->schedule;
    s.max_batch = d->max_batch;
    if (chunked_option_->count() > 0) {
      if (chunked_prefill_ < 0 || chunked_prefill_ > 10000000)
        return InvalidArgumentError("--chunked-prefill must be a token budget in [1, 1e7], or 0 for whole prompts");
      s.schedule.chunked_prefill = chunked_prefill_ > 0;
      if (chunked_prefill_ > 0)
        s.schedule.token_budget = static_cast<double>(chunked_prefill_);
    }
    if (max_batch_option_->count() > 0) {
      if (!(max_batch_ >= 1) || max_batch_ > 1e6)
        return InvalidArgumentError("--max-batch must be in [1, 1e6]");
      s.max_batch = max_batch_;
    }
    return Status::Ok();
  }

  // The framework, its schedule, and whether the prediction is validated.
  static void PrintFramework(std::ostream& o, const InferenceSetup& s) {
    const ServingSchedule& p = s.schedule;
    const std::string budget = base::FormatThousands(p.token_budget);
    std::string how;
    if (p.mixed) {
      how = p.chunked_prefill ? "prompt chunks fill what decode tokens leave of " + budget + " tokens per pass"
                              : "whole prompts share passes with decode tokens, up to " + budget + " tokens";
    } else {
      how = (p.chunked_prefill ? "prompts in chunks of " + budget + " tokens"
                               : "whole prompts, up to " + budget + " tokens per pass") +
            ", in passes apart from decode";
    }
    o << fmt::format("framework   {} ({} attention): {}; batch cap {}\n", s.framework.name,
                     AttentionKernelName(s.framework.attention), how, base::FormatThousands(s.max_batch));
    const InferenceValidity v = InferenceValidation(s.gpu->id, s.framework.name);
    if (!v.validated)
      o << "note        " << v.note << "\n";
  }

  // The steady state's rounds: what decodes, how often prompt work joins.
  static std::string RoundsLine(const InferenceSetup& s, const WorkloadResult& w) {
    if (w.decode_batch <= 0)
      return fmt::format("rounds      prompts only: {} tokens per pass\n", base::FormatThousands(w.prefill_tokens));
    if (s.schedule.mixed) {
      return fmt::format("rounds      {} requests decoding; {} of rounds also carry {} prompt tokens\n",
                         base::FormatThousands(w.decode_batch), report::Percent(w.prefill_round_share),
                         base::FormatThousands(w.prefill_tokens));
    }
    return fmt::format("rounds      {} requests decoding; {:.3f} prefill passes of {} tokens per decode pass\n",
                       base::FormatThousands(w.decode_batch), w.prefill_round_share,
                       base::FormatThousands(w.prefill_tokens));
  }

  static StatusOr<DType> ParsePrecision(const std::string& text, const char* flag) {
    const std::string t = base::ToLower(text);
    if (t == "int4" || t == "fp4" || t == "nvfp4" || t == "mxfp4")
      return DType::kFp4;  // 4-bit weights: half a byte
    StatusOr<DType> d = ParseDType(t);
    if (!d.ok())
      return InvalidArgumentError(std::string(flag) + ": " + d.status().message());
    return d;
  }

  ModelFlags model_;
  GpuFlags gpu_;
  std::string cluster_, weight_precision_ = "bf16", kv_precision_ = "bf16", mla_ = "absorbed", convention_ = "megatron",
                        drafter_;
  std::vector<std::string> efficiency_files_, framework_files_;
  std::string workload_, framework_ = "tensorrt-llm";
  FrameworkDb frameworks_;
  CLI::Option* chunked_option_ = nullptr;
  CLI::Option* max_batch_option_ = nullptr;
  int64_t chunked_prefill_ = 0;
  int64_t gpus_ = 0, tp_ = 1, pp_ = 1, ep_ = 1, input_len_ = 0, output_len_ = 0, batch_ = 0, draft_tokens_ = 0;
  double max_batch_ = 2048, acceptance_ = 0, measured_ = 0, measured_ttft_ = 0, measured_tpot_ = 0;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeInferCommand() {
  return std::make_unique<InferCommand>();
}

}  // namespace mfu::cli
