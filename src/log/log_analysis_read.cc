// AnalyzeTrainingLogFiles: read, merge, analyze, attach the evidence lines.
// Its own file so that the analysis links without the readers.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mfu/log_analysis.h"

namespace mfu {
namespace {

constexpr uint64_t kChunkBytes = uint64_t{4} << 20;
constexpr size_t kMaxLineKept = 4096;  // evidence is <= 240 characters once ANSI codes are gone

// The newlines in `text`, eight bytes at a time (SWAR: a byte's high bit
// is set exactly where it was '\n', with no carry between bytes; the
// flags are summed bytewise and folded every 255 words).
int64_t CountNewlines(std::string_view text) {
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  constexpr uint64_t kNewlines = 0x0a0a0a0a0a0a0a0aULL;
  constexpr uint64_t kEvenBytes = 0x00ff00ff00ff00ffULL;
  auto fold = [](uint64_t bytes) {  // the sum of the eight byte counters
    const uint64_t pairs = (bytes & kEvenBytes) + ((bytes >> 8) & kEvenBytes);
    return static_cast<int64_t>((pairs * 0x0001000100010001ULL) >> 48);
  };
  int64_t n = 0;
  size_t i = 0;
  while (i + 8 <= text.size()) {
    uint64_t counters = 0;
    for (int k = 0; k < 255 && i + 8 <= text.size(); ++k, i += 8) {
      uint64_t word;
      std::memcpy(&word, text.data() + i, sizeof word);
      const uint64_t x = word ^ kNewlines;  // zero bytes at the newlines
      counters += (~(((x & kLow7) + kLow7) | x | kLow7)) >> 7;
    }
    n += fold(counters);
  }
  for (; i < text.size(); ++i)
    n += text[i] == '\n' ? 1 : 0;
  return n;
}

// Streams `path` through `fs` and hands the lines `findings` of that origin
// point at to AttachEvidence: memory stays at one chunk and the lines
// wanted, whatever the file's size. Stops after the last wanted line. A
// read error leaves the evidence empty (the analysis already succeeded).
void AttachEvidenceFromFile(const FileSystem& fs, const std::string& path, std::vector<LogFinding>& findings) {
  std::vector<int64_t> wanted;
  for (const LogFinding& f : findings) {
    if (f.origin == path && f.line > 0)
      wanted.push_back(f.line);
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  if (wanted.empty())
    return;
  // The wanted lines, renumbered 1..n into one small text.
  std::string picked, current;
  int64_t line = 1;
  size_t next = 0;
  auto end_line = [&]() {
    if (next < wanted.size() && wanted[next] == line) {
      picked += current;
      picked += '\n';
      ++next;
    }
    current.clear();
    ++line;
  };
  const Status done = InternalError("done");
  Status st = fs.ReadFileInChunks(path, kChunkBytes, [&](std::string_view chunk) {
    // A chunk ending before the next wanted line is only counted, not
    // split into lines: the lines before the evidence cost a word-wise scan.
    if (next < wanted.size() && wanted[next] > line) {
      const int64_t newlines = CountNewlines(chunk);
      if (line + newlines < wanted[next]) {
        line += newlines;
        return Status::Ok();
      }
    }
    size_t at = 0;
    while (at < chunk.size()) {
      const size_t nl = chunk.find('\n', at);
      const size_t end = nl == std::string_view::npos ? chunk.size() : nl;
      if (next < wanted.size() && wanted[next] == line && current.size() < kMaxLineKept)
        current.append(chunk.substr(at, std::min(end - at, kMaxLineKept - current.size())));
      if (nl == std::string_view::npos)
        break;
      end_line();
      if (next == wanted.size())
        return done;
      at = nl + 1;
    }
    return Status::Ok();
  });
  if (st.ok() && next < wanted.size() && !current.empty())
    end_line();  // a last line without a newline
  // Map the renumbered lines back.
  std::vector<LogFinding> view;
  std::vector<size_t> index;
  for (size_t i = 0; i < findings.size(); ++i) {
    if (findings[i].origin != path || findings[i].line <= 0)
      continue;
    const auto pos = std::lower_bound(wanted.begin(), wanted.end(), findings[i].line) - wanted.begin();
    LogFinding f;
    f.origin = path;
    f.line = static_cast<int64_t>(pos) + 1;
    view.push_back(std::move(f));
    index.push_back(i);
  }
  AttachEvidence(picked, path, view);
  for (size_t k = 0; k < view.size(); ++k)
    findings[index[k]].evidence = std::move(view[k].evidence);
}

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
  for (const std::string& path : paths)
    AttachEvidenceFromFile(fs, path, a.findings);
  return a;
}

}  // namespace mfu
