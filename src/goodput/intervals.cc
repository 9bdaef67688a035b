// Checkpoint-interval formulas, Daly's expected goodput, the what-if study
// and duration parsing (goodput.h). Sources: Young 1974, Daly 2006 (FGCS
// 22(3)), Saxena et al. arXiv:2410.18124; docs/goodput.md.

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <string_view>

#include "base/param.h"
#include "goodput/parameter_checks.h"
#include "mfu/goodput.h"

namespace mfu {

namespace goodput_internal {

Status CheckDuration(const char* name, double value_s, DurationRange range, double max_s) {
  const bool positive = range == DurationRange::kPositive;
  if (std::isfinite(value_s) && (positive ? value_s > 0 : value_s >= 0) && value_s <= max_s)
    return Status::Ok();
  return InvalidArgumentError(fmt::format("{} must be {} (got {})", base::Param(name),
                                          positive ? "a positive duration" : "a duration >= 0", value_s));
}

}  // namespace goodput_internal

namespace {

using goodput_internal::CheckDuration;
using goodput_internal::DurationRange;

bool Positive(double v) {
  return std::isfinite(v) && v > 0;
}

}  // namespace

double YoungInterval(double delta_s, double mtbf_s) {
  if (!Positive(delta_s) || !Positive(mtbf_s))
    return kLogNaN;
  return std::sqrt(2 * delta_s * mtbf_s);
}

double DalyInterval(double delta_s, double mtbf_s) {
  if (!Positive(delta_s) || !Positive(mtbf_s))
    return kLogNaN;
  if (delta_s >= 2 * mtbf_s)
    return mtbf_s;
  const double x = delta_s / (2 * mtbf_s);
  return std::sqrt(2 * delta_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - delta_s;
}

double AvailabilityOptimalInterval(double delta_s, double mtbf_s, double restart_s) {
  if (!Positive(delta_s) || !Positive(mtbf_s) || !std::isfinite(restart_s) || restart_s < 0)
    return kLogNaN;
  // T_c = T_s + sqrt(2 (T_f + T_r) T_s + T_s^2): T_s the save time, T_f the
  // mean time to failure, T_r the recovery time. T_c is the period from one
  // save's start to the next (it maximizes A = (T_c - T_s) / (T_c (1 +
  // T_r/T_f) + T_c^2 / 2T_f), useful time over expected wall time per
  // period), so the compute between saves, what the other formulas give,
  // is T_c - T_s.
  return std::sqrt(2 * (mtbf_s + restart_s) * delta_s + delta_s * delta_s);
}

double ExpectedGoodput(double tau_s, double delta_s, double mtbf_s, double restart_s) {
  if (!Positive(tau_s) || !std::isfinite(delta_s) || delta_s < 0 || !Positive(mtbf_s) || !std::isfinite(restart_s) ||
      restart_s < 0)
    return kLogNaN;
  // G = T_s / T_w = tau / (M e^{R/M} (e^{(tau+delta)/M} - 1)); expm1 keeps
  // the precision when tau + delta << M.
  const double denominator = mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((tau_s + delta_s) / mtbf_s);
  return denominator > 0 ? tau_s / denominator : kLogNaN;
}

CheckpointIntervals IntervalsFor(double delta_s, double mtbf_s, double restart_s, double observed_s) {
  CheckpointIntervals iv;
  iv.young_s = YoungInterval(delta_s, mtbf_s);
  iv.daly_s = DalyInterval(delta_s, mtbf_s);
  iv.availability_optimal_s = AvailabilityOptimalInterval(delta_s, mtbf_s, restart_s);
  iv.goodput_young = ExpectedGoodput(iv.young_s, delta_s, mtbf_s, restart_s);
  iv.goodput_daly = ExpectedGoodput(iv.daly_s, delta_s, mtbf_s, restart_s);
  iv.goodput_availability_optimal = ExpectedGoodput(iv.availability_optimal_s, delta_s, mtbf_s, restart_s);
  if (std::isfinite(observed_s)) {
    iv.observed_s = observed_s;
    iv.goodput_observed = ExpectedGoodput(observed_s, delta_s, mtbf_s, restart_s);
  }
  return iv;
}

StatusOr<GoodputWhatIf> GoodputWhatIfStudy(const GoodputWhatIfRequest& request) {
  MFU_RETURN_IF_ERROR(CheckDuration("mtbf", request.mtbf_s, DurationRange::kPositive));
  MFU_RETURN_IF_ERROR(CheckDuration("checkpoint_time", request.checkpoint_time_s, DurationRange::kPositive));
  MFU_RETURN_IF_ERROR(CheckDuration("restart_time", request.restart_time_s, DurationRange::kNonNegative));
  // 0: no observed interval to compare.
  MFU_RETURN_IF_ERROR(CheckDuration("interval", request.interval_s, DurationRange::kNonNegative));
  GoodputWhatIf out;
  out.request = request;
  const double delta = request.checkpoint_time_s, m = request.mtbf_s;
  out.intervals = IntervalsFor(delta, m, request.restart_time_s, request.interval_s > 0 ? request.interval_s : kLogNaN);
  if (delta >= 2 * m) {
    out.notes.push_back({NoteKind::kWarning, "checkpoint_exceeds_mtbf",
                         "the checkpoint time is at least twice the MTBF: Daly's interval is the MTBF itself and "
                         "no interval gives useful goodput"});
  } else if (delta > 0.1 * m) {
    out.notes.push_back({NoteKind::kWarning, "checkpoint_not_small",
                         "the checkpoint time is more than 10% of the MTBF: Young's first-order interval is "
                         "inaccurate (delta << M does not hold); prefer Daly's"});
  }
  if (request.restart_time_s > m) {
    out.notes.push_back({NoteKind::kWarning, "restart_exceeds_mtbf",
                         "the restart time exceeds the MTBF: the job spends most of its time recovering"});
  }
  return out;
}

StatusOr<double> ParseDuration(std::string_view text) {
  auto bad = [&]() {
    return InvalidArgumentError(fmt::format("'{}' is not a duration (examples: 24h, 5m, 90s, 1h30m, 1500ms)", text));
  };
  if (text.empty() || text.size() > 64)
    return bad();
  double total = 0;
  size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    const size_t number_start = i;
    bool digits = false, dot = false;
    while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || (text[i] == '.' && !dot))) {
      if (text[i] == '.')
        dot = true;
      else
        digits = true;
      ++i;
    }
    if (!digits)
      return bad();
    const double value = std::stod(std::string(text.substr(number_start, i - number_start)));
    const size_t unit_start = i;
    while (i < text.size() && ((text[i] >= 'a' && text[i] <= 'z') || (text[i] >= 'A' && text[i] <= 'Z')))
      ++i;
    const std::string_view unit = text.substr(unit_start, i - unit_start);
    double scale = 0;
    if (unit.empty()) {
      if (any || i != text.size())  // a bare number only on its own: "1h30" is ambiguous
        return bad();
      scale = 1;
    } else if (unit == "ms") {
      scale = 1e-3;
    } else if (unit == "s") {
      scale = 1;
    } else if (unit == "m" || unit == "min") {
      scale = 60;
    } else if (unit == "h") {
      scale = 3600;
    } else if (unit == "d") {
      scale = 86400;
    } else {
      return bad();
    }
    total += value * scale;
    any = true;
  }
  if (!std::isfinite(total) || total > 1e12)
    return bad();
  return total;
}

}  // namespace mfu
