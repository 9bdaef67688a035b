// TEMPORARY: TelemetryDevice::Key until the telemetry reader (wt-telread)
// lands; linked into fleet_estimate_test only. Delete on merging the reader.
#include "mfu/telemetry.h"

namespace mfu {
std::string TelemetryDevice::Key() const {
  std::string key = uuid.empty() ? hostname + "/" + gpu : uuid;
  if (!mig_instance.empty())
    key += "/mig" + mig_instance;
  if (!pod.empty())
    key += "/" + (k8s_namespace.empty() ? pod : k8s_namespace + "/" + pod);
  return key;
}
}  // namespace mfu
