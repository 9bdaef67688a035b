// Clock-event (throttle) reasons. The bits are DCGM's
// DCGM_CLOCKS_EVENT_REASON_* (dcgm_fields.h), equal to NVML's
// nvmlClocksEventReason* / nvmlClocksThrottleReason* (nvml.h, "Clocks Event
// Reasons" group: GpuIdle 0x1, ApplicationsClocksSetting 0x2, SwPowerCap 0x4,
// HwSlowdown 0x8, SyncBoost 0x10, SwThermalSlowdown 0x20, HwThermalSlowdown
// 0x40, HwPowerBrakeSlowdown 0x80, DisplayClockSetting 0x100).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mfu/fleet.h"

namespace mfu {
namespace {

constexpr std::array<const char*, 9> kReasonNames = {
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "sync_boost",
    "sw_thermal",
    "hw_thermal",
    "hw_power_brake",
    "display_clock_setting",
};

std::string Hex(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), kDigits[value & 0xf]);
    value >>= 4;
  } while (value != 0);
  return "0x" + out;
}

}  // namespace

std::vector<std::string> DecodeClocksEventReasons(uint64_t bits) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < 64; ++i) {
    const uint64_t bit = uint64_t{1} << i;
    if ((bits & bit) == 0)
      continue;
    names.push_back(i < kReasonNames.size() ? std::string(kReasonNames[i]) : "unknown_" + Hex(bit));
  }
  return names;
}

const char* MfuBandId(MfuBand band) {
  switch (band) {
    case MfuBand::kIdle:
      return "idle";
    case MfuBand::kBelow30:
      return "below_30";
    case MfuBand::k30To60:
      return "30_to_60";
    case MfuBand::kAbove60:
    case MfuBand::kCount:
      break;
  }
  return "above_60";
}

}  // namespace mfu
