// Operator profiles (operator_profiles.h): reading, prediction, and the fit
// of the efficiency parameters they measure directly.

#include "mfu/operator_profiles.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "base/strings.h"
#include "base/table.h"

namespace mfu {
namespace {

constexpr double kBytes = 2;                          // 16-bit operands
constexpr double kLargeCollective = 4.0 * (1 << 20);  // below: latency-dominated

// Vidur's exported measurements, read by base/table.h as text cells: the
// columns read must be in the header, the export's others are kept as they
// come (skipped), and one row becomes several samples (one per operator
// column).
const std::vector<std::string> kComputeColumns = {"gpu",
                                                  "hidden",
                                                  "ffn",
                                                  "heads",
                                                  "kv_heads",
                                                  "gated",
                                                  "tokens",
                                                  "tp",
                                                  "attn_pre_proj_ms",
                                                  "attn_post_proj_ms",
                                                  "mlp_up_proj_ms",
                                                  "mlp_down_proj_ms",
                                                  "input_layernorm_ms",
                                                  "add_ms",
                                                  "mlp_act_ms"};
const std::vector<std::string> kCollectiveColumns = {"cluster", "collective", "gpus", "bytes", "median_ms"};

class ProfileRow {
 public:
  explicit ProfileRow(const base::TableRow<base::TextCells>& row) : row_(row) {}
  StatusOr<std::string> Text(const char* name) const { return std::string(row_.value.Get(name)); }
  StatusOr<double> Number(const char* name) const {
    static const base::Bounds kNonNegative = [] {
      base::Bounds b;
      b.min = base::Bound{0, false, "'{}' is not a non-negative number", StatusCode::kParse};
      return b;
    }();
    StatusOr<double> v = base::ParseNumberCell(row_.value.Get(name), kNonNegative, "'{}' is not a non-negative number");
    if (!v.ok())
      return Status(v.status().code(), row_.where + ": column '" + name + "': " + v.status().message());
    return v;
  }

