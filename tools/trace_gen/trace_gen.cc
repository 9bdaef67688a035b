// trace_gen: writes realistic multi-rank PyTorch profiler (Kineto) traces of
// any size by tiling a real trace in time, the construction behind HTA's
// 476 MB speed case (shared/reference/hta-reference-outputs.md).
//
//   trace_gen --source FILE (--repeat K | --target-bytes B) [--ranks N]
//             --out DIR|FILE [--gzip] [--seed S] [--gap-us G]
//
// Each rank file holds the source's header (deviceProperties and the other
// top-level keys, distributedInfo rewritten for the rank) and K copies of the
// source's events. Copy k is shifted by k * period, period = the source's span
// (first ts to last end, whole microseconds) + the gap, plus a per-rank skew of
// 0-49 us drawn from the seed. Ids that link events are offset per copy by
// `stride` = (largest id in the source) + 1, so links stay intact inside a copy
// and never collide across copies:
//   correlation, flow "id" (s/f/t), wait_on_cuda_event_record_corr_id: one stride
//   "External id" / "external id": one stride
//   "Sequence number", "Seq", "Python id" / "Python parent id": one stride each
// Only positive integer ids are offset (Kineto writes 0 or -1 for "none").
// ProfilerStep#N becomes ProfilerStep#(N + k * steps in the source). Metadata
// (M) events name tracks and are written once, not per copy.
//
// The output is streamed (memory: the parsed source plus a 1 MiB buffer), in
// Kineto's layout: one event per 4-7 lines. Floats keep their source text, so
// 19-digit timestamps stay exact.
#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/status.h"
#include "mfu/trace.h"

namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kUsage =
    "usage: trace_gen --source FILE (--repeat K | --target-bytes B) [--ranks N]\n"
    "                 --out DIR|FILE [--gzip] [--seed S] [--gap-us G]\n"
    "  --source FILE      a Kineto trace (.json or .json.gz)\n"
    "  --repeat K         copies of the source's events per rank\n"
    "  --target-bytes B   copies until a rank file holds B bytes of JSON (suffix k, M, G: 1e3, 1e6, 1e9)\n"
    "  --ranks N          rank files to write [default: 1]\n"
    "  --out DIR|FILE     a directory (rank<r>.pt.trace.json[.gz]) or, with one rank, a *.json[.gz] file\n"
    "  --gzip             compress the output (zlib) [default: only for a *.gz FILE]\n"
    "  --seed S           seed of the per-rank skew [default: 1]\n"
    "  --gap-us G         idle time between copies, in microseconds [default: 1000]\n";

struct Options {
  std::string source;
  int64_t repeat = 0;
  uint64_t target_bytes = 0;
  int64_t ranks = 1;
  std::string out;
  bool gzip = false;
  uint64_t seed = 1;
  int64_t gap_us = 1000;
};

// ---------------------------------------------------------------------------
// Reading: a DOM whose floats keep their source text. nlohmann stores floats
// as doubles, which cannot hold "1712195495505582.988"; the text is kept in a
// binary value instead (JSON text never produces one, so the marker is
// unambiguous) and written back verbatim.

class RawDomBuilder {
 public:
  explicit RawDomBuilder(Json& root) : root_(root) {}

