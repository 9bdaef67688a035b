#pragma once

// The reader's internal vocabulary: one FormatParser per framework, fed
// cleaned lines (launcher prefixes, ANSI codes and tqdm redraws removed by
// log_line.h), writing into one TimelineBuilder that removes other ranks'
// duplicates and starts a new attempt at a restart. Adding a format: a
// <framework>_parser.cc with a Make...Parser() factory, listed in
// MakeLogParser (log_reader.cc) and in detection order.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/status.h"
#include "mfu/training_log.h"

namespace mfu::log_internal {

// One physical line after cleaning. `text` has the framework's own text
// (logger prefixes such as "[titan] <ts> - root - INFO - " are the parser's
// to handle, because they carry timestamps); `rank` is the launcher prefix
// that was removed ("1:", "[default3]:", "(pretraining, pid=4112)", "" when
// none), used to keep one rank's lines.
struct CleanLine {
  std::string_view text;
  std::string_view rank;
  std::string_view raw;  // the physical line as read (without the newline), for findings' evidence
  int64_t line = 0;      // 1-based
};

class TimelineBuilder;

class FormatParser {
 public:
  virtual ~FormatParser() = default;
  virtual LogFormat format() const = 0;
  // Detection by content: 2 = a step line of this format (decisive), 1 = a
  // header line typical of it, 0 = not this format. Cheap: called on the
  // first lines until a format scores 2.
  virtual int Signature(std::string_view text) const = 0;
  // Reads one cleaned line (a step, a header field, an event); false when
  // the line means nothing to this format.
  virtual bool Consume(const CleanLine& line, TimelineBuilder& out) = 0;
  // After the last line: flush a pending multi-line record.
  virtual void Finish(TimelineBuilder& out) { (void)out; }
  // Formats that are one JSON document (trainer_state.json, Bridge's golden
  // values) read the whole text instead of lines.
  virtual bool WholeDocument() const { return false; }
  virtual Status ConsumeDocument(std::string_view text, std::string_view origin, TimelineBuilder& out) {
    (void)text;
    (void)origin;
    (void)out;
    return Status::Ok();
  }
};

// Factories, one per format (each in its <framework>_parser.cc).
std::unique_ptr<FormatParser> MakeMegatronLmParser();
std::unique_ptr<FormatParser> MakeMegatronBridgeParser();
std::unique_ptr<FormatParser> MakeMegatronProgressParser();
std::unique_ptr<FormatParser> MakeNemo2Parser();
std::unique_ptr<FormatParser> MakeTorchtitanParser();
std::unique_ptr<FormatParser> MakeDeepSpeedParser();
std::unique_ptr<FormatParser> MakeHfTrainerParser();
std::unique_ptr<FormatParser> MakeHfTrainerStateParser();
std::unique_ptr<FormatParser> MakeMaxTextParser();
std::unique_ptr<FormatParser> MakeNanoGptParser();
std::unique_ptr<FormatParser> MakeComposerParser();
std::unique_ptr<FormatParser> MakePicotronParser();
// The parser of `format` (not kAuto).
std::unique_ptr<FormatParser> MakeLogParser(LogFormat format);

// Collects what the parsers read. Keeps one rank: the first rank prefix to
// print a step line wins (Megatron prints on the last rank only, so that is
// the one seen); another rank's line for a step already kept is a
// duplicate, counted and dropped. A step id lower than the last kept one (or
// a NewAttempt after steps) starts a new attempt.
class TimelineBuilder {
 public:
  explicit TimelineBuilder(int64_t max_steps);
  LogHeader& header() { return header_; }
  const LogHeader& header() const { return header_; }
  // kOutOfRange once more than max_steps steps were added.
  Status AddStep(LogStep step, std::string_view rank);
  void AddEvent(LogEvent event);
  // A new run header (banner, "Starting job", argument dump) after steps.
  void NewAttempt(int64_t line);
  void CountPartial() { ++stats_.partial_lines; }
  void CountHeader() { ++stats_.header_lines; }
  int32_t attempt() const { return attempt_; }
  const std::vector<LogStep>& steps() const { return steps_; }
  std::vector<LogStep>& mutable_steps() { return steps_; }
  LogReadStats& stats() { return stats_; }
  // Moves everything into a timeline.
  LogTimeline Take(std::string_view origin, LogFormat format);

 private:
  int64_t max_steps_;
  LogHeader header_;
  std::vector<LogStep> steps_;
  std::vector<LogEvent> events_;
  LogReadStats stats_;
  int32_t attempt_ = 0;
  std::string chosen_rank_;
  bool rank_chosen_ = false;
  std::vector<std::string> ranks_;  // distinct prefixes seen on step lines (<= 4096 kept)
};

// Numbers as logs print them: "6,785", "1.234e+04", "2.05K" (K/M/B/T/G
// suffixes, powers of 1000), "39.73%" (-> 39.73: the caller knows it is a
// percent), "nan", "inf", "-1". nullopt for anything else.
std::optional<double> ParseLogNumber(std::string_view text);
// "2024-07-16 22:14:01", with ".123456" or ",441" fractions, "2025-09-11
// 14:09:46,954794", "20251202 09:12:08", ISO "2024-07-16T22:14:01Z": seconds
// since the epoch, read as UTC. nullopt when not a timestamp.
std::optional<double> ParseLogTimestamp(std::string_view text);

}  // namespace mfu::log_internal
