// ReadGoodputEvents (goodput.h): detects the source by content and
// dispatches to its reader (goodput_readers.h).

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "goodput/goodput_readers.h"
#include "mfu/goodput.h"

namespace mfu {
namespace {

using goodput_internal::LooksLikeGoodputJsonl;
using goodput_internal::LooksLikeMegatronProgress;

StatusOr<std::vector<GoodputEvent>> FromTrainingLog(std::string_view text, std::string_view origin) {
#if MFU_GOODPUT_HAVE_LOG_READER
  MFU_ASSIGN_OR_RETURN(LogTimeline timeline, ReadTrainingLog(text, origin));
  std::vector<GoodputEvent> events = GoodputEventsFromTimeline(timeline);
  if (events.empty())
    return InvalidArgumentError(fmt::format("{}: the training log has no step with a time or step time", origin));
  return events;
#else
  (void)text;
  return UnsupportedError(fmt::format("{}: training-log reading is not built into this mfu", origin));
#endif
}

StatusOr<std::vector<GoodputEvent>> Slurm(GoodputSourceFormat format, std::string_view text, std::string_view origin) {
#if MFU_GOODPUT_HAVE_SLURM_READERS
  if (format == GoodputSourceFormat::kSacct)
    return goodput_internal::ReadSacct(text, origin);
  return goodput_internal::ReadSlurmJobComp(text, origin);
#else
  (void)text;
  return UnsupportedError(
      fmt::format("{}: {} reading is not built into this mfu", origin, GoodputSourceFormatId(format)));
#endif
}

GoodputSourceFormat Detect(std::string_view text) {
  if (LooksLikeGoodputJsonl(text))
    return GoodputSourceFormat::kGoodputJsonl;
  if (LooksLikeMegatronProgress(text))
    return GoodputSourceFormat::kMegatronProgress;
#if MFU_GOODPUT_HAVE_SLURM_READERS
  if (goodput_internal::LooksLikeSacct(text))
    return GoodputSourceFormat::kSacct;
  if (goodput_internal::LooksLikeSlurmJobComp(text))
    return GoodputSourceFormat::kSlurmJobComp;
#endif
  return GoodputSourceFormat::kTrainingLog;
}

}  // namespace

StatusOr<std::vector<GoodputEvent>> ReadGoodputEvents(std::string_view text, std::string_view origin,
                                                      GoodputSourceFormat format) {
  const bool detected = format == GoodputSourceFormat::kAuto;
  if (detected)
    format = Detect(text);
  switch (format) {
    case GoodputSourceFormat::kGoodputJsonl:
      return goodput_internal::ReadGoodputJsonl(text, origin);
    case GoodputSourceFormat::kMegatronProgress:
      return goodput_internal::ReadMegatronProgress(text, origin);
    case GoodputSourceFormat::kSacct:
    case GoodputSourceFormat::kSlurmJobComp:
      return Slurm(format, text, origin);
    case GoodputSourceFormat::kTrainingLog: {
      StatusOr<std::vector<GoodputEvent>> events = FromTrainingLog(text, origin);
      if (!events.ok() && detected) {
        return InvalidArgumentError(
            fmt::format("{}: not a goodput event source (tried goodput-jsonl, megatron-progress, sacct, slurm-jobcomp, "
                        "training-log: {})",
                        origin, events.status().message()));
      }
      return events;
    }
    default:
      return InvalidArgumentError(fmt::format("{}: unknown goodput source format", origin));
  }
}

StatusOr<std::vector<GoodputEvent>> ReadGoodputEventsFile(const FileSystem& fs, const std::string& path,
                                                          GoodputSourceFormat format) {
  MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path, kMaxDataFileBytes));
  return ReadGoodputEvents(text, path, format);
}

}  // namespace mfu
