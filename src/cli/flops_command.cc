// mfu flops: parameters and FLOPs of a model under a named convention, for
// training (with recompute) or inference (prefill, decode).

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <ostream>
#include <sstream>
#include <string>

#include "base/strings.h"
#include "cli/command.h"
#include "cli/model_flags.h"
#include "report/json_common.h"
#include "mfu/flops.h"
#include "report/table.h"

namespace mfu::cli {
namespace {

constexpr int64_t kDefaultSeqLen = 4096;

struct FlopsOptions {
  ModelFlags model;
  int64_t seq_len = 0;
  int64_t batch = 1;
  std::string convention = "megatron";
  std::string recompute = "none";
  std::string inference;
  int64_t context = 0;
  int64_t cached = 0;
  std::string mla = "naive";
  int64_t frames = 0, height = 0, width = 0;
  bool json = false;
};

void PrintComponents(std::ostream& out, const FlopsBreakdown& f) {
  report::Table table({"component", "forward FLOPs/token", "share"});
  const double total = f.total();
  for (size_t i = 0; i < kNumFlopsComponents; ++i) {
    auto c = static_cast<FlopsComponent>(i);
    if (!(f[c] > 0) && c != FlopsComponent::kLmHead)
      continue;
    table.AddRow({FlopsComponentName(c), report::Sci(f[c]), report::Percent(total > 0 ? f[c] / total : 0)});
  }
  table.AddSeparator();
  table.AddRow({"forward total", report::Sci(total), "100.0%"});
  table.Print(out);
}

nlohmann::json ComponentsJson(const FlopsBreakdown& f) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < kNumFlopsComponents; ++i) {
    j[FlopsComponentName(static_cast<FlopsComponent>(i))] = f.forward[i];
  }
  return j;
}

class FlopsCommand final : public Command {
 public:
  const char* name() const override { return "flops"; }
  const char* summary() const override { return "Parameters and FLOPs of a model under a named convention"; }

  void Register(CLI::App& app) override {
    o_.model.Register(app);
    seq_len_option_ = app.add_option("--seq-len,-s", o_.seq_len,
                                     "Training sequence length / prompt length [default: 4096 capped at the model's "
                                     "max_position_embeddings; DiT: the tokens of 81 frames at 720p]");
    app.add_option("--batch,-b", o_.batch, "Sequences per step (training) or per batch (inference)")
        ->capture_default_str();
    app.add_option("--convention,-c", o_.convention, "megatron, palm, kaplan, exact, hf, maxtext, llm-foundry, or all")
        ->capture_default_str();
    app.add_option("--recompute", o_.recompute, "none, selective (Korthikanti), selective-literal, full")
        ->capture_default_str();
    app.add_option("--inference", o_.inference, "prefill or decode")->check(CLI::IsMember({"prefill", "decode"}));
    app.add_option("--context", o_.context, "Decode: keys each new token attends to");
    app.add_option("--cached", o_.cached, "Prefill: tokens already in the KV cache (chunked prefill)");
    app.add_option("--mla", o_.mla, "MLA execution at inference: naive or absorbed")
        ->check(CLI::IsMember({"naive", "absorbed"}))
        ->capture_default_str();
    app.add_option("--frames", o_.frames, "DiT: video frames (e.g. 81)");
    app.add_option("--height", o_.height, "DiT: video height in pixels");
    app.add_option("--width", o_.width, "DiT: video width in pixels");
    app.add_flag("--json", o_.json, "Machine-readable output (docs/cli.md)");
  }

