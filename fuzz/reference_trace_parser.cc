// The reference parser: see the rules in reference_trace_parser.h. Written
// for obviousness, not speed; it shares no code with src/trace.
#include "reference_trace_parser.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace mfu::fuzz {
namespace {

using Json = nlohmann::json;

__extension__ typedef __int128 Wide;  // exact sums of int64 values

constexpr size_t kMaxDepth = 512;                               // D4
constexpr Wide kSafeNs = Wide{9'130'000'000'000'000'000LL};     // D5: 99% of INT64_MAX
constexpr Wide kRejectNs = Wide{9'320'000'000'000'000'000ULL};  // beyond: out of range

// Builds a DOM whose floats keep their source text (in a binary value, which
// JSON text never produces), and notes duplicate keys (D2) and depth (D4).
class DomBuilder {
 public:
  explicit DomBuilder(Json& root) : root_(root) {}

  bool null() { return Put(Json(nullptr)); }
  bool boolean(bool b) { return Put(Json(b)); }
  bool number_integer(Json::number_integer_t i) { return Put(Json(i)); }
  bool number_unsigned(Json::number_unsigned_t u) { return Put(Json(u)); }
  bool number_float(Json::number_float_t, const std::string& text) {
    return Put(Json::binary(std::vector<uint8_t>(text.begin(), text.end())));
  }
  bool string(std::string& s) { return Put(Json(s)); }
  bool binary(Json::binary_t& b) { return Put(Json::binary(b)); }
  bool start_object(size_t) { return Open(Json::object()); }
  bool start_array(size_t) { return Open(Json::array()); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(std::string& k) {
    if (stack_.back()->contains(k))
      duplicate_key_ = true;
    key_ = k;
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

  bool duplicate_key() const { return duplicate_key_; }
  bool too_deep() const { return too_deep_; }

 private:
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
  bool Open(Json v) {
    stack_.push_back(Place(std::move(v)));
    if (stack_.size() > kMaxDepth)
      too_deep_ = true;
    return !too_deep_;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  Json& root_;
  std::vector<Json*> stack_;
  std::string key_;
  bool duplicate_key_ = false;
  bool too_deep_ = false;
};

// D3: a key (a string followed by ':') containing a backslash. `json` is
// valid JSON, so a plain string scan is exact.
bool HasEscapedKey(std::string_view json) {
  bool in_string = false, escaped = false, had_backslash = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (!in_string) {
      if (c == '"') {
        in_string = true;
        had_backslash = false;
      }
      continue;
    }
    if (escaped) {
      escaped = false;
    } else if (c == '\\') {
      escaped = had_backslash = true;
    } else if (c == '"') {
      in_string = false;
      size_t j = i + 1;
      while (j < json.size() && (json[j] == ' ' || json[j] == '\t' || json[j] == '\n' || json[j] == '\r'))
        ++j;
      if (had_backslash && j < json.size() && json[j] == ':')
        return true;
    }
  }
  return false;
}

std::string NumberText(const Json& v) {
  if (v.is_binary())
    return std::string(v.get_binary().begin(), v.get_binary().end());
  return v.dump();  // integers
}

enum class Number { kOk, kBad, kAmbiguous };

// R4: microseconds (JSON number text) -> ns.
Number MicrosToNs(const std::string& text, int64_t& ns) {
  if (text.find_first_of("eE") != std::string::npos) {
    const double v = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(v) || std::fabs(v) > 9.09e15)
      return Number::kBad;
    if (std::fabs(v) > 8.91e15)
      return Number::kAmbiguous;
    ns = std::llround(v * 1000.0);
    return Number::kOk;
  }
  size_t i = text[0] == '-' ? 1 : 0;
  const bool negative = i == 1;
  Wide whole = 0;
  for (; i < text.size() && text[i] != '.'; ++i) {
    if (whole < kRejectNs)
      whole = whole * 10 + (text[i] - '0');
  }
  Wide frac = 0;
  int frac_digits = 0;
  for (i = i < text.size() ? i + 1 : i; i < text.size() && frac_digits < 3; ++i, ++frac_digits) {
    frac = frac * 10 + (text[i] - '0');
  }
  for (; frac_digits < 3; ++frac_digits)
    frac *= 10;
  const Wide total = whole * 1000 + frac;
  if (total > kRejectNs)
    return Number::kBad;
  if (total > kSafeNs)
    return Number::kAmbiguous;
  ns = static_cast<int64_t>(negative ? -total : total);
  return Number::kOk;
}

TraceEventKind KindOfCat(const std::string& cat) {
  static const std::map<std::string, TraceEventKind> kKinds = {
      {"cpu_op", TraceEventKind::kCpuOp},
      {"Operator", TraceEventKind::kCpuOp},
      {"user_annotation", TraceEventKind::kUserAnnotation},
      {"python_function", TraceEventKind::kPythonFunction},
      {"cuda_runtime", TraceEventKind::kRuntime},
      {"cuda_driver", TraceEventKind::kRuntime},
      {"Runtime", TraceEventKind::kRuntime},
      {"mtia_runtime", TraceEventKind::kRuntime},
      {"xpu_runtime", TraceEventKind::kRuntime},
      {"xpu_driver", TraceEventKind::kRuntime},
      {"privateuse1_runtime", TraceEventKind::kRuntime},
      {"kernel", TraceEventKind::kKernel},
      {"Kernel", TraceEventKind::kKernel},
      {"mtia_ccp_events", TraceEventKind::kKernel},
      {"gpu_memcpy", TraceEventKind::kMemcpy},
      {"Memcpy", TraceEventKind::kMemcpy},
      {"gpu_memset", TraceEventKind::kMemset},
      {"Memset", TraceEventKind::kMemset},
      {"gpu_user_annotation", TraceEventKind::kGpuUserAnnotation},
      {"cuda_sync", TraceEventKind::kCudaSync},
  };
  auto it = kKinds.find(cat);
  return it == kKinds.end() ? TraceEventKind::kOther : it->second;
}

// R5: a pid or tid as text.
std::string IdText(const Json& event, const char* key) {
  auto it = event.find(key);
  if (it == event.end())
    return "0";
  const Json& v = *it;
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_number_unsigned()) {
    return v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX) ? std::to_string(v.get<uint64_t>()) : "0";
  }
  if (v.is_number_integer())
    return std::to_string(v.get<int64_t>());
  if (v.is_binary()) {
    const double d = std::strtod(NumberText(v).c_str(), nullptr);
    return std::isfinite(d) && std::fabs(d) < 9e18 ? std::to_string(static_cast<int64_t>(d)) : "0";
  }
  return "0";
}

