// The exporter of `mfu fleet serve` (mfu/fleet_exporter.h): /metrics
// scrapes the upstream on demand (concurrent requests share one refresh, a
// refresh at most every `cache_s`), analyzes the snapshot and renders it.

#include <httplib.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "fleet/fleet_internal.h"
#include "fleet/goodput_counters.h"
#include "mfu/fleet_exporter.h"
#include "mfu/http_fetch.h"

namespace mfu {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The time one refresh may credit to a GPU's MFU band: beyond it, nobody
// scraped and the band in between is unknown.
constexpr double kMaxBandCreditS = 300;
// A snapshot's size cap (dcgm-exporter's /metrics is tens of kB per GPU).
constexpr uint64_t kMaxUpstreamBytes = uint64_t{64} << 20;
constexpr size_t kServerThreads = 16;
// Connections waiting to be accepted. Debian's cpp-httplib is a compiled
// library listening with a backlog of 5, which under 100 concurrent scrapers
// drops SYNs (1 s retransmits); Linux lets listen() raise it on the socket.
constexpr int kListenBacklog = 1024;

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

// Named, not anonymous: FleetExporter::Impl holds one, and a class with
// external linkage must not hold a type with internal linkage
// (-Wsubobject-linkage in the unity build).
namespace exporter_internal {

// One analyzed snapshot: what /metrics serves while it is fresh.
struct Snapshot {
  FleetReport report;
  std::vector<FleetGpuExtras> extras;  // parallel to report.gpus
  int64_t unix_ms = 0;
};

}  // namespace exporter_internal

namespace {

using exporter_internal::Snapshot;

// The outcome of one upstream scrape.
struct Scrape {
  std::shared_ptr<const Snapshot> snapshot;  // null on failure
  const char* reason = "";                   // FleetUpstreamErrorReasons() on failure
  std::string message;
  double duration_s = 0;
  int64_t sentinels = 0;
};

std::vector<FleetGpuExtras> ExtrasOf(const TelemetryCapture& capture, const FleetReport& report) {
  std::map<std::string, FleetGpuExtras> by_key;
  for (size_t i = 0; i < capture.devices.size(); ++i) {
    FleetGpuExtras extras;
    extras.last_xid = NAN;
    for (const TelemetryPoint& point : capture.points[i]) {
      extras.has_clocks_event_reasons |= point.Has(TelemetryField::kClocksEventReasons);
      if (point.Has(TelemetryField::kXidErrors))
        extras.last_xid = point.Get(TelemetryField::kXidErrors);
    }
    by_key[capture.devices[i].Key()] = extras;
  }
  std::vector<FleetGpuExtras> out;
  for (const GpuEstimate& gpu : report.gpus) {
    auto it = by_key.find(gpu.device.Key());
    out.push_back(it == by_key.end() ? FleetGpuExtras{false, NAN} : it->second);
  }
  return out;
}

// Pods time-sharing one GPU (one uuid and MIG instance on one host) each
// report the whole GPU's values: each pod's FLOP/s and peak become 1/n of the
// GPU's, so the rules' sums count the GPU once and every ratio is unchanged
// (the analysis weighs its GPU-hours by the same 1/n, gpu_share).
void ShareTimeSlicedPods(FleetReport& report) {
  std::map<std::tuple<std::string, std::string, std::string>, int> pods;
  const auto key = [](const TelemetryDevice& d) { return std::tuple(d.hostname, d.uuid, d.mig_instance); };
  for (const GpuEstimate& gpu : report.gpus)
    if (!gpu.device.uuid.empty())
      ++pods[key(gpu.device)];
  for (GpuEstimate& gpu : report.gpus) {
    const int n = gpu.device.uuid.empty() ? 1 : pods[key(gpu.device)];
    if (n > 1) {
      gpu.estimated_flops /= n;
      gpu.peak_flops /= n;
    }
  }
}

bool HasAnyValue(const TelemetryCapture& capture) {
  for (const auto& points : capture.points)
    for (const TelemetryPoint& point : points)
      for (double v : point.value)
        if (!std::isnan(v))
          return true;
  return false;
}

}  // namespace

struct FleetExporter::Impl {
  FleetExporterOptions options;
  httplib::Server server;