  Status Run(const CommandContext& ctx) override {
    MFU_ASSIGN_OR_RETURN(ModelSpec spec, o_.model.Resolve());
    MFU_RETURN_IF_ERROR(ResolveSeqLen(spec));
    if (o_.batch < 1)
      return InvalidArgumentError("--batch must be positive, got " + std::to_string(o_.batch));
    if (!o_.inference.empty() && o_.recompute != "none") {
      return InvalidArgumentError("--recompute applies to training, not --inference");
    }
    if (o_.inference != "decode" && o_.context > 0)
      return InvalidArgumentError("--context needs --inference decode");
    if (o_.inference != "prefill" && o_.cached > 0)
      return InvalidArgumentError("--cached needs --inference prefill");
    MFU_ASSIGN_OR_RETURN(Recompute recompute, ParseRecompute(o_.recompute));
    const bool all = base::ToLower(o_.convention) == "all";
    if (all && !o_.inference.empty()) {
      return InvalidArgumentError("--convention all compares training counts; give one convention with --inference");
    }
    Convention convention = Convention::kMegatron;
    if (!all) {
      MFU_ASSIGN_OR_RETURN(convention, ParseConvention(o_.convention));
    }
    const ParamCounts params = CountParams(spec);
    nlohmann::json j = report::JsonEnvelope();
    j["model"] = report::ModelJson(spec);
    j["params"] = report::ParamsJson(params);
    if (o_.inference != "decode")
      j["seq_len"] = o_.seq_len;
    j["batch"] = o_.batch;
    // Text goes to a buffer first: nothing is printed unless everything succeeds.
    std::ostringstream text;
    const CommandContext buffered{text, ctx.err};
    if (!o_.json)
      report::PrintModelSummary(text, spec, params);
    if (!o_.inference.empty()) {
      MFU_RETURN_IF_ERROR(RunInference(buffered, spec, convention, j));
    } else {
      MFU_RETURN_IF_ERROR(RunTraining(buffered, spec, convention, recompute, j));
      if (all)
        MFU_RETURN_IF_ERROR(RunAllConventions(buffered, spec, recompute, j));
    }
    if (o_.json) {
      report::PrintJson(ctx.out, j);
    } else {
      ctx.out << text.str();
    }
    return Status::Ok();
  }

 private:
  Status ResolveSeqLen(const ModelSpec& spec) {
    bool video = o_.frames || o_.height || o_.width;
    if (video) {
      if (o_.seq_len > 0)
        return InvalidArgumentError("--seq-len and --frames/--height/--width are alternatives");
      MFU_ASSIGN_OR_RETURN(o_.seq_len, DitTokens(spec, o_.frames, o_.height, o_.width));
    } else if (seq_len_option_->count() == 0) {
      if (spec.arch == ArchKind::kDiT) {
        MFU_ASSIGN_OR_RETURN(o_.seq_len, DefaultDitTokens(spec));
      } else {
        o_.seq_len = kDefaultSeqLen;
        if (spec.max_position_embeddings > 0)
          o_.seq_len = std::min(o_.seq_len, spec.max_position_embeddings);
      }
    }
    return Status::Ok();
  }

  Status RunTraining(const CommandContext& ctx, const ModelSpec& spec, Convention convention, Recompute recompute,
                     nlohmann::json& j) {
    MFU_ASSIGN_OR_RETURN(TrainingFlops t, ComputeTrainingFlops(spec, convention, o_.seq_len, recompute));
    const double tokens = static_cast<double>(o_.batch) * static_cast<double>(o_.seq_len);
    j["convention"] = {{"name", ConventionName(convention)}, {"summary", ConventionSummary(convention)}};
    j["recompute"] = RecomputeName(recompute);
    j["flops_per_token"] = {{"forward", t.forward.total()},
                            {"training", t.model_per_token},
                            {"recompute", t.recompute_per_token},
                            {"hardware", t.hardware_per_token},
                            {"components_forward", ComponentsJson(t.forward)}};
    j["flops_per_step"] = {{"training", t.model_per_token * tokens}, {"hardware", t.hardware_per_token * tokens}};
    if (o_.json)
      return Status::Ok();
    std::ostream& out = ctx.out;
    out << fmt::format("convention  {}: {}\n", ConventionName(convention), ConventionSummary(convention));
    out << fmt::format("sequence    {} tokens x batch {}; recompute {}\n\n", o_.seq_len, o_.batch,
                       RecomputeName(recompute));
    PrintComponents(out, t.forward);
    out << "\n";
    report::Table table({"training (" + std::string(ConventionName(convention)) + ")", "per token", "per step"});
    table.AddRow(
        {"model FLOPs (3x forward, MFU)", report::Sci(t.model_per_token), report::Sci(t.model_per_token * tokens)});
    table.AddRow({"recompute FLOPs", report::Sci(t.recompute_per_token), report::Sci(t.recompute_per_token * tokens)});
    table.AddRow(
        {"hardware FLOPs (HFU)", report::Sci(t.hardware_per_token), report::Sci(t.hardware_per_token * tokens)});
    table.Print(out);
    return Status::Ok();
  }

