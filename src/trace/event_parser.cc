#include "trace/event_parser.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace mfu::trace {
namespace {

using simdjson::ondemand::json_type;
using simdjson::ondemand::value;

// Everything read from one event before deciding what it is.
struct RawEvent {
  char ph = 0;
  std::string_view cat;
  std::string_view name;
  bool has_name = false;
  TrackKey key;
  std::string_view tid_text;  // for "stream 7"
  std::string_view ts_text, dur_text;
  bool has_ts = false, has_dur = false;
  int64_t correlation = kNoId;
  int64_t external_id = kNoId;
  int64_t stream = -1;
  int64_t device = -1;
  CollectiveArgs collective;
  bool has_collective = false;
  OpShapes shapes;
  bool has_shapes = false;
};

std::string Snippet(const char* data, size_t length) {
  return std::string(data, length < 80 ? length : 80);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t' ||
                        s.back() == ',' || s.back() == '}' || s.back() == ']')) {
    s.remove_suffix(1);
  }
  return s;
}

// Categories with a kind, the most frequent first (each compare starts with
// the lengths, so a miss costs little).
struct CategoryKind {
  std::string_view cat;
  TraceEventKind kind;
};
constexpr CategoryKind kCategoryKinds[] = {
    {"cpu_op", TraceEventKind::kCpuOp},
    {"kernel", TraceEventKind::kKernel},
    {"cuda_runtime", TraceEventKind::kRuntime},
    {"python_function", TraceEventKind::kPythonFunction},
    {"user_annotation", TraceEventKind::kUserAnnotation},
    {"gpu_user_annotation", TraceEventKind::kGpuUserAnnotation},
    {"gpu_memcpy", TraceEventKind::kMemcpy},
    {"gpu_memset", TraceEventKind::kMemset},
    {"cuda_driver", TraceEventKind::kRuntime},
    {"cuda_sync", TraceEventKind::kCudaSync},
    {"Kernel", TraceEventKind::kKernel},
    {"Memset", TraceEventKind::kMemset},
    {"Memcpy", TraceEventKind::kMemcpy},
    {"Runtime", TraceEventKind::kRuntime},
    {"Operator", TraceEventKind::kCpuOp},
    {"xpu_runtime", TraceEventKind::kRuntime},
    {"xpu_driver", TraceEventKind::kRuntime},
    {"mtia_runtime", TraceEventKind::kRuntime},
    {"mtia_ccp_events", TraceEventKind::kKernel},
    {"privateuse1_runtime", TraceEventKind::kRuntime},
};

TraceEventKind KindOf(std::string_view cat, bool& known) {
  known = true;
  for (const CategoryKind& c : kCategoryKinds) {
    if (c.cat.size() == cat.size() && c.cat == cat)
      return c.kind;
  }
  static constexpr std::string_view kKnownOther[] = {"overhead",
                                                     "Trace",
                                                     "cpu_instant_event",
                                                     "cuda_event",
                                                     "cuda_profiler_range",
                                                     "external_correlation",
                                                     "mtia_insight",
                                                     "mtia_counters",
                                                     "glow_runtime",
                                                     "hpu_op",
                                                     "xpu_sync",
                                                     "xpu_scope_profiler",
                                                     "collective_comm",
                                                     "hardware_counters",
                                                     "privateuse1_driver",
                                                     "python_function_overhead",
                                                     ""};
  for (auto k : kKnownOther) {
    if (cat == k)
      return TraceEventKind::kOther;
  }
  known = false;
  return TraceEventKind::kOther;
}

bool ReadInt(TraceBuilder& b, value v, int64_t& out, uint64_t offset) {
  int64_t i = 0;
  if (v.get_int64().get(i) == simdjson::SUCCESS) {
    out = i;
    return true;
  }
  uint64_t u = 0;
  if (v.get_uint64().get(u) == simdjson::SUCCESS) {
    out = static_cast<int64_t>(u);  // bit pattern: equality still works
    b.diagnostics.Add(DiagnosticId::k_uint64_id, offset, std::to_string(u));
    return true;
  }
  double d = 0;
  if (v.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && std::fabs(d) < 9e18) {
    out = static_cast<int64_t>(d);
    return true;
  }
  return false;
}