  std::mutex mu;
  std::condition_variable refreshed;
  bool refreshing = false;
  int64_t generation = 0;  // refreshes done
  SteadyClock::time_point last_refresh;
  std::string body;  // /metrics of the latest refresh

  FleetUpstreamStatus status;
  std::shared_ptr<const Snapshot> last_good;
  SteadyClock::time_point last_good_steady;
  bool last_ok = false;
  std::map<std::string, std::array<double, kNumMfuBands>> band_seconds;  // by device key
  std::string logged_state;
  int listen_fd = -1;  // the listening socket, seen by the socket options hook
  // An HTTP upstream's kept-alive connections (a new TCP connection per
  // scrape cost about a millisecond of the /metrics latency); null for a
  // file upstream.
  std::unique_ptr<HttpKeepAliveClient> upstream_client;
  // --goodput-events: touched by the refreshing thread only; its totals are
  // copied into `goodput` under the lock.
  std::unique_ptr<fleet::GoodputCounters> goodput_counters;
  std::vector<FleetJobGoodput> goodput;

  StatusOr<std::string> Fetch() const {
    if (upstream_client != nullptr)
      return upstream_client->Get();
    return options.fs->ReadFile(options.upstream, kMaxUpstreamBytes);
  }

  const char* Classify(const Status& error, double duration_s) const {
    const std::string& message = error.message();
    if (error.code() == StatusCode::kOutOfRange)
      return "too_large";
    if (message.find(": HTTP status ") != std::string::npos)
      return "http_status";
    if (EndsWith(message, ": Read") || EndsWith(message, ": ConnectionTimeout") ||
        duration_s >= 0.95 * options.upstream_timeout_s)
      return "timeout";
    return "unreachable";
  }

  // Fetches, reads and analyzes one snapshot; runs outside the lock.
  Scrape ScrapeUpstream() const {
    Scrape out;
    const auto start = SteadyClock::now();
    StatusOr<std::string> text = Fetch();
    out.duration_s = SecondsSince(start);
    if (!text.ok()) {
      out.reason = Classify(text.status(), out.duration_s);
      out.message = text.status().message();
      return out;
    }
    StatusOr<TelemetryCapture> capture = ReadTelemetryCapture(*text, options.upstream);
    if (!capture.ok()) {
      out.reason = "parse";
      out.message = capture.status().message();
      return out;
    }
    out.sentinels = capture->stats.sentinels;
    if (!HasAnyValue(*capture)) {
      out.reason = "no_data";
      out.message = options.upstream + ": no device has a valid value (" + std::to_string(capture->stats.sentinels) +
                    " sentinels)";
      return out;
    }
    FleetOptions analysis = options.analysis;
    analysis.now_ms = UnixMs();  // samples the upstream stamped long ago are "stale"
    FleetAnalyzer analyzer(std::move(analysis));
    for (size_t i = 0; i < capture->devices.size(); ++i) {
      if (Status s = analyzer.OnDevice(capture->devices[i], capture->points[i]); !s.ok()) {
        out.reason = "analysis";
        out.message = s.message();
        return out;
      }
    }
    StatusOr<FleetReport> report = analyzer.Finish(capture->stats, options.upstream);
    out.duration_s = SecondsSince(start);
    if (!report.ok()) {
      out.reason = "analysis";
      out.message = report.status().message();
      return out;
    }
    auto snapshot = std::make_shared<Snapshot>();
    snapshot->extras = ExtrasOf(*capture, *report);
    snapshot->report = std::move(report).value();
    ShareTimeSlicedPods(snapshot->report);
    snapshot->unix_ms = UnixMs();
    out.snapshot = std::move(snapshot);
    return out;
  }

