#pragma once

// One entry point for rendering every result in the format a front end
// picked (google/benchmark's Reporter; bloaty's OutputOptions): text for
// people, JSON (docs/cli.md "JSON layout"), or CSV. A result's CSV is its
// JSON, flattened: a list result (plan's ranked configurations, infer's
// decode sweep, hw list, calibrate's runs, kernels' figures, models) is one
// row per element of that list; a single result (predict, calc, flops,
// memory, hw show, goodput) is one row of every scalar field. Nested
// objects become dotted column names (`prediction.step_s`,
// `utilization.mfu`), lists of numbers or words one cell joined by ';',
// lists of objects (notes) are left out. trace, fleet and log write the
// first table of their --csv directory (ranks.csv, gpus.csv, steps.csv).
// The front end chooses the format once; the library owns every schema.

#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mfu/report_calibrate.h"
#include "mfu/report_cli.h"
#include "mfu/report_count.h"
#include "mfu/report_fleet.h"
#include "mfu/report_goodput.h"
#include "mfu/report_infer.h"
#include "mfu/report_kernels.h"
#include "mfu/report_log.h"
#include "mfu/report_plan.h"
#include "mfu/report_trace.h"
#include "mfu/status.h"
#include "mfu/text_options.h"

namespace mfu {

enum class ReportFormat { kText, kJson, kCsv };
const char* ReportFormatName(ReportFormat format);
// "text", "json" or "csv"; kInvalidArgument naming parameter 'output_format'.
StatusOr<ReportFormat> ParseReportFormat(std::string_view name);

// CSV of the JSON document `json`: one row per object of the array at
// `rows` (a JSON pointer such as "/top"), or, with `rows` empty or absent
// from the document, one row of the whole object. Columns are the rows'
// scalar leaves in the JSON's key order (sorted; a later row's new leaves
// after the earlier rows'), named by their dotted paths
// (the envelope's schema_version and mfu_version left out); a missing leaf
// is an empty cell.
std::string JsonToCsv(std::string_view json, std::string_view rows);

class Reporter {
 public:
  explicit Reporter(ReportFormat format = ReportFormat::kText, TextOptions text = {})
      : format_(format), text_(std::move(text)) {}
  ReportFormat format() const { return format_; }
  const TextOptions& text() const { return text_; }

  std::string Report(const FlopsReport& report) const;
  std::string Report(const CalcReport& report) const;
  std::string Report(const MemoryReport& report) const;
  std::string Report(const std::vector<const Accelerator*>& accelerators) const;
  std::string Report(const Accelerator& accelerator) const;
  std::string Report(const std::vector<PresetCount>& presets) const;
  std::string Report(const std::vector<const Cluster*>& clusters) const;
  std::string Report(const Cluster& cluster) const;
  std::string Report(const ResolvedTraining& setup, const PredictResult& result) const;
  // With `timing`, the text's search line states how long the search took.
  std::string Report(const ResolvedTraining& setup, const PlanStudy& study, bool timing) const;
  std::string Report(const InferenceResult& result) const;
  std::string Report(const TrainingRunSet& runs, const CrossValidation& cv, const CalibrationView& view) const;
  std::string Report(const std::vector<KernelFigure>& figures, const KernelValidation& validation,
                     const std::string& figures_path, bool summary_only) const;
  std::string Report(const JobAnalysis& job, const TraceJobOptions& options, bool verbose) const;
  std::string Report(const FleetReport& report) const;
  std::string Report(const GoodputReport& report, const std::vector<std::string>& sources) const;
  std::string Report(const GoodputWhatIf& study) const;
  std::string Report(const LogAnalysis& analysis) const;
  // The same bytes streamed into `out`: a timeline of millions of steps is
  // never held as one string in JSON or CSV.
  void Write(const LogAnalysis& analysis, std::ostream& out) const;

 private:
  ReportFormat format_;
  TextOptions text_;
};

}  // namespace mfu
