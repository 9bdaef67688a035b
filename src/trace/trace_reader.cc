// Stage 3: reading (plain or gzip, in bounded chunks), the scan/parse
// pipeline on one or more threads, and the top-level metadata; the merge of
// the per-thread builders is trace_merge.cc. See docs/trace.md for the pipeline.

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <thread>

#include "base/parallel.h"
#include "base/param.h"
#include "mfu/trace.h"
#include "trace/event_parser.h"
#include "trace/gzip_source.h"
#include "trace/scanner.h"
#include "trace/sort_keys.h"
#include "trace/trace_merge.h"
#include "trace/trace_stats.h"

namespace mfu {

const char* TraceEventKindName(TraceEventKind kind) {
  static constexpr const char* kNames[kNumTraceEventKinds] = {
      "cpu_op", "user_annotation",     "python_function", "runtime", "kernel", "memcpy",
      "memset", "gpu_user_annotation", "cuda_sync",       "instant", "other"};
  return kNames[static_cast<size_t>(kind)];
}

uint64_t RankTrace::error_count() const {
  uint64_t n = 0;
  for (const auto& d : diagnostics) {
    if (d.severity == Severity::kError)
      n += d.count;
  }
  return n;
}

std::string RankTrace::device_name() const {
  for (const auto& d : devices) {
    if (!d.name.empty())
      return d.name;
  }
  return "";
}

namespace trace {

namespace {
struct DiagnosticInfo {
  const char* name;
  Severity severity;
  const char* description;
};
constexpr DiagnosticInfo kDiagnosticInfo[] = {
#define MFU_TRACE_DIAG_INFO(name, severity, description) {#name, Severity::severity, description},
    MFU_TRACE_DIAGNOSTICS(MFU_TRACE_DIAG_INFO)
#undef MFU_TRACE_DIAG_INFO
};
}  // namespace

void DiagnosticCounter::Add(DiagnosticId id, uint64_t offset, std::string_view text, uint64_t n) {
  auto i = static_cast<size_t>(id);
  counts_[i] += n;
  if (examples_[i].size() < kMaxExamples) {
    examples_[i].push_back({offset, std::string(text.substr(0, 80))});
  }
}

void DiagnosticCounter::Merge(const DiagnosticCounter& other) {
  // Keep the examples with the smallest offsets: the same for any number of
  // threads (each builder sees its batches in file order).
  for (size_t i = 0; i < kNumDiagnostics; ++i) {
    counts_[i] += other.counts_[i];
    auto& ex = examples_[i];
    ex.insert(ex.end(), other.examples_[i].begin(), other.examples_[i].end());
    std::sort(ex.begin(), ex.end(),
              [](const DiagnosticExample& a, const DiagnosticExample& b) { return a.byte_offset < b.byte_offset; });
    if (ex.size() > kMaxExamples)
      ex.resize(kMaxExamples);
  }
}

std::vector<Diagnostic> DiagnosticCounter::Finish() const {
  std::vector<Diagnostic> out;
  for (size_t i = 0; i < kNumDiagnostics; ++i) {
    Diagnostic d;
    d.name = kDiagnosticInfo[i].name;
    d.severity = kDiagnosticInfo[i].severity;
    d.description = kDiagnosticInfo[i].description;
    d.count = counts_[i];
    d.examples = examples_[i];
    std::sort(d.examples.begin(), d.examples.end(),
              [](const DiagnosticExample& a, const DiagnosticExample& b) { return a.byte_offset < b.byte_offset; });
    out.push_back(std::move(d));
  }
  return out;
}

namespace {

constexpr size_t kChunkBytes = 8u << 20;
constexpr size_t kPadding = simdjson::SIMDJSON_PADDING;

// A chunk of decompressed bytes with the complete events found in it.
// A read chunk's bytes. Growing it leaves the new bytes uninitialised: each
// is written by a read before it is scanned (the padding after a read is
// zeroed explicitly), so a small document faults in only the pages it fills,
// not the 8-24 MiB a zero-filling std::vector<char>::resize touched (80% of
// a 0.9 MB gzip parse was that memset and its page faults).
class ChunkBuffer {
 public:
  ChunkBuffer() = default;
  size_t size() const { return size_; }
  char* data() { return bytes_.get(); }
  const char* data() const { return bytes_.get(); }
  // Keeps the first min(size(), n) bytes.
  void resize(size_t n) { Grow(n, true); }
  // `n` bytes of no particular content (a pooled buffer's are not copied).
  void resize_discarding(size_t n) { Grow(n, false); }