  void Log(const std::string& state, const std::string& line) {
    if (state == logged_state)
      return;
    logged_state = state;
    if (options.log)
      options.log(line);
  }

  // Applies a scrape to the state and renders the body; under the lock.
  void Apply(const Scrape& scrape) {
    const auto now = SteadyClock::now();
    ++status.scrapes_total;
    status.scrape_duration_s = scrape.duration_s;
    status.sentinels_total += scrape.sentinels;
    status.up = scrape.snapshot != nullptr;
    if (status.up) {
      const double credit =
          last_ok ? std::min(std::chrono::duration<double>(now - last_good_steady).count(), kMaxBandCreditS) : 0.0;
      // Counters of devices the upstream no longer reports are dropped (pods
      // come and go: the map would grow without bound); a device that comes
      // back starts from 0, a counter reset Prometheus' increase() handles.
      std::map<std::string, std::array<double, kNumMfuBands>> kept;
      for (const GpuEstimate& gpu : scrape.snapshot->report.gpus) {
        const std::string key = gpu.device.Key();
        auto& bands = kept.try_emplace(key, band_seconds[key]).first->second;
        if (std::optional<MfuBand> band = SnapshotBand(gpu); band && !IsStaleEstimate(gpu))
          bands[static_cast<size_t>(*band)] += credit;
      }
      band_seconds = std::move(kept);
      last_good = scrape.snapshot;
      last_good_steady = now;
      status.last_success_unix_s = static_cast<double>(scrape.snapshot->unix_ms) / 1e3;
      status.devices = static_cast<int64_t>(scrape.snapshot->report.gpus.size());
      Log("up", "upstream up: " + options.upstream + " (" + std::to_string(status.devices) + " devices)");
    } else {
      ++status.errors_total[scrape.reason];
      Log(std::string("down:") + scrape.reason,
          std::string("upstream down (") + scrape.reason + "): " + scrape.message);
    }
    last_ok = status.up;
    Render(now);
  }

  void Render(SteadyClock::time_point now) {
    FleetMetricsView view;
    view.upstream = status;
    view.version = options.version;
    view.goodput = goodput;
    const bool fresh = status.up;
    const bool within_max_age = last_good != nullptr && options.max_age_s > 0 &&
                                std::chrono::duration<double>(now - last_good_steady).count() <= options.max_age_s;
    if (fresh || within_max_age) {
      view.report = &last_good->report;
      view.extras = last_good->extras;
      for (const GpuEstimate& gpu : last_good->report.gpus)
        view.band_seconds.push_back(band_seconds[gpu.device.Key()]);
      if (!fresh)
        view.timestamp_ms = last_good->unix_ms;
    }
    body = RenderFleetMetrics(view);
  }