  Status RunAllConventions(const CommandContext& ctx, const ModelSpec& spec, Recompute recompute, nlohmann::json& j) {
    report::Table table({"convention", "training FLOPs/token", "vs megatron", "what it counts"});
    nlohmann::json rows = nlohmann::json::array();
    double reference = 0;
    for (const auto& info : AllConventions()) {
      auto t = ComputeTrainingFlops(spec, info.convention, o_.seq_len, recompute);
      if (!t.ok()) {
        table.AddRow({info.name, "n/a", "", t.status().message()});
        rows.push_back({{"name", info.name}, {"error", t.status().message()}});
        continue;
      }
      if (info.convention == Convention::kMegatron)
        reference = t->model_per_token;
      double ratio = reference > 0 ? t->model_per_token / reference : 0;
      table.AddRow({info.name, report::Sci(t->model_per_token), report::Fixed(ratio, 3), info.summary});
      rows.push_back({{"name", info.name}, {"training", t->model_per_token}, {"hardware", t->hardware_per_token}});
    }
    j["conventions"] = rows;
    if (!o_.json) {
      ctx.out << "\n";
      table.Print(ctx.out);
    }
    return Status::Ok();
  }

  Status RunInference(const CommandContext& ctx, const ModelSpec& spec, Convention convention, nlohmann::json& j) {
    MlaMode mla = o_.mla == "absorbed" ? MlaMode::kAbsorbed : MlaMode::kNonAbsorbed;
    InferenceFlops f;
    std::string what;
    if (o_.inference == "prefill") {
      MFU_ASSIGN_OR_RETURN(f, ComputePrefillFlops(spec, convention, o_.batch, o_.seq_len, o_.cached, mla));
      what = fmt::format("prefill of {} tokens on {} cached, batch {}", o_.seq_len, o_.cached, o_.batch);
    } else {
      if (o_.context < 1)
        return InvalidArgumentError("--inference decode needs --context (keys per new token)");
      MFU_ASSIGN_OR_RETURN(f, ComputeDecodeFlops(spec, convention, o_.batch, o_.context, mla));
      what = fmt::format("decode step at context {}, batch {}", o_.context, o_.batch);
    }
    j["convention"] = {{"name", ConventionName(convention)}, {"summary", ConventionSummary(convention)}};
    j["inference"] = {{"mode", o_.inference},   {"mla", o_.mla},
                      {"context", o_.context},  {"cached", o_.cached},
                      {"tokens", f.tokens},     {"flops_per_token", f.per_token.total()},
                      {"flops_total", f.total}, {"components_forward", ComponentsJson(f.per_token)}};
    if (o_.json)
      return Status::Ok();
    ctx.out << fmt::format("convention  {}: {}\n", ConventionName(convention), ConventionSummary(convention));
    ctx.out << fmt::format("inference   {}; MLA {}\n\n", what, o_.mla);
    PrintComponents(ctx.out, f.per_token);
    ctx.out << fmt::format("\ntokens {}  total FLOPs {}\n", base::FormatThousands(f.tokens), report::Sci(f.total));
    return Status::Ok();
  }

  FlopsOptions o_;
  CLI::Option* seq_len_option_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> MakeFlopsCommand() {
  return std::make_unique<FlopsCommand>();
}

}  // namespace mfu::cli