// `name` cut to kMaxNameBytes (at a UTF-8 boundary), counted: a name that
// long is broken input, and every later pass (classification, report) is
// linear in it.
std::string_view CapName(TraceBuilder& b, std::string_view name, uint64_t offset) {
  if (name.size() <= kMaxNameBytes)
    return name;
  size_t n = kMaxNameBytes;
  while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80)
    --n;
  b.diagnostics.Add(DiagnosticId::k_long_name_truncated, offset, std::to_string(name.size()) + " bytes");
  return name.substr(0, n);
}

void ReadString(TraceBuilder& b, value v, uint32_t& out, uint64_t offset) {
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) {
    out = b.strings.Intern(s);
  } else {
    b.diagnostics.Add(DiagnosticId::k_bad_arg_type, offset, "string arg");
  }
}

void ReadIntArg(TraceBuilder& b, value v, int64_t& out, uint64_t offset) {
  json_type type = v.type().value_unsafe();
  if (type == json_type::null)
    return;
  if (type == json_type::string) {  // ROCm writes some ids as "0x0"
    std::string_view s;
    if (v.get_string().get(s) == simdjson::SUCCESS && !s.empty()) {
      std::string text(s);
      char* end = nullptr;
      long long parsed = std::strtoll(text.c_str(), &end, 0);
      if (end == text.c_str() + text.size()) {
        out = parsed;
        return;
      }
    }
  }
  if (!ReadInt(b, v, out, offset))
    b.diagnostics.Add(DiagnosticId::k_bad_arg_type, offset, "integer arg");
}

// "Input Dims": [[2, 3], [], [[1, 2], [3]]] -> one list per input; nested
// lists (TensorList) are kept flat as their first dims are not a shape.
void ReadDims(TraceBuilder& b, value v, OpShapes& shapes, uint64_t offset) {
  simdjson::ondemand::array inputs;
  if (v.get_array().get(inputs) != simdjson::SUCCESS) {
    b.diagnostics.Add(DiagnosticId::k_bad_arg_type, offset, "Input Dims");
    return;
  }
  for (auto input : inputs) {
    std::vector<int64_t> dims;
    simdjson::ondemand::array dim_list;
    if (input.get_array().get(dim_list) == simdjson::SUCCESS) {
      for (auto d : dim_list) {
        int64_t x = 0;
        if (d.get_int64().get(x) == simdjson::SUCCESS)
          dims.push_back(x);
      }
    }
    shapes.input_dims.push_back(std::move(dims));
  }
}

void ReadStringList(TraceBuilder& b, value v, std::vector<uint32_t>& out, uint64_t offset) {
  simdjson::ondemand::array list;
  if (v.get_array().get(list) != simdjson::SUCCESS) {
    b.diagnostics.Add(DiagnosticId::k_bad_arg_type, offset, "string list");
    return;
  }
  for (auto item : list) {
    std::string_view s;
    out.push_back(item.get_string().get(s) == simdjson::SUCCESS ? b.strings.Intern(s) : b.strings.Intern(""));
  }
}