 private:
  const base::TableRow<base::TextCells>& row_;
};

// The rows of `text`, the header holding every one of `columns`.
StatusOr<std::vector<base::TableRow<base::TextCells>>> ReadRows(std::string_view text, const std::string& origin,
                                                                const std::vector<std::string>& columns) {
  return base::ParseTableRows(base::TextCellsSchema(columns, {}, /*ignore_unknown=*/true), text, origin);
}

Status ParseCompute(std::string_view text, const std::string& origin, OperatorProfiles& out) {
  MFU_ASSIGN_OR_RETURN(std::vector<base::TableRow<base::TextCells>> rows, ReadRows(text, origin, kComputeColumns));
  for (const base::TableRow<base::TextCells>& cells : rows) {
    const ProfileRow row(cells);
    MFU_ASSIGN_OR_RETURN(std::string gpu, row.Text("gpu"));
    MFU_ASSIGN_OR_RETURN(double h, row.Number("hidden"));
    MFU_ASSIGN_OR_RETURN(double ffn, row.Number("ffn"));
    MFU_ASSIGN_OR_RETURN(double heads, row.Number("heads"));
    MFU_ASSIGN_OR_RETURN(double kv, row.Number("kv_heads"));
    MFU_ASSIGN_OR_RETURN(std::string gated, row.Text("gated"));
    MFU_ASSIGN_OR_RETURN(double tokens, row.Number("tokens"));
    MFU_ASSIGN_OR_RETURN(double tp, row.Number("tp"));
    if (h < 1 || heads < 1 || tp < 1 || tokens < 1 || ffn < 1)
      return OutOfRangeError(cells.where + ": sizes must be >= 1");
    const bool glu = base::ToLower(gated) == "true" || gated == "1";
    const double d = h / heads;
    // Vidur's shapes per TP shard: fused QKV, fused gate+up.
    struct Gemm {
      const char* op;
      double n, k;
    };
    const Gemm gemms[] = {{"attn_pre_proj", (heads + 2 * kv) * d / tp, h},
                          {"attn_post_proj", h, heads * d / tp},
                          {"mlp_up_proj", (glu ? 2 : 1) * ffn / tp, h},
                          {"mlp_down_proj", h, ffn / tp}};
    for (const Gemm& g : gemms) {
      MFU_ASSIGN_OR_RETURN(double ms, row.Number((std::string(g.op) + "_ms").c_str()));
      out.operators.push_back({gpu, g.op, true, tokens, g.n, g.k, 0, tokens, ms * 1e-3});
    }
    // Memory-bound operators and their 16-bit traffic per token row: a norm
    // reads and writes the hidden state (the weight is negligible), the
    // residual add reads two and writes one, the gated activation reads gate
    // and up and writes one. At 4096 tokens these bytes put Vidur's adds at
    // 82-100% of HBM bandwidth, its activations at 39-58% and its norms at
    // 30-36%: slow kernels, not missing traffic.
    struct Vector {
      const char* op;
      VectorKernel kernel;
      double row_bytes;
    };
    const Vector vectors[] = {{"input_layernorm", VectorKernel::kNorm, 2 * h * kBytes},
                              {"add", VectorKernel::kResidualAdd, 3 * h * kBytes},
                              {"mlp_act", VectorKernel::kActivation, (glu ? 3 : 2) * ffn / tp * kBytes}};
    for (const Vector& v : vectors) {
      MFU_ASSIGN_OR_RETURN(double ms, row.Number((std::string(v.op) + "_ms").c_str()));
      OperatorSample sample{gpu, v.op, false, 0, 0, 0, tokens * v.row_bytes, tokens, ms * 1e-3};
      sample.kernel = v.kernel;
      sample.row_bytes = v.row_bytes;
      out.operators.push_back(std::move(sample));
    }
  }
  return Status::Ok();
}

Status ParseCollectives(std::string_view text, const std::string& origin, OperatorProfiles& out) {
  MFU_ASSIGN_OR_RETURN(std::vector<base::TableRow<base::TextCells>> rows, ReadRows(text, origin, kCollectiveColumns));
  for (const base::TableRow<base::TextCells>& cells : rows) {
    const std::string& where = cells.where;
    const ProfileRow row(cells);
    CollectiveSample s;
    MFU_ASSIGN_OR_RETURN(s.cluster, row.Text("cluster"));
    MFU_ASSIGN_OR_RETURN(std::string kind, row.Text("collective"));
    if (kind == "all_reduce") {
      s.kind = CollectiveKind::kAllReduce;
    } else if (kind == "all_gather") {
      s.kind = CollectiveKind::kAllGather;
    } else if (kind == "reduce_scatter") {
      s.kind = CollectiveKind::kReduceScatter;
    } else if (kind == "all_to_all") {
      s.kind = CollectiveKind::kAllToAll;
    } else if (kind == "send_recv") {
      s.kind = CollectiveKind::kSendRecv;
    } else {
      return ParseError(where + ": column 'collective': '" + kind +
                        "' is not all_reduce, all_gather, reduce_scatter, all_to_all or send_recv");
    }
    MFU_ASSIGN_OR_RETURN(s.ranks, row.Number("gpus"));
    MFU_ASSIGN_OR_RETURN(s.bytes, row.Number("bytes"));
    MFU_ASSIGN_OR_RETURN(double ms, row.Number("median_ms"));
    if (s.ranks < 1 || s.ranks > 1e6)
      return OutOfRangeError(where + ": column 'gpus': must be in [1, 1e6]");
    s.seconds = ms * 1e-3;
    out.collectives.push_back(s);
  }
  return Status::Ok();
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v)
    s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// The upper median (the higher middle value of an even count); 0 when empty.
double UpperMedian(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A vector operator sample as its kernel's fit sees it.
struct KernelPoint {
  double rows = 0, row_bytes = 0, seconds = 0;
  double hbm = 0;  // the sample's accelerator's HBM bandwidth, bytes/s
};

double KernelLogError(const std::vector<KernelPoint>& points, const VectorKernelParams& k) {
  double sum = 0;
  for (const KernelPoint& p : points)
    sum += std::fabs(std::log(VectorKernelSeconds(k, p.hbm, p.rows, p.row_bytes) / p.seconds));
  return points.empty() ? 0 : sum / static_cast<double>(points.size());
}

std::vector<double> KernelErrors(const std::vector<KernelPoint>& points, const VectorKernelParams& k) {
  std::vector<double> e;
  for (const KernelPoint& p : points)
    e.push_back(std::fabs(VectorKernelSeconds(k, p.hbm, p.rows, p.row_bytes) / p.seconds - 1));
  return e;
}

// One kernel kind's min_us, row_ns_per_kib and bw_fraction: the best point of
// a coarse grid first (the objective is flat wherever the floor or the
// bandwidth term alone sets every sample, so a search from one start can
// stall), then coordinate descent on grids that narrow around each value.
VectorKernelParams FitKernel(const std::vector<KernelPoint>& points, VectorKernelParams k) {
  const auto infos = VectorKernelParamInfos();
  double best = std::numeric_limits<double>::infinity();
  VectorKernelParams trial = k;
  for (double min_us : {0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0}) {
    for (double row : {0.0, 25.0, 50.0, 100.0, 150.0, 200.0}) {
      for (double bw : {0.3, 0.5, 0.7, 0.9}) {
        trial.min_us = min_us;
        trial.row_ns_per_kib = row;
        trial.bw_fraction = bw;
        const double value = KernelLogError(points, trial);
        if (value < best) {
          best = value;
          k = trial;
        }
      }
    }
  }
  // Each step's scale: a fraction of the value, or of a typical magnitude
  // (microseconds, tens of ns per KiB, a tenth of bandwidth) near zero.
  const double scales[kNumVectorKernelParams] = {1.0, 10.0, 0.1};
  for (int sweep = 0; sweep < 20; ++sweep) {
    const double width = 0.5 / std::pow(1.5, sweep);
    for (size_t i = 0; i < infos.size(); ++i) {
      const VectorKernelParamInfo& info = infos[i];
      const double current = k.*info.field;
      const double range = std::max(current, scales[i]) * width;
      double chosen = current;
      for (int step = -16; step <= 16; ++step) {
        trial = k;
        trial.*info.field = std::clamp(current + range * step / 16.0, info.min, info.max);
        const double value = KernelLogError(points, trial);
        if (value < best - 1e-12) {
          best = value;
          chosen = trial.*info.field;
        }
      }
      k.*info.field = chosen;
    }
  }
  return k;
}

// Fits each vector kernel kind of one family to its samples (the kinds are
// independent) and stores the parameters in `p`.
std::vector<VectorKernelFit> FitVectorKernels(const std::vector<const OperatorSample*>& samples, const HardwareDb& hw,
                                              const std::string& origin, EfficiencyParams& p) {
  std::vector<VectorKernelFit> fits;
  for (size_t k = 0; k < kNumVectorKernels; ++k) {
    std::vector<KernelPoint> points;
    for (const OperatorSample* s : samples) {
      StatusOr<const Accelerator*> gpu = hw.Find(s->accelerator);
      if (!s->gemm && static_cast<size_t>(s->kernel) == k && s->seconds > 0 && gpu.ok())
        points.push_back({s->tokens, s->row_bytes, s->seconds, (*gpu)->memory_bw_tbps * 1e12});
    }
    if (points.empty())
      continue;
    VectorKernelFit f;
    f.kernel = static_cast<VectorKernel>(k);
    f.samples = points.size();
    f.median_before = UpperMedian(KernelErrors(points, p.vector_kernels[k]));
    f.params = FitKernel(points, p.vector_kernels[k]);
    f.params.source = "fitted by mfu calibrate --operators to " + std::to_string(points.size()) +
                      " measured kernel times" + (origin.empty() ? "" : " (" + origin + ")");
    f.median_after = UpperMedian(KernelErrors(points, f.params));
    p.vector_kernels[k] = f.params;
    fits.push_back(f);
  }
  return fits;
}

}  // namespace

StatusOr<OperatorProfiles> ParseOperatorProfiles(std::string_view compute_csv, std::string_view collectives_csv,
                                                 std::string_view origin) {
  OperatorProfiles p;
  p.origin = std::string(origin);
  if (!compute_csv.empty())
    MFU_RETURN_IF_ERROR(ParseCompute(compute_csv, std::string(origin) + "/compute.csv", p));
  if (!collectives_csv.empty())
    MFU_RETURN_IF_ERROR(ParseCollectives(collectives_csv, std::string(origin) + "/collectives.csv", p));
  return p;
}

StatusOr<OperatorProfiles> ReadOperatorProfiles(const FileSystem& fs, const std::string& dir) {
  StatusOr<std::string> compute = fs.ReadFile(dir + "/compute.csv");
  StatusOr<std::string> collectives = fs.ReadFile(dir + "/collectives.csv");
  if (!compute.ok() && !collectives.ok())
    return NotFoundError(dir + ": neither compute.csv nor collectives.csv can be read");
  return ParseOperatorProfiles(compute.ok() ? *compute : "", collectives.ok() ? *collectives : "", dir);
}

double PredictSample(const OperatorSample& s, const HardwareDb& hw, const EfficiencyParams& e) {
  StatusOr<const Accelerator*> gpu = hw.Find(s.accelerator);
  if (!gpu.ok())
    return 0;
  // A measured GEMM includes its launch and tail: the per-kernel gap the
  // training model also charges (kernel_overhead_us).
  if (s.gemm)
    return GemmSeconds(**gpu, e, DType::kFp16, s.m, s.n, s.k) + e.kernel_overhead_us * 1e-6;
  return VectorKernelSeconds(e.vector_kernels[static_cast<size_t>(s.kernel)], (*gpu)->memory_bw_tbps * 1e12, s.tokens,
                             s.row_bytes);
}

double PredictSample(const CollectiveSample& s, const ClusterDb& clusters, const EfficiencyParams& e) {
  StatusOr<const Cluster*> c = clusters.Find(s.cluster);
  if (!c.ok())
    return 0;
  const bool inside = s.ranks <= (*c)->nvlink_domain_gpus;
  const Fabric fabric = Fabric::Of(**c, e);
  const LinkSpec link = inside ? fabric.scale_up() : fabric.scale_out();
  return CollectiveSeconds(s.kind, s.ranks, s.bytes, link);
}

namespace {

// The profiles' samples by accelerator family, the families in first-seen
// order. Collectives count only where the fit can use them: large, inside
// one NVLink domain, over two ranks or more.
struct FamilySamples {
  std::map<std::string, std::vector<const OperatorSample*>> ops;
  std::map<std::string, std::vector<const CollectiveSample*>> colls;
  std::vector<std::string> order;
};

StatusOr<FamilySamples> GroupByFamily(const OperatorProfiles& profiles, const HardwareDb& hw, const ClusterDb& clusters,
                                      EfficiencyDb& efficiency) {
  FamilySamples g;
  auto note = [&g](const std::string& f) {
    if (std::find(g.order.begin(), g.order.end(), f) == g.order.end())
      g.order.push_back(f);
  };
  for (const OperatorSample& s : profiles.operators) {
    StatusOr<const Accelerator*> gpu = hw.Find(s.accelerator);
    if (!gpu.ok())
      return gpu.status().WithPrefix("operator profile");
    const std::string family = efficiency.For((*gpu)->id).family;
    g.ops[family].push_back(&s);
    note(family);
  }
  for (const CollectiveSample& s : profiles.collectives) {
    StatusOr<const Cluster*> c = clusters.Find(s.cluster);
    if (!c.ok())
      return c.status().WithPrefix("operator profile");
    if (s.bytes < kLargeCollective || s.ranks > (*c)->nvlink_domain_gpus || s.ranks < 2)
      continue;
    StatusOr<const Accelerator*> gpu = hw.Find((*c)->accelerator);
    if (!gpu.ok())
      return gpu.status().WithPrefix("operator profile");
    const std::string family = efficiency.For((*gpu)->id).family;
    g.colls[family].push_back(&s);
    note(family);
  }
  return g;
}

enum class SampleKind { kGemm, kVector, kCollective };

// One family's samples against its parameters `p` (which the fit moves).
struct FamilyFitter {
  const std::vector<const OperatorSample*>& ops;
  const std::vector<const CollectiveSample*>& colls;
  const HardwareDb& hw;
  const ClusterDb& clusters;
  EfficiencyParams& p;

