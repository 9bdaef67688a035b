#pragma once

// mfu as a Prometheus exporter (`mfu fleet serve`): on each /metrics request
// it scrapes an upstream GPU exporter (dcgm-exporter, AMD's
// device-metrics-exporter) or reads a file, analyzes that ONE snapshot
// (mfu/fleet.h) and serves per-GPU estimates as Prometheus exposition text
// 0.0.4. Aggregation (per job, node, fleet) is left to Prometheus: the
// recording and alerting rules (RenderFleetRules) and the Grafana dashboard
// (RenderFleetDashboard) query only the series of one table, FleetMetrics(),
// and the rules' own records. docs/fleet.md "Serving to Prometheus".
//
// Invariant: a GPU series is emitted only from a value the upstream gave in
// the snapshot being served. A field the GPU lacks (absent, sentinel) emits
// no series, never a 0 that means "unknown"; when the upstream fails, the
// per-GPU series are dropped (or, within --max-age, served with the
// snapshot's own timestamp), and mfu_upstream_up is 0.

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/fleet.h"
#include "mfu/status.h"

namespace mfu {

class HttpKeepAliveClient;

// ---------------------------------------------------------------------------
// The one table of metric names.

enum class FleetMetricType : uint8_t { kGauge = 0, kCounter };

// Where a metric's series come from: one per GPU (carrying the GPU labels,
// FleetGpuLabelNames), one per job, or one for the exporter itself.
enum class FleetMetricScope : uint8_t { kGpu = 0, kJob, kExporter };

struct FleetMetricSpec {
  const char* name;  // mfu_<noun>_<unit>; counters end in _total
  FleetMetricType type;
  FleetMetricScope scope;
  const char* extra_label;  // a label beyond the scope's ("reason", "code", "band"), or ""
  const char* help;
  // A per-GPU gauge read straight from the estimate (NaN: no sample);
  // nullptr for the metrics the exporter renders otherwise.
  double (*gpu_value)(const GpuEstimate&) = nullptr;
};

// Every metric the exporter may emit, in exposition order.
std::span<const FleetMetricSpec> FleetMetrics();

// The labels of a per-GPU series, in the order they are written; a label
// whose value is empty is omitted. Never `job` nor `instance` (Prometheus
// sets them on scrape).
std::span<const char* const> FleetGpuLabelNames();

// Metric names used by the rules and dashboard (the table's entries).
namespace fleet_metric {
inline constexpr char kEstimatedMfu[] = "mfu_gpu_estimated_mfu_ratio";
inline constexpr char kEstimatedFlops[] = "mfu_gpu_estimated_flops_per_second";
inline constexpr char kPeakFlops[] = "mfu_gpu_peak_flops_per_second";
inline constexpr char kEstimatedMbu[] = "mfu_gpu_estimated_mbu_ratio";
inline constexpr char kTensorActive[] = "mfu_gpu_tensor_active_ratio";
inline constexpr char kDramActive[] = "mfu_gpu_dram_active_ratio";
inline constexpr char kUtilization[] = "mfu_gpu_utilization_ratio";
inline constexpr char kSmClock[] = "mfu_gpu_sm_clock_hertz";
inline constexpr char kBoostClock[] = "mfu_gpu_boost_clock_hertz";
inline constexpr char kPower[] = "mfu_gpu_power_watts";
inline constexpr char kSampleTimestamp[] = "mfu_gpu_sample_timestamp_seconds";
inline constexpr char kLastXid[] = "mfu_gpu_last_xid";
inline constexpr char kThrottled[] = "mfu_gpu_throttled";
inline constexpr char kFinding[] = "mfu_gpu_finding";
inline constexpr char kBandSeconds[] = "mfu_gpu_band_seconds_total";
inline constexpr char kJobReportedMfu[] = "mfu_job_reported_mfu_ratio";
inline constexpr char kBuildInfo[] = "mfu_build_info";
inline constexpr char kUpstreamUp[] = "mfu_upstream_up";
inline constexpr char kUpstreamDuration[] = "mfu_upstream_scrape_duration_seconds";
inline constexpr char kUpstreamLastSuccess[] = "mfu_upstream_last_success_timestamp_seconds";
inline constexpr char kUpstreamDevices[] = "mfu_upstream_devices";
inline constexpr char kUpstreamScrapes[] = "mfu_upstream_scrapes_total";
inline constexpr char kUpstreamErrors[] = "mfu_upstream_scrape_errors_total";
inline constexpr char kSentinels[] = "mfu_telemetry_sentinels_total";
}  // namespace fleet_metric

// Why an upstream scrape failed: the `reason` label of
// mfu_upstream_scrape_errors_total. "unreachable" (connection refused, no
// such host, file missing), "timeout" (beyond --upstream-timeout), "http_status"
// (not 200), "too_large", "parse" (not exposition text), "no_data" (no device
// with a single valid value: empty, or sentinels only), "analysis".
std::span<const char* const> FleetUpstreamErrorReasons();

// ---------------------------------------------------------------------------
// Rendering one snapshot.

// Per-GPU facts the FleetReport does not carry, read from the snapshot:
// whether the clock-event bit mask was exported (so mfu_gpu_throttled 0 means
// "not throttled", not "unknown") and the last XID.
struct FleetGpuExtras {
  bool has_clocks_event_reasons = false;
  double last_xid = 0;  // NaN when the field was not exported
};

// What the exporter knows of its upstream, rendered on every /metrics.
struct FleetUpstreamStatus {
  bool up = false;
  double scrape_duration_s = 0;    // of the latest scrape; < 0: none yet
  double last_success_unix_s = 0;  // 0: never (then the series is absent)
  int64_t devices = 0;             // in the latest good snapshot
  int64_t scrapes_total = 0;
  std::map<std::string, int64_t> errors_total;  // by reason; every reason present
  int64_t sentinels_total = 0;
};

struct FleetMetricsView {
  // The snapshot's estimates; nullptr when none may be served (upstream down
  // beyond --max-age): then no per-GPU or per-job series at all.
  const FleetReport* report = nullptr;
  std::vector<FleetGpuExtras> extras;  // parallel to report->gpus; may be empty
  // Per GPU (parallel to report->gpus): seconds spent in each MfuBand so far;
  // empty: no mfu_gpu_band_seconds_total.
  std::vector<std::array<double, kNumMfuBands>> band_seconds;
  // > 0: every per-GPU and per-job sample carries this timestamp (ms): a
  // snapshot older than the latest scrape, served within --max-age.
  int64_t timestamp_ms = 0;
  FleetUpstreamStatus upstream;
  std::string version;  // mfu_build_info{version=...}
};

// Prometheus exposition text 0.0.4 (# HELP, # TYPE, samples) of `view`.
// Families with no sample are omitted; NaN values emit no sample.
std::string RenderFleetMetrics(const FleetMetricsView& view);

// True when the upstream stamped the GPU's samples longer ago than the
// staleness limit (finding "stale"): then only mfu_gpu_finding and
// mfu_gpu_sample_timestamp_seconds are served for it, and no band time is
// credited.
bool IsStaleEstimate(const GpuEstimate& gpu);

// The MfuBand of one GPU estimate in a snapshot: the band the analysis
// attributed the GPU's time to; nullopt when it attributed none.
std::optional<MfuBand> SnapshotBand(const GpuEstimate& gpu);

// ---------------------------------------------------------------------------
// Rules and dashboard.

struct FleetRecordingRule {
  const char* record;  // level:metric:operation (Prometheus' convention)
  std::string expr;
};

struct FleetAlertRule {
  const char* alert;
  std::string expr;
  const char* for_duration;  // "10m"
  const char* severity;      // "warning", "critical"
  const char* summary;
  const char* description;
};

// The recording rules (per job, node, fleet; GPU-hours by band) and the
// alerts (low MFU while busy, telemetry stale or stuck, throttled, straggler
// GPU, XID changed, upstream down), each expression naming only
// FleetMetrics() series and earlier records.
const std::vector<FleetRecordingRule>& FleetRecordingRules();
const std::vector<FleetAlertRule>& FleetAlertRules();

// A Prometheus rule file (YAML, `promtool check rules` clean) of both.
std::string RenderFleetRules();

// A Grafana dashboard (JSON: schemaVersion, ${DS_PROMETHEUS} input, $job_id
// and $hostname variables; timeseries, stat, table and heatmap panels) whose
// every query names only FleetMetrics() series and recorded rules.
std::string RenderFleetDashboard();

// ---------------------------------------------------------------------------
// The exporter.

struct FleetExporterOptions {
  // An http(s):// URL scraped on demand, or a file read on each refresh.
  std::string upstream;
  const FileSystem* fs = nullptr;  // required for a file upstream
  FleetOptions analysis;           // hardware (required), precision, jobs
  double upstream_timeout_s = 5;   // connect and read, each
  // 0: per-GPU series are dropped as soon as a refresh fails. > 0: the last
  // good snapshot is still served while younger than this, each sample with
  // the snapshot's own timestamp (never as fresh).
  double max_age_s = 0;
  // A refresh at most this often: /metrics within `cache_s` of the latest
  // refresh serves it again. Concurrent requests always share one refresh.
  double cache_s = 1;
  std::string version;  // mfu_build_info
  // One line per change of the upstream's state ("upstream down: ..."). May
  // be called from any server thread, never concurrently.
  std::function<void(std::string_view)> log;
};

// Serves /metrics (text/plain; version=0.0.4), /healthz ("ok") and 404 for
// any other path. Thread-safe.
class FleetExporter {
 public:
  // kInvalidArgument when `upstream` is empty or an http(s) URL that does
  // not parse, `analysis.hardware` is null or a file upstream has no `fs`.
  // An HTTP upstream is scraped over kept-alive connections
  // (HttpKeepAliveClient).
  static StatusOr<std::unique_ptr<FleetExporter>> Create(FleetExporterOptions options);
  ~FleetExporter();
  FleetExporter(const FleetExporter&) = delete;
  FleetExporter& operator=(const FleetExporter&) = delete;

  // Binds `host`:`port` (0: a free port). Returns the port bound;
  // kNotFound when the address cannot be bound ("127.0.0.1:80: cannot
  // listen").
  StatusOr<int> Bind(const std::string& host, int port);
  // Serves until Stop(); call after Bind, from one thread.
  Status Serve();
  // Makes Serve return. Safe from any thread (not from a signal handler).
  void Stop();

  // The /metrics body, refreshing from the upstream as /metrics does (tests,
  // the benchmark).
  std::string Metrics();

 private:
  FleetExporter(FleetExporterOptions options, std::unique_ptr<HttpKeepAliveClient> upstream_client);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mfu
