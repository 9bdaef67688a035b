// Fuzzes the performance model's CSV readers (clusters, efficiency
// parameters and vector kernel tables, measured training runs, framework
// profiles, kernel figures) and, for
// tables and runs that parse, the model itself: any bytes must give a result
// or a Status, never a crash; every vector kernel time must be finite and
// non-negative; every predicted step time must be finite and its components
// must sum to it. The first byte picks the reader. Seeds: fuzz/corpus/plan_csv/.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mfu/calibrate.h"
#include "mfu/cluster.h"
#include "mfu/framework.h"
#include "mfu/kernel_figures.h"
#include "mfu/perf_model.h"
#include "mfu/training_runs.h"
#include "mfu/vector_kernels.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0: {
      mfu::StatusOr<mfu::ClusterDb> db = mfu::ClusterDb::LoadBuiltin();
      if (!db.ok())
        __builtin_trap();
      if (db->AddCsv(text, "fuzz.csv").ok()) {
        for (const mfu::Cluster& c : db->all()) {
          if (!db->Find(c.id).ok())
            __builtin_trap();  // every id is found after a successful add
        }
      }
      break;
    }
    case 1: {
      mfu::StatusOr<mfu::EfficiencyDb> db = mfu::EfficiencyDb::LoadBuiltin();
      if (!db.ok())
        __builtin_trap();
      // A table with a `kernel` column is a vector kernel table.
      if (!db->AddCsv(text, "fuzz.csv").ok())
        break;
      (void)db->For("h100-sxm5-80gb");
      for (const mfu::EfficiencyParams& p : db->all()) {
        mfu::LayerVectorWork w;
        w.hidden_rows = 3;
        w.hidden = 4096;
        w.dense_act_rows = 3;
        w.dense_act_width = 1792;
        for (double hbm : {1e9, 3.35e12}) {
          const double s = mfu::LayerVectorSeconds(p.vector_kernels, hbm, w);
          if (!std::isfinite(s) || s < 0)
            __builtin_trap();
        }
      }
      break;
    }
    default: {
      mfu::StatusOr<mfu::TrainingRunSet> runs = mfu::ParseTrainingRuns(text, "fuzz.csv");
      if (!runs.ok() || runs->runs.empty() || runs->runs.size() > 16)
        break;
      mfu::StatusOr<mfu::HardwareDb> hw = mfu::HardwareDb::LoadBuiltin();
      mfu::StatusOr<mfu::ClusterDb> clusters = mfu::ClusterDb::LoadBuiltin();
      mfu::StatusOr<mfu::EfficiencyDb> eff = mfu::EfficiencyDb::LoadBuiltin();
      if (!hw.ok() || !clusters.ok() || !eff.ok())
        __builtin_trap();
      mfu::StatusOr<mfu::RunSet> set = mfu::RunSet::Prepare(*runs, *hw, *clusters, *eff);
      if (!set.ok())
        break;
      const mfu::AccuracyReport report = set->Evaluate(*eff);
      for (const mfu::RunPrediction& r : report.runs) {
        if (!r.problem.empty())
          continue;
        const double step = r.prediction.step_s;
        if (!std::isfinite(step) || step <= 0 || std::fabs(r.prediction.breakdown.total() - step) > 1e-9 * step) {
          __builtin_trap();
        }
      }
      break;
    }
    case 3: {
      // Framework profiles: every name of a successful add is found again.
      mfu::StatusOr<mfu::FrameworkDb> db = mfu::FrameworkDb::LoadBuiltin();
      if (!db.ok())
        __builtin_trap();
      if (db->AddCsv(text, "fuzz.csv").ok()) {
        for (const mfu::FrameworkProfile& p : db->all()) {
          if (!db->Find(p.name).ok() || p.dp_grad_overlap < 0 || p.dp_grad_overlap > 1)
            __builtin_trap();
        }
        // The table written back reads back the same.
        mfu::FrameworkDb again;
        if (!again.AddCsv(db->ToCsv(), "written.csv").ok() || again.ToCsv() != db->ToCsv())
          __builtin_trap();
      }
      break;
    }
    case 4: {
      // Kernel figures: parsed rows are predicted without a crash.
      mfu::StatusOr<std::vector<mfu::KernelFigure>> figures = mfu::ParseKernelFigures(text, "fuzz.csv");
      if (!figures.ok())
        break;
      mfu::StatusOr<mfu::HardwareDb> hw = mfu::HardwareDb::LoadBuiltin();
      mfu::StatusOr<mfu::ClusterDb> clusters = mfu::ClusterDb::LoadBuiltin();
      mfu::StatusOr<mfu::EfficiencyDb> eff = mfu::EfficiencyDb::LoadBuiltinPrior();
      if (!hw.ok() || !clusters.ok() || !eff.ok())
        __builtin_trap();
      (void)mfu::ValidateKernelFigures(*figures, *hw, *clusters, *eff);
      break;
    }
  }
  return 0;
}
