// Prometheus text exposition format 0.0.4, as dcgm-exporter and AMD's
// device-metrics-exporter serve it: HELP/TYPE lines optional (the T4 capture
// has none), untyped samples, label values with \" \\ \n escapes, spaces
// around label separators and a trailing comma (both accepted by Prometheus'
// own parser), an optional integer timestamp in ms, NaN/+Inf/-Inf values,
// CRLF line ends. A line that is not a comment, blank or a sample is an error
// naming its line: "...", the elision of the exporter README's excerpt, is
// never sent by an exporter and would hide a truncated body.
#include <absl/strings/string_view.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "fleet/telemetry_internal.h"

namespace mfu::fleet {

namespace {

// A dcgm-exporter line is ~300 bytes; a longer line than this is not one.
constexpr size_t kMaxLineBytes = 64 * 1024;

struct Label {
  std::string_view name;
  std::string_view value;  // unescaped: into the line, or into `storage`
  std::string storage;     // the unescaped value when it had escapes
  bool escaped = false;
};

struct Sample {
  std::string_view name;
  std::string_view label_text;  // the bytes between the braces, as written
  std::vector<Label> labels;
  size_t num_labels = 0;  // labels[0, num_labels) are this line's
  double value = 0;
  int64_t time_ms = 0;
};

bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool IsNameChar(char c) {
  return IsNameStart(c) || (c >= '0' && c <= '9');
}
bool IsBlank(char c) {
  return c == ' ' || c == '\t';
}

// The first '"' or '\\' at or after `i` (find_first_of tests each byte
// against the set with a call; this is the hot loop of a scrape).
size_t FindQuoteOrBackslash(std::string_view s, size_t i) {
  for (; i < s.size(); ++i) {
    if (s[i] == '"' || s[i] == '\\')
      return i;
  }
  return std::string_view::npos;
}

std::string Snippet(std::string_view s) {
  std::string out(s.substr(0, 40));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '\'')
      c = '?';
  }
  return "'" + out + (s.size() > 40 ? "...'" : "'");
}

class LineParser {
 public:
  LineParser(std::string_view line, std::string_view origin, int64_t line_no)
      : s_(line), origin_(origin), line_no_(line_no) {}

  Status Parse(Sample& out) {
    size_t n = 0;
    while (n < s_.size() && IsNameChar(s_[n]))
      ++n;
    if (s_.starts_with("..."))
      return Error("'...' is not a sample: an elided excerpt, not an exporter's /metrics body");
    if (n == 0 || !IsNameStart(s_[0]))
      return Error("expected a metric name, got " + Snippet(s_));
    out.name = s_.substr(0, n);
    s_.remove_prefix(n);
    size_t before = s_.size();
    SkipBlanks();
    out.label_text = {};
    out.num_labels = 0;
    if (!s_.empty() && s_[0] == '{') {
      MFU_RETURN_IF_ERROR(ParseLabels(out));
      before = s_.size();
      SkipBlanks();
    }
    if (s_.empty())
      return Error("metric " + std::string(out.name) + " has no value");
    if (before == s_.size() && out.label_text.data() == nullptr)
      return Error("expected a space after the metric name, got " + Snippet(s_));
    std::string_view token = Token();
    if (!ParseSampleValue(token, &out.value))
      return Error("value " + Snippet(token) + " of " + std::string(out.name) + " is not a number");
    SkipBlanks();
    out.time_ms = 0;
    if (!s_.empty()) {
      token = Token();
      const std::from_chars_result r = std::from_chars(token.data(), token.data() + token.size(), out.time_ms);
      if (r.ec != std::errc() || r.ptr != token.data() + token.size())
        return Error("timestamp " + Snippet(token) + " is not an integer of milliseconds");
      SkipBlanks();
      if (!s_.empty())
        return Error("unexpected " + Snippet(s_) + " after the timestamp");
    }
    return Status::Ok();
  }

 private:
  Status Error(const std::string& what) const {
    return ParseError(std::string(origin_) + ":" + std::to_string(line_no_) + ": " + what);
  }

  void SkipBlanks() {
    size_t i = 0;
    while (i < s_.size() && IsBlank(s_[i]))
      ++i;
    s_.remove_prefix(i);
  }