 private:
  void Grow(size_t n, bool keep) {
    if (n > capacity_) {
      std::unique_ptr<char[]> grown(new char[n]);  // default-initialised: no zeroing
      if (keep && size_ > 0)
        std::memcpy(grown.get(), bytes_.get(), size_);
      bytes_ = std::move(grown);
      capacity_ = n;
    }
    size_ = n;
  }

  std::unique_ptr<char[]> bytes_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

struct Batch {
  ChunkBuffer bytes;           // owned chunk (read path), with padding; empty for a mapping
  const char* data = nullptr;  // stream offset `base` is data[0]
  uint64_t base = 0;
  size_t capacity = 0;  // readable bytes from data
  std::vector<EventSpan> spans;
  bool mapped = false;     // data is the whole input, alive until the parse ends (no copy)
  bool droppable = false;  // ... and a file mapping whose parsed pages may be dropped
};

void ParseBatch(TraceBuilder& builder, const Batch& batch) {
  std::vector<char> copy;
  for (const EventSpan& span : batch.spans) {
    const size_t at = static_cast<size_t>(span.offset - batch.base);
    const size_t readable = batch.capacity - at;
    if (readable >= span.length + kPadding) {
      ParseEvent(builder, batch.data + at, span.length, readable, span.offset);
      continue;
    }
    // Too close to the end of a mapping for simdjson's padding: copy.
    copy.assign(batch.data + at, batch.data + at + span.length);
    copy.resize(span.length + kPadding, '\0');
    ParseEvent(builder, copy.data(), span.length, copy.size(), span.offset);
  }
#if defined(MADV_DONTNEED)
  // Drop parsed pages of a mapping from the resident set (they are re-read
  // from the page cache if a neighbouring batch touches them again).
  if (batch.droppable && !batch.spans.empty()) {
    const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t lo = (batch.spans.front().offset + page - 1) / page * page;
    const uint64_t hi = (batch.spans.back().offset + batch.spans.back().length) / page * page;
    if (hi > lo) {
      madvise(const_cast<char*>(batch.data) + (lo - batch.base), static_cast<size_t>(hi - lo), MADV_DONTNEED);
    }
  }
#endif
}

// Runs the batches through `threads` builders (inline when 1).
class BatchRunner {
 public:
  // `expected_bytes`: the input's size when known (0 if not), to reserve the
  // builders' columns once (Kineto events take 200-400 bytes each).
  BatchRunner(int threads, bool keep_python, uint64_t expected_bytes)
      : builders_(static_cast<size_t>(std::max(threads, 1))) {
    const size_t per_builder = static_cast<size_t>(
        std::min<uint64_t>(expected_bytes / 200 / builders_.size() * 5 / 4 + 1024, uint64_t{1} << 26));
    for (auto& b : builders_) {
      b = std::make_unique<TraceBuilder>();
      b->keep_python_functions = keep_python;
      if (expected_bytes > 0)
        b->Reserve(per_builder);
    }
    if (builders_.size() > 1) {
      for (size_t i = 0; i < builders_.size(); ++i)
        workers_.emplace_back([this, i] { Work(*builders_[i]); });
    }
  }
  ~BatchRunner() { Finish(); }