// Returns false when args is not valid JSON: the whole event is then a
// syntax error (never a result that depends on the bytes after the event).
bool ReadArgs(TraceBuilder& b, value v, RawEvent& e, uint64_t offset) {
  simdjson::ondemand::object args;
  if (v.get_object().get(args) != simdjson::SUCCESS)
    return true;
  for (auto field : args) {
    simdjson::ondemand::raw_json_string key;
    if (field.key().get(key) != simdjson::SUCCESS)
      return false;
    value val;
    json_type type;
    if (field.value().get(val) != simdjson::SUCCESS || val.type().get(type) != simdjson::SUCCESS) {
      return false;
    }
    // Dispatch on the raw key without unescaping (all keys we read are
    // ASCII), first on its first byte: most of Kineto's args ("Ev Idx",
    // "Fwd thread id", "Sequence number", "Input Strides", ...) then meet one
    // or two comparisons instead of the whole list.
    switch (key.raw()[0]) {
      case 'c':
        if (key == "correlation")
          ReadIntArg(b, val, e.correlation, offset);
        break;
      case 'E':
      case 'e':
        if (key == "External id" || key == "external id")
          ReadIntArg(b, val, e.external_id, offset);
        break;
      case 's':
        if (key == "stream")
          ReadIntArg(b, val, e.stream, offset);
        break;
      case 'd':
        if (key == "device") {
          ReadIntArg(b, val, e.device, offset);
        } else if (key == "dtype") {
          ReadString(b, val, e.collective.dtype, offset);
        }
        break;
      case 'I':
        if (key == "Input Dims") {
          e.has_shapes = true;
          ReadDims(b, val, e.shapes, offset);
        } else if (key == "Input type") {
          e.has_shapes = true;
          ReadStringList(b, val, e.shapes.input_types, offset);
        } else if (key == "In msg nelems") {
          ReadIntArg(b, val, e.collective.in_nelems, offset);
        }
        break;
      case 'C':
        if (key == "Concrete Inputs") {
          e.has_shapes = true;
          ReadStringList(b, val, e.shapes.concrete_inputs, offset);
        } else if (key == "Collective name") {
          e.has_collective = true;
          ReadString(b, val, e.collective.collective, offset);
        }
        break;
      case 'O':
        if (key == "Out msg nelems")
          ReadIntArg(b, val, e.collective.out_nelems, offset);
        break;
      case 'G':
        if (key == "Group size")
          ReadIntArg(b, val, e.collective.group_size, offset);
        break;
      case 'P':
        if (key == "Process Group Name") {
          ReadString(b, val, e.collective.pg_name, offset);
        } else if (key == "Process Group Description") {
          ReadString(b, val, e.collective.pg_desc, offset);
        } else if (key == "Process Group Ranks") {
          ReadString(b, val, e.collective.pg_ranks, offset);
        }
        break;
      case 'S':
        if (key == "Seq")
          ReadIntArg(b, val, e.collective.seq, offset);
        break;
      default:
        break;
    }
  }
  return true;
}

// pid/tid: integer or string.
void ReadId(TraceBuilder& b, value v, int64_t& id, bool& is_string, std::string_view* text) {
  int64_t i = 0;
  if (v.get_int64().get(i) == simdjson::SUCCESS) {
    id = i;
    is_string = false;
    return;
  }
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) {
    id = b.strings.Intern(s);
    is_string = true;
    if (text)
      *text = b.strings.Get(static_cast<uint32_t>(id));
    return;
  }
  double d = 0;
  if (v.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && std::fabs(d) < 9e18) {
    id = static_cast<int64_t>(d);
    is_string = false;
  }
}

uint32_t TrackFor(TraceBuilder& b, const RawEvent& e, bool gpu) {
  auto [it, inserted] = b.track_index.try_emplace(e.key, static_cast<uint32_t>(b.tracks.size()));
  if (inserted) {
    TraceTrack t;
    t.pid =
        e.key.pid_is_string ? std::string(b.strings.Get(static_cast<uint32_t>(e.key.pid))) : std::to_string(e.key.pid);
    t.tid =
        e.key.tid_is_string ? std::string(b.strings.Get(static_cast<uint32_t>(e.key.tid))) : std::to_string(e.key.tid);
    b.tracks.push_back(std::move(t));
    b.track_keys.push_back(e.key);
  }
  TraceTrack& t = b.tracks[it->second];
  if (gpu && !t.gpu) {
    t.gpu = true;
    t.device = e.device >= 0 ? e.device : (e.key.pid_is_string ? -1 : e.key.pid);
    if (e.stream >= 0) {
      t.stream = e.stream;
    } else if (!e.key.tid_is_string) {
      t.stream = e.key.tid;
    } else {  // legacy "stream 7"
      std::string_view s = e.tid_text;
      size_t digit = s.find_first_of("0123456789");
      if (digit != std::string_view::npos)
        t.stream = std::strtoll(std::string(s.substr(digit)).c_str(), nullptr, 10);
    }
  }
  return it->second;
}

