// Fuzzes the request-mix readers of `mfu infer --workload` (mfu/
// inference_job.h): the CSV (ParseWorkloadCsv) and the "I:O[:N],..." list
// (ParseWorkload). Any bytes must give pairs or a Status, never a crash; every
// pair that parses has finite lengths >= 1 and a finite request weight > 0.
// The first byte picks the reader. Seeds: fuzz/corpus/workload/.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/inference_job.h"

namespace {

void CheckPairs(const mfu::StatusOr<std::vector<mfu::WorkloadPair>>& pairs) {
  if (!pairs.ok())
    return;
  for (const mfu::WorkloadPair& p : *pairs) {
    if (!std::isfinite(p.input_len) || !std::isfinite(p.output_len) || !std::isfinite(p.requests) || p.input_len < 1 ||
        p.output_len < 1 || !(p.requests > 0))
      __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    CheckPairs(mfu::ParseWorkloadCsv(text, "fuzz.csv"));
  } else {
    mfu::InMemoryFileSystem fs;
    fs.AddFile("fuzz.csv", std::string(text));
    // A spec with ':' is a list; without one it names the file above.
    CheckPairs(mfu::ParseWorkload(fs, text.find(':') == std::string_view::npos ? "fuzz.csv" : text));
  }
  return 0;
}