  void Submit(Batch batch) {
    if (workers_.empty()) {
      ParseBatch(*builders_[0], batch);
      if (!batch.mapped)
        Recycle(std::move(batch.bytes));
      return;
    }
    std::unique_lock<std::mutex> lock(mu_);
    space_.wait(lock, [&] { return queue_.size() < builders_.size() + 1; });
    queue_.push_back(std::move(batch));
    ready_.notify_one();
  }

  // A buffer of at least `n` bytes, reused when possible (bounds memory).
  ChunkBuffer Buffer(size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    ChunkBuffer buf;
    if (!pool_.empty()) {
      buf = std::move(pool_.back());
      pool_.pop_back();
    }
    if (buf.size() < n)
      buf.resize_discarding(n);
    return buf;
  }

  void Finish() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
    }
    ready_.notify_all();
    for (auto& t : workers_)
      t.join();
    workers_.clear();
  }

  std::vector<std::unique_ptr<TraceBuilder>>& builders() { return builders_; }

 private:
  void Work(TraceBuilder& builder) {
    while (true) {
      Batch batch;
      {
        std::unique_lock<std::mutex> lock(mu_);
        ready_.wait(lock, [&] { return closing_ || !queue_.empty(); });
        if (queue_.empty())
          return;
        batch = std::move(queue_.front());
        queue_.pop_front();
      }
      space_.notify_one();
      ParseBatch(builder, batch);
      if (!batch.mapped)
        Recycle(std::move(batch.bytes));
    }
  }
  void Recycle(ChunkBuffer bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (pool_.size() < builders_.size() + 2)
      pool_.push_back(std::move(bytes));
  }

  std::vector<std::unique_ptr<TraceBuilder>> builders_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<Batch> queue_;
  std::vector<ChunkBuffer> pool_;
  bool closing_ = false;
};

std::vector<int64_t> ParseRanks(const nlohmann::json& j) {
  std::vector<int64_t> ranks;
  if (j.is_array()) {
    for (const auto& r : j) {
      if (r.is_number_integer())
        ranks.push_back(r.get<int64_t>());
    }
  }
  return ranks;
}

// An integer field, or `fallback` when absent or not an int64 (a float out of
// range would be undefined behaviour to convert).
int64_t IntField(const nlohmann::json& object, const char* key, int64_t fallback) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer())
    return fallback;
  if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return fallback;
  return it->get<int64_t>();
}

// deviceProperties, distributedInfo and baseTimeNanoseconds from the
// document with its events removed.
void ReadMetadata(const std::string& text, RankTrace& out, DiagnosticCounter& diagnostics) {
  nlohmann::json meta = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (meta.is_discarded() || !meta.is_object()) {
    diagnostics.Add(DiagnosticId::k_metadata_unreadable, 0, text.substr(0, 80));
    return;
  }
  try {
    if (auto it = meta.find("baseTimeNanoseconds"); it != meta.end() && it->is_number_integer()) {
      out.base_time_ns = it->get<int64_t>();
    }
    if (auto it = meta.find("deviceProperties"); it != meta.end() && it->is_array()) {
      for (const auto& d : *it) {
        if (!d.is_object())
          continue;
        DeviceInfo info;
        info.id = IntField(d, "id", -1);
        info.name = d.value("name", std::string());
        info.num_sms = IntField(d, "numSms", 0);
        info.total_memory_bytes = IntField(d, "totalGlobalMem", 0);
        out.devices.push_back(std::move(info));
      }
    }
    if (auto it = meta.find("distributedInfo"); it != meta.end() && it->is_object()) {
      const auto& di = *it;
      out.rank = IntField(di, "rank", -1);
      out.world_size = IntField(di, "world_size", -1);
      out.backend = di.value("backend", std::string());
      if (auto pg = di.find("pg_config"); pg != di.end() && pg->is_array()) {
        for (const auto& g : *pg) {
          if (!g.is_object())
            continue;
          ProcessGroup group;
          group.name = g.value("pg_name", std::string());
          group.desc = g.value("pg_desc", std::string());
          if (auto r = g.find("ranks"); r != g.end())
            group.ranks = ParseRanks(*r);
          out.process_groups.push_back(std::move(group));
        }
      }
    }
  } catch (const nlohmann::json::exception& e) {
    diagnostics.Add(DiagnosticId::k_metadata_unreadable, 0, e.what());
  }
}

