// Text and JSON of `mfu goodput` and `mfu goodput --what-if`
// (report_goodput.h).

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mfu/report_goodput.h"
#include "report/json_common.h"
#include "report/table.h"

namespace mfu {
namespace {

using nlohmann::json;
using report::Table;

json IntervalsJson(const CheckpointIntervals& iv) {
  return {{"observed_s", report::JsonNumber(iv.observed_s)},
          {"young_s", report::JsonNumber(iv.young_s)},
          {"daly_s", report::JsonNumber(iv.daly_s)},
          {"availability_optimal_s", report::JsonNumber(iv.availability_optimal_s)},
          {"goodput_observed", report::JsonNumber(iv.goodput_observed)},
          {"goodput_young", report::JsonNumber(iv.goodput_young)},
          {"goodput_daly", report::JsonNumber(iv.goodput_daly)},
          {"goodput_availability_optimal", report::JsonNumber(iv.goodput_availability_optimal)}};
}

void PrintIntervals(std::ostream& out, const CheckpointIntervals& iv, const std::string& observed_label, int width) {
  Table t({"checkpoint interval", "compute between saves", "expected goodput"});
  if (std::isfinite(iv.observed_s))
    t.AddRow({observed_label, HumanDuration(iv.observed_s), report::FixedOrDash(iv.goodput_observed, 3)});
  t.AddRow({"Young 1974: sqrt(2 delta M)", HumanDuration(iv.young_s), report::FixedOrDash(iv.goodput_young, 3)});
  t.AddRow({"Daly 2006, higher order", HumanDuration(iv.daly_s), report::FixedOrDash(iv.goodput_daly, 3)});
  t.AddRow({"availability-optimal (arXiv:2410.18124)", HumanDuration(iv.availability_optimal_s),
            report::FixedOrDash(iv.goodput_availability_optimal, 3)});
  t.Print(out, width);
}

}  // namespace

std::string HumanDuration(double s) {
  if (!std::isfinite(s))
    return "-";
  const double a = std::fabs(s);
  if (a < 120)
    return fmt::format("{:.1f} s", s);
  if (a < 2 * 3600)
    return fmt::format("{:.1f} min", s / 60);
  if (a < 48 * 3600)
    return fmt::format("{:.2f} h", s / 3600);
  return fmt::format("{:.1f} d", s / 86400);
}

std::string RenderGoodputText(const GoodputReport& r, const std::vector<std::string>& sources,
                              const TextOptions& options) {
  std::ostringstream out;
  const int width = options.width;
  std::string files;
  for (const std::string& s : sources)
    files += (files.empty() ? "" : ", ") + s;
  out << report::LabelLine("events", files, width);
  out << report::LabelLine("wall", fmt::format("{} ({:.0f} s)", HumanDuration(r.wall_s), r.wall_s), width);
  out << report::LabelLine("goodput",
                           fmt::format("{} productive ({}), ETTR {}", HumanDuration(r.productive_s),
                                       report::PercentOrDash(r.ettr), report::FixedOrDash(r.ettr, 3)),
                           width);
  out << "\n";
  Table t({"where the time went", "time", "seconds", "share"});
  auto row = [&](const std::string& name, double s) {
    t.AddRow(
        {name, HumanDuration(s), report::Fixed(s, 1), report::PercentOrDash(r.wall_s > 0 ? s / r.wall_s : kLogNaN)});
  };
  row("productive (preserved steps)", r.productive_s);
  for (size_t c = 0; c < kNumBadputCategories; ++c)
    row(BadputCategoryId(static_cast<BadputCategory>(c)), r.badput_s[c]);
  t.AddSeparator();
  row("wall", r.wall_s);
  t.Print(out, width);
  out << "\n";
  out << report::LabelLine("attempts",
                           fmt::format("{}, {} interrupted; {} steps preserved, {} redone after failures", r.attempts,
                                       r.interruptions, r.steps, r.wasted_steps),
                           width);
  out << report::LabelLine("MTBF",
                           fmt::format("{} observed (running time / failures), mean recovery {}",
                                       HumanDuration(r.mtbf_s), HumanDuration(r.recovery_s)),
                           width);
  out << report::LabelLine(
      "checkpoints", fmt::format("{} saves, mean blocking time {}", r.checkpoints, HumanDuration(r.checkpoint_time_s)),
      width);
  if (std::isfinite(r.effective_mfu)) {
    out << report::LabelLine("effective MFU",
                             fmt::format("{} = steady-state MFU {} x ETTR {}", report::PercentOrDash(r.effective_mfu),
                                         report::PercentOrDash(r.steady_state_mfu), report::FixedOrDash(r.ettr, 3)),
                             width);
  }
  out << "\n";
  PrintIntervals(out, r.checkpoint_interval, "observed (median)", width);
  const IntervalInputs& in = r.interval_inputs;
  auto from = [](bool given) { return given ? "given" : "observed"; };
  out << report::LabelLine(
      "intervals from",
      fmt::format("checkpoint time delta {} ({}), MTBF M {} ({}), restart {} ({})", HumanDuration(in.checkpoint_time_s),
                  from(in.checkpoint_time_given), HumanDuration(in.mtbf_s), from(in.mtbf_given),
                  HumanDuration(in.restart_time_s), from(in.restart_time_given)),
      width);
  if (!r.notes.empty()) {
    out << "\n";
    report::PrintNotes(out, r.notes, width);
  }
  return out.str();
}

std::string RenderGoodputJson(const GoodputReport& r, const std::vector<std::string>& sources) {
  json j = report::JsonEnvelope();
  j["sources"] = sources;
  j["start_s"] = r.start_s;
  j["end_s"] = r.end_s;
  j["wall_s"] = r.wall_s;
  j["productive_s"] = r.productive_s;
  json badput = json::object();
  for (size_t c = 0; c < kNumBadputCategories; ++c)
    badput[BadputCategoryId(static_cast<BadputCategory>(c))] = r.badput_s[c];
  j["badput_s"] = badput;
  j["ettr"] = report::JsonNumber(r.ettr);
  j["attempts"] = r.attempts;
  j["interruptions"] = r.interruptions;
  j["steps"] = r.steps;
  j["wasted_steps"] = r.wasted_steps;
  j["mtbf_s"] = report::JsonNumber(r.mtbf_s);
  j["recovery_s"] = report::JsonNumber(r.recovery_s);
  j["checkpoints"] = r.checkpoints;
  j["checkpoint_time_s"] = report::JsonNumber(r.checkpoint_time_s);
  j["checkpoint_interval"] = IntervalsJson(r.checkpoint_interval);
  const IntervalInputs& in = r.interval_inputs;
  json given = json::array();
  if (in.checkpoint_time_given)
    given.push_back("checkpoint_time_s");
  if (in.mtbf_given)
    given.push_back("mtbf_s");
  if (in.restart_time_given)
    given.push_back("restart_time_s");
  j["interval_inputs"] = {{"checkpoint_time_s", report::JsonNumber(in.checkpoint_time_s)},
                          {"mtbf_s", report::JsonNumber(in.mtbf_s)},
                          {"restart_time_s", report::JsonNumber(in.restart_time_s)},
                          {"given", given}};
  j["steady_state_mfu"] = report::JsonNumber(r.steady_state_mfu);
  j["effective_mfu"] = report::JsonNumber(r.effective_mfu);
  j["notes"] = report::NotesJson(r.notes);
  return report::JsonText(j);
}

std::string RenderGoodputWhatIfText(const GoodputWhatIf& w, const TextOptions& options) {
  std::ostringstream out;
  const int width = options.width;
  const GoodputWhatIfRequest& q = w.request;
  out << report::LabelLine(
      "what-if",
      fmt::format("MTBF {}, blocking checkpoint {}, restart {} (Daly's exponential-failure "
                  "model)",
                  HumanDuration(q.mtbf_s), HumanDuration(q.checkpoint_time_s), HumanDuration(q.restart_time_s)),
      width);
  out << "\n";
  PrintIntervals(out, w.intervals, options.Parameter("interval"), width);
  if (!w.notes.empty()) {
    out << "\n";
    report::PrintNotes(out, w.notes, width);
  }
  return out.str();
}

std::string RenderGoodputWhatIfJson(const GoodputWhatIf& w) {
  json j = report::JsonEnvelope();
  const CheckpointIntervals& iv = w.intervals;
  j["mtbf_s"] = w.request.mtbf_s;
  j["checkpoint_time_s"] = w.request.checkpoint_time_s;
  j["restart_time_s"] = w.request.restart_time_s;
  j["young_s"] = report::JsonNumber(iv.young_s);
  j["daly_s"] = report::JsonNumber(iv.daly_s);
  j["availability_optimal_s"] = report::JsonNumber(iv.availability_optimal_s);
  j["goodput_young"] = report::JsonNumber(iv.goodput_young);
  j["goodput_daly"] = report::JsonNumber(iv.goodput_daly);
  j["goodput_availability_optimal"] = report::JsonNumber(iv.goodput_availability_optimal);
  j["interval_s"] = report::JsonNumber(iv.observed_s);
  j["goodput_interval"] = report::JsonNumber(iv.goodput_observed);
  j["notes"] = report::NotesJson(w.notes);
  return report::JsonText(j);
}

}  // namespace mfu
