// Prometheus HTTP API answers (`/api/v1/query_range`, `/api/v1/query`):
//   {"status":"success","data":{"resultType":"matrix","result":[
//     {"metric":{"__name__":...,labels},"values":[[t,"v"],...]}, ...]}}
// ("vector": "value":[t,"v"]) and {"status":"error","errorType","error"}.
//
// Memory follows devices, not samples: Prometheus sorts series by name, so
// one device's series lie far apart. Pass 1 walks the document once with a
// hand scanner, keeps each series' labels as a device and the byte range of
// its values array (skipped, not parsed). Pass 2 takes one device at a time,
// parses its series' arrays in lockstep by timestamp into one reused point
// buffer and hands it to the visitor. Beyond the input, the reader holds
// one index row per series, the devices, and one device's points.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "fleet/query_range_scan.h"
#include "fleet/telemetry_internal.h"

namespace mfu::fleet {

namespace {

using namespace query_range_internal;  // NOLINT: the reader's own scanner

// One `metric`+`values` object of data.result.
struct Series {
  uint32_t device = 0;
  uint32_t name = 0;  // index into QueryRangeReader::names_
  TelemetryField field = TelemetryField::kCount;
  double scale = 1;
  const char* values = nullptr;  // the values array ('[' .. ']') or the value pair
  const char* values_end = nullptr;
  bool single = false;  // "value": one [t, "v"] pair (resultType vector)
  uint32_t index = 0;   // position in data.result, for error paths
};

class QueryRangeReader {
 public:
  QueryRangeReader(std::string_view text, std::string_view origin, const TelemetryReadOptions& options,
                   StatsBuilder& stats)
      : text_(text), origin_(origin), devices_(options.max_devices), stats_(stats) {}

  Status Index() {
    Json j(text_.data(), text_.data() + text_.size());
    if (!j.Consume('{'))
      return Error("", "expected a JSON object");
    std::string key;
    std::string status, error_type, error;
    bool have_data = false;
    if (!j.Consume('}')) {
      do {
        if (!j.String(key) || !j.Consume(':'))
          return Error("", "expected a key");
        if (key == "status" || key == "errorType" || key == "error") {
          std::string& out = key == "status" ? status : key == "error" ? error : error_type;
          if (!j.String(out))
            return Error(Quote(key), "expected a string");
        } else if (key == "data" && j.Peek('{')) {
          have_data = true;
          MFU_RETURN_IF_ERROR(Data(j));
        } else if (!j.SkipValue()) {
          return Error(Quote(key), "malformed value");
        }
      } while (j.Consume(','));
      if (!j.Consume('}'))
        return Error("", "expected ',' or '}' (truncated JSON?)");
    }
    if (!j.AtEnd())
      return Error("", "unexpected bytes after the JSON object");
    if (status == "error") {
      return ParseError(std::string(origin_) + ": status: prometheus answered error" +
                        (error_type.empty() ? "" : " (" + Quote(error_type) + ")") + ": " + Quote(error));
    }
    if (status != "success")
      return Error("status", status.empty() ? "missing" : "expected \"success\", got \"" + Quote(status) + "\"");
    if (!have_data)
      return Error("data", "missing");
    if (result_type_ != "matrix" && result_type_ != "vector") {
      return Error("data.resultType", result_type_.empty() ? "missing"
                                                           : "'" + Quote(result_type_) +
                                                                 "' is not a series answer (want matrix or vector)");
    }
    return Status::Ok();
  }

  Status Deliver(TelemetryVisitor& visitor) {
    stats_.stats.devices = static_cast<int64_t>(devices_.size());
    // Series of each device, in document order (the first of two duplicate
    // series wins, as in the exposition reader).
    std::vector<uint32_t> order(series_.size());
    for (uint32_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return series_[a].device < series_[b].device; });
    std::vector<TelemetryPoint> points;
    size_t k = 0;
    for (uint32_t d = 0; d < devices_.size(); ++d) {
      const size_t begin = k;
      while (k < order.size() && series_[order[k]].device == d)
        ++k;
      MFU_RETURN_IF_ERROR(Merge(std::span<const uint32_t>(order.data() + begin, k - begin), points));
      MFU_RETURN_IF_ERROR(visitor.OnDevice(devices_.device(d), points));
    }
    return Status::Ok();
  }

 private:
  Status Error(std::string_view path, const std::string& what) const {
    return ParseError(std::string(origin_) + ": " + (path.empty() ? "" : std::string(path) + ": ") + what);
  }