struct BeginEnd {
  int64_t ts_ns = 0;
  size_t index = 0;  // document order
  std::string track;
  ReferenceEvent event;
  bool begin = true;
};

// One traceEvents element (R2-R4). Returns false to decline the input.
bool ReadEvent(const Json& e, size_t index, ReferenceTrace& out, std::vector<BeginEnd>& begin_end) {
  if (!e.is_object()) {
    ++out.errors;
    return true;
  }
  auto ph_it = e.find("ph");
  if (ph_it == e.end() || !ph_it->is_string() || ph_it->get<std::string>().size() != 1) {
    ++out.errors;
    return true;
  }
  const char ph = ph_it->get<std::string>()[0];
  if (ph != 'X' && ph != 'i' && ph != 'I' && ph != 'B' && ph != 'E')
    return true;
  ReferenceEvent event;
  auto cat_it = e.find("cat");
  const std::string cat = cat_it != e.end() && cat_it->is_string() ? cat_it->get<std::string>() : "";
  event.kind = ph == 'i' || ph == 'I' ? TraceEventKind::kInstant : KindOfCat(cat);
  if (event.kind == TraceEventKind::kPythonFunction)
    return true;
  auto ts_it = e.find("ts");
  if (ts_it == e.end() || !(ts_it->is_number() || ts_it->is_binary())) {
    ++out.errors;
    return true;
  }
  Number n = MicrosToNs(NumberText(*ts_it), event.ts_ns);
  if (n == Number::kAmbiguous)
    return false;
  if (n == Number::kBad) {
    ++out.errors;
    return true;
  }
  if (ph == 'X') {
    auto dur_it = e.find("dur");
    if (dur_it == e.end() || !(dur_it->is_number() || dur_it->is_binary())) {
      ++out.errors;
      return true;
    }
    n = MicrosToNs(NumberText(*dur_it), event.dur_ns);
    if (n == Number::kAmbiguous)
      return false;
    if (n == Number::kBad) {
      ++out.errors;
      return true;
    }
    event.dur_ns = std::max<int64_t>(event.dur_ns, 0);
  }
  if (auto name_it = e.find("name"); name_it != e.end() && name_it->is_string()) {
    event.name = name_it->get<std::string>();
    event.has_name = true;
  }
  if (ph == 'B' || ph == 'E') {
    begin_end.push_back({event.ts_ns, index, IdText(e, "pid") + "\t" + IdText(e, "tid"), event, ph == 'B'});
    return true;
  }
  out.complete_events += ph == 'X' ? 1 : 0;
  out.events.push_back(std::move(event));
  return true;
}