// A flow event (ph s/f/t) written the way Kineto writes it: "ph" is the
// first key. Flow events are skipped, so such an event is counted without
// parsing the rest of it (30% of a typical trace's events). Anything less
// plain (another "ph" later, which would win as the last duplicate key, or
// any backslash escape) goes through the full parse.
bool IsPlainFlowEvent(const char* data, size_t length) {
  const char* p = data + 1;  // after '{'
  const char* const end = data + length;
  auto skip_space = [&] {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
      ++p;
  };
  skip_space();
  if (end - p < 4 || std::memcmp(p, "\"ph\"", 4) != 0)
    return false;
  p += 4;
  skip_space();
  if (p == end || *p != ':')
    return false;
  ++p;
  skip_space();
  if (end - p < 3 || p[0] != '"' || (p[1] != 's' && p[1] != 'f' && p[1] != 't') || p[2] != '"')
    return false;
  p += 3;
  if (std::memchr(p, '\\', static_cast<size_t>(end - p)) != nullptr)
    return false;
  // No later `ph"` (memchr for 'h': memmem's setup costs more per event).
  for (const char* h = p; (h = static_cast<const char*>(std::memchr(h, 'h', static_cast<size_t>(end - h)))); ++h) {
    if (h[-1] == 'p' && h + 1 < end && h[1] == '"')
      return false;
  }
  return true;
}

}  // namespace

bool ParseMicrosToNs(std::string_view text, int64_t& ns, bool& truncated, bool& via_double) {
  truncated = false;
  via_double = false;
  text = Trim(text);
  if (text.empty())
    return false;
  // One pass over the few characters (find_first_of("eE") calls memchr per
  // character, a measurable share of a large trace's parse).
  bool exponent = false;
  for (char c : text)
    exponent |= (c | 0x20) == 'e';
  if (exponent) {
    // Exponent notation: through a double (any mantissa length).
    std::string copy(text);
    char* end = nullptr;
    double d = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size() || !std::isfinite(d) || std::fabs(d) > 9e15)
      return false;
    ns = static_cast<int64_t>(std::llround(d * 1000.0));
    via_double = true;
    return true;
  }
  size_t i = 0;
  bool negative = false;
  if (text[0] == '-') {
    negative = true;
    i = 1;
  }
  constexpr int64_t kMaxMicros = INT64_MAX / 1000 - 1;
  int64_t micros = 0;
  size_t digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
    if (micros > (kMaxMicros - 9) / 10)
      return false;
    micros = micros * 10 + (text[i] - '0');
  }
  if (digits == 0)
    return false;
  int64_t frac = 0;
  size_t frac_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      if (frac_digits < 3) {
        frac = frac * 10 + (text[i] - '0');
        ++frac_digits;
      } else if (text[i] != '0') {
        truncated = true;
      }
    }
  }
  if (i < text.size()) {
    if (text[i] != 'e' && text[i] != 'E')
      return false;
    char* end = nullptr;
    std::string copy(text);
    double d = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size() || !std::isfinite(d) || std::fabs(d) > 9e15)
      return false;
    ns = static_cast<int64_t>(std::llround(d * 1000.0));
    via_double = true;
    return true;
  }
  while (frac_digits < 3) {
    frac *= 10;
    ++frac_digits;
  }
  const int64_t total = micros * 1000 + frac;
  ns = negative ? -total : total;
  return true;
}