StatusOr<RankTrace> Finish(RankTrace out, TraceScanner& scanner, BatchRunner& runner, DiagnosticCounter& diagnostics,
                           uint64_t total, const std::string& read_error, std::string_view origin,
                           const TraceParseOptions& options);

// The event cap and the progress callback, checked as chunks are scanned.
class ParseLimits {
 public:
  ParseLimits(std::string_view origin, const TraceParseOptions& options, uint64_t total_bytes)
      : origin_(origin), options_(options), total_bytes_(total_bytes), next_report_(options.progress_interval_bytes) {}

  // Counts `new_events` after `bytes_read` bytes; an error past the cap.
  Status Advance(uint64_t bytes_read, size_t new_events) {
    events_ += new_events;
    if (options_.max_events > 0 && events_ > options_.max_events) {
      return OutOfRangeError(std::string(origin_) + ": more than " + std::to_string(options_.max_events) +
                             " events (the " + base::Param("max_events") +
                             " cap, which bounds memory); raise it or trim the trace");
    }
    if (options_.progress && bytes_read >= next_report_) {
      options_.progress(TraceProgress{origin_, bytes_read, total_bytes_, events_});
      next_report_ = bytes_read + options_.progress_interval_bytes;
    }
    return Status::Ok();
  }

 private:
  std::string_view origin_;
  const TraceParseOptions& options_;
  uint64_t total_bytes_;
  uint64_t events_ = 0;
  uint64_t next_report_;
};

StatusOr<RankTrace> ParseStream(ByteSource& source, std::string_view origin, const TraceParseOptions& options,
                                uint64_t expected_bytes) {
  RankTrace out;
  out.path = std::string(origin);
  DiagnosticCounter diagnostics;
  TraceScanner scanner;
  BatchRunner runner(options.threads, options.keep_python_functions, expected_bytes);
  ParseLimits limits(origin, options, expected_bytes);
  // Reads of kChunkBytes, or of the whole input when it is known to be
  // smaller (no 8 MiB buffers to fill for a small document).
  const size_t chunk =
      expected_bytes > 0 ? static_cast<size_t>(std::min<uint64_t>(kChunkBytes, expected_bytes + 64)) : kChunkBytes;
  ChunkBuffer buf = runner.Buffer(chunk + kPadding);
  uint64_t base = 0;  // stream offset of buf[0]
  size_t filled = 0;  // valid bytes in buf
  std::string read_error;
  uint64_t total = 0;
  while (true) {
    // Only an event still open is carried over (the scanner keeps nothing of
    // the gaps between events, and no event past TraceScanner::kMaxEventBytes):
    // reading at least as much as is carried keeps the copies linear.
    const size_t want = std::max(chunk, filled);
    if (buf.size() < filled + want + kPadding)
      buf.resize(filled + want + kPadding);
    size_t n = source.Read(buf.data() + filled, want, read_error);
    total += n;
    filled += n;
    std::memset(buf.data() + filled, 0, kPadding);
    Batch batch;
    scanner.Scan(buf.data(), base, filled, batch.spans, diagnostics);
    MFU_RETURN_IF_ERROR(limits.Advance(total, batch.spans.size()));
    const uint64_t keep = scanner.KeepFrom();
    const size_t keep_at = static_cast<size_t>(keep - base);
    ChunkBuffer next = runner.Buffer(std::max(filled - keep_at, chunk) + chunk + kPadding);
    std::memcpy(next.data(), buf.data() + keep_at, filled - keep_at);
    if (!batch.spans.empty()) {
      batch.bytes = std::move(buf);
      batch.data = batch.bytes.data();
      batch.capacity = batch.bytes.size();
      batch.base = base;
      runner.Submit(std::move(batch));
    }
    buf = std::move(next);
    filled -= keep_at;
    base = keep;
    if (n == 0 || !read_error.empty())
      break;
  }
  return Finish(std::move(out), scanner, runner, diagnostics, total, read_error, origin, options);
}