// R5. Returns false to decline (a pair whose duration overflows).
bool PairBeginEnd(std::vector<BeginEnd>& begin_end, ReferenceTrace& out) {
  std::stable_sort(begin_end.begin(), begin_end.end(), [](const BeginEnd& a, const BeginEnd& b) {
    return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.index < b.index;
  });
  std::map<std::string, std::vector<const BeginEnd*>> open;
  for (const BeginEnd& be : begin_end) {
    auto& stack = open[be.track];
    if (be.begin) {
      stack.push_back(&be);
      continue;
    }
    if (stack.empty())
      continue;
    ReferenceEvent pair = stack.back()->event;
    stack.pop_back();
    const Wide dur = static_cast<Wide>(be.ts_ns) - pair.ts_ns;
    if (dur > kSafeNs)
      return false;
    pair.dur_ns = static_cast<int64_t>(dur);
    out.events.push_back(std::move(pair));
  }
  return true;
}

ReferenceTrace Decline(const char* why) {
  ReferenceTrace t;
  t.why = why;
  return t;
}

}  // namespace

ReferenceTrace ParseReferenceTrace(std::string_view json) {
  // nlohmann stops at a NUL byte (it ends C strings), so "{...}\0garbage"
  // would pass; a raw NUL is never valid JSON.
  if (json.find('\0') != std::string_view::npos)
    return Decline("D1 not JSON (NUL byte)");
  Json root;
  DomBuilder builder(root);
  if (!Json::sax_parse(json, &builder))
    return Decline(builder.too_deep() ? "D4 too deep" : "D1 not JSON");
  if (builder.duplicate_key())
    return Decline("D2 duplicate key");
  if (HasEscapedKey(json))
    return Decline("D3 escaped key");
  ReferenceTrace out;
  const Json* events = nullptr;
  int64_t base_ns = 0;
  if (root.is_array()) {
    events = &root;
  } else if (root.is_object()) {
    if (auto it = root.find("traceEvents"); it != root.end() && it->is_array())
      events = &*it;
    if (auto it = root.find("baseTimeNanoseconds"); it != root.end() && it->is_number_integer()) {
      base_ns = it->get<int64_t>();  // uint64 beyond INT64_MAX wraps, as the fast parser's get<int64_t>
    }
  }
  if (events == nullptr) {
    out.verdict = ReferenceVerdict::kNotATrace;
    return out;
  }
  std::vector<BeginEnd> begin_end;
  for (size_t i = 0; i < events->size(); ++i) {
    if (!ReadEvent((*events)[i], i, out, begin_end))
      return Decline("D5 number near the int64 ns limit");
  }
  if (!PairBeginEnd(begin_end, out))
    return Decline("D5 B/E duration near the int64 ns limit");
  for (ReferenceEvent& e : out.events) {
    const Wide ts = static_cast<Wide>(e.ts_ns) + base_ns;
    if (ts > kSafeNs || ts < -kSafeNs)
      return Decline("D5 baseTimeNanoseconds + ts near the int64 ns limit");
    if (ts + e.dur_ns > kSafeNs)
      return Decline("D5 ts + dur near the int64 ns limit (the fast parser clamps the end)");
    e.ts_ns = static_cast<int64_t>(ts);
  }
  out.verdict = ReferenceVerdict::kTrace;
  return out;
}

}  // namespace mfu::fuzz
