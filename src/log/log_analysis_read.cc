// AnalyzeTrainingLogFiles: read, merge, analyze, attach the evidence lines.
// Its own file so that the analysis links without the readers.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mfu/log_analysis.h"

namespace mfu {
namespace {

constexpr uint64_t kMaxEvidenceFileBytes = uint64_t{8} << 30;

}  // namespace

StatusOr<LogAnalysis> AnalyzeTrainingLogFiles(const FileSystem& fs, const std::vector<std::string>& paths,
                                              const LogReadOptions& read, const HardwareDb& hardware,
                                              const LogAnalysisRequest& request) {
  if (paths.empty())
    return InvalidArgumentError("no training logs given");
  std::vector<LogTimeline> timelines;
  std::vector<int32_t> first_attempt;  // per file, in the merged numbering
  int32_t attempts = 0;
  for (const std::string& path : paths) {
    StatusOr<LogTimeline> read_one = ReadTrainingLogFile(fs, path, read);
    // A file without step lines is wrong data (exit 1), not a wrong request.
    if (!read_one.ok() && read_one.status().code() == StatusCode::kInvalidArgument)
      return ParseError(read_one.status().message());
    MFU_ASSIGN_OR_RETURN(LogTimeline t, std::move(read_one));
    first_attempt.push_back(attempts);
    attempts += std::max<int32_t>(1, t.attempts);
    timelines.push_back(std::move(t));
  }
  MFU_ASSIGN_OR_RETURN(LogTimeline merged, MergeTrainingLogs(std::move(timelines)));
  MFU_ASSIGN_OR_RETURN(LogAnalysis a, AnalyzeTrainingLog(std::move(merged), hardware, request));
  for (LogFinding& f : a.findings) {
    size_t file = 0;
    if (f.attempt >= 0) {
      while (file + 1 < paths.size() && first_attempt[file + 1] <= f.attempt)
        ++file;
    }
    f.origin = paths[file];
  }
  for (const std::string& path : paths) {
    const bool needed = std::any_of(a.findings.begin(), a.findings.end(),
                                    [&path](const LogFinding& f) { return f.origin == path && f.line > 0; });
    if (!needed)
      continue;
    StatusOr<std::string> text = fs.ReadFile(path, kMaxEvidenceFileBytes);
    if (text.ok())
      AttachEvidence(*text, path, a.findings);
  }
  return a;
}

}  // namespace mfu
