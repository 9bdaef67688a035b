// Kernel figures (kernel_figures.h): reading the cited table and
// summarising the model's errors per accelerator family and kind. The
// predictions themselves are in kernel_figure_predict.cc.

#include "mfu/kernel_figures.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/stats.h"
#include "base/strings.h"
#include "base/table.h"

namespace mfu {
namespace {

const std::vector<std::string> kColumns = {
    "id",     "kind",     "accelerator",   "dtype", "m",        "n",          "k",        "groups",
    "seq",    "head_dim", "causal",        "pass",  "kernel",   "convention", "ranks",    "nodes",
    "fabric", "cluster",  "message_bytes", "bytes", "measured", "unit",       "modelled", "ref_row",
    "source", "locator",  "notes"};

constexpr std::pair<const char*, KernelFigureKind> kKinds[] = {
    {"gemm", KernelFigureKind::kGemm},           {"grouped_gemm", KernelFigureKind::kGroupedGemm},
    {"attention", KernelFigureKind::kAttention}, {"allreduce", KernelFigureKind::kAllReduce},
    {"alltoall", KernelFigureKind::kAllToAll},   {"memory", KernelFigureKind::kMemory},
    {"quantize", KernelFigureKind::kQuantize},   {"permute", KernelFigureKind::kPermute}};
static_assert(std::size(kKinds) == kNumKernelFigureKinds);
constexpr std::pair<const char*, FigureUnit> kUnits[] = {
    {"tflops", FigureUnit::kTflops}, {"gbs", FigureUnit::kGbs}, {"tbs", FigureUnit::kTbs}, {"us", FigureUnit::kUs}};
constexpr std::pair<const char*, AttentionPass> kPasses[] = {
    {"fwd", AttentionPass::kForward}, {"bwd", AttentionPass::kBackward}, {"fwd_bwd", AttentionPass::kForwardBackward}};
constexpr std::pair<const char*, FigureFabric> kFabrics[] = {{"nvlink", FigureFabric::kNvlink},
                                                             {"scaleout", FigureFabric::kScaleout}};
constexpr std::pair<const char*, bool> kYesNo[] = {{"yes", true}, {"no", false}};

bool IsCollective(KernelFigureKind k) {
  return k == KernelFigureKind::kAllReduce || k == KernelFigureKind::kAllToAll;
}
bool IsGemm(KernelFigureKind k) {
  return k == KernelFigureKind::kGemm || k == KernelFigureKind::kGroupedGemm;
}

// One data row: typed fields, errors naming origin:line and the column. Read
// by base/table.h as text cells (every column in the header, no other): which
// columns a row needs, and what they mean, depend on its kind (m;n;k lists
// for a GEMM, ranks and fabric for a collective), and the figures are a
// read-only list, never merged or overridden.
class FigureRow {
 public:
  explicit FigureRow(const base::TableRow<base::TextCells>& row) : row_(row) {}
  const std::string& where() const { return row_.where; }
  std::string Text(const char* name) const { return std::string(row_.value.Get(name)); }
  Status Error(const char* name, const std::string& message) const {
    return ParseError(where() + ": column '" + name + "': " + message);
  }
  // A positive number; empty is 0 unless `required`.
  StatusOr<double> Number(const char* name, bool required) const {
    const std::string text = Text(name);
    if (text.empty()) {
      if (required)
        return Error(name, "needed for this kind");
      return 0.0;
    }
    return Parse(name, text);
  }
  // `;`-separated positive numbers.
  StatusOr<std::vector<double>> List(const char* name) const {
    std::vector<double> out;
    for (const std::string& part : base::Split(Text(name), ';')) {
      MFU_ASSIGN_OR_RETURN(double v, Parse(name, std::string(base::Trim(part))));
      out.push_back(v);
    }
    return out;
  }
  template <typename T, size_t N>
  StatusOr<T> Choice(const char* name, const std::pair<const char*, T> (&choices)[N]) const {
    const std::string text = base::ToLower(Text(name));
    std::vector<std::string> names;
    for (const auto& [key, value] : choices) {
      if (text == key)
        return value;
      names.emplace_back(key);
    }
    return Error(name, "'" + text + "' is not one of " + base::Join(names, ", "));
  }