namespace {

// ParseEvent's phases, called once per event: always_inline keeps the
// per-event path one function, as it was before the split (GCC otherwise
// leaves ParseTimes and AppendEvent out of line).

// Reads the fields of event object `obj` that the trace model uses into
// `e`; false on a syntax error (a key or value that does not parse, bad
// args).
[[gnu::always_inline]] inline bool ReadFields(TraceBuilder& b, simdjson::ondemand::object& obj, RawEvent& e,
                                              uint64_t offset) {
  for (auto field : obj) {
    simdjson::ondemand::raw_json_string key;
    if (field.key().get(key) != simdjson::SUCCESS)
      return false;
    value v;
    json_type type;
    // A value must start like one: a missing value (`"k":}`) would otherwise
    // be skipped in a way that depends on the bytes after the event.
    if (field.value().get(v) != simdjson::SUCCESS || v.type().get(type) != simdjson::SUCCESS)
      return false;
    const char initial = key.raw()[0];
    if (initial != 'p' && initial != 'c' && initial != 'n' && initial != 't' && initial != 'd' && initial != 'a')
      continue;  // "id", "bp", "s", ...: not read
    if (key == "ph") {
      std::string_view ph;
      if (v.get_string().get(ph) == simdjson::SUCCESS && ph.size() == 1)
        e.ph = ph[0];
    } else if (key == "cat") {
      std::string_view cat;
      if (v.get_string().get(cat) == simdjson::SUCCESS)
        e.cat = cat;
    } else if (key == "name") {
      std::string_view name;
      if (v.get_string().get(name) == simdjson::SUCCESS) {
        e.name = name;
        e.has_name = true;
      }
    } else if (key == "ts") {
      e.ts_text = v.raw_json_token();
      e.has_ts = v.type().value_unsafe() == json_type::number;
    } else if (key == "dur") {
      e.dur_text = v.raw_json_token();
      e.has_dur = v.type().value_unsafe() == json_type::number;
    } else if (key == "pid") {
      ReadId(b, v, e.key.pid, e.key.pid_is_string, nullptr);
    } else if (key == "tid") {
      ReadId(b, v, e.key.tid, e.key.tid_is_string, &e.tid_text);
    } else if (key == "args") {
      if (!ReadArgs(b, v, e, offset))
        return false;
    }
  }
  return true;
}

// Whether an event of phase `ph` becomes a trace event (X, i, I, B, E);
// the other phases are counted in the diagnostics.
[[gnu::always_inline]] inline bool KeptPhase(TraceBuilder& b, char ph, const char* data, size_t length,
                                             uint64_t offset) {
  switch (ph) {
    case 'X':
    case 'i':
    case 'I':
    case 'B':
    case 'E':
      return true;
    case 's':
    case 'f':
    case 't':
      b.diagnostics.Add(DiagnosticId::k_flow_events, offset, "");
      return false;
    case 'M':
      b.diagnostics.Add(DiagnosticId::k_metadata_events, offset, "");
      return false;
    case 'C':
      b.diagnostics.Add(DiagnosticId::k_counter_events, offset, "");
      return false;
    case 0:
      b.diagnostics.Add(DiagnosticId::k_missing_ph, offset, Snippet(data, length));
      return false;
    default:
      b.diagnostics.Add(DiagnosticId::k_unknown_phase, offset, Snippet(data, length));
      return false;
  }
}

// Parses `e`'s ts and, for an X event, its dur into nanoseconds; false
// (with a diagnostic) when the event is dropped.
[[gnu::always_inline]] inline bool ParseTimes(TraceBuilder& b, const RawEvent& e, const char* data, size_t length,
                                              uint64_t offset, int64_t& ts, int64_t& dur) {
  bool truncated = false, via_double = false;
  if (!e.has_ts) {
    b.diagnostics.Add(DiagnosticId::k_missing_ts, offset, Snippet(data, length));
    return false;
  }
  if (!ParseMicrosToNs(e.ts_text, ts, truncated, via_double)) {
    b.diagnostics.Add(DiagnosticId::k_bad_number, offset, std::string(e.ts_text.substr(0, 40)));
    return false;
  }
  if (truncated)
    b.diagnostics.Add(DiagnosticId::k_sub_ns_digits, offset, std::string(e.ts_text.substr(0, 40)));
  if (via_double)
    b.diagnostics.Add(DiagnosticId::k_exponent_number, offset, std::string(e.ts_text.substr(0, 40)));
  if (e.ph == 'X') {
    if (!e.has_dur) {
      b.diagnostics.Add(DiagnosticId::k_missing_dur, offset, Snippet(data, length));
      return false;
    }
    if (!ParseMicrosToNs(e.dur_text, dur, truncated, via_double)) {
      b.diagnostics.Add(DiagnosticId::k_bad_number, offset, std::string(e.dur_text.substr(0, 40)));
      return false;
    }
    if (dur < 0) {
      b.diagnostics.Add(DiagnosticId::k_negative_dur, offset, std::string(e.dur_text.substr(0, 40)));
      dur = 0;
    }
  }
  return true;
}

// Appends event `e` (phase X, i or I) to the builder's columns; `first`:
// the earliest event in the file so far.
[[gnu::always_inline]] inline void AppendEvent(TraceBuilder& b, RawEvent& e, TraceEventKind kind, uint32_t name,
                                               uint32_t track, int64_t ts, int64_t dur, bool first, uint64_t offset) {
  if (first && e.ph == 'X' && e.cat != "Trace")
    b.first_ts_ns = ts;
  if (ts < b.last_ts_ns)
    b.out_of_order = true;
  b.last_ts_ns = ts;
  b.ts_ns.push_back(ts);
  b.dur_ns.push_back(dur);
  b.kind.push_back(kind);
  b.name.push_back(name);
  b.track.push_back(track);
  b.correlation.push_back(e.correlation);
  b.external_id.push_back(e.external_id);
  b.offset.push_back(offset);
  if (e.has_collective) {
    b.collective.push_back(static_cast<uint32_t>(b.collectives.size()));
    b.collectives.push_back(e.collective);
  } else {
    b.collective.push_back(kNoIndex);
  }
  if (e.has_shapes) {
    b.shapes.push_back(static_cast<uint32_t>(b.op_shapes.size()));
    b.op_shapes.push_back(std::move(e.shapes));
  } else {
    b.shapes.push_back(kNoIndex);
  }
}

}  // namespace

