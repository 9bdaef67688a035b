#pragma once

// A parsed PyTorch profiler (Kineto) trace: one rank's events as typed
// columns (int64 nanosecond timestamps, interned names), the metadata needed
// to interpret them, and counted diagnostics about malformed input
// (perfetto's stats table is the model). docs/trace.md documents the schema
// and every diagnostic.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/status.h"

namespace mfu {

// What an event is, from its `cat` (current and legacy Kineto names).
enum class TraceEventKind : uint8_t {
  kCpuOp = 0,          // cpu_op, Operator (2021)
  kUserAnnotation,     // user_annotation: record_function, ProfilerStep#N
  kPythonFunction,     // python_function (kept only when asked for)
  kRuntime,            // cuda_runtime, cuda_driver, Runtime, mtia_runtime, xpu_runtime (ROCm reuses these)
  kKernel,             // kernel, Kernel, mtia_ccp_events
  kMemcpy,             // gpu_memcpy, Memcpy
  kMemset,             // gpu_memset, Memset
  kGpuUserAnnotation,  // gpu_user_annotation
  kCudaSync,           // cuda_sync
  kInstant,            // ph "i"
  kOther,              // any other complete event (overhead, Trace, ...)
};
inline constexpr size_t kNumTraceEventKinds = 11;
const char* TraceEventKindName(TraceEventKind kind);

inline bool IsGpuActivity(TraceEventKind k) {
  return k == TraceEventKind::kKernel || k == TraceEventKind::kMemcpy || k == TraceEventKind::kMemset;
}

inline constexpr uint32_t kNoString = 0xffffffffu;
inline constexpr uint32_t kNoIndex = 0xffffffffu;
inline constexpr int64_t kNoId = -1;

// Interned strings: every distinct name is stored once.
class StringTable {
 public:
  StringTable() = default;
  // The index holds views into `strings_`: a copy must rebuild it (a move
  // keeps the deque's blocks, so views stay valid).
  StringTable(const StringTable& other) : strings_(other.strings_) { Reindex(); }
  StringTable& operator=(const StringTable& other) {
    if (this != &other) {
      strings_ = other.strings_;
      Reindex();
    }
    return *this;
  }
  StringTable(StringTable&&) noexcept = default;
  StringTable& operator=(StringTable&&) noexcept = default;

  uint32_t Intern(std::string_view s);
  std::string_view Get(uint32_t id) const { return id == kNoString ? std::string_view() : strings_[id]; }
  size_t size() const { return strings_.size(); }

 private:
  void Reindex();
  std::deque<std::string> strings_;                       // a deque never moves its elements
  std::unordered_map<std::string_view, uint32_t> index_;  // views into strings_
};

// Where an event ran: a CPU thread or a GPU stream. `pid`/`tid` are kept as
// the trace wrote them (integers or strings).
struct TraceTrack {
  std::string pid;
  std::string tid;
  bool gpu = false;
  int64_t device = -1;  // GPU events: args.device or pid
  int64_t stream = -1;  // GPU events: args.stream, or the number in "stream 7"
};

// Collective arguments carried by NCCL/RCCL kernels (PyTorch >= 2.2) or by
// record_param_comms CPU ops.
struct CollectiveArgs {
  uint32_t collective = kNoString;  // "allreduce", "_allgather_base", "all_to_all", "send"...
  int64_t in_nelems = -1;
  int64_t out_nelems = -1;
  int64_t group_size = -1;
  uint32_t dtype = kNoString;  // "Float", "BFloat16"...
  uint32_t pg_name = kNoString;
  uint32_t pg_desc = kNoString;
  uint32_t pg_ranks = kNoString;  // the string "[0, 1, ...]" as written
  int64_t seq = -1;               // collective sequence number when present
};

// Shapes recorded with record_shapes=True on a CPU op.
struct OpShapes {
  std::vector<std::vector<int64_t>> input_dims;  // one list per input ([] for scalars)
  std::vector<uint32_t> input_types;             // "c10::BFloat16", "float", "Scalar"...
  std::vector<uint32_t> concrete_inputs;         // stringified scalars ("False", "[1, 1]"), "" for tensors
};

// Diagnostic severity, as in perfetto's stats: info (expected quirks),
// data loss (events dropped), error (input is broken).
enum class Severity : uint8_t { kInfo, kDataLoss, kError };

struct DiagnosticExample {
  uint64_t byte_offset = 0;  // in the decompressed JSON
  std::string snippet;       // up to 80 bytes of the offending text
};

struct Diagnostic {
  const char* name = "";
  Severity severity = Severity::kInfo;
  const char* description = "";
  uint64_t count = 0;
  std::vector<DiagnosticExample> examples;  // the first few
};

struct DeviceInfo {
  int64_t id = -1;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int64_t num_sms = 0;
  int64_t total_memory_bytes = 0;
};

struct ProcessGroup {
  std::string name;
  std::string desc;
  std::vector<int64_t> ranks;
};

// One rank's trace. Event columns all have the same length; events are
// sorted by (ts_ns, -dur_ns) after parsing (the input order is not trusted).
struct RankTrace {
  std::string path;
  int64_t rank = -1;  // distributedInfo.rank; -1 when absent
  int64_t world_size = -1;
  std::string backend;
  std::vector<ProcessGroup> process_groups;
  std::vector<DeviceInfo> devices;
  int64_t base_time_ns = 0;  // baseTimeNanoseconds (0 when absent)
  // ts of traceEvents[0] in file order when it is a complete event with a
  // cat other than "Trace", else kNoId. HTA's idle breakdown compares gaps of
  // GPU ops whose launch is missing against it (kHtaCompat reproduces that).
  int64_t first_event_ts_ns = kNoId;
  uint64_t input_bytes = 0;  // decompressed JSON size

