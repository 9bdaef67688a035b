// The verdict's rule table and the cross-rank summary (mfu/trace_verdict.h,
// mfu/trace_job.h SummarizeJob).

#include <algorithm>
#include <numeric>
#include <vector>

#include "mfu/trace_job.h"
#include "mfu/trace_verdict.h"

namespace mfu {
namespace {

using B = WaterfallBucket;

// One rule per loss bucket, in WaterfallBucket order. Each remedy shrinks
// its row's bucket by the mechanism `why` names; docs/trace.md ("The
// verdict") prints this table.
constexpr VerdictRule kRules[] = {
    {B::kIdle,
     "host_bound_idle",
     "GPU idle (host-bound)",
     "no kernel ran: the GPU waited for the host (kernel launches, data loading, a sync such as .item()) or for "
     "another rank; fewer, larger launches and a faster input pipeline keep it fed",
     {"CUDA graphs (torch.compile(mode=\"reduce-overhead\") or torch.cuda.CUDAGraph): one launch per step",
      "a larger micro-batch: more work per kernel launch", "more DataLoader workers (num_workers) and pin_memory=True",
      nullptr}},
    {B::kExposedCommunication,
     "exposed_communication",
     "communication not hidden under compute",
     "collectives ran while no compute kernel did; overlapping them with forward/backward, in fewer and larger "
     "buckets, hides them",
     {"DDP: a larger bucket_cap_mb (fewer, larger all-reduces that start during backward)",
      "FSDP: forward_prefetch=True, backward_prefetch=BACKWARD_PRE",
      "Megatron-LM: --overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap", nullptr}},
    {B::kExposedMemcpy,
     "exposed_memcpy",
     "memory copies not hidden under compute",
     "host-device copies ran while nothing computed; copies from pageable memory are synchronous, copies from pinned "
     "memory with non_blocking=True run on a copy engine under compute",
     {"pinned host memory (DataLoader pin_memory=True, tensor.pin_memory())",
      "asynchronous copies: tensor.to(device, non_blocking=True), prefetching the next batch on a side stream",
      "fewer round trips: keep tensors on the GPU (no .cpu() or .item() in the step)", nullptr}},
    {B::kUnattributed,
     "unattributed_kernels",
     "kernels no classifier rule names",
     "busy time in kernels of unknown kind cannot be split into compute and communication; a rule for them lets the "
     "waterfall say where the time went",
     {"a rule for each with parameter 'kernel_classes' (docs/trace.md, kernel classes); -v lists them", nullptr,
      nullptr, nullptr}},
    {B::kNonMatrixKernels,
     "non_matrix_kernels",
     "elementwise, reduction and norm kernels",
     "memory-bound kernels ran while the matrix units idled; fusing them removes their round trips through memory",
     {"torch.compile: fuses chains of elementwise and reduction kernels",
      "fused kernels: FlashAttention, fused optimizers (fused=True), fused norms and cross-entropy",
      "fewer casts and copies (.float(), .contiguous()) in the step", nullptr}},
    {B::kMatrixUnknownFlops,
     "matrix_unknown_flops",
     "matrix kernels whose FLOPs are unknown",
     "the trace recorded no shapes for the ops that launched them, so their efficiency is unknown: not a loss by "
     "itself, but it hides how much of this time is below peak",
     {"profile with torch.profiler.profile(record_shapes=True, with_flops=True)", nullptr, nullptr, nullptr}},
    {B::kMatrixBelowPeak,
     "matrix_below_peak",
     "matrix kernels below the dense peak",
     "GEMMs ran below the peak: dimensions that are not multiples of the tile waste tile and wave quantization, and "
     "small GEMMs are memory-bound",
     {"dimensions (hidden, FFN, vocabulary, heads x head_dim, tokens per GEMM) multiples of 64, better 128",
      "a larger micro-batch or sequence: larger GEMMs",
      "the faster precision the peak assumes (bf16, fp8 with Transformer Engine) instead of fp32/tf32", nullptr}},
};
static_assert(std::size(kRules) == kNumWaterfallBuckets - 1);

double Fraction(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

// The median of `v` (the mean of the two middle values for an even count,
// rounded down); 0 when empty.
int64_t Median(std::vector<int64_t> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

double Spread(const std::vector<int64_t>& v, int64_t median) {
  if (v.empty() || median <= 0)
    return 0;
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return Fraction(*hi - *lo, median);
}

RankSummary SummarizeRank(const RankAnalysis& r, size_t index) {
  const TemporalBreakdown& t = r.main.temporal;
  RankSummary s;
  s.index = index;
  s.rank = r.trace.rank;
  s.span_ns = t.span_ns;
  s.compute_ns = t.compute_ns;
  s.compute_share = Fraction(t.compute_ns, t.span_ns);
  s.comm_share = Fraction(t.exposed_comm_ns, t.span_ns);
  s.idle_share = Fraction(t.idle_ns, t.span_ns);
  s.has_waterfall = r.waterfall.has_value();
  if (r.waterfall) {
    const StepWaterfall& w = *r.waterfall;
    if (w.matrix_with_flops_ns > 0 || w.matrix_ns == 0)
      s.mfu_hw = w.mfu_hw;
    s.mfu_hw_lower_bound = w.matrix_with_flops_ns > 0 && w.matrix_with_flops_ns < w.matrix_ns;
    if (w.model)
      s.model_mfu = w.model->mfu;
  }
  return s;
}

}  // namespace

std::span<const VerdictRule> VerdictRules() {
  return kRules;
}

const VerdictRule* FindVerdictRule(WaterfallBucket bucket) {
  size_t i = static_cast<size_t>(bucket);
  return i < std::size(kRules) ? &kRules[i] : nullptr;
}

const char* VerdictBasisName(VerdictBasis basis) {
  return basis == VerdictBasis::kWaterfall ? "waterfall" : "time_breakdown";
}

std::vector<VerdictItem> RankLosses(const std::array<int64_t, kNumWaterfallBuckets>& loss_ns, int64_t step_ns,
                                    const VerdictOptions& options) {
  std::vector<VerdictItem> items;
  if (step_ns <= 0)
    return items;
  for (const VerdictRule& rule : kRules) {
    const int64_t ns = loss_ns[static_cast<size_t>(rule.bucket)];
    const double share = Fraction(ns, step_ns);
    if (ns > 0 && share >= options.min_share)
      items.push_back({&rule, ns, share});
  }
  // Stable: equal losses keep bucket order.
  std::stable_sort(items.begin(), items.end(),
                   [](const VerdictItem& a, const VerdictItem& b) { return a.loss_ns > b.loss_ns; });
  if (items.size() > options.max_items)
    items.resize(options.max_items);
  return items;
}

std::vector<VerdictItem> VerdictFromWaterfall(const Waterfall& w, const VerdictOptions& options) {
  return RankLosses(w.bucket_ns, w.step_ns, options);
}

std::array<int64_t, kNumWaterfallBuckets> TemporalLosses(const TemporalBreakdown& t) {
  std::array<int64_t, kNumWaterfallBuckets> loss{};
  loss[static_cast<size_t>(B::kIdle)] = t.idle_ns;
  loss[static_cast<size_t>(B::kExposedCommunication)] = t.exposed_comm_ns;
  loss[static_cast<size_t>(B::kExposedMemcpy)] = t.exposed_memcpy_ns + t.exposed_memset_ns;
  return loss;
}

JobSummary SummarizeJob(const JobAnalysis& job) {
  JobSummary s;
  std::vector<int64_t> spans, computes, works;
  for (size_t i = 0; i < job.ranks.size(); ++i) {
    RankSummary r = SummarizeRank(job.ranks[i], i);
    if (job.collectives && i < job.collectives->ranks.size())
      r.wait_ns = std::clamp<int64_t>(job.collectives->ranks[i].wait_ns, 0, r.span_ns);
    r.wait_share = Fraction(r.wait_ns, r.span_ns);
    r.work_ns = r.span_ns - r.wait_ns;
    spans.push_back(r.span_ns);
    computes.push_back(r.compute_ns);
    works.push_back(r.work_ns);
    s.ranks.push_back(r);
  }
  s.median_span_ns = Median(spans);
  s.median_compute_ns = Median(computes);
  s.median_work_ns = Median(works);
  s.span_spread = Spread(spans, s.median_span_ns);
  s.compute_spread = Spread(computes, s.median_compute_ns);
  s.work_spread = Spread(works, s.median_work_ns);
  for (RankSummary& r : s.ranks) {
    r.compute_vs_median = s.median_compute_ns > 0 ? Fraction(r.compute_ns, s.median_compute_ns) - 1 : 0;
    r.work_vs_median = s.median_work_ns > 0 ? Fraction(r.work_ns, s.median_work_ns) - 1 : 0;
  }
  std::vector<size_t> order(s.ranks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return s.ranks[a].work_ns > s.ranks[b].work_ns; });
  for (size_t i : order) {
    if (s.slowest.size() == 3 || s.ranks[i].work_ns <= s.median_work_ns)
      break;
    s.slowest.push_back(i);
  }
  return s;
}

namespace {

// The losses of `ranks` summed.
JobVerdict VerdictOfRanks(std::span<const RankAnalysis> ranks, const VerdictOptions& options) {
  JobVerdict v;
  const bool all_waterfalls = !ranks.empty() && std::all_of(ranks.begin(), ranks.end(), [](const RankAnalysis& r) {
    return r.waterfall.has_value();
  });
  v.basis = all_waterfalls ? VerdictBasis::kWaterfall : VerdictBasis::kTimeBreakdown;
  std::array<int64_t, kNumWaterfallBuckets> loss{};
  for (const RankAnalysis& r : ranks) {
    const auto rank_loss = all_waterfalls ? r.waterfall->bucket_ns : TemporalLosses(r.main.temporal);
    for (size_t b = 0; b < kNumWaterfallBuckets; ++b)
      loss[b] += rank_loss[b];
    v.step_ns += all_waterfalls ? r.waterfall->step_ns : r.main.temporal.span_ns;
  }
  v.items = RankLosses(loss, v.step_ns, options);
  return v;
}

}  // namespace

JobVerdict ComputeRankVerdict(const RankAnalysis& rank, const VerdictOptions& options) {
  return VerdictOfRanks(std::span<const RankAnalysis>(&rank, 1), options);
}

JobVerdict ComputeJobVerdict(const JobAnalysis& job, const VerdictOptions& options) {
  return VerdictOfRanks(job.ranks, options);
}

}  // namespace mfu