void ParseEvent(TraceBuilder& b, const char* data, size_t length, size_t capacity, uint64_t offset) {
  if (IsPlainFlowEvent(data, length)) {
    if (offset < b.first_offset) {
      b.first_offset = offset;
      b.first_ts_ns = kNoId;
    }
    b.diagnostics.Add(DiagnosticId::k_flow_events, offset, "");
    return;
  }
  simdjson::ondemand::document doc;
  if (b.parser.iterate(simdjson::padded_string_view(data, length, capacity)).get(doc) != simdjson::SUCCESS) {
    b.diagnostics.Add(DiagnosticId::k_json_syntax_error, offset, Snippet(data, length));
    return;
  }
  simdjson::ondemand::object obj;
  if (doc.get_object().get(obj) != simdjson::SUCCESS) {
    b.diagnostics.Add(DiagnosticId::k_event_not_object, offset, Snippet(data, length));
    return;
  }
  const bool first = offset < b.first_offset;
  if (first) {
    b.first_offset = offset;
    b.first_ts_ns = kNoId;
  }
  RawEvent e;
  bool ok = ReadFields(b, obj, e, offset);
  // On some malformed input (a value followed by ':'), on-demand iteration
  // ends the object early without an error, and where it ends depends on the
  // bytes after the event (in the padding). A complete parse leaves the
  // iterator past the end of the document: anything else is a syntax error,
  // whatever follows the event.
  const char* stopped_at = nullptr;
  if (ok && doc.current_location().get(stopped_at) == simdjson::SUCCESS)
    ok = false;
  if (!ok) {
    b.diagnostics.Add(DiagnosticId::k_json_syntax_error, offset, Snippet(data, length));
    return;
  }
  // cat and name views point into the parser's string buffer, valid until the
  // next iterate(); intern before returning.
  if (!KeptPhase(b, e.ph, data, length, offset))
    return;
  bool known = true;
  TraceEventKind kind = e.ph == 'X' || e.ph == 'B' || e.ph == 'E' ? KindOf(e.cat, known) : TraceEventKind::kInstant;
  if (!known)
    b.diagnostics.Add(DiagnosticId::k_unknown_category, offset, std::string(e.cat));
  if (kind == TraceEventKind::kPythonFunction && !b.keep_python_functions) {
    b.diagnostics.Add(DiagnosticId::k_python_functions_skipped, offset, "");
    return;
  }
  int64_t ts = 0, dur = 0;
  if (!ParseTimes(b, e, data, length, offset, ts, dur))
    return;
  const uint32_t name = e.has_name ? b.strings.Intern(CapName(b, e.name, offset)) : kNoString;
  const uint32_t track = TrackFor(b, e, IsGpuActivity(kind) || kind == TraceEventKind::kGpuUserAnnotation);
  if (e.ph == 'B' || e.ph == 'E') {
    b.begin_end.push_back({ts, offset, name, track, kind, e.ph == 'B'});
    return;
  }
  AppendEvent(b, e, kind, name, track, ts, dur, first, offset);
}

}  // namespace mfu::trace