  bool null() { return Put(Json(nullptr)); }
  bool boolean(bool b) { return Put(Json(b)); }
  bool number_integer(Json::number_integer_t i) { return Put(Json(i)); }
  bool number_unsigned(Json::number_unsigned_t u) { return Put(Json(u)); }
  bool number_float(Json::number_float_t, const std::string& text) {
    return Put(Json::binary(std::vector<uint8_t>(text.begin(), text.end())));
  }
  bool string(std::string& s) { return Put(Json(std::move(s))); }
  bool binary(Json::binary_t& b) { return Put(Json::binary(std::move(b))); }
  bool start_object(size_t) {
    stack_.push_back(Place(Json::object()));
    return true;
  }
  bool key(std::string& k) {
    key_ = std::move(k);
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(size_t) {
    stack_.push_back(Place(Json::array()));
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception& e) {
    error_ = "byte " + std::to_string(position) + ": " + e.what();
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  // Stores `v` in the current container and returns where it now lives.
  Json* Place(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    Json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }
  bool Put(Json v) {
    Place(std::move(v));
    return true;
  }

  Json& root_;
  std::vector<Json*> stack_;
  std::string key_;
  std::string error_;
};

std::string_view RawText(const Json& v) {
  const auto& bytes = v.get_binary();
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// A number's value in microseconds (double: only used for the span).
bool NumberValue(const Json& v, double& out) {
  if (v.is_number()) {
    out = v.get<double>();
    return true;
  }
  if (v.is_binary()) {
    std::string text(RawText(v));
    char* end = nullptr;
    out = std::strtod(text.c_str(), &end);
    return end != text.c_str() && std::isfinite(out);
  }
  return false;
}

// ---------------------------------------------------------------------------
// What tiling needs to know about the source.

enum IdGroup : uint8_t { kCorrelation, kExternal, kSequence, kCollectiveSeq, kPython, kNumIdGroups };

// The id args offset per copy, and their group.
bool IdGroupOf(std::string_view arg, IdGroup& group) {
  static constexpr std::pair<std::string_view, IdGroup> kIds[] = {
      {"correlation", kCorrelation},  {"wait_on_cuda_event_record_corr_id", kCorrelation},
      {"External id", kExternal},     {"external id", kExternal},
      {"Sequence number", kSequence}, {"Seq", kCollectiveSeq},
      {"Python id", kPython},         {"Python parent id", kPython}};
  for (const auto& [name, g] : kIds) {
    if (arg == name) {
      group = g;
      return true;
    }
  }
  return false;
}

bool IsFlow(const Json& event) {
  auto ph = event.find("ph");
  return ph != event.end() && ph->is_string() && (*ph == "s" || *ph == "f" || *ph == "t");
}

bool IsMetadata(const Json& event) {
  auto ph = event.find("ph");
  return ph != event.end() && ph->is_string() && *ph == "M";
}

// N in "ProfilerStep#N", or -1.
int64_t ProfilerStepNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!name.starts_with(kPrefix) || name.size() == kPrefix.size() || name.size() > kPrefix.size() + 15)
    return -1;
  int64_t n = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (c < '0' || c > '9')
      return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

struct SourceInfo {
  int64_t period_us = 0;                 // span + gap
  int64_t id_stride[kNumIdGroups] = {};  // largest id + 1 (0: none seen)
  int64_t step_stride = 0;               // steps in the source
};

void NoteId(const Json& v, int64_t& stride) {
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    stride = std::max(stride, v.get<int64_t>() + 1);
  } else if (v.is_number_unsigned() && v.get<uint64_t>() < (uint64_t{1} << 62)) {
    stride = std::max(stride, static_cast<int64_t>(v.get<uint64_t>()) + 1);
  }
}

mfu::StatusOr<SourceInfo> Analyse(const Json& events, int64_t gap_us) {
  SourceInfo info;
  double first = INFINITY, last = -INFINITY;
  int64_t min_step = INT64_MAX, max_step = -1;
  for (const Json& e : events) {
    if (!e.is_object())
      continue;
    double ts = 0, dur = 0;
    if (auto it = e.find("ts"); it != e.end() && NumberValue(*it, ts) && !IsMetadata(e)) {
      if (auto d = e.find("dur"); d == e.end() || !NumberValue(*d, dur) || dur < 0)
        dur = 0;
      first = std::min(first, ts);
      last = std::max(last, ts + dur);
    }
    if (auto it = e.find("name"); it != e.end() && it->is_string()) {
      int64_t step = ProfilerStepNumber(it->get_ref<const std::string&>());
      if (step >= 0) {
        min_step = std::min(min_step, step);
        max_step = std::max(max_step, step);
      }
    }
    if (auto it = e.find("id"); it != e.end() && IsFlow(e))
      NoteId(*it, info.id_stride[kCorrelation]);
    if (auto args = e.find("args"); args != e.end() && args->is_object()) {
      for (const auto& [key, value] : args->items()) {
        IdGroup group;
        if (IdGroupOf(key, group))
          NoteId(value, info.id_stride[group]);
      }
    }
  }
  if (!(first <= last))
    return mfu::ParseError("the source has no event with a numeric 'ts'");
  info.period_us = static_cast<int64_t>(std::ceil(last - first)) + 1 + gap_us;
  if (max_step >= 0)
    info.step_stride = max_step - min_step + 1;
  return info;
}

// ---------------------------------------------------------------------------
// Writing.

// A buffered output file, plain or gzip; counts the JSON bytes written.
class Sink {
 public:
  static mfu::StatusOr<std::unique_ptr<Sink>> Open(const std::string& path, bool gzip) {
    auto sink = std::unique_ptr<Sink>(new Sink(path));
    if (gzip) {
      sink->gz_ = gzopen(path.c_str(), "wb6");
      if (sink->gz_ != nullptr)
        gzbuffer(sink->gz_, 1u << 20);
    } else {
      sink->file_ = std::fopen(path.c_str(), "wb");
    }
    if (sink->gz_ == nullptr && sink->file_ == nullptr) {
      return mfu::NotFoundError(path + ": cannot create (" + std::strerror(errno) + ")");
    }
    return sink;
  }
  ~Sink() { (void)Close(); }

