// ReadTrainingLog / ReadTrainingLogFile / TrainingLogReader: lines split
// with memchr, cleaned (log_line.h), the format detected by content
// (training-logs.md sec. 15) over the first lines, then every line handed to
// that format's parser. JSON documents (trainer_state.json, Bridge's golden
// values) go to a whole-document parser instead.

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "log/log_line.h"
#include "log/log_parser.h"
#include "mfu/training_log.h"

namespace mfu {
namespace log_internal {

using Factory = std::unique_ptr<FormatParser> (*)();

struct FactoryEntry {
  LogFormat format;
  Factory make;
};

// Detection and tie-break order: a more specific format first (Bridge
// prints the Megatron iteration line too; Megatron's progress.txt before
// either). The other frameworks' factories (torchtitan, HF Trainer and
// trainer_state.json, MaxText, nanoGPT, Composer, picotron) are added to
// this table by wt-logfmt on merge, one line each.
constexpr FactoryEntry kFactories[] = {
    {LogFormat::kMegatronProgress, &MakeMegatronProgressParser},
    {LogFormat::kMegatronBridge, &MakeMegatronBridgeParser},
    {LogFormat::kMegatronLm, &MakeMegatronLmParser},
    {LogFormat::kNemo2, &MakeNemo2Parser},
    {LogFormat::kDeepSpeed, &MakeDeepSpeedParser},
    {LogFormat::kTorchtitan, &MakeTorchtitanParser},
    {LogFormat::kHfTrainerState, &MakeHfTrainerStateParser},
    {LogFormat::kHfTrainer, &MakeHfTrainerParser},
    {LogFormat::kMaxText, &MakeMaxTextParser},
    {LogFormat::kNanoGpt, &MakeNanoGptParser},
    {LogFormat::kComposer, &MakeComposerParser},
    {LogFormat::kPicotron, &MakePicotronParser},
};

std::unique_ptr<FormatParser> MakeLogParser(LogFormat format) {
  for (const FactoryEntry& entry : kFactories) {
    if (entry.format == format)
      return entry.make();
  }
  return nullptr;
}

}  // namespace log_internal

namespace {

using log_internal::CleanLine;
using log_internal::FormatParser;
using log_internal::TimelineBuilder;

// Lines buffered for detection (replayed to the chosen parser); past this
// the best score-1 format is taken, or detection goes on without replay.
constexpr size_t kDetectBytes = size_t{16} << 20;
constexpr int64_t kDetectLines = 200'000;
// After the first decisive (score-2) line, lines still scanned so that a
// more specific format printed on the next lines can win.
constexpr int64_t kDetectSettleLines = 400;
// A physical line longer than this is cut (counted partial): bounded memory
// on a file without newlines.
constexpr size_t kMaxLineBytes = size_t{1} << 20;
// ReadTrainingLogFile's read size.
constexpr uint64_t kReadChunkBytes = uint64_t{4} << 20;
// Largest JSON document read whole (trainer_state.json and Bridge's golden
// values are KiBs to a few MiB). A bigger input that starts like JSON
// (a JSONL metrics file) is read as lines; a forced whole-document format
// is an error.
constexpr size_t kMaxDocumentBytes = size_t{64} << 20;

std::string FormatsTried() {
  std::string out;
  for (const auto& entry : log_internal::kFactories) {
    if (!out.empty())
      out += ", ";
    out += LogFormatId(entry.format);
  }
  return out;
}

}  // namespace

// The reader's state and its steps; one object per log.
struct TrainingLogReader::State {
  std::string origin;
  LogReadOptions options;
  TimelineBuilder builder;
  std::unique_ptr<FormatParser> parser;  // chosen (or forced) parser
  std::vector<std::unique_ptr<FormatParser>> candidates;
  std::array<int, static_cast<size_t>(LogFormat::kCount)> best_score{};
  std::string carry;  // a line that straddles chunks
  std::string scratch;
  int64_t line = 0;
  int64_t bytes = 0;
  // Detection buffer: raw lines (without '\n') joined by '\n'.
  std::string pending;
  int64_t pending_lines = 0;
  int64_t first_line_pending = 1;
  int64_t decisive_line = 0;  // the line of the first score-2 signature
  bool buffering = true;
  // JSON or lines: decided on the head of the input (the first line after
  // any blank ones, at most 4 KiB), the same for any chunking.
  bool decided_mode = false;
  std::string head;
  bool document = false;
  std::string document_text;
  Status error;