  // Event columns.
  std::vector<int64_t> ts_ns;   // absolute: base_time_ns + ts * 1000, exact
  std::vector<int64_t> dur_ns;  // 0 for instant events
  std::vector<TraceEventKind> kind;
  std::vector<uint32_t> name;        // into strings
  std::vector<uint32_t> track;       // into tracks
  std::vector<int64_t> correlation;  // args.correlation, kNoId when absent
  std::vector<int64_t> external_id;  // args["External id"] / "external id"
  std::vector<uint32_t> collective;  // into collectives, kNoIndex
  std::vector<uint32_t> shapes;      // into op_shapes, kNoIndex

  StringTable strings;
  std::vector<TraceTrack> tracks;
  std::vector<CollectiveArgs> collectives;
  std::vector<OpShapes> op_shapes;
  std::vector<Diagnostic> diagnostics;  // every counter, zero or not

  size_t num_events() const { return ts_ns.size(); }
  int64_t end_ns(size_t i) const { return ts_ns[i] + dur_ns[i]; }
  std::string_view event_name(size_t i) const { return strings.Get(name[i]); }
  const TraceTrack& event_track(size_t i) const { return tracks[track[i]]; }
  // Total of error-severity diagnostics.
  uint64_t error_count() const;
  // The GPU name from deviceProperties (first non-empty), or "".
  std::string device_name() const;
};

// Progress of one file's parse: `path`, the decompressed bytes read so far
// and the file's size on disk when known (plain JSON; 0 for gzip), and the
// events found so far. Called from the reading thread, about every 64 MiB.
struct TraceProgress {
  std::string_view path;
  uint64_t bytes_read = 0;
  uint64_t total_bytes = 0;
  uint64_t events = 0;
};

struct TraceParseOptions {
  bool keep_python_functions = false;  // python_function events dominate with_stack traces
  int threads = 1;                     // worker threads for one file's events
  // The most events one file may hold (0: no limit). Memory grows with the
  // events kept (the event columns hold 49 bytes each; `mfu trace` peaks at
  // about 113 with its analyses), so this is the memory cap; beyond it the parse fails with kOutOfRange naming
  // the file and the cap. Whitespace, long strings and skipped events cost no
  // memory: input bytes are read in bounded chunks.
  uint64_t max_events = 0;
  // Called as the parse advances (never when unset); must be thread-safe
  // when several files are parsed at once (ParseTraceSet).
  std::function<void(const TraceProgress&)> progress;
  uint64_t progress_interval_bytes = 64u << 20;  // between two calls, at most one per chunk
};

// Parses one Kineto JSON trace held in memory. `origin` names it in
// diagnostics. Malformed events are counted and skipped; the result is an
// error (kParse) only when nothing usable remains (not JSON, no traceEvents,
// no valid event).
StatusOr<RankTrace> ParseTraceBuffer(std::string_view json, std::string_view origin,
                                     const TraceParseOptions& options = {});

// Reads and parses `path` through `fs` (.json or .json.gz; gzip is detected
// by its magic bytes); on the disk the file is mapped, not copied. kNotFound
// when it cannot be opened or is not a regular file (FileSystem's messages:
// "<path>: permission denied", "<path>: not a regular file (fifo)"), kParse as above (a gzip
// stream that ends early: "truncated gzip stream"), kOutOfRange past
// `options.max_events`.
StatusOr<RankTrace> ParseTraceFile(const FileSystem& fs, const std::string& path,
                                   const TraceParseOptions& options = {});

// The bytes of `path`, decompressed when it is gzip (detected by its magic
// bytes), for tools that read a trace as text. kNotFound when it cannot be
// opened, kParse on a read error or corrupt gzip data.
StatusOr<std::string> ReadTraceBytes(const FileSystem& fs, const std::string& path);

// The trace files of a job: `path` is one file or a directory whose *.json and
// *.json.gz files are ranks. Files are parsed in parallel (`max_parallel`
// files at a time, each with options.threads / that many workers) and
// returned sorted by rank (then path). An unreadable directory is an error
// that says so (permission denied), never "no trace files".
StatusOr<std::vector<RankTrace>> ParseTraceSet(const FileSystem& fs, const std::string& path,
                                               const TraceParseOptions& options = {}, int max_parallel = 2);

}  // namespace mfu
