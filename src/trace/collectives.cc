// Multi-rank collective analysis (include/mfu/trace_collectives.h): extract
// each rank's communication kernels with their collective fields, match them
// across ranks by (group, kind, sequence), align clocks on matched ends, then
// split each instance into transfer and wait, charge waits to stragglers and
// measure bandwidth. HTA's straggler metric is reproduced at the end.

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

#include "mfu/trace_collectives.h"

namespace mfu {
namespace {

constexpr size_t kNone = std::numeric_limits<size_t>::max();
// Timestamps at or after 2001-09-09 are taken to be epoch times.
constexpr int64_t kEpochClockMinNs = 1'000'000'000'000'000'000;

// Checked a * b for non-negative operands; -1 on overflow.
int64_t CheckedMul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    return -1;
  return out;
}

// Lower median (integers: no rounding). `v` must not be empty.
int64_t LowerMedian(std::vector<int64_t> v) {
  auto mid = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// Median with the two middle values averaged; 0 for an empty list.
double Median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
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
    } else if (StartsWith(s, "nccl:")) {
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

// Ranks of a group: the ranks string, else pg_config by name; empty if unknown.
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

void FillGroup(const RankTrace& t, const CollectiveArgs& args, RankCollective& c) {
  std::string_view name = t.strings.Get(args.pg_name);
  std::string_view ranks = t.strings.Get(args.pg_ranks);
  c.group = std::string(name);
  if (!ranks.empty())
    c.group += "|" + std::string(ranks);
  c.group_desc = std::string(t.strings.Get(args.pg_desc));
  c.group_size = args.group_size > 0 ? args.group_size : static_cast<int64_t>(GroupRanks(t, c.group).size());
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
    if (StartsWith(name, prefix)) {
      name.remove_prefix(prefix.size());
      name = name.substr(0, name.find_first_of("_("));
    }
  }
  for (std::string_view prefix : {"nccl:", "c10d::"}) {
    if (StartsWith(name, prefix))
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
    if (StartsWith(key, prefix))
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
    if (StartsWith(dtype, prefix))
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
  if (StartsWith(key, "float8"))
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

namespace {

// ---------------------------------------------------------------------------
// Inputs.

Status CheckInputs(const std::vector<RankTrace>& traces, const std::vector<std::vector<KernelClass>>& classes) {
  if (traces.size() != classes.size()) {
    return InvalidArgumentError(std::to_string(classes.size()) + " kernel-class lists for " +
                                std::to_string(traces.size()) + " traces");
  }
  for (size_t i = 0; i < traces.size(); ++i)
    MFU_RETURN_IF_ERROR(CheckClasses(traces[i], classes[i].size(), i));
  return Status::Ok();
}

// The rank of each trace: its distributedInfo rank, else its index.
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

// ---------------------------------------------------------------------------
// Matching.

// (group, kind, op name, seq, repeat): `repeat` pairs the n-th kernel of a
// rank carrying the same key with the n-th of the others.
using MatchKey = std::tuple<std::string, CollectiveKind, std::string, int64_t, int64_t>;

void AddParticipant(CollectiveInstance& inst, const RankCollective& c, int64_t rank, size_t trace_index) {
  if (inst.participants.empty()) {
    inst.kind = c.kind;
    inst.source = c.source;
    inst.group = c.group;
    inst.op_name = c.op_name;
    inst.seq = c.seq;
    inst.seq_from_trace = c.seq_from_trace;
  }
  inst.source = std::max(inst.source, c.source);
  if (inst.group_desc.empty())
    inst.group_desc = c.group_desc;
  inst.group_size = std::max(inst.group_size, c.group_size);
  if (c.message_bytes >= 0) {
    if (inst.message_bytes >= 0 && inst.message_bytes != c.message_bytes)
      inst.sizes_differ = true;
    inst.message_bytes = std::max(inst.message_bytes, c.message_bytes);
  }
  CollectiveParticipant p;
  p.rank = rank;
  p.trace_index = trace_index;
  p.event = c.event;
  p.start_ns = c.start_ns;  // the rank's own clock until offsets are applied
  p.dur_ns = c.dur_ns;
  p.message_bytes = c.message_bytes;
  inst.participants.push_back(p);
}

std::vector<CollectiveInstance> MatchCollectives(const std::vector<std::vector<RankCollective>>& per_trace,
                                                 const std::vector<int64_t>& ranks) {
  std::vector<CollectiveInstance> out;
  std::map<MatchKey, size_t> index;
  for (size_t t = 0; t < per_trace.size(); ++t) {
    std::map<MatchKey, int64_t> repeats;
    for (const RankCollective& c : per_trace[t]) {
      size_t slot = out.size();
      if (IsPointToPoint(c.kind)) {
        out.emplace_back().point_to_point = true;
      } else {
        MatchKey key{c.group, c.kind, c.op_name, c.seq, 0};
        std::get<4>(key) = repeats[key]++;
        auto [it, inserted] = index.emplace(std::move(key), out.size());
        if (inserted)
          out.emplace_back();
        slot = it->second;
      }
      AddParticipant(out[slot], c, ranks[t], t);
    }
  }
  return out;
}

// Sorts participants and lists the loaded ranks of each group that lack the
// instance; fills the group size from the group's ranks when no rank gave it.
void FindMissingRanks(std::vector<CollectiveInstance>& instances, const std::vector<RankTrace>& traces,
                      const std::vector<int64_t>& ranks) {
  std::set<int64_t> loaded(ranks.begin(), ranks.end());
  std::unordered_map<std::string, std::vector<int64_t>> group_ranks;
  for (CollectiveInstance& inst : instances) {
    std::sort(inst.participants.begin(), inst.participants.end(),
              [](const CollectiveParticipant& a, const CollectiveParticipant& b) { return a.rank < b.rank; });
    if (inst.point_to_point)
      continue;
    auto it = group_ranks.find(inst.group);
    if (it == group_ranks.end()) {
      it = group_ranks.emplace(inst.group, GroupRanks(traces[inst.participants[0].trace_index], inst.group)).first;
    }
    std::set<int64_t> expected;
    for (int64_t r : it->second) {
      if (loaded.count(r) > 0)
        expected.insert(r);
    }
    if (it->second.empty())
      expected = loaded;
    for (const CollectiveParticipant& p : inst.participants)
      expected.erase(p.rank);
    inst.missing_ranks.assign(expected.begin(), expected.end());
    if (inst.group_size <= 0) {
      size_t n = it->second.empty() ? loaded.size() : it->second.size();
      inst.group_size = static_cast<int64_t>(n);
    }
  }
}

// ---------------------------------------------------------------------------
// Clock alignment.

bool IsAnchor(const CollectiveInstance& inst) {
  return inst.matched() && !inst.point_to_point && inst.participants.size() >= 2;
}

int64_t EndOf(const CollectiveParticipant& p) {
  return p.start_ns + p.dur_ns;
}

// Aligns, round by round, every rank that shares an anchor with an aligned
// rank: its offset is the median over shared anchors of (median aligned end
// of the anchor's aligned participants - its own end).
void AlignOnEnds(const std::vector<CollectiveInstance>& instances, std::vector<RankAlignment>& out,
                 std::vector<bool>& done) {
  for (bool progress = true; progress;) {
    progress = false;
    std::vector<std::vector<int64_t>> diffs(out.size());
    for (const CollectiveInstance& inst : instances) {
      if (!IsAnchor(inst))
        continue;
      std::vector<int64_t> ends;
      for (const CollectiveParticipant& p : inst.participants) {
        if (done[p.trace_index])
          ends.push_back(EndOf(p) + out[p.trace_index].offset_ns);
      }
      if (ends.empty())
        continue;
      int64_t anchor_end = LowerMedian(std::move(ends));
      for (const CollectiveParticipant& p : inst.participants) {
        if (!done[p.trace_index])
          diffs[p.trace_index].push_back(anchor_end - EndOf(p));
      }
    }
    for (size_t t = 0; t < out.size(); ++t) {
      if (diffs[t].empty())
        continue;
      out[t].num_anchors = diffs[t].size();
      out[t].offset_ns = LowerMedian(std::move(diffs[t]));
      out[t].method = AlignmentMethod::kCollectiveEnds;
      done[t] = true;
      progress = true;
    }
  }
}

std::vector<RankAlignment> AlignClocks(const std::vector<RankTrace>& traces, const std::vector<int64_t>& ranks,
                                       const std::vector<CollectiveInstance>& instances, bool align) {
  std::vector<RankAlignment> out(traces.size());
  if (traces.empty())
    return out;
  std::vector<size_t> anchors(traces.size(), 0);
  for (const CollectiveInstance& inst : instances) {
    if (!IsAnchor(inst))
      continue;
    for (const CollectiveParticipant& p : inst.participants)
      ++anchors[p.trace_index];
  }
  size_t ref = static_cast<size_t>(std::max_element(anchors.begin(), anchors.end()) - anchors.begin());
  std::vector<bool> done(traces.size(), false);
  done[ref] = true;
  out[ref].num_anchors = anchors[ref];
  if (align)
    AlignOnEnds(instances, out, done);
  auto first_ns = [&](size_t t) { return traces[t].num_events() > 0 ? traces[t].ts_ns[0] : 0; };
  for (size_t t = 0; t < traces.size(); ++t) {
    out[t].rank = ranks[t];
    if (done[t])
      continue;
    bool epoch = first_ns(t) >= kEpochClockMinNs && first_ns(ref) >= kEpochClockMinNs;
    out[t].method = epoch || !align ? AlignmentMethod::kAbsoluteClock : AlignmentMethod::kFirstEvent;
    out[t].offset_ns = epoch || !align ? 0 : first_ns(ref) - first_ns(t);
  }
  out[ref].method = AlignmentMethod::kReference;
  return out;
}

// Moves participants onto the reference clock and measures how well the ends
// of each rank's anchors then agree.
void ApplyAlignment(std::vector<CollectiveInstance>& instances, std::vector<RankAlignment>& alignment) {
  std::vector<std::vector<int64_t>> deviations(alignment.size());
  for (CollectiveInstance& inst : instances) {
    for (CollectiveParticipant& p : inst.participants)
      p.start_ns += alignment[p.trace_index].offset_ns;
    if (!IsAnchor(inst))
      continue;
    std::vector<int64_t> ends;
    for (const CollectiveParticipant& p : inst.participants)
      ends.push_back(EndOf(p));
    int64_t median_end = LowerMedian(std::move(ends));
    for (const CollectiveParticipant& p : inst.participants) {
      deviations[p.trace_index].push_back(std::abs(EndOf(p) - median_end));
    }
  }
  for (size_t t = 0; t < alignment.size(); ++t) {
    if (!deviations[t].empty())
      alignment[t].end_spread_ns = LowerMedian(std::move(deviations[t]));
  }
}

// ---------------------------------------------------------------------------
// Transfer/wait split, totals, stragglers, bandwidth.

void SplitInstance(CollectiveInstance& inst) {
  if (!inst.matched() || inst.participants.empty())
    return;
  const auto& ps = inst.participants;
  int64_t transfer = ps[0].dur_ns, first_start = ps[0].start_ns, last_start = ps[0].start_ns;
  int64_t first_end = EndOf(ps[0]), last_end = EndOf(ps[0]);
  for (const CollectiveParticipant& p : ps) {
    transfer = std::min(transfer, p.dur_ns);
    first_start = std::min(first_start, p.start_ns);
    first_end = std::min(first_end, EndOf(p));
    last_end = std::max(last_end, EndOf(p));
    if (p.start_ns > last_start)
      last_start = p.start_ns;
  }
  inst.transfer_ns = transfer;
  inst.arrival_skew_ns = last_start - first_start;
  inst.end_skew_ns = last_end - first_end;
  for (CollectiveParticipant& p : inst.participants)
    p.wait_ns = p.dur_ns - transfer;
  if (ps.size() >= 2 && !inst.point_to_point) {
    // Participants are sorted by rank: the first latest start wins ties.
    for (const CollectiveParticipant& p : ps) {
      if (p.start_ns == last_start) {
        inst.last_rank = p.rank;
        break;
      }
    }
  }
  if (inst.message_bytes > 0 && transfer > 0) {
    inst.algbw_bytes_per_s = static_cast<double>(inst.message_bytes) * 1e9 / static_cast<double>(transfer);
    inst.busbw_bytes_per_s = inst.algbw_bytes_per_s * BusBandwidthFactor(inst.kind, inst.group_size);
  }
}

int64_t EarliestStart(const CollectiveInstance& inst) {
  int64_t s = std::numeric_limits<int64_t>::max();
  for (const CollectiveParticipant& p : inst.participants)
    s = std::min(s, p.start_ns);
  return s;
}

std::vector<RankCommTotals> RankTotals(const std::vector<CollectiveInstance>& instances,
                                       const std::vector<int64_t>& ranks) {
  std::vector<RankCommTotals> out(ranks.size());
  for (size_t t = 0; t < ranks.size(); ++t)
    out[t].rank = ranks[t];
  for (const CollectiveInstance& inst : instances) {
    int64_t earliest = EarliestStart(inst), others_wait = 0;
    const CollectiveParticipant* last = nullptr;
    for (const CollectiveParticipant& p : inst.participants) {
      RankCommTotals& r = out[p.trace_index];
      ++r.num_kernels;
      r.comm_ns += p.dur_ns;
      if (!inst.matched()) {
        ++r.num_unmatched;
        r.unmatched_ns += p.dur_ns;
        continue;
      }
      r.transfer_ns += inst.transfer_ns;
      r.wait_ns += p.wait_ns;
      if (inst.last_rank < 0)
        continue;
      ++r.num_multi_rank;
      r.lateness_ns += p.start_ns - earliest;
      if (p.rank == inst.last_rank) {
        last = &p;
      } else {
        others_wait += p.wait_ns;
      }
    }
    if (last != nullptr) {
      ++out[last->trace_index].last_arrivals;
      out[last->trace_index].caused_wait_ns += others_wait;
    }
  }
  return out;
}

StragglerSummary SummarizeStragglers(const std::vector<RankCommTotals>& totals, double share_factor) {
  StragglerSummary s;
  size_t n = 0;
  for (const RankCommTotals& r : totals) {
    if (r.num_multi_rank > 0)
      ++n;
    s.total_wait_ns += r.caused_wait_ns;
  }
  if (n < 2 || s.total_wait_ns <= 0)
    return s;
  s.fair_share = 1.0 / static_cast<double>(n);
  s.threshold_share = share_factor * s.fair_share;
  std::vector<const RankCommTotals*> flagged;
  for (const RankCommTotals& r : totals) {
    double share = static_cast<double>(r.caused_wait_ns) / static_cast<double>(s.total_wait_ns);
    if (r.caused_wait_ns > 0 && share >= s.threshold_share)
      flagged.push_back(&r);
  }
  std::sort(flagged.begin(), flagged.end(), [](const RankCommTotals* a, const RankCommTotals* b) {
    return a->caused_wait_ns != b->caused_wait_ns ? a->caused_wait_ns > b->caused_wait_ns : a->rank < b->rank;
  });
  for (const RankCommTotals* r : flagged)
    s.ranks.push_back(r->rank);
  return s;
}

// [4^k, 4^(k+1)) containing `bytes`; {-1, -1} when unknown or empty.
std::pair<int64_t, int64_t> SizeBucket(int64_t bytes) {
  if (bytes <= 0)
    return {-1, -1};
  int64_t lo = 1;
  while (lo <= bytes / 4)
    lo *= 4;
  int64_t hi = lo > std::numeric_limits<int64_t>::max() / 4 ? std::numeric_limits<int64_t>::max() : lo * 4;
  return {lo, hi};
}

std::vector<CollectiveBandwidthStats> BandwidthStats(const std::vector<CollectiveInstance>& instances) {
  struct Acc {
    CollectiveBandwidthStats stats;
    std::vector<double> algbw, busbw;
  };
  std::map<std::pair<CollectiveKind, int64_t>, Acc> by_bucket;
  for (const CollectiveInstance& inst : instances) {
    if (!inst.matched())
      continue;
    auto [lo, hi] = SizeBucket(inst.message_bytes);
    Acc& acc = by_bucket[{inst.kind, lo}];
    acc.stats.kind = inst.kind;
    acc.stats.min_bytes = lo;
    acc.stats.max_bytes = hi;
    ++acc.stats.count;
    acc.stats.transfer_ns += inst.transfer_ns;
    for (const CollectiveParticipant& p : inst.participants)
      acc.stats.wait_ns += p.wait_ns;
    if (inst.algbw_bytes_per_s > 0) {
      acc.algbw.push_back(inst.algbw_bytes_per_s);
      acc.busbw.push_back(inst.busbw_bytes_per_s);
    }
  }
  std::vector<CollectiveBandwidthStats> out;
  for (auto& [key, acc] : by_bucket) {
    acc.stats.median_algbw_bytes_per_s = Median(std::move(acc.algbw));
    acc.stats.median_busbw_bytes_per_s = Median(std::move(acc.busbw));
    out.push_back(acc.stats);
  }
  return out;
}

}  // namespace

StatusOr<CollectiveAnalysis> AnalyzeCollectives(const std::vector<RankTrace>& traces,
                                                const std::vector<std::vector<KernelClass>>& classes,
                                                const CollectiveOptions& options) {
  MFU_RETURN_IF_ERROR(CheckInputs(traces, classes));
  MFU_ASSIGN_OR_RETURN(std::vector<int64_t> ranks, AssignRanks(traces));
  std::vector<std::vector<RankCollective>> per_trace;
  for (size_t t = 0; t < traces.size(); ++t) {
    MFU_ASSIGN_OR_RETURN(std::vector<RankCollective> collectives, ExtractRankCollectives(traces[t], classes[t]));
    per_trace.push_back(std::move(collectives));
  }
  CollectiveAnalysis a;
  a.instances = MatchCollectives(per_trace, ranks);
  FindMissingRanks(a.instances, traces, ranks);
  a.alignment = AlignClocks(traces, ranks, a.instances, options.align_ranks);
  ApplyAlignment(a.instances, a.alignment);
  for (CollectiveInstance& inst : a.instances) {
    SplitInstance(inst);
    ++(inst.matched() ? a.num_matched : a.num_unmatched);
  }
  std::stable_sort(
      a.instances.begin(), a.instances.end(),
      [](const CollectiveInstance& x, const CollectiveInstance& y) { return EarliestStart(x) < EarliestStart(y); });
  a.ranks = RankTotals(a.instances, ranks);
  a.stragglers = SummarizeStragglers(a.ranks, options.straggler_share_factor);
  a.bandwidth = BandwidthStats(a.instances);
  return a;
}

// ---------------------------------------------------------------------------
// HTA's get_potential_stragglers.

namespace {

struct HtaStep {
  int64_t ts = 0;
  int64_t end = 0;
  int64_t iteration = -1;
};

// N of "ProfilerStep#N" (HTA: r"ProfilerStep\s*#\s*(\d+)"), or -1.
int64_t ProfilerStepNumber(std::string_view name) {
  if (!StartsWith(name, "ProfilerStep"))
    return -1;
  size_t i = std::string_view("ProfilerStep").size();
  auto skip_spaces = [&] {
    while (i < name.size() && std::isspace(static_cast<unsigned char>(name[i])))
      ++i;
  };
  skip_spaces();
  if (i >= name.size() || name[i] != '#')
    return -1;
  ++i;
  skip_spaces();
  int64_t n = -1;
  auto [next, ec] = std::from_chars(name.data() + i, name.data() + name.size(), n);
  return ec == std::errc() && next != name.data() + i ? n : -1;
}

// HTA: the last step (in start order) containing `ts`, or -1.
int64_t IterationAt(const std::vector<HtaStep>& steps, int64_t ts) {
  int64_t iteration = -1;
  for (const HtaStep& s : steps) {
    if (s.ts <= ts && ts < s.end)
      iteration = s.iteration;
  }
  return iteration;
}

struct HtaKernel {
  int64_t rank = -1;
  int64_t stream = -1;
  int64_t iteration = -1;
  std::string name;
  int64_t ts = 0;
  int64_t dur = 0;
};

// One rank's events, as HTA sees them after loading.
struct HtaRankScan {
  std::vector<HtaStep> steps;
  int64_t cut_ns = std::numeric_limits<int64_t>::max();  // events from here on are dropped
  std::map<int64_t, std::pair<int64_t, int64_t>> span;   // iteration -> (min ts, max end)
  std::vector<HtaKernel> kernels;                        // communication kernels with iteration > 0
};

std::vector<HtaStep> ProfilerSteps(const RankTrace& t, std::set<std::string>& names) {
  std::vector<HtaStep> steps;
  for (size_t i = 0; i < t.num_events(); ++i) {
    if (t.kind[i] != TraceEventKind::kCpuOp && t.kind[i] != TraceEventKind::kUserAnnotation)
      continue;
    int64_t n = ProfilerStepNumber(t.event_name(i));
    if (n < 0 || t.event_track(i).gpu)
      continue;
    steps.push_back({t.ts_ns[i], t.end_ns(i), n});
    names.insert(std::string(t.event_name(i)));
  }
  return steps;
}

// Iterations of CPU events by their start, of GPU activities by the start of
// their runtime launch (HTA's index_correlation); events at or after `cut_ns`
// (CPU) or launched then (GPU) are dropped.
void ScanRank(const RankTrace& t, std::span<const KernelClass> classes, int64_t rank, bool prefix_only,
              HtaRankScan& scan) {
  std::unordered_map<int64_t, int64_t> launch_ts;
  for (size_t i = 0; i < t.num_events(); ++i) {
    if (t.kind[i] == TraceEventKind::kRuntime && t.correlation[i] != kNoId)
      launch_ts.emplace(t.correlation[i], t.ts_ns[i]);
  }
  for (size_t i = 0; i < t.num_events(); ++i) {
    int64_t at = t.ts_ns[i];
    if (IsGpuActivity(t.kind[i])) {
      auto it = launch_ts.find(t.correlation[i]);
      if (it == launch_ts.end())
        continue;
      at = it->second;
    } else if (t.event_track(i).gpu) {
      continue;
    }
    if (at >= scan.cut_ns)
      continue;
    int64_t iteration = IterationAt(scan.steps, at);
    if (iteration < 0)
      continue;
    auto [it, inserted] = scan.span.try_emplace(iteration, t.ts_ns[i], t.end_ns(i));
    it->second.first = std::min(it->second.first, t.ts_ns[i]);
    it->second.second = std::max(it->second.second, t.end_ns(i));
    bool comm = prefix_only ? StartsWith(t.event_name(i), "ncclKernel") : classes[i] == KernelClass::kCommunication;
    if (t.kind[i] == TraceEventKind::kKernel && iteration > 0 && comm) {
      scan.kernels.push_back(
          {rank, t.event_track(i).stream, iteration, std::string(t.event_name(i)), t.ts_ns[i], t.dur_ns[i]});
    }
  }
}

// Sample standard deviation (pandas' ddof=1); `v` has >= 2 values.
double SampleStd(const std::vector<double>& v) {
  double mean = 0, ss = 0;
  for (double x : v)
    mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v)
    ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

using HtaLastKey = std::tuple<int64_t, int64_t, int64_t, std::string>;  // rank, stream, iteration, name

// The (stream, name) whose normalized duration varies most across ranks.
bool PickCandidate(const std::map<HtaLastKey, HtaKernel>& last, double mean_iter_ns, HtaStragglerResult& r) {
  std::map<std::tuple<int64_t, int64_t, std::string>, std::vector<double>> durations;  // stream, iteration, name
  for (const auto& [key, k] : last) {
    durations[{k.stream, k.iteration, k.name}].push_back(static_cast<double>(k.dur) / mean_iter_ns);
  }
  std::map<std::pair<int64_t, std::string>, std::pair<double, int>> stds;  // (stream, name) -> (sum, count)
  for (const auto& [key, v] : durations) {
    if (v.size() < 2)
      continue;  // pandas: NaN, skipped by mean()
    auto& acc = stds[{std::get<0>(key), std::get<2>(key)}];
    acc.first += SampleStd(v);
    ++acc.second;
  }
  double best = -1;
  for (const auto& [key, acc] : stds) {
    double mean = acc.first / acc.second;
    if (mean > best) {
      best = mean;
      r.stream = key.first;
      r.kernel_name = key.second;
    }
  }
  return best >= 0;
}

// Flags the `k` latest starters per iteration and ranks by how often.
void FlagLatest(int num_candidates, HtaStragglerResult& r) {
  size_t k = static_cast<size_t>(std::max(num_candidates, 1));
  std::map<int64_t, std::vector<HtaStragglerMetric*>> by_iteration;
  for (HtaStragglerMetric& m : r.metrics)
    by_iteration[m.iteration].push_back(&m);
  std::map<int64_t, int64_t> counts;
  for (auto& [iteration, ms] : by_iteration) {
    std::vector<double> values;
    for (const HtaStragglerMetric* m : ms)
      values.push_back(m->normalized_start);
    std::sort(values.begin(), values.end(), std::greater<>());
    double threshold = values[std::min(k, values.size()) - 1];
    for (HtaStragglerMetric* m : ms) {
      m->flagged = m->normalized_start >= threshold;
      counts[m->rank] += m->flagged ? 1 : 0;
    }
  }
  std::vector<std::pair<int64_t, int64_t>> order(counts.begin(), counts.end());  // rank, count
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (size_t i = 0; i < order.size() && i < k; ++i)
    r.stragglers.push_back(order[i].first);
}

// Finds each rank's ProfilerSteps and the cut-off HTA's loader applies (the
// last step is dropped when the set has >= 2 step names); returns the
// iterations left (HTA's get_profiler_steps).
std::set<int64_t> PrepareSteps(const std::vector<RankTrace>& traces, bool include_last,
                               std::vector<HtaRankScan>& scans) {
  std::set<std::string> step_names;
  for (size_t t = 0; t < traces.size(); ++t)
    scans[t].steps = ProfilerSteps(traces[t], step_names);
  std::set<int64_t> valid;
  for (HtaRankScan& scan : scans) {
    std::sort(scan.steps.begin(), scan.steps.end(), [](const HtaStep& a, const HtaStep& b) { return a.ts < b.ts; });
    if (step_names.size() > 1 && !include_last && !scan.steps.empty())
      scan.cut_ns = scan.steps.back().ts;
    for (const HtaStep& s : scan.steps) {
      if (s.ts < scan.cut_ns)
        valid.insert(s.iteration);
    }
  }
  return valid;
}

// The iterations with events and their joint [t_min, t_max) over all ranks.
std::set<int64_t> IterationWindow(const std::vector<HtaRankScan>& scans, const std::set<int64_t>& valid, int64_t& t_min,
                                  int64_t& t_max) {
  std::set<int64_t> present;
  t_min = std::numeric_limits<int64_t>::max();
  t_max = std::numeric_limits<int64_t>::min();
  for (const HtaRankScan& scan : scans) {
    for (const auto& [iteration, span] : scan.span) {
      if (valid.count(iteration) == 0)
        continue;
      present.insert(iteration);
      t_min = std::min(t_min, span.first);
      t_max = std::max(t_max, span.second);
    }
  }
  return present;
}

// The last long communication kernel per (rank, stream, iteration, name).
std::map<HtaLastKey, HtaKernel> LastLongKernels(const std::vector<HtaRankScan>& scans, const std::set<int64_t>& present,
                                                double min_duration_ns) {
  std::map<HtaLastKey, HtaKernel> last;
  for (const HtaRankScan& scan : scans) {
    for (const HtaKernel& k : scan.kernels) {
      if (present.count(k.iteration) == 0 || static_cast<double>(k.dur) < min_duration_ns)
        continue;
      last[{k.rank, k.stream, k.iteration, k.name}] = k;  // kernels come in start order: the last one stays
    }
  }
  return last;
}

}  // namespace

StatusOr<HtaStragglerResult> FindStragglersHta(const std::vector<RankTrace>& traces,
                                               const std::vector<std::vector<KernelClass>>& classes,
                                               const HtaStragglerOptions& options) {
  MFU_RETURN_IF_ERROR(CheckInputs(traces, classes));
  MFU_ASSIGN_OR_RETURN(std::vector<int64_t> ranks, AssignRanks(traces));
  std::vector<HtaRankScan> scans(traces.size());
  std::set<int64_t> valid = PrepareSteps(traces, options.include_last_profiler_step, scans);
  if (valid.empty())
    return NotFoundError("no ProfilerStep#N event: HTA's straggler metric needs iterations");
  for (size_t t = 0; t < traces.size(); ++t) {
    ScanRank(traces[t], classes[t], ranks[t], options.nccl_kernel_prefix_only, scans[t]);
  }
  HtaStragglerResult r;
  int64_t t_min = 0, t_max = 0;
  std::set<int64_t> present = IterationWindow(scans, valid, t_min, t_max);
  if (present.empty())
    return NotFoundError("no event inside a ProfilerStep");
  r.iterations.assign(present.begin(), present.end());
  r.mean_iteration_ns = static_cast<double>(t_max - t_min) / static_cast<double>(present.size());
  r.min_duration_ns = r.mean_iteration_ns * options.min_normalized_duration;
  std::map<HtaLastKey, HtaKernel> last = LastLongKernels(scans, present, r.min_duration_ns);
  if (!PickCandidate(last, r.mean_iteration_ns, r)) {
    return NotFoundError("no communication kernel of >= " + std::to_string(options.min_normalized_duration * 100) +
                         "% of the mean iteration ran on two or more ranks");
  }
  for (const auto& [key, k] : last) {
    if (k.stream != r.stream || k.name != r.kernel_name)
      continue;
    r.metrics.push_back({k.rank, k.iteration, k.ts, static_cast<double>(k.ts - t_min) / r.mean_iteration_ns, false});
  }
  std::sort(r.metrics.begin(), r.metrics.end(), [](const HtaStragglerMetric& a, const HtaStragglerMetric& b) {
    return std::tie(a.iteration, a.rank) < std::tie(b.iteration, b.rank);
  });
  FlagLatest(options.num_candidates, r);
  return r;
}

}  // namespace mfu