  State(std::string_view o, const LogReadOptions& opts) : origin(o), options(opts), builder(opts.max_steps) {}

  void MakeCandidates() {
    candidates.clear();
    for (const auto& entry : log_internal::kFactories)
      candidates.push_back(entry.make());
  }

  Status Feed(std::string_view chunk);
  Status FeedLines(std::string_view chunk);
  Status HandleLine(std::string_view raw);
  Status DetectLine(std::string_view raw, const CleanLine& clean);
  Status Replay();
  bool ChooseFormat(int min_score);
  Status DecideMode();
  Status CheckDocumentSize();
  Status FinishDocument(LogFormat& format);
  StatusOr<LogTimeline> Finish();
};

namespace {

Status CheckRefused(TimelineBuilder& builder) {
  const LogReadStats& st = builder.stats();
  if (st.step_lines - st.duplicate_lines > static_cast<int64_t>(builder.steps().size()))
    return OutOfRangeError("more than " + std::to_string(builder.steps().size()) +
                           " training steps (the limit; LogReadOptions::max_steps)");
  return Status::Ok();
}

// JSON when the first non-blank byte opens an object or array followed by
// a double-quoted key, a nested value or the end of the line ("{'loss':
// ...}" is HF's Python dict, read as lines).
bool LooksLikeJsonDocument(std::string_view head) {
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos || (head[i] != '{' && head[i] != '['))
    return false;
  ++i;
  while (i < head.size() && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r'))
    ++i;
  return i >= head.size() || head[i] == '"' || head[i] == '\n' || head[i] == '{' || head[i] == '}' || head[i] == '[' ||
         head[i] == ']';
}

// One cleaned line to the chosen parser; failures any format can show are
// matched when the parser did not want the line. A step the builder
// refused (past max_steps) shows as a step line neither kept nor a
// duplicate: kOutOfRange.
Status Dispatch(FormatParser& parser, TimelineBuilder& builder, const CleanLine& line) {
  if (line.text.empty())
    return Status::Ok();
  if (!parser.Consume(line, builder)) {
    log_internal::MatchFailureLine(line, kLogNaN, builder);
    return Status::Ok();
  }
  return CheckRefused(builder);
}

}  // namespace

TrainingLogReader::TrainingLogReader(std::string_view origin, const LogReadOptions& options)
    : state_(std::make_unique<State>(origin, options)) {
  State& s = *state_;
  if (options.format != LogFormat::kAuto) {
    s.parser = log_internal::MakeLogParser(options.format);
    if (s.parser == nullptr)
      s.error = UnsupportedError(s.origin + ": format '" + LogFormatId(options.format) +
                                 "' has no reader (formats: " + FormatsTried() + ")");
  } else {
    s.MakeCandidates();
  }
}

TrainingLogReader::~TrainingLogReader() = default;

Status TrainingLogReader::Feed(std::string_view chunk) {
  return state_->Feed(chunk);
}

StatusOr<LogTimeline> TrainingLogReader::Finish() {
  return state_->Finish();
}

Status TrainingLogReader::State::Replay() {
  std::string_view rest = pending;
  int64_t n = first_line_pending;
  for (int64_t i = 0; i < pending_lines; ++i, ++n) {
    size_t nl = rest.find('\n');
    std::string_view raw = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    MFU_RETURN_IF_ERROR(Dispatch(*parser, builder, log_internal::CleanLogLine(raw, n, scratch)));
  }
  pending.clear();
  pending.shrink_to_fit();
  pending_lines = 0;
  return Status::Ok();
}

bool TrainingLogReader::State::ChooseFormat(int min_score) {
  int best = 0;
  size_t index = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    int score = best_score[static_cast<size_t>(candidates[i]->format())];
    if (score > best) {
      best = score;
      index = i;
    }
  }
  if (best < min_score)
    return false;
  for (const auto& c : candidates) {
    if (best_score[static_cast<size_t>(c->format())] >= 2)
      builder.stats().formats_seen.emplace_back(LogFormatId(c->format()));
  }
  parser = std::move(candidates[index]);
  candidates.clear();
  return true;
}