  std::string& buffer() { return buffer_; }
  // Writes the buffer out once it is large.
  void MaybeFlush() {
    if (buffer_.size() >= kFlushBytes)
      Flush();
  }
  uint64_t bytes() const { return written_ + buffer_.size(); }

  mfu::Status Close() {
    Flush();
    if (file_ != nullptr && std::fclose(file_) != 0)
      failed_ = true;
    if (gz_ != nullptr && gzclose(gz_) != Z_OK)
      failed_ = true;
    file_ = nullptr;
    gz_ = nullptr;
    return failed_ ? mfu::NotFoundError(path_ + ": write failed") : mfu::Status::Ok();
  }

 private:
  static constexpr size_t kFlushBytes = 1u << 20;
  explicit Sink(std::string path) : path_(std::move(path)) {}
  void Flush() {
    if (buffer_.empty())
      return;
    if (file_ != nullptr && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size())
      failed_ = true;
    if (gz_ != nullptr && gzwrite(gz_, buffer_.data(), static_cast<unsigned>(buffer_.size())) <= 0)
      failed_ = true;
    written_ += buffer_.size();
    buffer_.clear();
  }

  std::string path_;
  std::FILE* file_ = nullptr;
  gzFile gz_ = nullptr;
  std::string buffer_;
  uint64_t written_ = 0;
  bool failed_ = false;
};

void AppendString(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escape[8];
          std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
          out += escape;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

// Compact JSON as Kineto writes nested values: {"a": 1, "b": [2, 3]}.
void AppendValue(std::string& out, const Json& v) {
  switch (v.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : v.items()) {
        if (!first)
          out += ", ";
        first = false;
        AppendString(out, key);
        out += ": ";
        AppendValue(out, value);
      }
      out += '}';
      return;
    }
    case Json::value_t::array: {
      out += '[';
      for (size_t i = 0; i < v.size(); ++i) {
        if (i > 0)
          out += ", ";
        AppendValue(out, v[i]);
      }
      out += ']';
      return;
    }
    case Json::value_t::string:
      AppendString(out, v.get_ref<const std::string&>());
      return;
    case Json::value_t::binary:
      out += RawText(v);
      return;
    default:
      out += v.dump();
      return;
  }
}

// Everything that differs between copies and ranks.
struct CopyContext {
  int64_t copy = 0;
  int64_t rank = 0;
  int64_t shift_us = 0;  // copy * period + rank skew
  const SourceInfo* info = nullptr;
};

// `v` + `offset`, if `v` is an integer (positive when `positive_only`).
bool AppendOffsetInt(std::string& out, const Json& v, int64_t offset, bool positive_only) {
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    const int64_t x = v.get<int64_t>();
    int64_t y = 0;
    if ((positive_only && x <= 0) || __builtin_add_overflow(x, offset, &y))
      return false;
    out += std::to_string(y);
    return true;
  }
  if (v.is_number_unsigned()) {
    const uint64_t x = v.get<uint64_t>();
    if (offset < 0 || (positive_only && x == 0) || x > UINT64_MAX - static_cast<uint64_t>(offset))
      return false;
    out += std::to_string(x + static_cast<uint64_t>(offset));
    return true;
  }
  return false;
}