 private:
  StatusOr<double> Parse(const char* name, const std::string& text) const {
    static const base::Bounds kPositive = base::Bounds().Min(0, "{} is not positive", /*exclusive=*/true);
    StatusOr<double> v = base::ParseNumberCell(text, kPositive);
    if (!v.ok())
      return Status(v.status().code(), where() + ": column '" + name + "': " + v.status().message());
    return v;
  }
  const base::TableRow<base::TextCells>& row_;
};

// m, n, k: one value each, or lists of one length (a single value repeats).
Status ParseGemmShapes(const FigureRow& row, KernelFigure& f) {
  MFU_ASSIGN_OR_RETURN(std::vector<double> m, row.List("m"));
  MFU_ASSIGN_OR_RETURN(std::vector<double> n, row.List("n"));
  MFU_ASSIGN_OR_RETURN(std::vector<double> k, row.List("k"));
  const size_t count = std::max({m.size(), n.size(), k.size()});
  for (auto [name, list] : {std::pair{"m", &m}, std::pair{"n", &n}, std::pair{"k", &k}}) {
    if (list->size() == 1)
      list->resize(count, list->front());
    else if (list->size() != count)
      return row.Error(
          name, "has " + std::to_string(list->size()) + " values where another dimension has " + std::to_string(count));
  }
  for (size_t i = 0; i < count; ++i)
    f.gemms.push_back({m[i], n[i], k[i]});
  if (f.kind == KernelFigureKind::kGroupedGemm) {
    MFU_ASSIGN_OR_RETURN(f.groups, row.Number("groups", true));
    // Which GEMMs are k-grouped weight gradients: none (`fwd`, forward or
    // data gradient, m-grouped), all (`wgrad`), or the last of a forward,
    // data-gradient, weight-gradient triple (`fwd_bwd`).
    const std::string pass = base::ToLower(row.Text("pass"));
    if (pass == "wgrad") {
      f.wgrad.assign(count, true);
    } else if (pass == "fwd_bwd") {
      if (count != 3)
        return row.Error("pass", "fwd_bwd needs 3 GEMMs (forward, data gradient, weight gradient)");
      f.wgrad = {false, false, true};
    } else if (!pass.empty() && pass != "fwd") {
      return row.Error("pass", "'" + pass + "' is not one of fwd, wgrad, fwd_bwd");
    }
  }
  return Status::Ok();
}

Status ParseAttention(const FigureRow& row, KernelFigure& f) {
  MFU_ASSIGN_OR_RETURN(f.seq, row.Number("seq", true));
  MFU_ASSIGN_OR_RETURN(f.head_dim, row.Number("head_dim", true));
  MFU_ASSIGN_OR_RETURN(f.causal, row.Choice("causal", kYesNo));
  MFU_ASSIGN_OR_RETURN(f.pass, row.Choice("pass", kPasses));
  StatusOr<AttentionKernel> kernel = ParseAttentionKernel(row.Text("kernel"));
  if (!kernel.ok() || *kernel == AttentionKernel::kUnfused)
    return row.Error("kernel", "'" + row.Text("kernel") + "' is not best or fa2");
  f.kernel = *kernel;
  constexpr std::pair<const char*, bool> kConventions[] = {{"half", false}, {"full", true}};
  MFU_ASSIGN_OR_RETURN(f.full_causal_flops, row.Choice("convention", kConventions));
  return Status::Ok();
}

Status ParseCollective(const FigureRow& row, KernelFigure& f) {
  MFU_ASSIGN_OR_RETURN(f.ranks, row.Number("ranks", true));
  MFU_ASSIGN_OR_RETURN(f.nodes, row.Number("nodes", false));
  f.nodes = std::max(f.nodes, 1.0);
  MFU_ASSIGN_OR_RETURN(f.fabric, row.Choice("fabric", kFabrics));
  f.cluster = row.Text("cluster");
  MFU_ASSIGN_OR_RETURN(f.message_bytes, row.Number("message_bytes", false));
  constexpr std::pair<const char*, bool> kConventions[] = {{"busbw", false}, {"algbw", true}};
  MFU_ASSIGN_OR_RETURN(f.algbw, row.Choice("convention", kConventions));
  if (f.ranks < 2)
    return row.Error("ranks", "a collective needs at least 2 ranks");
  return Status::Ok();
}

// The units each kind can be measured in.
Status CheckUnit(const FigureRow& row, const KernelFigure& f) {
  bool ok = false;
  switch (f.kind) {
    case KernelFigureKind::kGemm:
    case KernelFigureKind::kGroupedGemm:
      ok = f.unit != FigureUnit::kGbs;
      break;
    case KernelFigureKind::kAttention:
      ok = f.unit == FigureUnit::kTflops;
      break;
    case KernelFigureKind::kAllReduce:
    case KernelFigureKind::kAllToAll:
      ok = f.unit == FigureUnit::kGbs;
      break;
    case KernelFigureKind::kMemory:
    case KernelFigureKind::kQuantize:
    case KernelFigureKind::kPermute:
      ok = f.unit != FigureUnit::kTflops && (f.unit != FigureUnit::kUs || f.bytes > 0);
      break;
  }
  if (!ok)
    return row.Error("unit", std::string("'") + FigureUnitName(f.unit) + "' is not a unit of kind " +
                                 KernelFigureKindName(f.kind) + " (a memory, quantize or permute time needs bytes)");
  return Status::Ok();
}

StatusOr<KernelFigure> ParseFigure(const FigureRow& row) {
  KernelFigure f;
  f.where = row.where();
  f.id = row.Text("id");
  if (f.id.empty())
    return row.Error("id", "empty");
  MFU_ASSIGN_OR_RETURN(f.kind, row.Choice("kind", kKinds));
  f.accelerator = row.Text("accelerator");
  if (f.accelerator.empty())
    return row.Error("accelerator", "empty");
  if (const std::string dtype = row.Text("dtype"); !dtype.empty()) {
    StatusOr<DType> d = ParseDType(dtype);
    if (!d.ok())
      return row.Error("dtype", d.status().message());
    f.dtype = *d;
  } else if (IsGemm(f.kind)) {
    return row.Error("dtype", "needed for this kind");
  }
  if (IsGemm(f.kind))
    MFU_RETURN_IF_ERROR(ParseGemmShapes(row, f));
  else if (f.kind == KernelFigureKind::kAttention)
    MFU_RETURN_IF_ERROR(ParseAttention(row, f));
  else if (IsCollective(f.kind))
    MFU_RETURN_IF_ERROR(ParseCollective(row, f));
  MFU_ASSIGN_OR_RETURN(f.bytes, row.Number("bytes", false));
  MFU_ASSIGN_OR_RETURN(f.measured, row.Number("measured", true));
  MFU_ASSIGN_OR_RETURN(f.unit, row.Choice("unit", kUnits));
  MFU_RETURN_IF_ERROR(CheckUnit(row, f));
  MFU_ASSIGN_OR_RETURN(f.modelled, row.Choice("modelled", kYesNo));
  MFU_ASSIGN_OR_RETURN(double ref_row, row.Number("ref_row", false));
  f.ref_row = static_cast<int>(ref_row);
  f.source = row.Text("source");
  f.locator = row.Text("locator");
  f.notes = row.Text("notes");
  if (f.source.empty())
    return row.Error("source", "every figure cites its source");
  return f;
}

}  // namespace

const char* KernelFigureKindName(KernelFigureKind kind) {
  return kKinds[static_cast<size_t>(kind)].first;
}

const char* FigureUnitName(FigureUnit unit) {
  return kUnits[static_cast<size_t>(unit)].first;
}

StatusOr<std::vector<KernelFigure>> ParseKernelFigures(std::string_view csv, std::string_view origin) {
  static const base::TableSchema<base::TextCells> kSchema = base::TextCellsSchema(kColumns);
  MFU_ASSIGN_OR_RETURN(std::vector<base::TableRow<base::TextCells>> rows, base::ParseTableRows(kSchema, csv, origin));
  std::vector<KernelFigure> figures;
  std::set<std::string> ids;
  for (const base::TableRow<base::TextCells>& cells : rows) {
    const FigureRow row(cells);
    MFU_ASSIGN_OR_RETURN(KernelFigure f, ParseFigure(row));
    if (!ids.insert(f.id).second)
      return row.Error("id", "'" + f.id + "' appears twice");
    figures.push_back(std::move(f));
  }
  return figures;
}

StatusOr<std::vector<KernelFigure>> ReadKernelFigures(const FileSystem& fs, const std::string& path) {
  MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  return ParseKernelFigures(text, path);
}

StatusOr<KernelValidation> ValidateKernelFigures(const std::vector<KernelFigure>& figures, const HardwareDb& hw,
                                                 const ClusterDb& clusters, const EfficiencyDb& efficiency) {
  KernelValidation out;
  std::map<std::pair<std::string, KernelFigureKind>, std::vector<double>> errors;
  for (const KernelFigure& f : figures) {
    StatusOr<const Accelerator*> gpu = hw.Find(f.accelerator);
    if (!gpu.ok())
      return NotFoundError(f.where + ": column 'accelerator': " + gpu.status().message());
    const Cluster* cluster = nullptr;
    if (!f.cluster.empty()) {
      StatusOr<const Cluster*> c = clusters.Find(f.cluster);
      if (!c.ok())
        return NotFoundError(f.where + ": column 'cluster': " + c.status().message());
      cluster = *c;
    }
    const EfficiencyParams& e = efficiency.For((*gpu)->id);
    StatusOr<double> predicted = PredictKernelFigure(f, **gpu, cluster, e);
    if (!predicted.ok())
      return InvalidArgumentError(f.where + ": " + predicted.status().message());
    out.figures.push_back({&f, e.family, *predicted, *predicted / f.measured - 1});
    if (f.modelled)
      errors[{e.family, f.kind}].push_back(std::fabs(out.figures.back().error));
  }
  for (const EfficiencyParams& p : efficiency.all()) {
    std::vector<KernelFigureKind> missing;
    for (size_t k = 0; k < kNumKernelFigureKinds; ++k) {
      const auto kind = static_cast<KernelFigureKind>(k);
      auto it = errors.find({p.family, kind});
      if (it == errors.end()) {
        missing.push_back(kind);
        continue;
      }
      const double max = *std::max_element(it->second.begin(), it->second.end());
      out.groups.push_back({p.family, kind, it->second.size(), base::Median(it->second, 0), max});
    }
    out.unvalidated.emplace_back(p.family, std::move(missing));
  }
  return out;
}

}  // namespace mfu