  // |predicted / measured - 1| of the samples of `kind`.
  std::vector<double> Errors(SampleKind kind) const {
    std::vector<double> e;
    const bool gemm = kind == SampleKind::kGemm;
    if (kind == SampleKind::kCollective) {
      for (const CollectiveSample* s : colls)
        e.push_back(std::fabs(PredictSample(*s, clusters, p) / s->seconds - 1));
    } else {
      for (const OperatorSample* s : ops) {
        if (s->gemm == gemm)
          e.push_back(std::fabs(PredictSample(*s, hw, p) / s->seconds - 1));
      }
    }
    return e;
  }

  // What the fit minimises: the mean |log(predicted / measured)| of the
  // GEMMs plus that of the collectives.
  double LogError() const {
    double sum = 0;
    size_t n = 0;
    for (const OperatorSample* s : ops) {
      if (!s->gemm)
        continue;  // reported, not fitted: see the note on vector operators
      sum += std::fabs(std::log(PredictSample(*s, hw, p) / s->seconds));
      ++n;
    }
    double csum = 0;
    size_t cn = 0;
    for (const CollectiveSample* s : colls) {
      csum += std::fabs(std::log(PredictSample(*s, clusters, p) / s->seconds));
      ++cn;
    }
    return (n > 0 ? sum / static_cast<double>(n) : 0) + (cn > 0 ? csum / static_cast<double>(cn) : 0);
  }

