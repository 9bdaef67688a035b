// AnalyzeFleet through the real reader on a generated dcgm-exporter body
// (src/testing/telemetry_gen: the exporter's 60 fields and label shapes):
// 8 H100s on 2 hosts, 2 Kubernetes jobs, a straggler, a throttled GPU and a
// sentinel. Expected figures by hand in the comments.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mfu/fleet.h"
#include "testing/telemetry_gen.h"

namespace mfu {
namespace {

bool HasCode(const std::vector<FleetFinding>& findings, const std::string& code) {
  for (const FleetFinding& f : findings) {
    if (f.code == code)
      return true;
  }
  return false;
}

// Every GPU at tensor activity 0.5 and 1,980 MHz (the H100's boost): MFU 0.5,
// except GPU 3 at 0.1. Job team-0/train (pods train-0-0, train-0-1): MFU
// (3 x 0.5 + 0.1) / 4 = 0.4; median activity 0.5, so 0.1 < 0.8 x 0.5 makes
// GPU 3 a straggler. Job team-1/train: 0.5. Fleet: (4 x 0.4 + 4 x 0.5) / 8.
TEST(AnalyzeFleet, GeneratedExpositionTwoJobs) {
  std::vector<testing::TelemetryGenGpu> gpus =
      testing::MakeTelemetryGpus(8, 4, 2, testing::TelemetryGenJobLabels::kPod);
  gpus[3].tensor_active = 0.1;
  gpus[5].clocks_event_reasons = 0x4 | 0x40;
  gpus[6].overrides["DCGM_FI_DEV_MEMORY_TEMP"] = 9223372036854775794.0;  // DCGM_INT64_NOT_SUPPORTED
  testing::ExpositionGenOptions gen;
  gen.gpus = gpus;
  const std::string text = testing::GenerateExposition(gen);

  StatusOr<HardwareDb> hw = HardwareDb::LoadBuiltin();
  ASSERT_TRUE(hw.ok());
  FleetOptions options;
  options.hardware = &*hw;
  StatusOr<FleetReport> r = AnalyzeFleet(text, "gen.prom", options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->gpus.size(), 8u);
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[0].id, "team-0/train");
  EXPECT_EQ(r->jobs[0].source, "kubernetes");
  EXPECT_EQ(r->jobs[0].gpus.size(), 4u);
  EXPECT_NEAR(r->jobs[0].estimated_mfu, 0.4, 1e-9);
  ASSERT_EQ(r->jobs[0].stragglers.size(), 1u);
  EXPECT_EQ(r->jobs[1].id, "team-1/train");
  EXPECT_NEAR(r->jobs[1].estimated_mfu, 0.5, 1e-9);
  EXPECT_TRUE(r->jobs[1].stragglers.empty());
  EXPECT_EQ(r->fleet.gpus, 8);
  EXPECT_NEAR(r->fleet.estimated_mfu, 0.45, 1e-9);
  EXPECT_EQ(r->nodes.size(), 2u);
  int throttled = 0;
  for (const GpuEstimate& g : r->gpus) {
    EXPECT_EQ(g.accelerator, "h100-sxm5-80gb");
    throttled += HasCode(g.findings, "throttled") ? 1 : 0;
  }
  EXPECT_EQ(throttled, 1);
  EXPECT_GE(r->read.sentinels, 1);
  bool sentinel_note = false;
  for (const Note& n : r->notes)
    sentinel_note = sentinel_note || n.code == "sentinel";
  EXPECT_TRUE(sentinel_note);
}

}  // namespace
}  // namespace mfu
