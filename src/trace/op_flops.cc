// Links GPU events to the cpu_ops that launched them, picks the op whose
// shapes give their FLOPs, and sums per kernel class (trace_flops.h states
// the rules). Formulas live in op_cost.cc.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/param.h"
#include "mfu/result.h"
#include "mfu/trace_flops.h"
#include "trace/id_index.h"
#include "trace/intervals.h"

namespace mfu {
namespace {

constexpr size_t kMaxBadShapeExamples = 5;
constexpr int kMaxNestingDepth = 1024;  // guards walks up the op tree

// One pass in time order with a stack per CPU track: the parent of every
// cpu_op and the innermost op enclosing every runtime event. A child that
// starts inside its parent but ends after it (float rounding in old traces)
// is still its child.
void BuildOpTree(const RankTrace& trace, std::vector<uint32_t>& parent, std::vector<uint32_t>& enclosing_op) {
  std::vector<std::vector<uint32_t>> stacks(trace.tracks.size());
  for (size_t i = 0; i < trace.num_events(); ++i) {
    TraceEventKind kind = trace.kind[i];
    if (kind != TraceEventKind::kCpuOp && kind != TraceEventKind::kRuntime)
      continue;
    std::vector<uint32_t>& stack = stacks[trace.track[i]];
    while (!stack.empty() && trace.end_ns(stack.back()) <= trace.ts_ns[i])
      stack.pop_back();
    uint32_t top = stack.empty() ? kNoIndex : stack.back();
    if (kind == TraceEventKind::kCpuOp) {
      parent[i] = top;
      stack.push_back(static_cast<uint32_t>(i));
    } else if (top != kNoIndex) {
      enclosing_op[i] = top;
    }
  }
}

// Kernel names that say the math ran as TF32.
bool NamesTf32(std::string_view name) {
  return name.find("tf32") != std::string_view::npos || name.find("tensorop_s") != std::string_view::npos;
}

class Attributor {
 public:
  Attributor(const RankTrace& trace, std::span<const KernelClass> classes, std::span<const uint32_t> launches,
             const OpFlopsOptions& options, FlopsAttribution& out)
      : trace_(trace), classes_(classes), launches_(launches), options_(options), out_(out) {}

  void Run() {
    const size_t n = trace_.num_events();
    out_.launch_op.assign(n, kNoIndex);
    out_.cost_op.assign(n, kNoIndex);
    out_.flops.assign(n, 0);
    out_.bytes.assign(n, 0);
    parent_.assign(n, kNoIndex);
    enclosing_op_.assign(n, kNoIndex);
    costed_slot_.assign(n, kNoIndex);
    counted_above_.assign(n, kUnknown);
    BuildOpTree(trace_, parent_, enclosing_op_);
    CostOps();
    MarkNested();
    LinkGpuEvents();
    Distribute();
  }

 private:
  // Computes OpCost for every cpu_op with shapes and a formula.
  void CostOps() {
    std::vector<int8_t> has_formula(trace_.strings.size(), -1);  // per name id, computed once
    op_by_external_id_.Build(trace_.external_id, [&](size_t i) { return trace_.kind[i] == TraceEventKind::kCpuOp; });
    for (size_t i = 0; i < trace_.num_events(); ++i) {
      if (trace_.kind[i] != TraceEventKind::kCpuOp)
        continue;
      if (trace_.shapes[i] == kNoIndex)
        continue;
      int8_t& known = has_formula[trace_.name[i]];
      if (known < 0)
        known = HasOpCostFormula(trace_.event_name(i)) ? 1 : 0;
      if (known == 0)
        continue;
      ++out_.ops_with_formula;
      StatusOr<OpCost> cost = ComputeOpCost(trace_.event_name(i), ViewOpShapes(trace_, trace_.shapes[i]), options_);
      if (!cost.ok()) {
        if (cost.status().code() == StatusCode::kInvalidArgument) {
          ++out_.ops_bad_shapes;
          if (out_.bad_shape_examples.size() < kMaxBadShapeExamples) {
            out_.bad_shape_examples.push_back(cost.status().message());
          }
        }
        continue;
      }
      costed_slot_[i] = static_cast<uint32_t>(costed_.size());
      costed_.push_back(Costed{*cost, static_cast<uint32_t>(i)});
    }
  }