  // Coordinate descent on `params`: six sweeps, each trying 17 values
  // across a range that halves per sweep, keeping any that lowers LogError.
  void Descend(const std::vector<const EfficiencyParamInfo*>& params) {
    double best = LogError();
    for (int sweep = 0; sweep < 6; ++sweep) {
      const double width = 0.5 / static_cast<double>(1 << sweep);
      for (const EfficiencyParamInfo* info : params) {
        const double current = p.*(info->field);
        const double range = (info->max - info->min) * width;
        double chosen = current;
        for (int k = -8; k <= 8; ++k) {
          const double candidate = std::clamp(current + range * k / 8.0, info->min, info->max);
          p.*(info->field) = candidate;
          const double value = LogError();
          if (value < best - 1e-12) {
            best = value;
            chosen = candidate;
          }
        }
        p.*(info->field) = chosen;
      }
    }
  }
};

// The parameters the samples of `fit` measure (its counts set); their
// names go to fit.fitted.
std::vector<const EfficiencyParamInfo*> MeasuredParams(OperatorFamilyFit& fit) {
  std::vector<const EfficiencyParamInfo*> params;
  static const auto infos = EfficiencyParamInfos();
  for (const EfficiencyParamInfo& info : infos) {
    const std::string name = info.name;
    const bool measured = ((name == "matmul_peak_fraction" || name == "matmul_half_dim" ||
                            name == "vector_bw_fraction" || name == "kernel_overhead_us") &&
                           fit.gemms > 0) ||
                          (name == "scaleup_bw_fraction" && fit.collectives > 0);
    if (measured) {
      params.push_back(&info);
      fit.fitted.push_back(name);
    }
  }
  return params;
}

}  // namespace

StatusOr<std::vector<OperatorFamilyFit>> FitOperatorProfiles(const OperatorProfiles& profiles, const HardwareDb& hw,
                                                             const ClusterDb& clusters, EfficiencyDb& efficiency) {
  MFU_ASSIGN_OR_RETURN(FamilySamples samples, GroupByFamily(profiles, hw, clusters, efficiency));
  std::vector<OperatorFamilyFit> fits;
  for (const std::string& family : samples.order) {
    EfficiencyParams* p = efficiency.Mutable(family);
    if (p == nullptr)
      continue;
    FamilyFitter fitter{samples.ops[family], samples.colls[family], hw, clusters, *p};
    OperatorFamilyFit fit;
    fit.family = family;
    for (const OperatorSample* s : fitter.ops)
      ++(s->gemm ? fit.gemms : fit.vectors);
    fit.collectives = fitter.colls.size();
    fit.gemm_mape_before = Mean(fitter.Errors(SampleKind::kGemm));
    fit.vector_mape_before = Mean(fitter.Errors(SampleKind::kVector));
    fit.collective_mape_before = Mean(fitter.Errors(SampleKind::kCollective));
    fitter.Descend(MeasuredParams(fit));
    fit.kernels = FitVectorKernels(samples.ops[family], hw, profiles.origin, *p);
    fit.gemm_mape_after = Mean(fitter.Errors(SampleKind::kGemm));
    fit.vector_mape_after = Mean(fitter.Errors(SampleKind::kVector));
    fit.collective_mape_after = Mean(fitter.Errors(SampleKind::kCollective));
    fits.push_back(fit);
  }
  return fits;
}

}  // namespace mfu
