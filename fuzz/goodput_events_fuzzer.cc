// Fuzzes the goodput event readers (progress.txt, ml-goodput-measurement
// JSONL, sacct, job-completion logs, training logs; goodput.h) and the
// accounting on what they read: any bytes give events or one error, never
// a crash or a hang, and every accounting's buckets sum to the wall time
// exactly. The first byte picks the format (auto detection included).
// Seeds: fuzz/corpus/goodput_events/.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "mfu/goodput.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "goodput fuzzer: invariant violated: %s\n", what);
    std::abort();
  }
}

void CheckReport(const mfu::GoodputReport& r) {
  double sum = r.productive_s;
  Check(r.productive_s >= 0, "productive time >= 0");
  for (double b : r.badput_s) {
    Check(std::isfinite(b) && b >= 0, "every bucket finite and >= 0");
    sum += b;
  }
  Check(!(sum < r.wall_s) && !(sum > r.wall_s), "productive + badput == wall");
  Check(std::isnan(r.ettr) || (r.ettr >= 0 && r.ettr <= 1), "ETTR in [0, 1]");
  Check(r.interruptions <= r.attempts, "interruptions <= attempts");
  Check(r.steps >= 0 && r.wasted_steps >= 0, "step counts >= 0");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  const auto format =
      static_cast<mfu::GoodputSourceFormat>(data[0] % static_cast<uint8_t>(mfu::GoodputSourceFormat::kCount));
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  mfu::StatusOr<std::vector<mfu::GoodputEvent>> events = mfu::ReadGoodputEvents(text, "fuzz", format);
  if (!events.ok())
    return 0;
  Check(!events->empty(), "a successful read has events");
  mfu::StatusOr<mfu::GoodputReport> report = mfu::ComputeGoodput(*events);
  if (report.ok())
    CheckReport(*report);
  // The JSONL writer's records read back as as many events.
  const std::string jsonl = mfu::WriteGoodputJsonl(*events);
  mfu::StatusOr<std::vector<mfu::GoodputEvent>> again =
      mfu::ReadGoodputEvents(jsonl, "fuzz.jsonl", mfu::GoodputSourceFormat::kGoodputJsonl);
  bool writable = true;
  for (const mfu::GoodputEvent& e : *events)
    writable = writable && (e.kind != mfu::GoodputEventKind::kStep || e.step >= 0);
  if (writable)
    Check(again.ok() && again->size() == events->size(), "JSONL round trip keeps every event");
  return 0;
}