// Drops pages [lo, hi) of a mapping from the resident set, rounded inwards
// to whole pages.
void DropPages(const char* map, uint64_t lo, uint64_t hi) {
#if defined(MADV_DONTNEED)
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  lo = (lo + page - 1) / page * page;
  hi = hi / page * page;
  if (hi > lo)
    madvise(const_cast<char*>(map) + lo, static_cast<size_t>(hi - lo), MADV_DONTNEED);
#else
  (void)map, (void)lo, (void)hi;
#endif
}

// Zero-copy path for plain files: scanner and parsers read the mapping, and
// parsed pages are dropped from the resident set as batches complete (and
// scanned pages without events, e.g. whitespace, at once).
StatusOr<RankTrace> ParseMapped(const char* map, size_t size, bool file_backed, std::string_view origin,
                                const TraceParseOptions& options) {
  RankTrace out;
  out.path = std::string(origin);
  DiagnosticCounter diagnostics;
  TraceScanner scanner;
  // Reserve for the events expected from the size, never past the cap.
  const uint64_t expected = options.max_events > 0 ? std::min<uint64_t>(size, options.max_events * 256) : size;
  BatchRunner runner(options.threads, options.keep_python_functions, expected);
  ParseLimits limits(origin, options, size);
  size_t scanned = 0;
  while (scanned < size) {
    const size_t limit = std::min(size, scanned + kChunkBytes);
    Batch batch;
    scanner.Scan(map, 0, limit, batch.spans, diagnostics);
    MFU_RETURN_IF_ERROR(limits.Advance(limit, batch.spans.size()));
    if (batch.spans.empty()) {
      if (file_backed)
        DropPages(map, scanned, std::min<uint64_t>(limit, scanner.KeepFrom()));
      scanned = limit;
      continue;
    }
    scanned = limit;
    batch.data = map;
    batch.base = 0;
    batch.capacity = size;
    batch.mapped = true;
    batch.droppable = file_backed;
    runner.Submit(std::move(batch));
  }
  return Finish(std::move(out), scanner, runner, diagnostics, size, "", origin, options);
}

StatusOr<RankTrace> Finish(RankTrace out, TraceScanner& scanner, BatchRunner& runner, DiagnosticCounter& diagnostics,
                           uint64_t total, const std::string& read_error, std::string_view origin,
                           const TraceParseOptions& options) {
  runner.Finish();
  out.input_bytes = total;
  if (!read_error.empty() && total == 0)
    return ParseError(std::string(origin) + ": " + read_error);
  if (!scanner.finished() || !read_error.empty()) {
    diagnostics.Add(DiagnosticId::k_truncated_input, total,
                    !read_error.empty()       ? read_error
                    : scanner.inside_events() ? "end of input inside traceEvents"
                                              : "end of input before the top-level object closed");
  }
  if (scanner.metadata_truncated())
    diagnostics.Add(DiagnosticId::k_metadata_too_large, 0, "");
  if (!scanner.saw_events() && !read_error.empty()) {
    // A truncated or corrupt gzip says so, not "no traceEvents".
    return ParseError(std::string(origin) + ": " + read_error + " (after " + std::to_string(total) +
                      " decompressed bytes, before any traceEvents)");
  }
  if (!scanner.saw_events()) {
    return ParseError(std::string(origin) + ": not a Kineto/Chrome trace (no traceEvents array found in " +
                      std::to_string(total) + " bytes)");
  }
  // The metadata text is complete only when the top-level object closed.
  std::string meta = scanner.metadata_json();
  // Truncated inside the events: the text so far ends with "traceEvents":[].
  if (!scanner.finished() && scanner.inside_events())
    meta += "}";
  ReadMetadata(meta, out, diagnostics);
  MergeAndSort(runner.builders(), out, diagnostics, options.threads);
  out.diagnostics = diagnostics.Finish();
  if (out.num_events() == 0 && out.error_count() > 0) {
    return ParseError(std::string(origin) + ": no usable event (" + std::to_string(out.error_count()) +
                      " malformed); first problem: " + [&] {
                        for (const auto& d : out.diagnostics) {
                          if (d.severity == Severity::kError && d.count > 0) {
                            return std::string(d.name) + " at byte " +
                                   std::to_string(d.examples.empty() ? 0 : d.examples[0].byte_offset);
                          }
                        }
                        return std::string();
                      }());
  }
  return out;
}

}  // namespace
}  // namespace trace

