// Terminal text of `mfu predict` and `mfu plan` (report_plan.h).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "base/strings.h"
#include "mfu/report_goodput.h"
#include "mfu/report_plan.h"
#include "report/json_common.h"
#include "report/memory_common.h"
#include "report/table.h"

namespace mfu::report {
namespace {

void PrintSetup(std::ostream& out, const ResolvedTraining& s, int width) {
  const TrainingSetup& t = s.perf->setup();
  out << LabelLine(
      "model",
      fmt::format(
          "{} ({} layers, hidden {}{})", s.model.name, s.model.num_layers, s.model.hidden,
          s.model.is_moe() ? fmt::format(", {} experts top-{}", s.model.moe.num_experts, s.model.moe.top_k) : ""),
      width);
  out << LabelLine("hardware",
                   fmt::format("{} x {} ({}){}", t.gpus, s.gpu->id, s.gpu->display_name(),
                               s.cluster != nullptr ? ", cluster " + s.cluster->id : std::string()),
                   width);
  out << LabelLine("setup",
                   fmt::format("sequence {}, {} GEMMs, FLOPs convention {}, efficiency family '{}'", t.seq_len,
                               DTypeName(s.precision), ConventionName(t.convention), t.efficiency.family),
                   width);
  out << LabelLine(
      "framework",
      fmt::format("{} (attention {}, CP {}{}{}{})", t.framework.name, AttentionKernelName(t.framework.attention),
                  CpModeName(t.framework.cp_mode),
                  s.model.is_moe() ? std::string(", EP ") + EpDispatchName(t.framework.ep_dispatch) : std::string(),
                  s.precision == DType::kFp8 ? ", FP8 " + t.framework.fp8_recipe : std::string(),
                  t.framework.elementwise == Elementwise::kFused
                      ? std::string()
                      : std::string(", elementwise ") + ElementwiseName(t.framework.elementwise)),
      width);
  if (t.efficiency.training_validation != "validated") {
    out << LabelLine("validation",
                     fmt::format("{}: family '{}' has no measured training runs; data/efficiency/validation.csv",
                                 t.efficiency.training_validation, t.efficiency.family),
                     width);
  }
}

void PrintSummary(std::ostream& out, const Prediction& p, int width) {
  out << LabelLine("config", ConfigText(p.config) + fmt::format(" ({} micro-batches per step)", p.micro_batches), width)
      << "\n";
  Table summary({"metric", "value", "note"});
  summary.AddRow({"step time", Fixed(p.step_s, 3) + " s", ""});
  summary.AddRow({"tokens/s", Fixed(p.tokens_per_s, 0), "whole job"});
  summary.AddRow({"TFLOP/s per GPU", Fixed(p.tflops_per_gpu, 1), "model FLOPs"});
  summary.AddRow({"MFU", Percent(p.mfu), fmt::format("of {} TFLOP/s dense", Fixed(p.peak_flops / 1e12, 0))});
  summary.AddRow({"HFU", Percent(p.hfu), "with recomputed FLOPs"});
  summary.Print(out, width);
}

void PrintBreakdown(std::ostream& out, const Prediction& p, int width) {
  out << "\nstep breakdown (slowest GPU)\n";
  Table steps({"component", "seconds", "share"});
  const StepBreakdown& b = p.breakdown;
  for (auto [name, v] : {std::pair{"matrix (GEMM)", b.matrix_s},
                         {"attention core", b.attention_s},
                         {"vector ops", b.vector_s},
                         {"recompute", b.recompute_s},
                         {"kernel gaps", b.overhead_s},
                         {"optimizer", b.optimizer_s},
                         {"TP comm (exposed)", b.tp_comm_s},
                         {"CP comm (exposed)", b.cp_comm_s},
                         {"EP all-to-all (exposed)", b.ep_comm_s},
                         {"PP send/recv (exposed)", b.pp_comm_s},
                         {"DP/FSDP comm (exposed)", b.dp_comm_s},
                         {"pipeline bubble", b.bubble_s}}) {
    if (v > 0)
      steps.AddRow({name, Fixed(v, 4), Percent(v / p.step_s)});
  }
  steps.Print(out, width);
}

// The predicted buckets (the measured-only ones, always 0, are left out).
void PrintWaterfall(std::ostream& out, const Prediction& p, const TextOptions& text) {
  const int width = text.width;
  out << "\nwaterfall (the buckets of " << text.Command("trace") << ")\n";
  Table w({"bucket", "seconds", "share"});
  for (WaterfallBucket b :
       {WaterfallBucket::kIdle, WaterfallBucket::kExposedCommunication, WaterfallBucket::kNonMatrixKernels,
        WaterfallBucket::kMatrixBelowPeak, WaterfallBucket::kMatrixAtPeak}) {
    const double v = static_cast<double>(p.waterfall[b]) * 1e-9;
    w.AddRow({WaterfallBucketName(b), Fixed(v, 4), Percent(v / p.step_s)});
  }
  w.Print(out, width);
}

// The memory table, its notes saying which stored dtypes were counted (the
// framework's, as `mfu memory` counts them).
void PrintMemory(std::ostream& out, const Prediction& p, int width) {
  const MemoryPerGpu& m = p.memory;
  const TrainingStateDtypes& d = p.config.state;
  out << "\nmemory per GPU\n";
  Table mem({"component", "bytes", "note"});
  std::string weights = d.WeightsName();
  if (p.config.zero_stage >= 3)
    weights += fmt::format(" + 2 gathered layers in {}", DTypeName(d.compute));
  mem.AddRow({"weights", Bytes(m.weights), weights});
  mem.AddRow({"gradients", Bytes(m.gradients), d.MainGradsName() + " main grads"});
  mem.AddRow({"optimizer states", Bytes(m.optimizer), OptimizerNote(d)});
  mem.AddRow({"activations", Bytes(m.activations), ""});
  mem.AddRow({"reserved (context, buffers)", Bytes(m.reserved), ""});
  mem.AddRow({"total", Bytes(m.total()), ""});
  mem.AddRow({"capacity", Bytes(m.capacity), ""});
  mem.Print(out, width);
  out << (m.fits() ? fmt::format("fits, {} free\n", Bytes(m.capacity - m.total()))
                   : fmt::format("DOES NOT FIT: {} over\n", Bytes(m.total() - m.capacity)));
}

void PrintSearch(std::ostream& out, const PlanStudy& study, bool timing, int width) {
  const PlanResult& plan = study.plan;
  std::string search = fmt::format("{} configurations, {} fit in memory", plan.evaluated, plan.fitting);
  if (timing) {
    search += fmt::format(" ({:.3f} s, {:.3g} configurations/s)", study.search_seconds,
                          static_cast<double>(plan.evaluated) / std::max(study.search_seconds, 1e-9));
  }
  out << LabelLine("search", search, width);
  std::vector<std::string> rejected;
  for (size_t i = 1; i < plan.by_issue.size(); ++i) {
    if (plan.by_issue[i] > 0)
      rejected.push_back(fmt::format("{} {}", plan.by_issue[i], ConfigIssueName(static_cast<ConfigIssue>(i))));
  }
  if (!rejected.empty())
    out << LabelLine("rejected", base::Join(rejected, "; "), width);
  out << "\n";
}

void PrintNothingFits(std::ostream& out, const ResolvedTraining& s, const PlanStudy& study, const TextOptions& text) {
  const PlanResult& plan = study.plan;
  out << "nothing fits in " << Bytes(s.gpu->memory_gb * 1024.0 * 1024 * 1024) << " per GPU.\n";
  if (plan.closest.issue == ConfigIssue::kOutOfMemory) {
    out << fmt::format("closest: {} needs {} per GPU ({} over)\n", ConfigText(plan.closest.config),
                       Bytes(plan.closest.memory.total()), Bytes(plan.closest_over_bytes));
  }
  if (study.fits_at_gpus > 0) {
    out << fmt::format("smallest change that fits: {} GPUs (x{} the GPUs)\n", study.fits_at_gpus,
                       study.fits_at_gpus / s.perf->setup().gpus);
  } else if (s.cluster == nullptr) {
    out << "one node cannot hold it: pass " << text.Parameter("cluster") << " (its scale-out network) with more "
        << text.Parameter("gpus") << "\n";
  } else {
    out << "no GPU count up to 1024x fits: use a larger-memory accelerator or a shorter sequence\n";
  }
}

void PrintTop(std::ostream& out, const PlanStudy& study, int width) {
  Table t({"#", "configuration", "step s", "tokens/s", "TFLOP/s/GPU", "MFU", "mem/GPU", "exposed comm", "bubble"});
  for (size_t i = 0; i < study.plan.top.size(); ++i) {
    const Prediction& p = study.plan.top[i];
    const StepBreakdown& b = p.breakdown;
    const double comm = b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.pp_comm_s + b.dp_comm_s;
    t.AddRow({std::to_string(i + 1), ConfigText(p.config), Fixed(p.step_s, 3), Fixed(p.tokens_per_s, 0),
              Fixed(p.tflops_per_gpu, 1), Percent(p.mfu), Bytes(p.memory.total()), Percent(comm / p.step_s),
              Percent(b.bubble_s / p.step_s)});
  }
  t.Print(out, width);
  if (study.has_runner_up)
    out << "\n" << LabelLine("best vs runner-up:", DifferenceSummary(study.difference), width);
}

void PrintTimeToTrain(std::ostream& out, const PlanStudy& study) {
  if (study.time_to_train.empty())
    return;
  const TrainingTime& t = study.time_to_train.front();
  out << fmt::format("\ntraining {} tokens with the best: {:.1f} days, {} GPU-hours",
                     base::FormatSi(study.budget.tokens), t.days, base::FormatThousands(t.gpu_hours));
  if (study.budget.price_per_gpu_hour > 0) {
    out << fmt::format(", ${} at ${:.2f}/GPU-hour", base::FormatThousands(t.cost_usd), study.budget.price_per_gpu_hour);
  }
  if (study.goodput) {
    out << fmt::format(" ({:.1f} days without failures / expected goodput {:.3f})\n", t.failure_free_hours / 24,
                       study.budget.goodput);
  } else {
    out << " (no failures or restarts counted)\n";
  }
}

void PrintGoodput(std::ostream& out, const PlanStudy& study, int width) {
  if (!study.goodput)
    return;
  const GoodputWhatIf& g = *study.goodput;
  out << "\n"
      << LabelLine("failures:",
                   fmt::format("MTBF {}, checkpoint {}, restart {}: checkpoint every {} of compute (Daly 2006), "
                               "expected goodput {:.3f} (Young's {}: {:.3f})",
                               HumanDuration(g.request.mtbf_s), HumanDuration(g.request.checkpoint_time_s),
                               HumanDuration(g.request.restart_time_s), HumanDuration(g.intervals.daly_s),
                               g.intervals.goodput_daly, HumanDuration(g.intervals.young_s), g.intervals.goodput_young),
                   width);
}

void PrintScaling(std::ostream& out, const ResolvedTraining& s, const PlanStudy& study, int width) {
  if (study.scaling.empty())
    return;
  out << "\nscaling (best configuration at each GPU count)\n";
  Table st({"GPUs", "scaling", "gbs", "best configuration", "tokens/s", "MFU", "efficiency"});
  const double base_per_gpu = study.plan.top.front().tokens_per_s / static_cast<double>(s.perf->setup().gpus);
  for (const ScalePoint& p : study.scaling) {
    const char* kind = p.weak ? "weak" : "strong";
    if (!p.found) {
      st.AddRow({std::to_string(p.gpus), kind, std::to_string(p.gbs), "nothing fits", "-", "-", "-"});
      continue;
    }
    const double per_gpu = p.best.tokens_per_s / static_cast<double>(p.gpus);
    st.AddRow({std::to_string(p.gpus), kind, std::to_string(p.gbs), ConfigText(p.best.config),
               Fixed(p.best.tokens_per_s, 0), Percent(p.best.mfu), Percent(per_gpu / base_per_gpu)});
  }
  st.Print(out, width);
  out << "efficiency = tokens/s per GPU relative to the main search's best\n";
}

}  // namespace
}  // namespace mfu::report