  Status Data(Json& j) {
    j.Consume('{');
    std::string key;
    if (j.Consume('}'))
      return Status::Ok();
    do {
      if (!j.String(key) || !j.Consume(':'))
        return Error("data", "expected a key");
      if (key == "resultType") {
        if (!j.String(result_type_))
          return Error("data.resultType", "expected a string");
      } else if (key == "result" && j.Peek('[')) {
        MFU_RETURN_IF_ERROR(Result(j));
      } else if (!j.SkipValue()) {
        return Error("data." + Quote(key), "malformed value");
      }
    } while (j.Consume(','));
    if (!j.Consume('}'))
      return Error("data", "expected ',' or '}' (truncated JSON?)");
    return Status::Ok();
  }

  Status Result(Json& j) {
    j.Consume('[');
    if (j.Consume(']'))
      return Status::Ok();
    uint32_t index = 0;
    do {
      MFU_RETURN_IF_ERROR(OneSeries(j, index++));
    } while (j.Consume(','));
    if (!j.Consume(']'))
      return Error("data.result", "expected ',' or ']' (truncated JSON?)");
    return Status::Ok();
  }

  std::string Path(uint32_t index, std::string_view rest = {}) const {
    return "data.result[" + std::to_string(index) + "]" + std::string(rest);
  }

  Status OneSeries(Json& j, uint32_t index) {
    if (!j.Consume('{'))
      return Error(Path(index), "expected an object");
    ++stats_.stats.series;
    std::string key, name, value;
    TelemetryDevice d;
    std::string clock_type, clock_index;
    Series s;
    s.index = index;
    bool have_values = false;
    if (!j.Consume('}')) {
      do {
        if (!j.String(key) || !j.Consume(':'))
          return Error(Path(index), "expected a key");
        if (key == "metric") {
          if (!j.Consume('{'))
            return Error(Path(index, ".metric"), "expected an object");
          if (!j.Consume('}')) {
            do {
              if (!j.String(key) || !j.Consume(':') || !j.String(value))
                return Error(Path(index, ".metric"), "expected \"label\": \"value\"");
              if (key == "__name__")
                name = value;
              else if (key == "clock_type")
                clock_type = value;
              else if (key == "clock_index")
                clock_index = value;
              else
                ApplyTelemetryLabel(key, value, d);
            } while (j.Consume(','));
            if (!j.Consume('}'))
              return Error(Path(index, ".metric"), "expected ',' or '}'");
          }
        } else if ((key == "values" || key == "value") && j.Peek('[')) {
          s.single = key == "value";
          s.values = j.pos();
          if (const char* after = s.single ? nullptr : SkipPairsFast(j.pos(), j.end()))
            j.set_pos(after);
          else if (!j.SkipValue())
            return Error(Path(index, "." + key), "malformed array (truncated JSON?)");
          s.values_end = j.pos();
          have_values = true;
        } else if (!j.SkipValue()) {
          return Error(Path(index, "." + Quote(key)), "malformed value");
        }
      } while (j.Consume(','));
      if (!j.Consume('}'))
        return Error(Path(index), "expected ',' or '}' (truncated JSON?)");
    }
    if (!have_values)
      return Status::Ok();  // a native histogram or an empty series: nothing mfu reads
    std::optional<TelemetryField> field = ResolveTelemetryMetric(name, &s.scale);
    if (!field) {
      stats_.Unknown(name.empty() ? "(no __name__)" : name);
      stats_.stats.unknown_metric_samples += CountSamples(s) - 1;
      stats_.stats.samples += CountSamples(s);
      return Status::Ok();
    }
    const bool amd = IsAmdMetric(name);
    if (amd && *field == TelemetryField::kSmClockMhz && !IsAmdSmClockSeries(clock_type, clock_index))
      return Status::Ok();
    d.vendor = amd ? "amd" : "nvidia";
    s.field = *field;
    MFU_ASSIGN_OR_RETURN(size_t device, devices_.Intern(std::move(d), origin_));
    s.device = static_cast<uint32_t>(device);
    s.name = InternName(name);
    series_.push_back(s);
    return Status::Ok();
  }

  // Samples of an unknown series, counted without parsing: one per "[" pair.
  static int64_t CountSamples(const Series& s) {
    if (s.single)
      return 1;
    int64_t n = 0;
    for (const char* p = s.values + 1; p < s.values_end; ++p)
      n += *p == '[';
    return n;
  }

  uint32_t InternName(const std::string& name) {
    for (uint32_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == name)
        return i;
    }
    names_.push_back(name);
    return static_cast<uint32_t>(names_.size() - 1);
  }