  // An op with a costed op inside it is not counted: its work is the inner op's.
  void MarkNested() {
    for (const Costed& c : costed_) {
      uint32_t p = parent_[c.event];
      for (int depth = 0; p != kNoIndex && depth < kMaxNestingDepth; ++depth, p = parent_[p]) {
        if (costed_slot_[p] == kNoIndex)
          continue;
        Costed& above = costed_[costed_slot_[p]];
        if (above.nested)
          break;  // everything above is already marked
        above.nested = true;
      }
    }
    for (Costed& c : costed_) {  // in event order
      if (c.nested) {
        ++out_.ops_nested;
        continue;
      }
      c.index = static_cast<uint32_t>(out_.ops.size());
      out_.ops.push_back({c.event, c.cost, 0, 0});
    }
  }

  uint32_t OpWithExternalId(int64_t id) const { return op_by_external_id_.Find(id); }

  uint32_t LaunchOp(size_t i) {
    if (uint32_t op = OpWithExternalId(trace_.external_id[i]); op != kNoIndex) {
      ++out_.linked_by_external_id;
      return op;
    }
    if (const uint32_t runtime = launches_[i]; runtime != kNoIndex) {
      if (uint32_t op = OpWithExternalId(trace_.external_id[runtime]); op != kNoIndex) {
        ++out_.linked_by_correlation;
        return op;
      }
      if (const uint32_t op = enclosing_op_[runtime]; op != kNoIndex) {
        ++out_.linked_by_enclosing_op;
        return op;
      }
    }
    ++out_.unlinked;
    return kNoIndex;
  }

  // The counted op (index into out_.ops) whose work a kernel launched by
  // `op` is part of: the nearest costed op at or above `op`.
  uint32_t CountedOpAbove(uint32_t op) {
    uint32_t& memo = counted_above_[op];
    if (memo != kUnknown)
      return memo;
    uint32_t result = kNoIndex;
    uint32_t p = op;
    for (int depth = 0; p != kNoIndex && depth < kMaxNestingDepth; ++depth, p = parent_[p]) {
      if (costed_slot_[p] == kNoIndex)
        continue;
      const Costed& c = costed_[costed_slot_[p]];
      if (!c.nested)
        result = c.index;
      break;
    }
    memo = result;
    return result;
  }

  void LinkGpuEvents() {
    std::vector<int8_t> tf32_name(trace_.strings.size(), -1);
    for (size_t i = 0; i < trace_.num_events(); ++i) {
      if (!IsGpuActivity(trace_.kind[i]))
        continue;
      ++out_.gpu_events_total;
      uint32_t op = LaunchOp(i);
      out_.launch_op[i] = op;
      if (op == kNoIndex)
        continue;
      uint32_t counted = CountedOpAbove(op);
      out_.cost_op[i] = counted;
      if (counted == kNoIndex)
        continue;
      FlopsAttribution::Op& rec = out_.ops[counted];
      ++rec.gpu_events;
      if (rec.cost.dtype == DType::kFp32 && trace_.kind[i] == TraceEventKind::kKernel) {
        int8_t& tf32 = tf32_name[trace_.name[i]];
        if (tf32 < 0)
          tf32 = NamesTf32(trace_.event_name(i)) ? 1 : 0;
        if (tf32 == 1)
          rec.cost.dtype = DType::kTf32;
      }
    }
  }