// A timestamp shifted by whole microseconds, keeping its notation: integers
// stay integers, "123.456" keeps its fraction digits exactly.
void AppendShiftedTs(std::string& out, const Json& v, int64_t shift_us) {
  if (AppendOffsetInt(out, v, shift_us, /*positive_only=*/false))
    return;
  if (!v.is_binary()) {
    AppendValue(out, v);
    return;
  }
  const std::string_view text = RawText(v);
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const bool plain =
      !whole.empty() && whole.size() <= 18 && whole.find_first_not_of("0123456789") == std::string_view::npos &&
      (dot == std::string_view::npos || text.find_first_not_of("0123456789", dot + 1) == std::string_view::npos);
  if (plain) {
    out += std::to_string(std::stoll(std::string(whole)) + shift_us);
    if (dot != std::string_view::npos)
      out += text.substr(dot);
    return;
  }
  double ts = 0;
  NumberValue(v, ts);  // exponent or negative: through a double
  char text_out[40];
  std::snprintf(text_out, sizeof text_out, "%.3f", ts + static_cast<double>(shift_us));
  out += text_out;
}

void AppendArgs(std::string& out, const Json& args, const CopyContext& ctx) {
  if (args.empty()) {
    out += "{}";
    return;
  }
  out += "{\n      ";
  bool first = true;
  for (const auto& [key, value] : args.items()) {
    if (!first)
      out += ", ";
    first = false;
    AppendString(out, key);
    out += ": ";
    IdGroup group;
    if (IdGroupOf(key, group) &&
        AppendOffsetInt(out, value, ctx.copy * ctx.info->id_stride[group], /*positive_only=*/true)) {
      continue;
    }
    if (key == "Rank" && value.is_number_integer()) {  // record_param_comms: this rank
      out += std::to_string(ctx.rank);
      continue;
    }
    AppendValue(out, value);
  }
  out += "\n    }";
}

void AppendField(std::string& out, const std::string& key, const Json& value, bool flow, const CopyContext& ctx) {
  AppendString(out, key);
  out += ": ";
  if (key == "ts") {
    AppendShiftedTs(out, value, ctx.shift_us);
    return;
  }
  if (key == "args" && value.is_object()) {
    AppendArgs(out, value, ctx);
    return;
  }
  if (key == "id" && flow &&
      AppendOffsetInt(out, value, ctx.copy * ctx.info->id_stride[kCorrelation], /*positive_only=*/true)) {
    return;
  }
  const int64_t step =
      value.is_string() && key == "name" ? ProfilerStepNumber(value.get_ref<const std::string&>()) : -1;
  if (step >= 0) {
    AppendString(out, "ProfilerStep#" + std::to_string(step + ctx.copy * ctx.info->step_stride));
    return;
  }
  AppendValue(out, value);
}

// One event in Kineto's layout: fields in source order, a line break before
// "ts" and before "args".
void AppendEvent(std::string& out, const Json& event, const CopyContext& ctx) {
  if (!event.is_object()) {
    out += "  ";
    AppendValue(out, event);
    return;
  }
  const bool flow = IsFlow(event);
  out += "  {\n    ";
  bool first = true;
  for (const auto& [key, value] : event.items()) {
    if (!first)
      out += (key == "ts" || key == "args") ? ",\n    " : ", ";
    first = false;
    AppendField(out, key, value, flow, ctx);
  }
  out += "\n  }";
}

// distributedInfo for `rank` of `ranks`: every process group spans all ranks.
Json RankInfo(const Json* source, int64_t rank, int64_t ranks) {
  Json info = source != nullptr && source->is_object() ? *source : Json::object();
  if (!info.contains("backend"))
    info["backend"] = "nccl";
  info["rank"] = rank;
  info["world_size"] = ranks;
  if (auto pg = info.find("pg_config"); pg != info.end() && pg->is_array()) {
    Json all = Json::array();
    for (int64_t r = 0; r < ranks; ++r)
      all.push_back(r);
    for (Json& group : *pg) {
      if (!group.is_object())
        continue;
      group["ranks"] = all;
      group["pg_size"] = ranks;
    }
  }
  return info;
}