namespace mfu {
using namespace report;  // this file's helpers and the shared JSON shapes

std::string DifferenceSummary(const ConfigDifference& d) {
  std::vector<std::string> fields;
  for (const ConfigDifference::Field& f : d.fields) {
    fields.push_back(f.best_name.empty() ? fmt::format("{} {} vs {}", f.field, f.best, f.runner_up)
                                         : fmt::format("{} {} vs {}", f.field, f.best_name, f.runner_up_name));
  }
  std::string s = fields.empty() ? "same dimensions" : base::Join(fields, ", ");
  s += "; runner-up step differs by";
  for (size_t i = 0; i < 3 && i < d.components.size() && std::fabs(d.components[i].delta_s) > 0; ++i)
    s += fmt::format("{} {:+.3g} s {}", i == 0 ? "" : ",", d.components[i].delta_s, d.components[i].name);
  return s;
}

std::string RenderPredictText(const ResolvedTraining& s, const PredictResult& r, const TextOptions& text_options) {
  std::ostringstream out;
  const int width = text_options.width;
  PrintSetup(out, s, width);
  for (const std::string& d : r.derived)
    out << LabelLine("derived", d, width);
  PrintNotes(out, r.notes, width);
  PrintSummary(out, r.prediction, width);
  PrintBreakdown(out, r.prediction, width);
  PrintWaterfall(out, r.prediction, text_options);
  PrintMemory(out, r.prediction, width);
  return out.str();
}

std::string RenderPlanText(const ResolvedTraining& s, const PlanStudy& study, bool timing,
                           const TextOptions& text_options) {
  std::ostringstream out;
  PrintSetup(out, s, text_options.width);
  PrintNotes(out, study.notes, text_options.width);
  PrintSearch(out, study, timing, text_options.width);
  if (study.plan.top.empty()) {
    PrintNothingFits(out, s, study, text_options);
    return out.str();
  }
  PrintTop(out, study, text_options.width);
  PrintGoodput(out, study, text_options.width);
  PrintTimeToTrain(out, study);
  PrintScaling(out, s, study, text_options.width);
  return out.str();
}

}  // namespace mfu