  // Spreads each counted op's FLOPs and bytes over its matrix-class kernels
  // by duration; over all its kernels when none is matrix-class (a Triton or
  // custom GEMM the classifier does not know). Memcpys and memsets never
  // carry FLOPs: an op that launched only those keeps its FLOPs unplaced.
  void Distribute() {
    struct Share {
      int64_t matrix_ns = 0, kernel_ns = 0;
      uint32_t matrix = 0, kernels = 0;
    };
    std::vector<Share> shares(out_.ops.size());
    for (size_t i = 0; i < trace_.num_events(); ++i) {
      if (out_.cost_op[i] == kNoIndex || trace_.kind[i] != TraceEventKind::kKernel)
        continue;
      Share& s = shares[out_.cost_op[i]];
      s.kernel_ns += trace_.dur_ns[i];
      ++s.kernels;
      if (IsMatrixClass(classes_[i])) {
        s.matrix_ns += trace_.dur_ns[i];
        ++s.matrix;
      }
    }
    for (size_t i = 0; i < trace_.num_events(); ++i) {
      if (out_.cost_op[i] == kNoIndex || trace_.kind[i] != TraceEventKind::kKernel)
        continue;
      const Share& s = shares[out_.cost_op[i]];
      FlopsAttribution::Op& rec = out_.ops[out_.cost_op[i]];
      const bool matrix_only = s.matrix > 0;
      if (matrix_only && !IsMatrixClass(classes_[i]))
        continue;
      const int64_t total_ns = matrix_only ? s.matrix_ns : s.kernel_ns;
      const uint32_t count = matrix_only ? s.matrix : s.kernels;
      const double fraction = total_ns > 0 ? static_cast<double>(trace_.dur_ns[i]) / static_cast<double>(total_ns)
                                           : 1.0 / static_cast<double>(count);
      out_.flops[i] = rec.cost.flops * fraction;
      out_.bytes[i] = rec.cost.bytes * fraction;
      ++rec.carriers;
    }
    for (const FlopsAttribution::Op& rec : out_.ops) {
      if (rec.carriers == 0) {
        ++out_.ops_without_kernels;
        out_.flops_without_kernels += rec.cost.flops;
      }
    }
  }

  static constexpr uint32_t kUnknown = kNoIndex - 1;  // counted_above_ not computed yet

  struct Costed {
    OpCost cost;
    uint32_t event = kNoIndex;
    bool nested = false;
    uint32_t index = kNoIndex;  // into out_.ops when counted
  };

  const RankTrace& trace_;
  std::span<const KernelClass> classes_;
  std::span<const uint32_t> launches_;
  const OpFlopsOptions& options_;
  FlopsAttribution& out_;
  std::vector<uint32_t> parent_;
  std::vector<uint32_t> enclosing_op_;   // runtime event -> cpu_op
  trace::IdIndex op_by_external_id_;     // cpu_op rows, the first one per id
  std::vector<Costed> costed_;           // in event order
  std::vector<uint32_t> costed_slot_;    // event -> index into costed_
  std::vector<uint32_t> counted_above_;  // memo of CountedOpAbove, by event
};

std::string DimsText(std::span<const std::vector<int64_t>> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0)
      s += ", ";
    s += "[";
    for (size_t j = 0; j < dims[i].size(); ++j) {
      if (j > 0)
        s += ", ";
      s += std::to_string(dims[i][j]);
    }
    s += "]";
  }
  return s + "]";
}

std::string TypesText(const RankTrace& trace, const OpShapes& shapes) {
  std::string s = "[";
  for (size_t i = 0; i < shapes.input_types.size(); ++i) {
    if (i > 0)
      s += ", ";
    s += trace.strings.Get(shapes.input_types[i]);
  }
  return s + "]";
}

// Adds one clipped event to a class total.
void AddToClass(ClassFlops& c, int64_t clipped_ns, double flops, double bytes, double peak) {
  ++c.events;
  c.sum_ns += clipped_ns;
  if (flops <= 0)
    return;
  c.with_flops_sum_ns += clipped_ns;
  c.flops += flops;
  c.bytes += bytes;
  if (peak > 0) {
    c.at_peak_ns += flops / peak * 1e9;
  } else {
    c.flops_without_peak += flops;
  }
}

}  // namespace

FlopsAttribution AttributeOpFlops(const RankTrace& trace, std::span<const KernelClass> classes,
                                  std::span<const uint32_t> launches, const OpFlopsOptions& options) {
  FlopsAttribution out;
  Attributor(trace, classes, launches, options, out).Run();
  return out;
}

