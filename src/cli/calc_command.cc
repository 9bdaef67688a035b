// mfu calc: MFU and HFU from a training log's throughput or step time.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "base/strings.h"
#include "cli/command.h"
#include "cli/model_flags.h"
#include "report/json_common.h"
#include "mfu/calc.h"
#include "report/table.h"

namespace mfu::cli {
namespace {

struct CalcOptions {
  ModelFlags model;
  GpuFlags gpu;
  TrainingThroughput throughput;
  std::string tokens_per_s;
  std::string tokens_per_s_per_gpu;
  std::string convention = "megatron";
  std::string recompute = "none";
  std::string precision = "bf16";
  bool json = false;
};

class CalcCommand final : public Command {
 public:
  const char* name() const override { return "calc"; }
  const char* summary() const override { return "MFU and HFU from a job's throughput or step time"; }

  void Register(CLI::App& app) override {
    o_.model.Register(app);
    o_.gpu.Register(app, /*required=*/true);
    app.add_option("--gpus,-n", o_.throughput.gpus, "GPUs in the job")->required();
    app.add_option("--seq-len,-s", o_.throughput.seq_len, "Training sequence length")->required();
    app.add_option("--tokens-per-sec", o_.tokens_per_s, "Whole-job tokens/s (suffixes k, M, G/B, T accepted: 46k)");
    app.add_option("--tokens-per-sec-per-gpu", o_.tokens_per_s_per_gpu,
                   "Tokens/s per GPU (suffixes as --tokens-per-sec)");
    app.add_option("--step-time", o_.throughput.step_time_s, "Seconds per optimizer step (with --global-batch)");
    app.add_option("--global-batch", o_.throughput.global_batch, "Sequences per step (with --step-time)");
    app.add_option("--precision,-p", o_.precision, "Dtype whose dense peak is the denominator (bf16, fp16, fp8, ...)")
        ->capture_default_str();
    app.add_option("--recompute", o_.recompute, "none, selective (Korthikanti), selective-literal, full")
        ->capture_default_str();
    app.add_option("--convention,-c", o_.convention, "FLOPs convention (see 'mfu flops --help')")
        ->capture_default_str();
    app.add_flag("--json", o_.json, "Machine-readable output (docs/cli.md)");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(ModelSpec spec, o_.model.Resolve());
    MFU_ASSIGN_OR_RETURN(HardwareDb db, o_.gpu.LoadDb());
    MFU_ASSIGN_OR_RETURN(const Accelerator* gpu, db.Find(o_.gpu.gpu));
    MfuOptions options;
    MFU_ASSIGN_OR_RETURN(options.convention, ParseConvention(o_.convention));
    MFU_ASSIGN_OR_RETURN(options.recompute, ParseRecompute(o_.recompute));
    MFU_ASSIGN_OR_RETURN(options.precision, ParseDType(o_.precision));
    if (!o_.tokens_per_s.empty()) {
      MFU_ASSIGN_OR_RETURN(o_.throughput.tokens_per_s, base::ParseScaledNumber(o_.tokens_per_s, "--tokens-per-sec"));
      if (!(o_.throughput.tokens_per_s > 0))
        return InvalidArgumentError("--tokens-per-sec must be positive");
    }
    if (!o_.tokens_per_s_per_gpu.empty()) {
      MFU_ASSIGN_OR_RETURN(o_.throughput.tokens_per_s_per_gpu,
                           base::ParseScaledNumber(o_.tokens_per_s_per_gpu, "--tokens-per-sec-per-gpu"));
      if (!(o_.throughput.tokens_per_s_per_gpu > 0)) {
        return InvalidArgumentError("--tokens-per-sec-per-gpu must be positive");
      }
    }
    if (o_.throughput.global_batch > 0 && !(o_.throughput.step_time_s > 0)) {
      return InvalidArgumentError("--global-batch goes with --step-time");
    }
    MFU_ASSIGN_OR_RETURN(MfuResult r, ComputeMfu(spec, *gpu, o_.throughput, options));
    if (o_.json) {
      nlohmann::json j = report::JsonEnvelope();
      j["model"] = report::ModelJson(spec);
      j["gpu"] = {{"id", gpu->id}, {"name", gpu->display_name()}, {"count", o_.throughput.gpus}};
      j["convention"] = {{"name", ConventionName(options.convention)}};
      j["recompute"] = RecomputeName(options.recompute);
      j["precision"] = DTypeName(options.precision);
      j["peak_tflops"] = r.peak_tflops;
      j["seq_len"] = o_.throughput.seq_len;
      j["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
      j["tokens_per_s"] = r.tokens_per_s_per_gpu * static_cast<double>(o_.throughput.gpus);
      j["model_flops_per_token"] = r.flops.model_per_token;
      j["hardware_flops_per_token"] = r.flops.hardware_per_token;
      j["tflops_per_gpu"] = r.model_tflops_per_gpu;
      j["hardware_tflops_per_gpu"] = r.hardware_tflops_per_gpu;
      j["mfu"] = r.mfu;
      j["hfu"] = r.hfu;
      j["band"] = r.band;
      report::PrintJson(ctx.out, j);
      return Status::Ok();
    }
    Print(ctx.out, spec, *gpu, options, r);
    return Status::Ok();
  }

 private:
  void Print(std::ostream& out, const ModelSpec& spec, const Accelerator& gpu, const MfuOptions& options,
             const MfuResult& r) const {
    out << fmt::format("model       {} ({})\n", spec.name, spec.family);
    out << fmt::format("hardware    {} x {} ({}), dense {} peak {} TFLOP/s per GPU\n", o_.throughput.gpus, gpu.id,
                       gpu.display_name(), DTypeName(options.precision), report::Fixed(r.peak_tflops, 1));
    out << fmt::format("convention  {}; recompute {}; sequence {}\n", ConventionName(options.convention),
                       RecomputeName(options.recompute), o_.throughput.seq_len);
    out << fmt::format("throughput  {} tokens/s per GPU ({} tokens/s in all)\n\n",
                       report::Fixed(r.tokens_per_s_per_gpu, 1),
                       report::Fixed(r.tokens_per_s_per_gpu * static_cast<double>(o_.throughput.gpus), 0));
    report::Table table({"metric", "value", "note"});
    table.AddRow({"model FLOPs per token", report::Sci(r.flops.model_per_token), ConventionName(options.convention)});
    table.AddRow({"hardware FLOPs per token", report::Sci(r.flops.hardware_per_token),
                  std::string("model FLOPs + recompute ") + RecomputeName(options.recompute)});
    table.AddRow({"achieved TFLOP/s per GPU", report::Fixed(r.model_tflops_per_gpu, 1), "model FLOPs"});
    table.AddRow({"MFU", report::Percent(r.mfu), r.band});
    table.AddRow({"HFU", report::Percent(r.hfu), "includes recomputed FLOPs"});
    table.Print(out);
  }

  CalcOptions o_;
};

}  // namespace

std::unique_ptr<Command> MakeCalcCommand() {
  return std::make_unique<CalcCommand>();
}

}  // namespace mfu::cli