void AppendHeaderValue(std::string& out, const Json& value) {
  const bool rows = value.is_array() && !value.empty() && value[0].is_object();
  if (!rows) {
    AppendValue(out, value);
    return;
  }
  out += "[\n";
  for (size_t i = 0; i < value.size(); ++i) {
    out += "    ";
    AppendValue(out, value[i]);
    out += i + 1 < value.size() ? ",\n" : "\n";
  }
  out += "  ]";
}

struct RankResult {
  int64_t copies = 0;
  uint64_t events = 0;
  uint64_t bytes = 0;
};

// Writes one rank file. `copies` > 0 writes that many; 0 writes copies until
// `target_bytes`.
mfu::StatusOr<RankResult> WriteRank(const std::string& path, const Json& root, const Json& events,
                                    const SourceInfo& info, const Options& options, int64_t rank, int64_t copies) {
  MFU_ASSIGN_OR_RETURN(std::unique_ptr<Sink> sink, Sink::Open(path, options.gzip));
  std::mt19937_64 rng(options.seed * 1000003u + static_cast<uint64_t>(rank));
  const int64_t skew_us = static_cast<int64_t>(rng() % 50);
  const Json* dist = root.is_object() && root.contains("distributedInfo") ? &root["distributedInfo"] : nullptr;
  std::string& out = sink->buffer();
  out += "{\n";
  bool first = true;
  auto key_line = [&](const std::string& key) {
    out += first ? "  " : ",\n  ";
    first = false;
    AppendString(out, key);
    out += ": ";
  };
  RankResult result;
  auto write_events = [&]() {
    if (dist == nullptr) {
      key_line("distributedInfo");
      AppendValue(out, RankInfo(nullptr, rank, options.ranks));
    }
    key_line("traceEvents");
    out += "[\n";
    bool first_event = true;
    for (int64_t copy = 0; copies > 0 ? copy < copies : sink->bytes() < options.target_bytes; ++copy) {
      const CopyContext ctx{copy, rank, copy * info.period_us + skew_us, &info};
      for (const Json& e : events) {
        if (copy > 0 && IsMetadata(e))
          continue;
        if (!first_event)
          out += ",\n";
        first_event = false;
        AppendEvent(out, e, ctx);
        ++result.events;
        sink->MaybeFlush();
      }
      result.copies = copy + 1;
    }
    out += "\n  ]";
  };
  if (root.is_array()) {
    key_line("schemaVersion");
    out += "1";
    write_events();
  } else {
    for (const auto& [key, value] : root.items()) {
      if (key == "traceEvents") {
        write_events();
        continue;
      }
      key_line(key);
      if (key == "distributedInfo") {
        AppendValue(out, RankInfo(&value, rank, options.ranks));
      } else if (key == "traceName") {
        AppendString(out, path);
      } else {
        AppendHeaderValue(out, value);
      }
    }
  }
  out += "\n}\n";
  result.bytes = sink->bytes();
  MFU_RETURN_IF_ERROR(sink->Close());
  return result;
}

// ---------------------------------------------------------------------------
// Command line.

bool ParseCount(std::string_view text, uint64_t& out) {
  uint64_t scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k':
      case 'K':
        scale = 1000;
        break;
      case 'M':
        scale = 1000 * 1000;
        break;
      case 'G':
        scale = 1000 * 1000 * 1000;
        break;
      default:
        break;
    }
    if (scale != 1)
      text.remove_suffix(1);
  }
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string_view::npos)
    return false;
  out = std::stoull(std::string(text)) * scale;
  return true;
}