  std::string_view Token() {
    size_t i = 0;
    while (i < s_.size() && !IsBlank(s_[i]))
      ++i;
    std::string_view t = s_.substr(0, i);
    s_.remove_prefix(i);
    return t;
  }

  Status ParseLabels(Sample& out) {
    const char* open = s_.data() + 1;
    s_.remove_prefix(1);
    while (true) {
      SkipBlanks();
      if (s_.empty())
        return Error("unterminated label set");
      if (s_[0] == '}')
        break;
      size_t n = 0;
      while (n < s_.size() && IsNameChar(s_[n]) && s_[n] != ':')
        ++n;
      if (n == 0 || (s_[0] >= '0' && s_[0] <= '9'))
        return Error("expected a label name, got " + Snippet(s_));
      if (out.num_labels == out.labels.size())
        out.labels.emplace_back();
      Label& label = out.labels[out.num_labels++];
      label.name = s_.substr(0, n);
      s_.remove_prefix(n);
      SkipBlanks();
      if (s_.empty() || s_[0] != '=')
        return Error("expected '=' after label " + std::string(label.name));
      s_.remove_prefix(1);
      SkipBlanks();
      if (s_.empty() || s_[0] != '"')
        return Error("expected '\"' to open the value of label " + std::string(label.name));
      s_.remove_prefix(1);
      MFU_RETURN_IF_ERROR(ParseLabelValue(label));
      SkipBlanks();
      if (!s_.empty() && s_[0] == ',') {
        s_.remove_prefix(1);
        continue;
      }
      if (s_.empty() || s_[0] != '}')
        return Error("expected ',' or '}' after label " + std::string(label.name));
    }
    out.label_text = std::string_view(open, static_cast<size_t>(s_.data() - open));
    s_.remove_prefix(1);
    // Views into `storage` are taken once `labels` no longer grows.
    for (size_t i = 0; i < out.num_labels; ++i) {
      if (out.labels[i].escaped)
        out.labels[i].value = out.labels[i].storage;
    }
    return Status::Ok();
  }

  Status ParseLabelValue(Label& label) {
    const size_t quote = FindQuoteOrBackslash(s_, 0);
    label.escaped = false;
    if (quote != std::string_view::npos && s_[quote] == '"') {  // no escapes: a view
      label.value = s_.substr(0, quote);
      s_.remove_prefix(quote + 1);
      return Status::Ok();
    }
    std::string& value = label.storage;
    value.clear();
    size_t i = 0;
    while (true) {
      const size_t stop = FindQuoteOrBackslash(s_, i);
      if (stop == std::string_view::npos)
        return Error("unterminated value of label " + std::string(label.name));
      value.append(s_.substr(i, stop - i));
      if (s_[stop] == '"') {
        s_.remove_prefix(stop + 1);
        label.escaped = true;
        return Status::Ok();
      }
      if (stop + 1 >= s_.size())
        return Error("unterminated value of label " + std::string(label.name));
      const char e = s_[stop + 1];
      if (e == 'n') {
        value += '\n';
      } else if (e == '"' || e == '\\') {
        value += e;
      } else {  // Prometheus keeps an unknown escape as written
        value += '\\';
        value += e;
      }
      i = stop + 2;
    }
  }

  std::string_view s_;
  std::string_view origin_;
  int64_t line_no_;
};

struct DeviceEntry {
  size_t device = 0;
  bool use_clock = true;  // false: an AMD gpu_clock series other than the SM clock
};

struct DevicePoints {
  std::vector<TelemetryPoint> points;
  std::vector<uint64_t> filled;  // per point: fields already set
};

class ExpositionReader {
 public:
  ExpositionReader(std::string_view origin, const TelemetryReadOptions& options, StatsBuilder& stats)
      : origin_(origin), devices_(options.max_devices), stats_(stats) {}

