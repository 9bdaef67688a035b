// Multi-rank collective analysis (include/mfu/trace_collectives.h), stage 1:
// each rank's communication kernels with their collective fields (kind,
// group, sequence number, message size) from the kernel's args, the
// record_param_comms / NCCL annotation ops around its launch, or its shapes.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/strings.h"
#include "mfu/trace_collectives.h"
#include "trace/collectives_internal.h"

namespace mfu {
namespace {

constexpr size_t kNone = std::numeric_limits<size_t>::max();

// Checked a * b for non-negative operands; -1 on overflow.
int64_t CheckedMul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    return -1;
  return out;
}

// "[0, 1, 2]" -> {0, 1, 2}; empty when the text holds no integer.
std::vector<int64_t> ParseRankList(std::string_view text) {
  std::vector<int64_t> out;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    if (*p == '-' || (*p >= '0' && *p <= '9')) {
      int64_t v = 0;
      auto [next, ec] = std::from_chars(p, end, v);
      if (ec != std::errc())
        return {};
      out.push_back(v);
      p = next;
    } else {
      ++p;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Extraction of one rank's communication kernels.

// The record_param_comms and nccl:* ops around a kernel's launch.
struct LaunchOps {
  size_t rpc = kNone;
  size_t annotation = kNone;
};

constexpr uint8_t kOtherOp = 0, kRecordParamCommsOp = 1, kNcclAnnotationOp = 2;

std::vector<uint8_t> CommOpNames(const RankTrace& t) {
  std::vector<uint8_t> flags(t.strings.size(), kOtherOp);
  for (size_t id = 0; id < flags.size(); ++id) {
    std::string_view s = t.strings.Get(static_cast<uint32_t>(id));
    if (s == "record_param_comms") {
      flags[id] = kRecordParamCommsOp;
    } else if (base::StartsWith(s, "nccl:")) {
      flags[id] = kNcclAnnotationOp;
    }
  }
  return flags;
}

uint8_t OpFlag(const RankTrace& t, const std::vector<uint8_t>& flags, size_t i) {
  uint32_t id = t.name[i];
  return id < flags.size() ? flags[id] : kOtherOp;
}

// Walks every CPU track with a stack of open ops; for each runtime event whose
// correlation is in `wanted`, records the innermost enclosing comm ops.
std::unordered_map<int64_t, LaunchOps> OpsAroundLaunches(const RankTrace& t, const std::vector<uint8_t>& flags,
                                                         const std::unordered_set<int64_t>& wanted) {
  std::unordered_map<int64_t, LaunchOps> by_correlation;
  std::vector<std::vector<size_t>> stacks(t.tracks.size());
  for (size_t i = 0; i < t.num_events(); ++i) {
    if (t.track[i] >= t.tracks.size() || t.tracks[t.track[i]].gpu)
      continue;
    std::vector<size_t>& stack = stacks[t.track[i]];
    while (!stack.empty() && t.end_ns(stack.back()) <= t.ts_ns[i])
      stack.pop_back();
    TraceEventKind kind = t.kind[i];
    if (kind == TraceEventKind::kCpuOp || kind == TraceEventKind::kUserAnnotation) {
      stack.push_back(i);
    } else if (kind == TraceEventKind::kRuntime && wanted.count(t.correlation[i]) > 0) {
      LaunchOps ops;
      for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
        uint8_t f = OpFlag(t, flags, *it);
        if (f == kRecordParamCommsOp && ops.rpc == kNone)
          ops.rpc = *it;
        if (f == kNcclAnnotationOp && ops.annotation == kNone)
          ops.annotation = *it;
      }
      by_correlation.emplace(t.correlation[i], ops);
    }
  }
  return by_correlation;
}

// Launch ops for each kernel: through the runtime launch with the same
// correlation id, else through an op with the kernel's External id (traces
// whose runtime events were dropped).
std::vector<LaunchOps> FindLaunchOps(const RankTrace& t, const std::vector<size_t>& kernels) {
  std::vector<uint8_t> flags = CommOpNames(t);
  std::unordered_set<int64_t> wanted;
  for (size_t k : kernels) {
    if (t.correlation[k] != kNoId)
      wanted.insert(t.correlation[k]);
  }
  std::unordered_map<int64_t, LaunchOps> by_correlation = OpsAroundLaunches(t, flags, wanted);
  std::unordered_map<int64_t, size_t> by_external_id;
  for (size_t i = 0; i < t.num_events(); ++i) {
    if (t.external_id[i] != kNoId && OpFlag(t, flags, i) != kOtherOp)
      by_external_id.emplace(t.external_id[i], i);
  }
  std::vector<LaunchOps> out(kernels.size());
  for (size_t j = 0; j < kernels.size(); ++j) {
    size_t k = kernels[j];
    if (auto it = by_correlation.find(t.correlation[k]); it != by_correlation.end()) {
      out[j] = it->second;
    } else if (auto op = by_external_id.find(t.external_id[k]); op != by_external_id.end()) {
      (OpFlag(t, flags, op->second) == kRecordParamCommsOp ? out[j].rpc : out[j].annotation) = op->second;
    }
  }
  return out;
}

void FillGroup(const RankTrace& t, const CollectiveArgs& args, RankCollective& c) {
  std::string_view name = t.strings.Get(args.pg_name);
  std::string_view ranks = t.strings.Get(args.pg_ranks);
  c.group = std::string(name);
  if (!ranks.empty())
    c.group += "|" + std::string(ranks);
  c.group_desc = std::string(t.strings.Get(args.pg_desc));
  c.group_size = args.group_size > 0 ? args.group_size : static_cast<int64_t>(trace::GroupRanks(t, c.group).size());
  if (c.group_size <= 0)
    c.group_size = -1;
  if (c.group.empty() && t.world_size > 0 && c.group_size < 0)
    c.group_size = t.world_size;
  if (args.seq >= 0) {
    c.seq = args.seq;
    c.seq_from_trace = true;
  }
}

bool GathersToFull(CollectiveKind k) {
  return k == CollectiveKind::kAllGather || k == CollectiveKind::kGather;
}
bool ScattersFromFull(CollectiveKind k) {
  return k == CollectiveKind::kReduceScatter || k == CollectiveKind::kScatter;
}

// nccl-tests' size S from `In/Out msg nelems` x dtype.
int64_t BytesFromArgs(const RankTrace& t, const CollectiveArgs& a, CollectiveKind kind, int64_t group_size) {
  int64_t elem = DtypeSizeBytes(t.strings.Get(a.dtype));
  if (elem == 0)
    return -1;
  int64_t in = a.in_nelems, out = a.out_nelems, n = -1;
  if (GathersToFull(kind)) {
    n = out >= 0 ? out : (in >= 0 && group_size > 0 ? CheckedMul(in, group_size) : -1);
  } else if (ScattersFromFull(kind)) {
    n = in >= 0 ? in : (out >= 0 && group_size > 0 ? CheckedMul(out, group_size) : -1);
  } else {
    n = in >= 0 ? in : out;
  }
  return n < 0 ? -1 : CheckedMul(n, elem);
}

// Sum over the tensor inputs of numel x element size; per-rank input times the
// group size for gathers. -1 when no input has a known size.
int64_t BytesFromShapes(const RankTrace& t, const OpShapes& s, CollectiveKind kind, int64_t group_size) {
  int64_t total = -1;
  for (size_t j = 0; j < s.input_dims.size() && j < s.input_types.size(); ++j) {
    int64_t elem = DtypeSizeBytes(t.strings.Get(s.input_types[j]));
    if (elem == 0 || s.input_dims[j].empty())
      continue;
    int64_t bytes = elem;
    for (int64_t d : s.input_dims[j])
      bytes = d < 0 || bytes < 0 ? -1 : CheckedMul(bytes, d);
    if (bytes < 0)
      return -1;
    total = std::max<int64_t>(total, 0) + bytes;
  }
  if (total >= 0 && GathersToFull(kind))
    total = group_size > 0 ? CheckedMul(total, group_size) : -1;
  return total;
}

const OpShapes* ShapesOf(const RankTrace& t, size_t op) {
  if (op == kNone || t.shapes[op] == kNoIndex || t.shapes[op] >= t.op_shapes.size())
    return nullptr;
  return &t.op_shapes[t.shapes[op]];
}

const CollectiveArgs* ArgsOf(const RankTrace& t, size_t i) {
  if (i == kNone || t.collective[i] == kNoIndex || t.collective[i] >= t.collectives.size())
    return nullptr;
  return &t.collectives[t.collective[i]];
}

// Fills kind, group and size of kernel `k` from the best source available.
RankCollective ResolveCollective(const RankTrace& t, size_t k, const LaunchOps& ops) {
  RankCollective c;
  c.event = k;
  c.start_ns = t.ts_ns[k];
  c.dur_ns = t.dur_ns[k];
  const CollectiveArgs* args = ArgsOf(t, k);
  CollectiveSource args_source = CollectiveSource::kKernelArgs;
  if (args == nullptr && (args = ArgsOf(t, ops.rpc)) != nullptr)
    args_source = CollectiveSource::kRecordParamComms;
  CollectiveSource kind_source = args_source;
  if (args != nullptr)
    c.kind = CollectiveKindFromName(t.strings.Get(args->collective));
  if (c.kind == CollectiveKind::kUnknown && ops.annotation != kNone) {
    c.kind = CollectiveKindFromName(t.event_name(ops.annotation));
    kind_source = CollectiveSource::kOpShapes;
  }
  if (c.kind == CollectiveKind::kUnknown) {
    c.kind = CollectiveKindFromName(t.event_name(k));
    kind_source = CollectiveSource::kKernelName;
  }
  if (c.kind == CollectiveKind::kUnknown)
    c.op_name = std::string(t.event_name(k));
  if (args != nullptr) {
    FillGroup(t, *args, c);
    c.dtype = std::string(t.strings.Get(args->dtype));
    c.message_bytes = BytesFromArgs(t, *args, c.kind, c.group_size);
  } else if (t.world_size > 0) {
    c.group_size = t.world_size;  // no group information: assume the default group
  }
  CollectiveSource size_source = args_source;
  for (size_t op : {ops.annotation, ops.rpc}) {
    const OpShapes* shapes = ShapesOf(t, op);
    if (c.message_bytes >= 0 || shapes == nullptr)
      continue;
    c.message_bytes = BytesFromShapes(t, *shapes, c.kind, c.group_size);
    size_source = CollectiveSource::kOpShapes;
    if (c.dtype.empty() && !shapes->input_types.empty())
      c.dtype = std::string(t.strings.Get(shapes->input_types[0]));
  }
  // The least direct source any known field came from.
  c.source = c.message_bytes >= 0 ? std::max(kind_source, size_source) : kind_source;
  return c;
}

Status CheckClasses(const RankTrace& t, size_t num_classes, size_t index) {
  if (num_classes != t.num_events()) {
    return InvalidArgumentError("trace " + std::to_string(index) + " (" + t.path + "): " + std::to_string(num_classes) +
                                " kernel classes for " + std::to_string(t.num_events()) + " events");
  }
  return Status::Ok();
}

}  // namespace

CollectiveKind CollectiveKindFromName(std::string_view name) {
  const std::string_view full = name;
  for (std::string_view prefix : {"ncclKernel_", "ncclDevKernel_"}) {
    if (base::StartsWith(name, prefix)) {
      name.remove_prefix(prefix.size());
      name = name.substr(0, name.find_first_of("_("));
    }
  }
  for (std::string_view prefix : {"nccl:", "c10d::"}) {
    if (base::StartsWith(name, prefix))
      name.remove_prefix(prefix.size());
  }
  std::string key;  // lowercase, '_' dropped, cut at ' ', '(' or '<'
  for (char ch : name) {
    if (ch == ' ' || ch == '(' || ch == '<')
      break;
    if (ch != '_')
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  // Order matters: longer names before their prefixes.
  static constexpr std::pair<std::string_view, CollectiveKind> kTable[] = {
      {"allreduce", CollectiveKind::kAllReduce},
      {"allgather", CollectiveKind::kAllGather},
      {"reducescatter", CollectiveKind::kReduceScatter},
      {"alltoall", CollectiveKind::kAllToAll},
      {"broadcast", CollectiveKind::kBroadcast},
      {"bcast", CollectiveKind::kBroadcast},
      {"reduce", CollectiveKind::kReduce},
      {"gather", CollectiveKind::kGather},
      {"scatter", CollectiveKind::kScatter},
      {"sendrecv", CollectiveKind::kSendRecv},
      {"send", CollectiveKind::kSend},
      {"recv", CollectiveKind::kRecv},
      {"barrier", CollectiveKind::kBarrier},
  };
  for (const auto& [prefix, kind] : kTable) {
    if (base::StartsWith(key, prefix))
      return kind;
  }
  // Non-NCCL kernels that name their collective inside the name
  // ("multimem_all_reduce_kernel", "two_shot_all_reduce").
  std::string flat;
  for (char ch : full) {
    if (ch != '_')
      flat += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  for (const auto& [word, kind] :
       {std::pair{"allreduce", CollectiveKind::kAllReduce}, std::pair{"allgather", CollectiveKind::kAllGather},
        std::pair{"reducescatter", CollectiveKind::kReduceScatter}, std::pair{"alltoall", CollectiveKind::kAllToAll}}) {
    if (flat.find(word) != std::string::npos)
      return kind;
  }
  return CollectiveKind::kUnknown;
}

int64_t DtypeSizeBytes(std::string_view dtype) {
  for (std::string_view prefix : {"c10::", "torch.", "at::"}) {
    if (base::StartsWith(dtype, prefix))
      dtype.remove_prefix(prefix.size());
  }
  std::string key;
  for (char ch : dtype)
    key += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static constexpr std::pair<std::string_view, int64_t> kSizes[] = {
      {"float", 4},          {"float32", 4},  {"double", 8},      {"float64", 8},     {"half", 2},
      {"float16", 2},        {"bfloat16", 2}, {"int", 4},         {"int32", 4},       {"unsigned int", 4},
      {"uint32", 4},         {"long", 8},     {"long int", 8},    {"long long", 8},   {"int64", 8},
      {"unsigned long", 8},  {"uint64", 8},   {"short", 2},       {"short int", 2},   {"int16", 2},
      {"uint16", 2},         {"char", 1},     {"signed char", 1}, {"int8", 1},        {"byte", 1},
      {"unsigned char", 1},  {"uint8", 1},    {"bool", 1},        {"complexhalf", 4}, {"complexfloat", 8},
      {"complexdouble", 16},
  };
  for (const auto& [name, size] : kSizes) {
    if (key == name)
      return size;
  }
  if (base::StartsWith(key, "float8"))
    return 1;
  return 0;
}

const char* CollectiveSourceName(CollectiveSource source) {
  static constexpr const char* kNames[] = {"kernel_args", "record_param_comms", "op_shapes", "kernel_name"};
  size_t i = static_cast<size_t>(source);
  return i < std::size(kNames) ? kNames[i] : "kernel_name";
}

const char* AlignmentMethodName(AlignmentMethod method) {
  static constexpr const char* kNames[] = {"reference", "collective_ends", "absolute_clock", "first_event"};
  size_t i = static_cast<size_t>(method);
  return i < std::size(kNames) ? kNames[i] : "reference";
}

StatusOr<std::vector<RankCollective>> ExtractRankCollectives(const RankTrace& trace,
                                                             std::span<const KernelClass> classes) {
  MFU_RETURN_IF_ERROR(CheckClasses(trace, classes.size(), 0));
  std::vector<size_t> kernels;
  for (size_t i = 0; i < trace.num_events(); ++i) {
    if (trace.kind[i] == TraceEventKind::kKernel && classes[i] == KernelClass::kCommunication)
      kernels.push_back(i);
  }
  if (kernels.empty())
    return std::vector<RankCollective>{};  // no communication: skip indexing the launches
  std::vector<LaunchOps> ops = FindLaunchOps(trace, kernels);
  std::vector<RankCollective> out;
  out.reserve(kernels.size());
  std::map<std::tuple<std::string, CollectiveKind, std::string>, int64_t> occurrences;
  for (size_t j = 0; j < kernels.size(); ++j) {
    RankCollective c = ResolveCollective(trace, kernels[j], ops[j]);
    if (!c.seq_from_trace)
      c.seq = occurrences[{c.group, c.kind, c.op_name}]++;
    out.push_back(std::move(c));
  }
  return out;
}

namespace trace {

std::vector<int64_t> GroupRanks(const RankTrace& t, std::string_view group) {
  size_t bar = group.find('|');
  if (bar != std::string_view::npos)
    return ParseRankList(group.substr(bar + 1));
  for (const ProcessGroup& pg : t.process_groups) {
    if (!group.empty() && pg.name == group)
      return pg.ranks;
  }
  return {};
}

Status CheckCollectiveInputs(const std::vector<RankTrace>& traces,
                             const std::vector<std::vector<KernelClass>>& classes) {
  if (traces.size() != classes.size()) {
    return InvalidArgumentError(std::to_string(classes.size()) + " kernel-class lists for " +
                                std::to_string(traces.size()) + " traces");
  }
  for (size_t i = 0; i < traces.size(); ++i)
    MFU_RETURN_IF_ERROR(CheckClasses(traces[i], classes[i].size(), i));
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> AssignRanks(const std::vector<RankTrace>& traces) {
  std::vector<int64_t> ranks;
  std::set<int64_t> seen;
  for (size_t i = 0; i < traces.size(); ++i) {
    int64_t rank = traces[i].rank >= 0 ? traces[i].rank : static_cast<int64_t>(i);
    if (!seen.insert(rank).second) {
      return InvalidArgumentError(traces[i].path + ": rank " + std::to_string(rank) + " appears in two traces");
    }
    ranks.push_back(rank);
  }
  return ranks;
}

}  // namespace trace
}  // namespace mfu
