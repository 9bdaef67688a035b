#pragma once

// Renderers of the CLI's own outputs that are not an analysis result: the
// cluster presets (`mfu clusters list|show`) and the error object every
// command writes on stdout under --json when it fails.

#include <string>
#include <string_view>
#include <vector>

#include "mfu/cluster.h"
#include "mfu/text_options.h"

namespace mfu {

// One line per cluster: id, accelerator, GPUs per node and per NVLink domain,
// scale-up and scale-out bandwidth per GPU (GB/s), the largest job, the price.
std::string RenderClusterListText(const std::vector<const Cluster*>& clusters, const TextOptions& options = {});
// {"schema_version", "mfu_version", "clusters": [ClusterJson...]}.
std::string RenderClusterListJson(const std::vector<const Cluster*>& clusters);
// Every field of one cluster, one per line.
std::string RenderClusterText(const Cluster& cluster, const TextOptions& options = {});
// The envelope with the cluster's fields at the top level.
std::string RenderClusterJson(const Cluster& cluster);

// {"schema_version", "mfu_version", "error": {"message", "kind"}}: `kind` is
// "usage" (exit 2) or "data" (exit 1); `message` is the one-line stderr
// message without its "mfu: " prefix.
std::string RenderErrorJson(std::string_view message, std::string_view kind);

}  // namespace mfu
