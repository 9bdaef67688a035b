// Fuzzes the config.json reader: any bytes must give a ModelSpec or a Status,
// never a crash, and a parsed spec must survive every computation.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "mfu/flops.h"
#include "mfu/memory.h"
#include "mfu/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = mfu::ParseModelConfig(text, "fuzz.json");
  if (!spec.ok()) {
    // Messages are mfu's own: the JSON library's text ("[json.exception.
    // parse_error.101] ...") must never leak. A message may quote a key of the
    // input, so the marker counts only when the input does not hold it.
    constexpr std::string_view kLibraryMarker = "[json.exception.";
    if (spec.status().message().find(kLibraryMarker) != std::string::npos &&
        text.find(kLibraryMarker) == std::string_view::npos)
      std::abort();
    return 0;
  }
  mfu::ParamCounts params = mfu::CountParams(*spec);
  (void)params;
  for (const auto& info : mfu::AllConventions()) {
    (void)mfu::ComputeTrainingFlops(*spec, info.convention, 2048, mfu::Recompute::kFull);
  }
  (void)mfu::ComputeDecodeFlops(*spec, mfu::Convention::kMegatron, 4, 1000, mfu::MlaMode::kAbsorbed);
  (void)mfu::ComputeKvCache(*spec, mfu::DType::kBf16, 1000);
  mfu::TrainingMemoryOptions options;
  options.seq_len = 1024;
  (void)mfu::EstimateTrainingMemory(*spec, options);
  return 0;
}