  std::string Metrics() {
    std::unique_lock lock(mu);
    for (;;) {
      if (generation > 0 && SecondsSince(last_refresh) < options.cache_s)
        return body;
      if (refreshing) {
        const int64_t seen = generation;
        refreshed.wait(lock, [&] { return !refreshing; });
        if (generation > seen)
          return body;  // shared the refresh in flight
        continue;
      }
      refreshing = true;
      lock.unlock();
      Scrape scrape = ScrapeUpstream();
      std::vector<std::string> goodput_errors;
      std::vector<FleetJobGoodput> totals;
      if (goodput_counters != nullptr) {
        goodput_counters->Refresh(goodput_errors);
        totals = goodput_counters->Totals();
      }
      lock.lock();
      goodput = std::move(totals);
      for (const std::string& e : goodput_errors)
        if (options.log)
          options.log("goodput events: " + e + " (the last good totals are served)");
      Apply(scrape);
      last_refresh = SteadyClock::now();
      ++generation;
      refreshing = false;
      refreshed.notify_all();
      return body;
    }
  }
};

FleetExporter::FleetExporter(FleetExporterOptions options, std::unique_ptr<HttpKeepAliveClient> upstream_client)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->upstream_client = std::move(upstream_client);
  impl_->status.scrape_duration_s = -1;
  for (const char* reason : FleetUpstreamErrorReasons())
    impl_->status.errors_total[reason] = 0;
  Impl* impl = impl_.get();
  httplib::Server& server = impl_->server;
  server.new_task_queue = [] { return new httplib::ThreadPool(kServerThreads); };
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, with which a
  // second exporter on a taken port would silently share it. TCP_NODELAY:
  // headers and body are two writes, and Nagle's algorithm against the
  // client's delayed ACK costs 40 ms per keep-alive request.
  server.set_socket_options([impl](socket_t sock) {
    impl->listen_fd = sock;
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  });
  server.set_keep_alive_max_count(100);
  server.set_read_timeout(5, 0);
  server.Get("/metrics", [impl](const httplib::Request&, httplib::Response& res) {
    res.set_content(impl->Metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Get("/healthz",
             [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
}

FleetExporter::~FleetExporter() {
  impl_->server.stop();
}

StatusOr<std::unique_ptr<FleetExporter>> FleetExporter::Create(FleetExporterOptions options) {
  if (options.upstream.empty())
    return InvalidArgumentError("parameter 'upstream': an exporter URL or a file is required");
  if (options.analysis.hardware == nullptr)
    return InvalidArgumentError("fleet exporter: no hardware database");
  if (!IsHttpUrl(options.upstream) && options.fs == nullptr)
    return InvalidArgumentError("parameter 'upstream' " + options.upstream + ": a file upstream needs a file system");
  if (!(options.upstream_timeout_s > 0))
    return InvalidArgumentError("parameter 'upstream_timeout' must be > 0");
  std::unique_ptr<HttpKeepAliveClient> client;
  if (IsHttpUrl(options.upstream)) {
    MFU_ASSIGN_OR_RETURN(
        client, HttpKeepAliveClient::Create(options.upstream, {options.upstream_timeout_s, kMaxUpstreamBytes}));
  }
  // A job's logs: checked now (a missing file is the start's error), read
  // at refreshes through the cache.
  for (const FleetJobReport& r : options.analysis.job_reports) {
    if (r.log.empty())
      continue;
    if (options.fs == nullptr)
      return InvalidArgumentError("parameter 'job_log': no file system to read the job's logs");
    MFU_RETURN_IF_ERROR(fleet::CheckJobLogs(r, *options.fs));
    options.analysis.file_system = options.fs;
    options.analysis.job_log_cache = std::make_shared<fleet::JobLogCache>();
  }
  auto counters = std::make_unique<fleet::GoodputCounters>(options.fs, options.goodput_events);
  MFU_RETURN_IF_ERROR(counters->Load());
  const bool have_goodput = !options.goodput_events.empty();
  std::unique_ptr<FleetExporter> exporter(new FleetExporter(std::move(options), std::move(client)));
  if (have_goodput) {
    exporter->impl_->goodput = counters->Totals();
    exporter->impl_->goodput_counters = std::move(counters);
  }
  return exporter;
}

StatusOr<int> FleetExporter::Bind(const std::string& host, int port) {
  httplib::Server& server = impl_->server;
  const int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound < 0)
    return NotFoundError(host + ":" + std::to_string(port) + ": cannot listen (address in use or not local)");
  if (impl_->listen_fd >= 0)
    ::listen(impl_->listen_fd, kListenBacklog);
  return bound;
}

Status FleetExporter::Serve() {
  if (!impl_->server.listen_after_bind())
    return NotFoundError("fleet exporter: the server stopped with an error");
  return Status::Ok();
}

void FleetExporter::Stop() {
  impl_->server.stop();
}

std::string FleetExporter::Metrics() {
  return impl_->Metrics();
}

}  // namespace mfu
