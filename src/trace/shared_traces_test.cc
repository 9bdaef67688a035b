// Tests that read ../shared directly (the DeepSeek-V3 trace has no license and
// is never copied into tests/data). They carry the CTest label `shared`: the
// README's test command leaves them out and .ci/run runs them as an extra
// step, where ../shared is always present. They fail, never skip, without it.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mfu/trace.h"
#include "mfu/trace_classify.h"
#include "testing/trace_builder.h"

namespace mfu {
namespace {

// DeepSeek-V3 training (deepseek-ai/profile-data, no license: read from
// ../shared, never copied into tests/data): its expert-parallel traffic is
// DeepEP (dpsk::ep::*), which must be communication, not compute.
TEST(ClassifyEvents, DeepSeekDeepEpIsCommunication) {
  const std::string path = std::string(MFU_SOURCE_DIR) + "/../shared/traces/deepseek-profile-data/train.json";
  auto trace = ParseTraceFile(RealFileSystem(), path);
  ASSERT_TRUE(trace.ok()) << trace.status().message() << " (this test needs ../shared beside the checkout)";
  const std::vector<KernelClass> classes = ClassifyEvents(*trace, testing::BuiltinClassifier());
  size_t deep_ep = 0;
  for (size_t i = 0; i < trace->num_events(); ++i) {
    if (trace->kind[i] != TraceEventKind::kKernel || trace->event_name(i).find("dpsk::ep::") == std::string_view::npos)
      continue;
    ++deep_ep;
    EXPECT_EQ(classes[i], KernelClass::kCommunication) << trace->event_name(i);
  }
  EXPECT_GE(deep_ep, 30u);  // dispatch, combine, notify_dispatch, cached_notify, get_dispatch_layout
  const double unclassified = testing::UnclassifiedKernelShare(*trace, classes);
  EXPECT_GE(unclassified, 0);
  EXPECT_LT(unclassified, 0.01);
}

}  // namespace
}  // namespace mfu
