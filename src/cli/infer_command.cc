// mfu infer: throughput, latency, MFU and memory-bandwidth utilization of LLM
// inference (prefill, decode, batching, KV cache, speculative decoding), and
// what a measured serving throughput implies.

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/model_flags.h"
#include "mfu/catalog.h"
#include "mfu/file_system.h"
#include "mfu/inference_job.h"
#include "mfu/report_infer.h"

namespace mfu::cli {
namespace {

class InferCommand final : public Command {
 public:
  const char* name() const override { return "infer"; }
  const char* summary() const override {
    return "Inference throughput, latency, MFU, MBU, KV capacity, speculative decoding";
  }

  void Register(CLI::App& app) override {
    model_.Register(app);
    gpu_.Register(app, /*required=*/false);
    app.add_option("--cluster", request_.cluster, "Cluster preset for the NVLink figures (data/clusters/clusters.csv)");
    app.add_option("--gpus,-n", request_.gpus, "GPUs serving one replica (must equal tp x pp)");
    app.add_option("--tp", request_.tp, "Tensor parallel size")->capture_default_str();
    app.add_option("--pp", request_.pp, "Pipeline parallel size")->capture_default_str();
    app.add_option("--ep", request_.ep,
                   "Expert parallel size (MoE), dividing --tp: ep GPUs hold whole experts, each split tp/ep ways "
                   "[default: every expert split by tp]")
        ->capture_default_str();
    app.add_flag("--attention-dp", request_.attention_dp,
                 "Attention data parallel over the --tp GPUs (MoE): each runs attention and the dense layers on its "
                 "own requests with whole weights and its own KV cache; MoE layers gather the tokens "
                 "(TensorRT-LLM's enable_attention_dp, SGLang's DP attention)");
    app.add_option("--weight-precision", request_.weight_precision, "bf16, fp16, fp8, int8, int4/fp4")
        ->capture_default_str();
    app.add_option("--kv-precision", request_.kv_precision, "bf16, fp16, fp8")->capture_default_str();
    app.add_option("--input-len,-i", request_.input_len, "Prompt tokens per request");
    app.add_option("--output-len,-o", request_.output_len, "Generated tokens per request");
    app.add_option(
        "--workload", request_.workload,
        "Request shapes, each at its largest batch, and their mix: I:O[:N],... (I input and O output tokens, "
        "N requests, a weight, default 1) or a CSV with input_len, output_len[, requests]");
    app.add_option("--batch,-b", request_.batch, "Concurrent requests [default: the largest that fits the KV cache]");
    app.add_option("--framework", request_.framework,
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
    app.add_option("--mla", request_.mla, "MLA decode: absorbed or naive")->capture_default_str();
    app.add_option("--convention,-c", request_.convention, "FLOPs convention of the MFU numerator")
        ->capture_default_str();
    app.add_option("--efficiency-file", efficiency_files_,
                   "CSV overriding efficiency or vector kernel parameters (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--draft-tokens", request_.draft_tokens, "Speculative decoding: draft tokens per step");
    app.add_option("--acceptance,-a", request_.acceptance, "Speculative decoding: per-token acceptance rate in [0, 1)");
    app.add_option("--drafter", request_.drafter, "Draft model (preset or config.json) [default: self-drafting heads]");
    app.add_option("--measured-tokens-per-sec", request_.measured_tokens_per_s,
                   "A measured output throughput (whole replica): the MFU and MBU it implies");
    app.add_option("--measured-ttft", request_.measured_ttft_s,
                   "A measured time to first token (s, one request of --input-len): the prefill MFU it implies");
    app.add_option("--measured-tpot", request_.measured_tpot_s,
                   "A measured time per output token (s) at the batch: the decode MFU and MBU it implies");
    app.add_flag("--json", json_, "Machine-readable output (docs/infer.md)");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(request_.model, model_.Resolve());
    request_.gpu = gpu_.gpu;
    if (chunked_option_->count() > 0)
      request_.chunked_prefill = chunked_prefill_;
    if (max_batch_option_->count() > 0)
      request_.max_batch = max_batch_;
    CatalogFiles files;
    if (!gpu_.hardware_file.empty())
      files.hardware.push_back(gpu_.hardware_file);
    files.efficiency = efficiency_files_;
    files.frameworks = framework_files_;
    const RealFileSystem fs{};
    MFU_ASSIGN_OR_RETURN(Catalog catalog, Catalog::Load(fs, files));
    MFU_ASSIGN_OR_RETURN(InferenceResult result, RunInferenceJob(catalog, fs, request_));
    ctx.out << ctx.reporter(json_).Report(result);
    return Status::Ok();
  }

 private:
  ModelFlags model_;
  GpuFlags gpu_;
  InferenceRequest request_;
  std::vector<std::string> efficiency_files_, framework_files_;
  CLI::Option* chunked_option_ = nullptr;
  CLI::Option* max_batch_option_ = nullptr;
  int64_t chunked_prefill_ = 0;
  double max_batch_ = 2048;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeInferCommand() {
  return std::make_unique<InferCommand>();
}

}  // namespace mfu::cli
