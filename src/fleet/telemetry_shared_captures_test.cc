// The RTX 4000 Ada capture (linode/lke-ai-conformance, no licence found, so
// not copied into tests/data): read from ../shared/telemetry, CTest label
// `shared`. Values read by hand from the file.
#include <gtest/gtest.h>

#include <string>

#include "fleet/telemetry_test_util.h"
#include "mfu/telemetry.h"

namespace mfu {
namespace {

using F = TelemetryField;

TEST(TelemetrySharedCaptures, Rtx4000AdaPodLabels) {
  const std::string path =
      std::string(MFU_SOURCE_DIR) + "/../shared/telemetry/dcgm-exporter_RTX4000Ada_pod-labels_k8s.prom";
  const std::string text = testing::Slurp(path, false);
  if (text.empty())
    GTEST_SKIP() << path << " not present";
  StatusOr<TelemetryCapture> c = ReadTelemetryCapture(text, "rtx4000ada.prom");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->devices.size(), 1u);
  const TelemetryDevice& d = c->devices[0];
  EXPECT_EQ(d.uuid, "GPU-a8394b51-c086-568a-9f1a-c1e1c934c44c");
  EXPECT_EQ(d.model_name, "NVIDIA RTX 4000 Ada Generation");
  EXPECT_EQ(d.hostname, "lke529760-766837-0a634ab30000");
  EXPECT_EQ(d.container, "cuda");
  EXPECT_EQ(d.k8s_namespace, "default");
  EXPECT_EQ(d.pod, "cuda-75454ffb9f-8ljq7");
  EXPECT_EQ(d.pod_uid, "");
  EXPECT_EQ(d.driver_version, "580.95.05");
  const TelemetryPoint& p = c->points[0][0];
  EXPECT_DOUBLE_EQ(p.Get(F::kSmClockMhz), 2310);
  EXPECT_DOUBLE_EQ(p.Get(F::kMemClockMhz), 9001);
  EXPECT_DOUBLE_EQ(p.Get(F::kPowerWatts), 40.979);
  EXPECT_DOUBLE_EQ(p.Get(F::kGrEngineActive), 0.004656);
  EXPECT_DOUBLE_EQ(p.Get(F::kTensorActive), 0);
  EXPECT_DOUBLE_EQ(p.Get(F::kDramActive), 0.003074);
  EXPECT_DOUBLE_EQ(p.Get(F::kXidErrors), 0);
  EXPECT_DOUBLE_EQ(p.Get(F::kFbUsedMib), 1);
  EXPECT_EQ(c->stats.samples, 25);
}

}  // namespace
}  // namespace mfu