TraceFlopsSummary SummarizeFlops(const RankTrace& trace, std::span<const KernelClass> classes,
                                 const FlopsAttribution& attribution, const Accelerator* gpu, int64_t window_start_ns,
                                 int64_t window_end_ns) {
  TraceFlopsSummary out;
  out.window_start_ns = window_start_ns;
  out.window_end_ns = window_end_ns;
  if (gpu != nullptr)
    out.accelerator = gpu->id;
  std::array<std::vector<trace::Interval>, kNumKernelClasses> intervals;
  std::vector<trace::Interval> matrix_intervals;
  std::vector<uint32_t> group_of(attribution.ops.size(), kNoIndex);
  std::vector<uint8_t> op_seen(attribution.ops.size(), 0);
  std::unordered_map<std::string, uint32_t> group_index;

  for (size_t i = 0; i < trace.num_events(); ++i) {
    if (!IsGpuActivity(trace.kind[i]))
      continue;
    const int64_t start = std::max(trace.ts_ns[i], window_start_ns);
    const int64_t end = std::min(trace.end_ns(i), window_end_ns);
    if (trace.dur_ns[i] > 0 ? start >= end : (trace.ts_ns[i] < window_start_ns || trace.ts_ns[i] >= window_end_ns)) {
      continue;
    }
    const int64_t clipped = std::max<int64_t>(0, end - start);
    const double fraction =
        trace.dur_ns[i] > 0 ? static_cast<double>(clipped) / static_cast<double>(trace.dur_ns[i]) : 1.0;
    const double flops = attribution.flops[i] * fraction;
    const double bytes = attribution.bytes[i] * fraction;
    const OpCost* cost = attribution.cost_of(i);
    const double peak =
        gpu != nullptr && cost != nullptr ? DensePeakFlops(*gpu, cost->dtype, PeakFallbacks::Kernel()) : 0;
    const KernelClass cls = classes[i];
    AddToClass(out.by_class[static_cast<size_t>(cls)], clipped, flops, bytes, peak);
    intervals[static_cast<size_t>(cls)].push_back({start, end});
    if (IsMatrixClass(cls)) {
      AddToClass(out.matrix, clipped, flops, bytes, peak);
      matrix_intervals.push_back({start, end});
    }
    const uint32_t op = attribution.cost_op[i];
    if (op == kNoIndex)
      continue;
    if (group_of[op] == kNoIndex) {
      const uint32_t event = attribution.ops[op].event;
      const OpShapes& shapes = trace.op_shapes[trace.shapes[event]];
      std::string dims = DimsText(shapes.input_dims), types = TypesText(trace, shapes);
      std::string key = std::string(trace.event_name(event)) + "|" + dims + "|" + types;
      auto [it, added] = group_index.try_emplace(key, static_cast<uint32_t>(out.op_groups.size()));
      if (added) {
        OpGroupFlops g;
        g.name = std::string(trace.event_name(event));
        g.dims = std::move(dims);
        g.types = std::move(types);
        g.cls = cost->cls;
        g.dtype = cost->dtype;
        g.backward = cost->backward;
        out.op_groups.push_back(std::move(g));
      }
      group_of[op] = it->second;
    }
    OpGroupFlops& g = out.op_groups[group_of[op]];
    if (op_seen[op] == 0) {
      op_seen[op] = 1;
      ++g.ops;
    }
    g.flops += flops;
    g.bytes += bytes;
    g.gpu_sum_ns += clipped;
    if (peak > 0)
      g.at_peak_ns += flops / peak * 1e9;
  }
  for (size_t c = 0; c < kNumKernelClasses; ++c) {
    trace::MergeIntervals(intervals[c]);
    out.by_class[c].union_ns = trace::TotalLength(intervals[c]);
  }
  trace::MergeIntervals(matrix_intervals);
  out.matrix.union_ns = trace::TotalLength(matrix_intervals);
  std::stable_sort(out.op_groups.begin(), out.op_groups.end(), [](const OpGroupFlops& a, const OpGroupFlops& b) {
    return a.gpu_sum_ns != b.gpu_sum_ns ? a.gpu_sum_ns > b.gpu_sum_ns : a.name < b.name;
  });
  return out;
}

StatusOr<const Accelerator*> ResolveTraceAccelerator(const RankTrace& trace, const HardwareDb& db,
                                                     std::string_view gpu_override) {
  if (!gpu_override.empty())
    return db.Find(gpu_override);
  std::string name = trace.device_name();
  if (name.empty()) {
    return NotFoundError(trace.path + ": the trace names no GPU (deviceProperties); pass " + base::Param("gpu"));
  }
  StatusOr<const Accelerator*> found = db.Find(name);
  if (!found.ok())
    return found.status().WithPrefix(trace.path + ": device '" + name + "'");
  return found;
}

}  // namespace mfu