Status TrainingLogReader::State::DetectLine(std::string_view raw, const CleanLine& clean) {
  if (!clean.text.empty()) {
    for (const auto& c : candidates) {
      int& best = best_score[static_cast<size_t>(c->format())];
      if (best < 2) {
        best = std::max(best, c->Signature(clean.text));
        if (best >= 2 && decisive_line == 0) {
          decisive_line = clean.line;
          buffering = true;  // after a full window of noise: keep from here
        }
      }
    }
  }
  if (buffering) {
    if (pending_lines == 0)
      first_line_pending = clean.line;
    pending.append(raw.data(), raw.size());
    pending.push_back('\n');
    ++pending_lines;
  }
  const bool settled = decisive_line > 0 && clean.line - decisive_line >= kDetectSettleLines;
  const bool full = pending.size() > kDetectBytes || pending_lines > kDetectLines;
  if (settled || (full && buffering)) {
    if (ChooseFormat(settled ? 2 : 1))
      return buffering ? Replay() : Status::Ok();
    // Nothing known yet: keep looking, without holding the lines.
    buffering = false;
    pending.clear();
    pending.shrink_to_fit();
    pending_lines = 0;
  }
  return Status::Ok();
}

Status TrainingLogReader::State::HandleLine(std::string_view raw) {
  ++line;
  if (raw.size() > kMaxLineBytes) {
    raw = raw.substr(0, kMaxLineBytes);
    builder.CountPartial();
  }
  CleanLine clean = log_internal::CleanLogLine(raw, line, scratch);
  if (parser != nullptr)
    return Dispatch(*parser, builder, clean);
  return DetectLine(raw, clean);
}

Status TrainingLogReader::State::FeedLines(std::string_view chunk) {
  while (!chunk.empty()) {
    const void* nl = std::memchr(chunk.data(), '\n', chunk.size());
    if (nl == nullptr) {
      if (carry.size() <= kMaxLineBytes)
        carry.append(chunk.data(), std::min(chunk.size(), kMaxLineBytes + 1 - carry.size()));
      return Status::Ok();
    }
    const size_t n = static_cast<size_t>(static_cast<const char*>(nl) - chunk.data());
    Status st;
    if (!carry.empty()) {
      if (carry.size() <= kMaxLineBytes)
        carry.append(chunk.data(), std::min(n, kMaxLineBytes + 1 - carry.size()));
      st = HandleLine(carry);
      carry.clear();
    } else {
      st = HandleLine(chunk.substr(0, n));
    }
    MFU_RETURN_IF_ERROR(st);
    chunk.remove_prefix(n + 1);
  }
  return Status::Ok();
}

Status TrainingLogReader::State::DecideMode() {
  decided_mode = true;
  document = LooksLikeJsonDocument(head) && (parser == nullptr || parser->WholeDocument());
  std::string text = std::move(head);
  head.clear();
  if (document) {
    document_text = std::move(text);
    return CheckDocumentSize();
  }
  return FeedLines(text);
}

Status TrainingLogReader::State::CheckDocumentSize() {
  if (document_text.size() <= kMaxDocumentBytes)
    return Status::Ok();
  if (parser != nullptr)
    return InvalidArgumentError("JSON document larger than " + FormatByteLimit(kMaxDocumentBytes));
  document = false;
  std::string text = std::move(document_text);
  document_text.clear();
  return FeedLines(text);
}