  Status Read(std::string_view text) {
    int64_t line_no = 0;
    Sample sample;
    while (!text.empty()) {
      const size_t eol = text.find('\n');
      std::string_view line = text.substr(0, eol);
      text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
      ++line_no;
      if (line.size() > kMaxLineBytes) {
        return ParseError(std::string(origin_) + ":" + std::to_string(line_no) + ": line longer than " +
                          std::to_string(kMaxLineBytes) + " bytes");
      }
      while (!line.empty() && (line.back() == '\r' || IsBlank(line.back())))
        line.remove_suffix(1);
      while (!line.empty() && IsBlank(line.front()))
        line.remove_prefix(1);
      if (line.empty() || line[0] == '#')
        continue;
      MFU_RETURN_IF_ERROR(LineParser(line, origin_, line_no).Parse(sample));
      MFU_RETURN_IF_ERROR(Add(sample));
    }
    stats_.stats.lines = line_no;
    return Status::Ok();
  }

  Status Deliver(TelemetryVisitor& visitor) {
    stats_.stats.devices = static_cast<int64_t>(devices_.size());
    for (size_t i = 0; i < devices_.size(); ++i) {
      std::vector<TelemetryPoint>& p = points_[i].points;
      std::stable_sort(p.begin(), p.end(),
                       [](const TelemetryPoint& a, const TelemetryPoint& b) { return a.time_ms < b.time_ms; });
      MFU_RETURN_IF_ERROR(visitor.OnDevice(devices_.device(i), p));
    }
    return Status::Ok();
  }

 private:
  Status Add(const Sample& s) {
    ++stats_.stats.samples;
    ++stats_.stats.series;
    if (s.name != last_name_) {
      last_name_ = s.name;
      last_field_ = ResolveTelemetryMetric(s.name, &last_scale_);
    }
    if (!last_field_) {
      stats_.Unknown(s.name);
      return Status::Ok();
    }
    MFU_ASSIGN_OR_RETURN(DeviceEntry entry, DeviceOf(s));
    if (*last_field_ == TelemetryField::kSmClockMhz && !entry.use_clock)
      return Status::Ok();
    DevicePoints& dp = points_[entry.device];
    size_t p = dp.points.size();
    while (p > 0 && dp.points[p - 1].time_ms != s.time_ms)
      --p;
    if (p == 0) {
      dp.points.emplace_back();
      dp.points.back().time_ms = s.time_ms;
      dp.filled.push_back(0);
      p = dp.points.size();
    }
    stats_.Store(s.name, *last_field_, s.value, last_scale_, dp.points[p - 1], dp.filled[p - 1]);
    return Status::Ok();
  }

  StatusOr<DeviceEntry> DeviceOf(const Sample& s) {
    const bool amd = IsAmdMetric(s.name);
    // One cache per vendor: the vendor comes from the metric name.
    absl::flat_hash_map<std::string, DeviceEntry>& cache = cache_[amd ? 1 : 0];
    if (auto it = cache.find(absl::string_view(s.label_text.data(), s.label_text.size())); it != cache.end())
      return it->second;
    TelemetryDevice d;
    d.vendor = amd ? "amd" : "nvidia";
    std::string_view clock_type;
    std::string_view clock_index;
    for (size_t i = 0; i < s.num_labels; ++i) {
      const Label& l = s.labels[i];
      if (!ApplyTelemetryLabel(l.name, l.value, d)) {
        if (l.name == "clock_type")
          clock_type = l.value;
        else if (l.name == "clock_index")
          clock_index = l.value;
      }
    }
    DeviceEntry entry;
    entry.use_clock = !amd || IsAmdSmClockSeries(clock_type, clock_index);
    MFU_ASSIGN_OR_RETURN(entry.device, devices_.Intern(std::move(d), origin_));
    if (points_.size() < devices_.size())
      points_.resize(devices_.size());
    cache.emplace(std::string(s.label_text), entry);
    return entry;
  }

  std::string_view origin_;
  DeviceTable devices_;
  StatsBuilder& stats_;
  std::vector<DevicePoints> points_;
  // Device of each label text as written (the exporter repeats one text
  // for every metric of a device), per vendor.
  absl::flat_hash_map<std::string, DeviceEntry> cache_[2];
  std::string_view last_name_;
  std::optional<TelemetryField> last_field_;
  double last_scale_ = 1;
};

}  // namespace

Status ReadExposition(std::string_view text, std::string_view origin, const TelemetryReadOptions& options,
                      TelemetryVisitor& visitor, StatsBuilder& stats) {
  ExpositionReader reader(origin, options, stats);
  MFU_RETURN_IF_ERROR(reader.Read(text));
  return reader.Deliver(visitor);
}

}  // namespace mfu::fleet