StatusOr<RankTrace> ParseTraceBuffer(std::string_view json, std::string_view origin, const TraceParseOptions& options) {
  if (trace::IsGzip(json)) {
    trace::GzipSource source(std::make_unique<trace::MemorySource>(json));
    return trace::ParseStream(source, origin, options, 0);
  }
  trace::MemorySource source(json);
  return trace::ParseStream(source, origin, options, json.size());
}

StatusOr<RankTrace> ParseTraceFile(const FileSystem& fs, const std::string& path, const TraceParseOptions& options) {
  // Mapped (no copy through read()): plain JSON is scanned in place, gzip
  // inflated from the mapping.
  MFU_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file, fs.Map(path));
  const std::string_view bytes = file->bytes();
  if (trace::IsGzip(bytes)) {
    trace::GzipSource source(std::make_unique<trace::MemorySource>(bytes));
    return trace::ParseStream(source, path, options, 0);
  }
  return trace::ParseMapped(bytes.data(), bytes.size(), file->file_backed(), path, options);
}

StatusOr<std::vector<RankTrace>> ParseTraceSet(const FileSystem& fs, const std::string& path,
                                               const TraceParseOptions& options, int max_parallel) {
  std::vector<std::string> files;
  MFU_ASSIGN_OR_RETURN(FileInfo info, fs.Stat(path));
  if (info.kind == FileKind::kDirectory) {
    MFU_ASSIGN_OR_RETURN(std::vector<DirectoryEntry> entries, fs.ListDirectory(path));
    for (const DirectoryEntry& entry : entries) {  // sorted by name
      if (entry.kind == FileKind::kRegular && (entry.name.ends_with(".json") || entry.name.ends_with(".json.gz")))
        files.push_back(path + (path.ends_with("/") ? "" : "/") + entry.name);
    }
    if (files.empty())
      return NotFoundError(path + ": no *.json or *.json.gz trace files in this directory");
  } else {
    files.push_back(path);
  }
  std::vector<StatusOr<RankTrace>> results(files.size(), StatusOr<RankTrace>(InternalError("not parsed")));
  // Files in parallel, the threads split among them (never files x threads).
  const int files_at_once =
      static_cast<int>(std::min<size_t>(files.size(), static_cast<size_t>(std::max(1, max_parallel))));
  TraceParseOptions per_file = options;
  per_file.threads = std::max(1, options.threads / files_at_once);
  ParallelFor(files.size(), files_at_once, [&](size_t i) { results[i] = ParseTraceFile(fs, files[i], per_file); });
  std::vector<RankTrace> traces;
  for (auto& r : results) {
    if (!r.ok())
      return r.status();
    traces.push_back(std::move(r).value());
  }
  std::stable_sort(traces.begin(), traces.end(), [](const RankTrace& a, const RankTrace& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.path < b.path;
  });
  return traces;
}

}  // namespace mfu