Status TrainingLogReader::State::Feed(std::string_view chunk) {
  if (!error.ok())
    return error;
  bytes += static_cast<int64_t>(chunk.size());
  Status st;
  if (!decided_mode) {
    head.append(chunk.data(), chunk.size());
    const size_t first = head.find_first_not_of(" \t\r\n");
    if (head.size() < 4096 && (first == std::string::npos || head.find('\n', first) == std::string::npos))
      return Status::Ok();
    st = DecideMode();
  } else if (document) {
    document_text.append(chunk.data(), chunk.size());
    st = CheckDocumentSize();
  } else {
    st = FeedLines(chunk);
  }
  if (!st.ok())
    error = st.WithPrefix(origin);
  return error;
}

Status TrainingLogReader::State::FinishDocument(LogFormat& format) {
  std::vector<std::unique_ptr<FormatParser>> tries;
  if (parser != nullptr) {
    tries.push_back(std::move(parser));
  } else {
    std::string_view head_text = std::string_view(document_text).substr(0, 65536);
    int best = 0;
    for (auto& c : candidates) {
      if (!c->WholeDocument())
        continue;
      int score = c->Signature(head_text);
      if (score > best) {
        best = score;
        tries.clear();
      }
      if (score > 0 && score == best)
        tries.push_back(std::move(c));
    }
  }
  if (!tries.empty()) {
    FormatParser& chosen = *tries.front();
    MFU_RETURN_IF_ERROR(chosen.ConsumeDocument(document_text, origin, builder));
    MFU_RETURN_IF_ERROR(CheckRefused(builder));
    format = chosen.format();
    builder.stats().formats_seen.emplace_back(LogFormatId(format));
    return Status::Ok();
  }
  // Not a document any parser knows: read it as lines after all.
  MakeCandidates();
  document = false;
  std::string text = std::move(document_text);
  document_text.clear();
  return FeedLines(text);
}

StatusOr<LogTimeline> TrainingLogReader::State::Finish() {
  if (!error.ok())
    return error;
  LogFormat format = LogFormat::kAuto;
  Status st;
  if (!decided_mode)
    st = DecideMode();
  if (st.ok() && document)
    st = FinishDocument(format);
  if (st.ok() && !document) {
    if (!carry.empty()) {
      std::string last = std::move(carry);
      carry.clear();
      st = HandleLine(last);
    }
    if (st.ok() && parser == nullptr && ChooseFormat(1))
      st = buffering ? Replay() : Status::Ok();
    if (st.ok() && parser != nullptr) {
      parser->Finish(builder);
      st = CheckRefused(builder);
      format = parser->format();
    }
  }
  if (!st.ok())
    return st.WithPrefix(origin);
  builder.stats().bytes = bytes;
  builder.stats().lines = line;
  if (builder.steps().empty()) {
    std::string tried = options.format == LogFormat::kAuto ? FormatsTried() : LogFormatId(options.format);
    // A format whose header lines were seen (score 1) is named: the log is
    // probably that framework's, cut before its first step line.
    if (options.format == LogFormat::kAuto && parser != nullptr)
      tried += std::string("; closest: ") + LogFormatId(parser->format()) + ", header lines but no step line";
    return InvalidArgumentError(origin + ": no training step lines found (formats tried: " + tried + ")");
  }
  return builder.Take(origin, format);
}

StatusOr<LogTimeline> ReadTrainingLog(std::string_view text, std::string_view origin, const LogReadOptions& options) {
  TrainingLogReader reader(origin, options);
  MFU_RETURN_IF_ERROR(reader.Feed(text));
  return reader.Finish();
}

StatusOr<LogTimeline> ReadTrainingLogFile(const FileSystem& fs, const std::string& path,
                                          const LogReadOptions& options) {
  TrainingLogReader reader(path, options);
  MFU_RETURN_IF_ERROR(
      fs.ReadFileInChunks(path, kReadChunkBytes, [&](std::string_view chunk) { return reader.Feed(chunk); }));
  return reader.Finish();
}

}  // namespace mfu