  // A cursor over one series' [t, "v"] pairs.
  struct Cursor {
    const Series* s;
    Json j;
    int64_t element = 0;
    bool has = false;
    int64_t t = 0;
    double v = 0;
  };

  // The next pair of `c`: `has` false past the end.
  Status Next(Cursor& c) {
    // The common case, ",[t,\"v\"]" with a later time, inline; anything else
    // (first pair, end, spaces, errors) through NextSlow.
    const char* p = c.j.pos();
    if (!c.s->single && c.element > 0 && p < c.j.end() && *p == ',') {
      int64_t t = 0;
      double v = 0;
      const char* after = FastSample(p + 1, c.j.end(), &t, &v);
      if (after != nullptr && t > c.t) {
        c.j.set_pos(after);
        c.t = t;
        c.v = v;
        ++c.element;
        return Status::Ok();
      }
    }
    return NextSlow(c);
  }

  Status NextSlow(Cursor& c) {
    Json& j = c.j;
    if (c.s->single) {
      if (c.element > 0) {
        c.has = false;
        return Status::Ok();
      }
    } else if (c.element == 0) {
      j.Consume('[');
      if (j.Consume(']')) {
        c.has = false;
        return Status::Ok();
      }
    } else if (!j.Consume(',')) {
      if (!j.Consume(']'))
        return Error(ElementPath(c), "expected ',' or ']'");
      c.has = false;
      return Status::Ok();
    }
    std::string_view value;
    int64_t t = 0;
    if (const char* after = FastPair(j.pos(), j.end(), &t, &value)) {
      j.set_pos(after);
    } else {
      if (!j.Consume('['))
        return Error(ElementPath(c), "expected a [time, \"value\"] pair");
      std::string_view ts = j.Token();
      if (!ParseTimestampMs(ts, &t))
        return Error(ElementPath(c), "time '" + Quote(ts) + "' is not a number of seconds");
      if (!j.Consume(',') || !j.RawString(&value) || !j.Consume(']'))
        return Error(ElementPath(c), "expected a [time, \"value\"] pair");
    }
    if (!ParseSampleValue(value, &c.v))
      return Error(ElementPath(c), "value \"" + Quote(value) + "\" is not a number");
    if (c.element > 0 && t <= c.t)
      return Error(ElementPath(c), "times do not increase");
    c.t = t;
    c.has = true;
    ++c.element;
    return Status::Ok();
  }

  std::string ElementPath(const Cursor& c) const {
    return Path(c.s->index, c.s->single ? ".value" : ".values[" + std::to_string(c.element) + "]");
  }

  Status Merge(std::span<const uint32_t> series, std::vector<TelemetryPoint>& points) {
    points.clear();
    cursors_.clear();
    for (uint32_t i : series) {
      const Series& s = series_[i];
      cursors_.push_back(Cursor{&s, Json(s.values, s.values_end)});
      MFU_RETURN_IF_ERROR(Next(cursors_.back()));
    }
    while (true) {
      int64_t t = 0;
      bool any = false;
      for (const Cursor& c : cursors_) {
        if (c.has && (!any || c.t < t)) {
          t = c.t;
          any = true;
        }
      }
      if (!any)
        return Status::Ok();
      TelemetryPoint& p = points.emplace_back();
      p.time_ms = t;
      uint64_t filled = 0;
      for (Cursor& c : cursors_) {
        if (!c.has || c.t != t)
          continue;
        Apply(c, p, filled);
        MFU_RETURN_IF_ERROR(Next(c));
      }
    }
  }

  void Apply(const Cursor& c, TelemetryPoint& p, uint64_t& filled) {
    ++stats_.stats.samples;
    stats_.Store(names_[c.s->name], c.s->field, c.v, c.s->scale, p, filled);
  }

  std::string_view text_;
  std::string_view origin_;
  DeviceTable devices_;
  StatsBuilder& stats_;
  std::string result_type_;
  std::vector<Series> series_;
  std::vector<std::string> names_;
  std::vector<Cursor> cursors_;
};

}  // namespace

Status ReadQueryRange(std::string_view text, std::string_view origin, const TelemetryReadOptions& options,
                      TelemetryVisitor& visitor, StatsBuilder& stats) {
  QueryRangeReader reader(text, origin, options, stats);
  MFU_RETURN_IF_ERROR(reader.Index());
  return reader.Deliver(visitor);
}

}  // namespace mfu::fleet
