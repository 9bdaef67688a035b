// `mfu clusters` and the --json error object (mfu/report_cli.h).

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "mfu/report_cli.h"
#include "report/json_common.h"
#include "report/table.h"

namespace mfu {
namespace {

constexpr double kGB = 1e9;

std::string Gbps(double bytes_per_s) {
  return bytes_per_s > 0 ? report::Fixed(bytes_per_s / kGB, 0) : "-";
}

std::string Micros(double seconds) {
  return seconds > 0 ? report::Fixed(seconds * 1e6, 1) + " us" : "-";
}

nlohmann::json ClusterJson(const Cluster& c) {
  return {{"id", c.id},
          {"name", c.name},
          {"accelerator", c.accelerator},
          {"aliases", c.aliases},
          {"gpus_per_node", c.gpus_per_node},
          {"nvlink_domain_gpus", c.nvlink_domain_gpus},
          {"scaleup_bw_bytes_per_s", c.scaleup_bw_bytes_per_s},
          {"scaleout_bw_bytes_per_s", c.scaleout_bw_bytes_per_s},
          {"scaleup_latency_s", c.scaleup_latency_s},
          {"scaleout_latency_s", c.scaleout_latency_s},
          {"max_gpus", c.max_gpus},
          {"price_per_gpu_hour", c.price_per_gpu_hour},
          {"source", c.source},
          {"notes", c.notes}};
}

}  // namespace

std::string RenderClusterListText(const std::vector<const Cluster*>& clusters, const TextOptions& options) {
  std::ostringstream out;
  // Below 100 columns the figures alone take ~78: the name goes (it wrapped
  // to 10 characters a line past the terminal's edge), `clusters show` has it.
  const bool names = options.width == TextOptions::kUnlimited || options.width >= 100;
  std::vector<std::string> header = {"id",      "accelerator", "GPUs/node", "domain",
                                     "up GB/s", "out GB/s",    "max GPUs",  "USD/h"};
  if (names)
    header.push_back("name");
  report::Table table(std::move(header));
  for (const Cluster* c : clusters) {
    std::vector<std::string> row = {c->id,
                                    c->accelerator,
                                    std::to_string(c->gpus_per_node),
                                    std::to_string(c->nvlink_domain_gpus),
                                    Gbps(c->scaleup_bw_bytes_per_s),
                                    Gbps(c->scaleout_bw_bytes_per_s),
                                    c->max_gpus > 0 ? std::to_string(c->max_gpus) : "-",
                                    c->price_per_gpu_hour > 0 ? report::Fixed(c->price_per_gpu_hour, 2) : "-"};
    if (names)
      row.push_back(c->name);
    table.AddRow(std::move(row));
  }
  table.Print(out, options.width);
  const std::string footer = std::to_string(clusters.size()) + " clusters; bandwidths per GPU, one direction. " +
                             options.Command("clusters show ID") + " for every field " +
                             (names ? "" : "(the name too) ") + "and the source.";
  out << base::Join(report::WrapText(footer, options.width > 0 ? static_cast<size_t>(options.width) : 0), "\n") << "\n";
  return out.str();
}

std::string RenderClusterListJson(const std::vector<const Cluster*>& clusters) {
  nlohmann::json j = report::JsonEnvelope();
  j["clusters"] = nlohmann::json::array();
  for (const Cluster* c : clusters)
    j["clusters"].push_back(ClusterJson(*c));
  return report::JsonText(j);
}

std::string RenderClusterText(const Cluster& c, const TextOptions& options) {
  std::ostringstream out;
  const size_t width = options.width > 0 ? static_cast<size_t>(options.width) : 0;
  auto field = [&](const char* label, const std::string& value) {
    const std::string text = value.empty() ? "-" : value;
    const size_t room = width > 20 ? width - 17 : 0;
    std::vector<std::string> lines = report::WrapText(text, room);
    for (size_t i = 0; i < lines.size(); ++i)
      out << fmt::format("{:<17}{}\n", i == 0 ? label : "", lines[i]);
  };
  field("id", c.id);
  field("name", c.name);
  field("aliases", base::Join(c.aliases, "; "));
  field("accelerator", c.accelerator);
  field("GPUs per node", std::to_string(c.gpus_per_node));
  field("NVLink domain", std::to_string(c.nvlink_domain_gpus) + " GPUs");
  field("scale-up", Gbps(c.scaleup_bw_bytes_per_s) + " GB/s per GPU, " + Micros(c.scaleup_latency_s) + " per hop");
  field("scale-out", Gbps(c.scaleout_bw_bytes_per_s) + " GB/s per GPU, " + Micros(c.scaleout_latency_s) + " per hop");
  field("max GPUs", c.max_gpus > 0 ? std::to_string(c.max_gpus) : "no limit");
  field("USD/GPU-hour", c.price_per_gpu_hour > 0 ? report::Fixed(c.price_per_gpu_hour, 2) : "unknown");
  field("source", c.source);
  field("notes", c.notes);
  return out.str();
}

std::string RenderClusterJson(const Cluster& c) {
  nlohmann::json j = report::JsonEnvelope();
  j.update(ClusterJson(c));
  return report::JsonText(j);
}

std::string RenderErrorJson(std::string_view message, std::string_view kind) {
  nlohmann::json j = report::JsonEnvelope();
  j["error"] = {{"message", std::string(message)}, {"kind", std::string(kind)}};
  return report::JsonText(j);
}

}  // namespace mfu
