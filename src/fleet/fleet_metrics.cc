// The exposition text of one snapshot (mfu/fleet_exporter.h): the families
// of FleetMetrics() in order, HELP and TYPE once each, no sample for a value
// the snapshot lacks.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "mfu/fleet_exporter.h"
#include "mfu/hwdb.h"

namespace mfu {
namespace {

void AppendEscaped(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
}

void AppendLabel(std::string& out, std::string_view name, std::string_view value) {
  if (value.empty())
    return;
  out += out.empty() ? "" : ",";
  out.append(name);
  out += "=\"";
  AppendEscaped(out, value);
  out += '"';
}

std::string FormatValue(double v) {
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

// The label set of one GPU (without braces), empty labels left out.
std::string GpuLabels(const GpuEstimate& gpu) {
  const TelemetryDevice& d = gpu.device;
  const std::string precision = DTypeName(gpu.precision);
  const std::string_view values[] = {d.uuid,     d.hostname,      d.gpu,         d.model_name, gpu.accelerator,
                                     precision,  d.k8s_namespace, d.pod,         d.container,  d.hpc_job,
                                     gpu.job_id, d.mig_profile,   d.mig_instance};
  std::string out;
  const auto names = FleetGpuLabelNames();
  for (size_t i = 0; i < names.size(); ++i)
    AppendLabel(out, names[i], values[i]);
  return out;
}

// Writes the samples of one family; HELP and TYPE only when it has any.
class Family {
 public:
  Family(std::string& out, const FleetMetricSpec& spec, int64_t timestamp_ms)
      : out_(out), spec_(spec), timestamp_ms_(timestamp_ms) {}
  ~Family() {
    if (samples_.empty())
      return;
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", spec_.name, spec_.help, spec_.name,
                        spec_.type == FleetMetricType::kCounter ? "counter" : "gauge");
    out_ += samples_;
  }
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  // `labels` without braces; `extra` (the spec's extra label) when non-empty.
  void Add(std::string_view labels, double value, std::string_view extra = "") {
    if (std::isnan(value))
      return;
    std::string all(labels);
    AppendLabel(all, spec_.extra_label, extra);
    samples_ += spec_.name;
    if (!all.empty())
      samples_ += "{" + all + "}";
    samples_ += ' ';
    samples_ += FormatValue(value);
    if (timestamp_ms_ > 0)
      samples_ += fmt::format(" {}", timestamp_ms_);
    samples_ += '\n';
  }

 private:
  std::string& out_;
  const FleetMetricSpec& spec_;
  int64_t timestamp_ms_;
  std::string samples_;
};

void RenderGpuFamily(std::string& out, const FleetMetricSpec& spec, const FleetMetricsView& view,
                     const std::vector<std::string>& labels) {
  const FleetReport& report = *view.report;
  Family family(out, spec, view.timestamp_ms);
  const std::string_view name = spec.name;
  for (size_t i = 0; i < report.gpus.size(); ++i) {
    const GpuEstimate& gpu = report.gpus[i];
    const FleetGpuExtras* extras = i < view.extras.size() ? &view.extras[i] : nullptr;
    if (IsStaleEstimate(gpu) && name != fleet_metric::kFinding && name != fleet_metric::kSampleTimestamp)
      continue;  // old samples are never served as values of this scrape
    if (spec.gpu_value != nullptr) {
      family.Add(labels[i], spec.gpu_value(gpu));
    } else if (name == fleet_metric::kLastXid) {
      if (extras != nullptr)
        family.Add(labels[i], extras->last_xid);
    } else if (name == fleet_metric::kThrottled) {
      if (extras == nullptr || !extras->has_clocks_event_reasons)
        continue;
      std::set<std::string> held(gpu.throttle_reasons.begin(), gpu.throttle_reasons.end());
      for (const std::string& reason : DecodeClocksEventReasons(0x1ff))
        family.Add(labels[i], held.erase(reason) > 0 ? 1 : 0, reason);
      for (const std::string& reason : held)  // unknown bits
        family.Add(labels[i], 1, reason);
    } else if (name == fleet_metric::kFinding) {
      std::set<std::string> codes;
      for (const FleetFinding& finding : gpu.findings)
        if (codes.insert(finding.code).second)
          family.Add(labels[i], 1, finding.code);
    } else if (name == fleet_metric::kBandSeconds) {
      if (i >= view.band_seconds.size() || !SnapshotBand(gpu))
        continue;  // no band in this snapshot: its zeros would mean "unknown"
      for (size_t b = 0; b < kNumMfuBands; ++b)
        family.Add(labels[i], view.band_seconds[i][b], MfuBandId(static_cast<MfuBand>(b)));
    }
  }
}

void RenderExporterFamily(std::string& out, const FleetMetricSpec& spec, const FleetMetricsView& view) {
  const FleetUpstreamStatus& up = view.upstream;
  const std::string_view name = spec.name;
  Family family(out, spec, 0);
  if (name == fleet_metric::kBuildInfo) {
    family.Add("", 1, view.version.empty() ? "unknown" : view.version);
  } else if (name == fleet_metric::kUpstreamUp) {
    family.Add("", up.up ? 1 : 0);
  } else if (name == fleet_metric::kUpstreamDuration) {
    family.Add("", up.scrape_duration_s >= 0 ? up.scrape_duration_s : NAN);
  } else if (name == fleet_metric::kUpstreamLastSuccess) {
    family.Add("", up.last_success_unix_s > 0 ? up.last_success_unix_s : NAN);
  } else if (name == fleet_metric::kUpstreamDevices) {
    family.Add("", static_cast<double>(up.devices));
  } else if (name == fleet_metric::kUpstreamScrapes) {
    family.Add("", static_cast<double>(up.scrapes_total));
  } else if (name == fleet_metric::kUpstreamErrors) {
    for (const char* reason : FleetUpstreamErrorReasons()) {
      auto it = up.errors_total.find(reason);
      family.Add("", it == up.errors_total.end() ? 0.0 : static_cast<double>(it->second), reason);
    }
  } else if (name == fleet_metric::kSentinels) {
    family.Add("", static_cast<double>(up.sentinels_total));
  }
}

// The goodput counters: from event files, so served whatever the upstream's
// state, never with a snapshot's timestamp.
void RenderGoodputFamily(std::string& out, const FleetMetricSpec& spec, const std::vector<FleetJobGoodput>& jobs) {
  Family family(out, spec, 0);
  const bool productive = std::string_view(spec.name) == fleet_metric::kJobProductiveSeconds;
  for (const FleetJobGoodput& job : jobs) {
    std::string labels;
    AppendLabel(labels, "job_id", job.job_id);
    if (productive) {
      family.Add(labels, job.productive_s);
      continue;
    }
    for (size_t c = 0; c < kNumBadputCategories; ++c)
      family.Add(labels, job.badput_s[c], BadputCategoryId(static_cast<BadputCategory>(c)));
  }
}

}  // namespace

bool IsStaleEstimate(const GpuEstimate& gpu) {
  return std::any_of(gpu.findings.begin(), gpu.findings.end(), [](const FleetFinding& f) { return f.code == "stale"; });
}

std::optional<MfuBand> SnapshotBand(const GpuEstimate& gpu) {
  const auto& hours = gpu.gpu_hours_by_band;
  const auto best = std::max_element(hours.begin(), hours.end());
  if (*best <= 0)
    return std::nullopt;
  return static_cast<MfuBand>(best - hours.begin());
}

std::string RenderFleetMetrics(const FleetMetricsView& view) {
  std::string out;
  std::vector<std::string> labels;
  if (view.report != nullptr)
    for (const GpuEstimate& gpu : view.report->gpus)
      labels.push_back(GpuLabels(gpu));
  for (const FleetMetricSpec& spec : FleetMetrics()) {
    const std::string_view name = spec.name;
    if (spec.scope == FleetMetricScope::kExporter) {
      RenderExporterFamily(out, spec, view);
    } else if (name == fleet_metric::kJobProductiveSeconds || name == fleet_metric::kJobBadputSeconds) {
      RenderGoodputFamily(out, spec, view.goodput);
    } else if (view.report == nullptr) {
      continue;
    } else if (spec.scope == FleetMetricScope::kGpu) {
      RenderGpuFamily(out, spec, view, labels);
    } else {
      Family family(out, spec, view.timestamp_ms);
      for (const JobEstimate& job : view.report->jobs) {
        std::string job_labels;
        AppendLabel(job_labels, "job_id", job.id);
        if (job.reported_mfu)
          family.Add(job_labels, *job.reported_mfu);
      }
    }
  }
  return out;
}

}  // namespace mfu