mfu::StatusOr<Options> ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    const size_t eq = arg.find('=');
    const bool has_value = eq != std::string::npos;
    if (has_value) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    if (arg == "--gzip") {
      o.gzip = true;
      continue;
    }
    if (arg == "--help" || arg == "-h")
      return mfu::InvalidArgumentError("help");
    if (!has_value) {
      if (i + 1 >= argc)
        return mfu::InvalidArgumentError(arg + " needs a value");
      value = argv[++i];
    }
    uint64_t n = 0;
    const bool numeric = ParseCount(value, n);
    if (arg == "--source") {
      o.source = value;
    } else if (arg == "--out") {
      o.out = value;
    } else if (arg == "--repeat" && numeric && n > 0 && n < (1u << 20)) {
      o.repeat = static_cast<int64_t>(n);
    } else if (arg == "--target-bytes" && numeric && n > 0) {
      o.target_bytes = n;
    } else if (arg == "--ranks" && numeric && n > 0 && n <= 4096) {
      o.ranks = static_cast<int64_t>(n);
    } else if (arg == "--seed" && numeric) {
      o.seed = n;
    } else if (arg == "--gap-us" && numeric && n < (1u << 30)) {
      o.gap_us = static_cast<int64_t>(n);
    } else {
      return mfu::InvalidArgumentError("bad option or value: " + arg + " " + value);
    }
  }
  if (o.source.empty() || o.out.empty())
    return mfu::InvalidArgumentError("--source and --out are required");
  if ((o.repeat > 0) == (o.target_bytes > 0)) {
    return mfu::InvalidArgumentError("give exactly one of --repeat and --target-bytes");
  }
  return o;
}

bool IsFilePath(const std::string& out) {
  return out.ends_with(".json") || out.ends_with(".json.gz");
}

mfu::Status Run(Options options) {
  const bool single_file = IsFilePath(options.out);
  if (single_file && options.ranks != 1) {
    return mfu::InvalidArgumentError("--out " + options.out + " is a file: give a directory for " +
                                     std::to_string(options.ranks) + " ranks");
  }
  if (single_file && options.out.ends_with(".gz"))
    options.gzip = true;
  MFU_ASSIGN_OR_RETURN(std::string text, mfu::ReadTraceBytes(mfu::RealFileSystem(), options.source));
  Json root;
  RawDomBuilder builder(root);
  if (!Json::sax_parse(text, &builder))
    return mfu::ParseError(options.source + ": " + builder.error());
  text = std::string();  // release the text before writing
  const Json* events = &root;
  if (root.is_object()) {
    auto it = root.find("traceEvents");
    if (it == root.end() || !it->is_array())
      return mfu::ParseError(options.source + ": no traceEvents array");
    events = &*it;
  } else if (!root.is_array()) {
    return mfu::ParseError(options.source + ": not a trace (neither an object nor an array)");
  }
  MFU_ASSIGN_OR_RETURN(SourceInfo info, Analyse(*events, options.gap_us));
  if (!single_file) {
    std::error_code ec;
    std::filesystem::create_directories(options.out, ec);
    if (ec)
      return mfu::NotFoundError(options.out + ": cannot create directory (" + ec.message() + ")");
  }
  int64_t copies = options.repeat;
  for (int64_t rank = 0; rank < options.ranks; ++rank) {
    const std::string path = single_file
                                 ? options.out
                                 : (std::filesystem::path(options.out) /
                                    ("rank" + std::to_string(rank) + ".pt.trace.json" + (options.gzip ? ".gz" : "")))
                                       .string();
    MFU_ASSIGN_OR_RETURN(RankResult r, WriteRank(path, root, *events, info, options, rank, copies));
    copies = r.copies;  // every rank gets as many copies as rank 0
    std::printf("%s: %lld copies, %llu events, %.1f MB of JSON (period %lld us)\n", path.c_str(),
                static_cast<long long>(r.copies), static_cast<unsigned long long>(r.events),
                static_cast<double>(r.bytes) / 1e6, static_cast<long long>(info.period_us));
  }
  return mfu::Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  mfu::StatusOr<Options> options = ParseArgs(argc, argv);
  if (!options.ok()) {
    if (options.status().message() == "help") {
      std::fputs(kUsage.data(), stdout);
      return 0;
    }
    std::fprintf(stderr, "trace_gen: %s\n%s", options.status().message().c_str(), kUsage.data());
    return 2;
  }
  mfu::Status status = Run(*options);
  if (!status.ok()) {
    std::fprintf(stderr, "trace_gen: %s\n", status.message().c_str());
    return status.code() == mfu::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}
