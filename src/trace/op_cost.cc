// FLOPs and bytes of one recorded op from its shapes (ComputeOpCost). The
// conventions are stated in include/mfu/trace_flops.h; the argument indices
// follow the ATen schemas in native_functions.yaml (PyTorch 2.x) and
// flash_attn's torch.library registrations (flash_attn_interface.py, 2.6).

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mfu/trace_flops.h"

namespace mfu {
namespace {

using Dims = std::vector<int64_t>;

// ---- dtypes -----------------------------------------------------------------

std::optional<DType> MatrixDType(std::string_view type) {
  if (type == "c10::BFloat16")
    return DType::kBf16;
  if (type == "c10::Half")
    return DType::kFp16;
  if (type == "float")
    return DType::kFp32;
  if (type == "double")
    return DType::kFp64Tensor;
  if (type.starts_with("c10::Float8_"))
    return DType::kFp8;
  if (type.starts_with("c10::Float4_"))
    return DType::kFp4;
  if (type == "signed char" || type == "c10::qint8")
    return DType::kInt8;
  return std::nullopt;
}

// Bytes per recorded element; 0 when unknown.
double ElementBytes(std::string_view type) {
  if (type == "c10::BFloat16" || type == "c10::Half" || type == "short int")
    return 2;
  if (type == "float" || type == "int")
    return 4;
  if (type == "double" || type == "long int" || type == "long")
    return 8;
  if (type.starts_with("c10::Float8_") || type.starts_with("c10::Float4_"))
    return 1;
  if (type == "signed char" || type == "unsigned char" || type == "bool" || type == "c10::qint8")
    return 1;
  return 0;
}

std::string_view TypeAt(const OpShapeView& s, size_t i) {
  return i < s.types.size() ? s.types[i] : std::string_view();
}
std::string_view ConcreteAt(const OpShapeView& s, size_t i) {
  return i < s.concrete.size() ? s.concrete[i] : std::string_view();
}
const Dims* DimsAt(const OpShapeView& s, size_t i) {
  return i < s.dims.size() && !s.dims[i].empty() ? &s.dims[i] : nullptr;
}

double Numel(const Dims& d) {
  double n = 1;
  for (int64_t x : d)
    n *= static_cast<double>(x);
  return n;
}

// ---- concrete inputs --------------------------------------------------------

std::optional<int64_t> ParseInt(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size())
    return std::nullopt;
  return v;
}

// "[2, 2]", "(2, 2)", "2" -> {2, 2} / {2}; nullopt when malformed or empty.
std::optional<Dims> ParseIntList(std::string_view s) {
  if (!s.empty() && (s.front() == '[' || s.front() == '('))
    s.remove_prefix(1);
  if (!s.empty() && (s.back() == ']' || s.back() == ')'))
    s.remove_suffix(1);
  Dims out;
  while (!s.empty()) {
    size_t comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    auto v = ParseInt(item);
    if (!v)
      return std::nullopt;
    out.push_back(*v);
    if (comma == std::string_view::npos)
      break;
    s.remove_prefix(comma + 1);
  }
  if (out.empty())
    return std::nullopt;
  return out;
}

std::optional<bool> ParseBool(std::string_view s) {
  if (s == "True" || s == "true" || s == "1")
    return true;
  if (s == "False" || s == "false" || s == "0")
    return false;
  return std::nullopt;
}

// "[True, True, False]" -> {true, true, false}; nullopt when malformed.
std::optional<std::vector<bool>> ParseBoolList(std::string_view s) {
  if (!s.empty() && s.front() == '[')
    s.remove_prefix(1);
  if (!s.empty() && s.back() == ']')
    s.remove_suffix(1);
  std::vector<bool> out;
  while (!s.empty()) {
    size_t comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    std::optional<bool> b = ParseBool(item);
    if (!b)
      return std::nullopt;
    out.push_back(*b);
    if (comma == std::string_view::npos)
      break;
    s.remove_prefix(comma + 1);
  }
  if (out.empty())
    return std::nullopt;
  return out;
}

Status BadShapes(std::string_view op, const std::string& why) {
  return InvalidArgumentError(std::string(op) + ": " + why);
}

// ---- GEMMs ------------------------------------------------------------------

enum class Formula : uint8_t {
  kMm,         // (a[M,K], b[K,N])
  kAddmm,      // (bias, a[M,K], b[K,N])
  kBmm,        // (a[B,M,K], b[B,K,N])
  kBaddbmm,    // (bias, a[B,M,K], b[B,K,N])
  kMatmul,     // broadcasting matmul
  kLinear,     // (x[...,K], w[N,K], bias?)
  kScaledMm,   // FP8 (a[M,K], b[K,N], scale_a, scale_b, bias?, ...)
  kIntMm,      // int8 (a[M,K], b[K,N]) -> int32
  kMv,         // (a[M,K], v[K])
  kAddmv,      // (bias, a[M,K], v[K])
  kGroupedMm,  // MoE grouped GEMM (a, b, offs?)
  kAttention,
  kConvolution,
  kConvolutionBackward,
};

struct Gemm {
  double batch = 1, m = 0, n = 0, k = 0;
  size_t a = 0;  // operand indices (for dtypes and bytes)
  size_t b = 1;
  int bias = -1;  // index of an additive input, -1 when none
};

StatusOr<OpCost> FinishGemm(std::string_view op, const OpShapeView& s, const Gemm& g, const OpFlopsOptions& options,
                            Formula formula) {
  std::string_view ta = TypeAt(s, g.a);
  std::optional<DType> dtype = MatrixDType(ta);
  if (!dtype)
    return UnsupportedError(std::string(op) + ": no matrix peak for dtype '" + std::string(ta) + "'");
  if (*dtype == DType::kFp32 && options.fp32_matmul_uses_tf32)
    dtype = DType::kTf32;
  double ea = ElementBytes(ta), eb = ElementBytes(TypeAt(s, g.b));
  double eo = ea;
  if (formula == Formula::kScaledMm)
    eo = 2;  // FP8 GEMMs write bf16/fp16 (out_dtype)
  if (formula == Formula::kIntMm)
    eo = 4;  // int8 x int8 -> int32
  OpCost c;
  c.cls = KernelClass::kGemm;
  c.dtype = *dtype;
  c.flops = 2 * g.batch * g.m * g.n * g.k;
  c.bytes = g.batch * (g.m * g.k * ea + g.k * g.n * eb + g.m * g.n * eo);
  if (g.bias >= 0) {
    const Dims* bias = DimsAt(s, static_cast<size_t>(g.bias));
    if (bias != nullptr)
      c.bytes += Numel(*bias) * ElementBytes(TypeAt(s, static_cast<size_t>(g.bias)));
  }
  return c;
}

// a[..., M, K] x b[..., K, N] with NumPy broadcasting (torch.matmul).
StatusOr<Gemm> MatmulDims(std::string_view op, const Dims& a, const Dims& b) {
  Gemm g;
  Dims ab = a, bb = b;
  if (ab.size() == 1)
    ab.insert(ab.begin(), 1);  // [K] -> [1, K]
  if (bb.size() == 1)
    bb.push_back(1);  // [K] -> [K, 1]
  if (ab.size() < 2 || bb.size() < 2)
    return BadShapes(op, "operands need at least one dimension");
  int64_t k = ab.back(), kb = bb[bb.size() - 2];
  if (k != kb) {
    return BadShapes(op, "inner dimensions " + std::to_string(k) + " and " + std::to_string(kb) + " differ");
  }
  g.m = static_cast<double>(ab[ab.size() - 2]);
  g.k = static_cast<double>(k);
  g.n = static_cast<double>(bb.back());
  size_t na = ab.size() - 2, nb = bb.size() - 2, nbatch = std::max(na, nb);
  for (size_t i = 0; i < nbatch; ++i) {
    int64_t da = i < nbatch - na ? 1 : ab[i - (nbatch - na)];
    int64_t db = i < nbatch - nb ? 1 : bb[i - (nbatch - nb)];
    if (da != db && da != 1 && db != 1)
      return BadShapes(op, "batch dimensions do not broadcast");
    g.batch *= static_cast<double>(std::max(da, db));
  }
  return g;
}

StatusOr<OpCost> GemmCost(std::string_view op, Formula formula, const OpShapeView& s, const OpFlopsOptions& options) {
  const bool has_bias_first = formula == Formula::kAddmm || formula == Formula::kBaddbmm || formula == Formula::kAddmv;
  const size_t ia = has_bias_first ? 1 : 0, ib = ia + 1;
  const Dims* a = DimsAt(s, ia);
  const Dims* b = DimsAt(s, ib);
  if (a == nullptr || b == nullptr)
    return BadShapes(op, "matrix operands have no recorded dims");
  Gemm g;
  g.a = ia;
  g.b = ib;
  g.bias = has_bias_first ? 0 : -1;
  switch (formula) {
    case Formula::kMm:
    case Formula::kAddmm:
    case Formula::kScaledMm:
    case Formula::kIntMm:
      if (a->size() != 2 || b->size() != 2)
        return BadShapes(op, "operands must be 2-D");
      if ((*a)[1] != (*b)[0])
        return BadShapes(op, "inner dimensions differ");
      g.m = static_cast<double>((*a)[0]);
      g.k = static_cast<double>((*a)[1]);
      g.n = static_cast<double>((*b)[1]);
      if (formula == Formula::kScaledMm)
        g.bias = DimsAt(s, 4) != nullptr ? 4 : -1;
      break;
    case Formula::kBmm:
    case Formula::kBaddbmm:
      if (a->size() != 3 || b->size() != 3)
        return BadShapes(op, "operands must be 3-D");
      if ((*a)[2] != (*b)[1] || (*a)[0] != (*b)[0])
        return BadShapes(op, "batch or inner dimensions differ");
      g.batch = static_cast<double>((*a)[0]);
      g.m = static_cast<double>((*a)[1]);
      g.k = static_cast<double>((*a)[2]);
      g.n = static_cast<double>((*b)[2]);
      break;
    case Formula::kMv:
    case Formula::kAddmv:
      if (a->size() != 2 || b->size() != 1 || (*a)[1] != (*b)[0])
        return BadShapes(op, "expects [M,K] x [K]");
      g.m = static_cast<double>((*a)[0]);
      g.k = static_cast<double>((*a)[1]);
      g.n = 1;
      break;
    case Formula::kMatmul: {
      auto mm = MatmulDims(op, *a, *b);
      if (!mm.ok())
        return mm.status();
      g.batch = mm->batch, g.m = mm->m, g.n = mm->n, g.k = mm->k;
      break;
    }
    case Formula::kLinear:
      if (b->size() != 2 || a->back() != (*b)[1])
        return BadShapes(op, "expects x[...,K] and weight[N,K]");
      g.m = Numel(*a) / static_cast<double>(a->back());
      g.k = static_cast<double>(a->back());
      g.n = static_cast<double>((*b)[0]);
      g.bias = DimsAt(s, 2) != nullptr ? 2 : -1;
      break;
    case Formula::kGroupedMm:
      // 2-D x 3-D: tokens[M,K] x experts[G,K,N] (forward); 3-D x 3-D:
      // batched; 2-D x 2-D: groups along K (weight gradient). Each is one
      // GEMM over the total extent of the grouped dimension.
      if (a->size() == 2 && b->size() == 3) {
        g.m = static_cast<double>((*a)[0]), g.k = static_cast<double>((*a)[1]), g.n = static_cast<double>((*b)[2]);
      } else if (a->size() == 3 && b->size() == 3) {
        g.batch = static_cast<double>((*a)[0]);
        g.m = static_cast<double>((*a)[1]), g.k = static_cast<double>((*a)[2]), g.n = static_cast<double>((*b)[2]);
      } else if (a->size() == 2 && b->size() == 2) {
        g.m = static_cast<double>((*a)[0]), g.k = static_cast<double>((*a)[1]), g.n = static_cast<double>((*b)[1]);
      } else {
        return BadShapes(op, "grouped GEMM operands must be 2-D or 3-D");
      }
      break;
    default:
      return InternalError(std::string(op) + ": not a GEMM formula");
  }
  return FinishGemm(op, s, g, options, formula);
}

// ---- attention --------------------------------------------------------------

enum class Layout : uint8_t { kBHND, kBNHD };
enum class CausalArg : uint8_t { kBool, kMaskType };  // bool is_causal / int custom_mask_type
enum class Align : uint8_t { kTopLeft, kBottomRight };

struct AttentionSig {
  Layout layout;
  bool backward;
  int8_t q;       // query index; key and value follow
  int8_t causal;  // index of is_causal / custom_mask_type
  CausalArg causal_kind;
  Align align;                                          // alignment of a boolean causal mask when Nq != Nkv
  int8_t cu_q = -1, cu_k = -1, max_q = -1, max_k = -1;  // variable-length arguments
};

struct AttentionShape {
  double batch = 0, hq = 0, nq = 0, nkv = 0, hkv = 0, dqk = 0, dv = 0;
};

// Fraction of the Nq x Nkv score matrix a causal mask keeps (continuous
// form, so that Nq == Nkv gives exactly 1/2 as Megatron counts).
double CausalFraction(double nq, double nkv, Align align) {
  if (nq <= 0 || nkv <= 0)
    return 0;
  if (align == Align::kTopLeft)
    return nq <= nkv ? nq / (2 * nkv) : 1 - nkv / (2 * nq);
  return nq <= nkv ? 1 - nq / (2 * nkv) : nkv / (2 * nq);
}

double AttentionForwardFlops(const AttentionShape& a, bool causal, Align align) {
  double full = 2 * a.batch * a.hq * a.nq * a.nkv * (a.dqk + a.dv);
  return causal ? full * CausalFraction(a.nq, a.nkv, align) : full;
}

StatusOr<AttentionShape> AttentionDims(std::string_view op, const AttentionSig& sig, const OpShapeView& s,
                                       bool varlen) {
  size_t iq = static_cast<size_t>(sig.q);
  const Dims* q = DimsAt(s, iq);
  const Dims* k = DimsAt(s, iq + 1);
  const Dims* v = DimsAt(s, iq + 2);
  if (q == nullptr || k == nullptr || v == nullptr)
    return BadShapes(op, "query, key or value has no recorded dims");
  if (q->size() != k->size() || q->size() != v->size())
    return BadShapes(op, "query, key and value ranks differ");
  AttentionShape a;
  auto d = [](const Dims& x, size_t i) { return static_cast<double>(x[i]); };
  if (q->size() == 3 && varlen) {  // [total_tokens, heads, head_dim]
    a = {1, d(*q, 1), d(*q, 0), d(*k, 0), d(*k, 1), d(*q, 2), d(*v, 2)};
  } else if (q->size() == 4 && sig.layout == Layout::kBHND) {
    a = {d(*q, 0), d(*q, 1), d(*q, 2), d(*k, 2), d(*k, 1), d(*q, 3), d(*v, 3)};
  } else if (q->size() == 4) {
    a = {d(*q, 0), d(*q, 2), d(*q, 1), d(*k, 1), d(*k, 2), d(*q, 3), d(*v, 3)};
  } else {
    return BadShapes(op, "query must be 4-D (3-D for variable-length)");
  }
  if ((*q)[q->size() - 1] != (*k)[k->size() - 1])
    return BadShapes(op, "query and key head dims differ");
  return a;
}

// Variable-length batches record only totals and maxima. Estimate: one
// sequence of the maximum length, the others sharing the rest equally.
double VarlenForwardFlops(const AttentionShape& total, double seqs, double max_q, double max_k, bool causal,
                          Align align) {
  AttentionShape one = total;
  one.batch = 1;
  one.nq = std::min(max_q, total.nq);
  one.nkv = std::min(max_k, total.nkv);
  double flops = AttentionForwardFlops(one, causal, align);
  if (seqs > 1) {
    AttentionShape rest = total;
    rest.batch = seqs - 1;
    rest.nq = (total.nq - one.nq) / (seqs - 1);
    rest.nkv = (total.nkv - one.nkv) / (seqs - 1);
    flops += AttentionForwardFlops(rest, causal, align);
  }
  return flops;
}

StatusOr<OpCost> AttentionCost(std::string_view op, const AttentionSig& sig, const OpShapeView& s) {
  const Dims* cu_q = sig.cu_q >= 0 ? DimsAt(s, static_cast<size_t>(sig.cu_q)) : nullptr;
  const bool varlen = cu_q != nullptr;
  auto shape = AttentionDims(op, sig, s, varlen);
  if (!shape.ok())
    return shape.status();
  std::string_view tq = TypeAt(s, static_cast<size_t>(sig.q));
  std::optional<DType> dtype = MatrixDType(tq);
  if (!dtype)
    return UnsupportedError(std::string(op) + ": no matrix peak for dtype '" + std::string(tq) + "'");

  OpCost c;
  c.cls = KernelClass::kAttention;
  c.dtype = *dtype;
  c.backward = sig.backward;
  bool causal = false;
  Align align = sig.align;
  std::string_view flag = ConcreteAt(s, static_cast<size_t>(sig.causal));
  if (sig.causal_kind == CausalArg::kBool) {
    std::optional<bool> b = ParseBool(flag);
    if (b) {
      causal = *b;
    } else {
      c.estimated = true;  // no Concrete Inputs: counted as a full (non-causal) mask
    }
  } else {
    std::optional<int64_t> mask = ParseInt(flag);
    if (!mask)
      c.estimated = true;
    causal = mask.has_value() && *mask != 0;
    align = mask.value_or(0) == 2 ? Align::kBottomRight : Align::kTopLeft;
  }

  const AttentionShape& a = *shape;
  if (varlen) {
    double seqs = static_cast<double>((*cu_q)[0] - 1);
    std::optional<int64_t> max_q = ParseInt(ConcreteAt(s, static_cast<size_t>(sig.max_q)));
    std::optional<int64_t> max_k = ParseInt(ConcreteAt(s, static_cast<size_t>(sig.max_k)));
    if (seqs < 1)
      return BadShapes(op, "cumulative sequence lengths are empty");
    double mq = max_q ? static_cast<double>(*max_q) : a.nq / seqs;
    double mk = max_k ? static_cast<double>(*max_k) : a.nkv / seqs;
    c.flops = VarlenForwardFlops(a, seqs, mq, mk, causal, align);
    c.estimated = true;
  } else {
    c.flops = AttentionForwardFlops(a, causal, align);
  }
  const double e = ElementBytes(tq);
  const double q_el = a.batch * a.hq * a.nq * a.dqk, o_el = a.batch * a.hq * a.nq * a.dv;
  const double k_el = a.batch * a.hkv * a.nkv * a.dqk, v_el = a.batch * a.hkv * a.nkv * a.dv;
  if (sig.backward) {
    c.flops *= 2.5;                                       // recompute QK^T, then dV, dP, dQ, dK: 5 products vs 2
    c.bytes = e * (2 * (q_el + k_el + v_el) + 2 * o_el);  // read q,k,v,o,dO; write dq,dk,dv
  } else {
    c.bytes = e * (q_el + k_el + v_el + o_el);
  }
  return c;
}

// ---- convolutions -----------------------------------------------------------

struct ConvSig {
  int8_t stride, padding, dilation, groups;
  int8_t transposed = -1;      // index of a `transposed` bool, -1 when fixed
  int8_t output_padding = -1;  // -1 when absent
  bool fixed_transposed = false;
  int8_t bias = -1;  // index of the bias tensor, -1 when none
};

// A per-dimension parameter: "[2, 2]" or "2" broadcast to `n` dims; "" takes
// `fallback`. nullopt when malformed.
std::optional<Dims> ConvParam(std::string_view text, size_t n, int64_t fallback) {
  if (text.empty())
    return Dims(n, fallback);
  std::optional<Dims> v = ParseIntList(text);
  if (!v)
    return std::nullopt;
  if (v->size() == 1)
    return Dims(n, (*v)[0]);
  if (v->size() != n)
    return std::nullopt;
  return v;
}

StatusOr<OpCost> ConvolutionCost(std::string_view op, const ConvSig& sig, const OpShapeView& s) {
  const Dims* x = DimsAt(s, 0);
  const Dims* w = DimsAt(s, 1);
  if (x == nullptr || w == nullptr)
    return BadShapes(op, "input or weight has no recorded dims");
  if (x->size() < 3 || w->size() != x->size())
    return BadShapes(op, "input and weight must be N-D with N >= 3");
  if (s.concrete.empty())
    return BadShapes(op, "no Concrete Inputs (stride, padding) recorded");
  const size_t n = x->size() - 2;
  bool transposed = sig.fixed_transposed;
  if (sig.transposed >= 0) {
    std::optional<bool> t = ParseBool(ConcreteAt(s, static_cast<size_t>(sig.transposed)));
    if (!t)
      return BadShapes(op, "transposed flag is not recorded");
    transposed = *t;
  }
  auto stride = ConvParam(ConcreteAt(s, static_cast<size_t>(sig.stride)), n, 1);
  auto dilation = ConvParam(ConcreteAt(s, static_cast<size_t>(sig.dilation)), n, 1);
  auto out_pad = sig.output_padding >= 0 ? ConvParam(ConcreteAt(s, static_cast<size_t>(sig.output_padding)), n, 0)
                                         : std::optional<Dims>(Dims(n, 0));
  std::string_view pad_text = ConcreteAt(s, static_cast<size_t>(sig.padding));
  std::optional<Dims> padding;
  const bool same = pad_text == "same";
  if (pad_text == "valid") {
    padding = Dims(n, 0);
  } else if (!same) {
    padding = ConvParam(pad_text, n, 0);
  }
  if (!stride || !dilation || !out_pad || (!same && !padding)) {
    return BadShapes(op, "stride, padding or dilation is malformed");
  }

  // Output shape: [N, C_out, spatial...]; a transposed weight is
  // [C_in, C_out / groups, kernel...].
  const int64_t groups = std::max<int64_t>(1, ParseInt(ConcreteAt(s, static_cast<size_t>(sig.groups))).value_or(1));
  Dims out = {(*x)[0], transposed ? (*w)[1] * groups : (*w)[0]};
  for (size_t i = 0; i < n; ++i) {
    int64_t in = (*x)[i + 2], k = (*w)[i + 2], st = (*stride)[i], dl = (*dilation)[i];
    if (st <= 0)
      return BadShapes(op, "stride must be positive");
    int64_t o = 0;
    if (same) {
      o = in;
    } else if (transposed) {
      o = (in - 1) * st - 2 * (*padding)[i] + dl * (k - 1) + (*out_pad)[i] + 1;
    } else {
      o = (in + 2 * (*padding)[i] - dl * (k - 1) - 1) / st + 1;
    }
    if (o <= 0)
      return BadShapes(op, "empty output");
    out.push_back(o);
  }
  std::string_view tx = TypeAt(s, 0);
  std::optional<DType> dtype = MatrixDType(tx);
  if (!dtype)
    return UnsupportedError(std::string(op) + ": no matrix peak for dtype '" + std::string(tx) + "'");
  const double per_output = 2 * Numel(Dims(w->begin() + 1, w->end()));
  OpCost c;
  c.cls = KernelClass::kConvolution;
  c.dtype = *dtype;
  c.flops = per_output * (transposed ? Numel(*x) : Numel(out));
  const double e = ElementBytes(tx);
  c.bytes = e * (Numel(*x) + Numel(*w) + Numel(out));
  const Dims* bias = sig.bias >= 0 ? DimsAt(s, static_cast<size_t>(sig.bias)) : nullptr;
  if (bias != nullptr)
    c.bytes += e * Numel(*bias);
  return c;
}

// aten::convolution_backward(grad_output, input, weight, bias_sizes, stride,
// padding, dilation, transposed, output_padding, groups, output_mask) and the
// legacy aten::cudnn_convolution_backward(input, grad_output, weight, ...,
// output_mask). FLOPs need no stride: the forward output is grad_output.
StatusOr<OpCost> ConvolutionBackwardCost(std::string_view op, bool legacy, const OpShapeView& s) {
  const Dims* gy = DimsAt(s, legacy ? 1 : 0);
  const Dims* x = DimsAt(s, legacy ? 0 : 1);
  const Dims* w = DimsAt(s, 2);
  if (gy == nullptr || x == nullptr || w == nullptr)
    return BadShapes(op, "grad_output, input or weight has no dims");
  if (w->size() < 3)
    return BadShapes(op, "weight must be N-D with N >= 3");
  bool transposed = false;
  if (!legacy)
    transposed = ParseBool(ConcreteAt(s, 7)).value_or(false);
  double forward = 2 * Numel(Dims(w->begin() + 1, w->end())) * (transposed ? Numel(*x) : Numel(*gy));
  // output_mask "[True, True, False]": input, weight and bias gradients.
  int grads = 2;
  if (std::optional<std::vector<bool>> mask = ParseBoolList(ConcreteAt(s, 10)); mask && mask->size() >= 2) {
    grads = ((*mask)[0] ? 1 : 0) + ((*mask)[1] ? 1 : 0);
  }
  std::string_view tx = TypeAt(s, legacy ? 0 : 1);
  std::optional<DType> dtype = MatrixDType(tx);
  if (!dtype)
    return UnsupportedError(std::string(op) + ": no matrix peak for dtype '" + std::string(tx) + "'");
  OpCost c;
  c.cls = KernelClass::kConvolution;
  c.dtype = *dtype;
  c.backward = true;
  c.flops = forward * grads;
  // Reads grad_output, input and weight; writes grad_input and grad_weight.
  c.bytes = ElementBytes(tx) * (Numel(*gy) + 2 * Numel(*x) + 2 * Numel(*w));
  return c;
}

// ---- the table --------------------------------------------------------------

struct Entry {
  Formula formula;
  AttentionSig attention{};
  ConvSig conv{};
};

const std::unordered_map<std::string_view, Entry>& Table() {
  using L = Layout;
  using C = CausalArg;
  using A = Align;
  static const auto* table = new std::unordered_map<std::string_view, Entry>{
      {"aten::mm", {Formula::kMm}},
      {"aten::addmm", {Formula::kAddmm}},
      {"aten::bmm", {Formula::kBmm}},
      {"aten::baddbmm", {Formula::kBaddbmm}},
      {"aten::matmul", {Formula::kMatmul}},
      {"aten::linear", {Formula::kLinear}},
      {"aten::_scaled_mm", {Formula::kScaledMm}},
      {"aten::_int_mm", {Formula::kIntMm}},
      {"aten::mv", {Formula::kMv}},
      {"aten::addmv", {Formula::kAddmv}},
      {"aten::_grouped_mm", {Formula::kGroupedMm}},
      {"aten::_scaled_grouped_mm", {Formula::kGroupedMm}},
      // Custom GEMMs seen in vLLM / SGLang ROCm traces: linear(x[M,K], w[N,K]).
      {"vllm::rocm_unquantized_gemm", {Formula::kLinear}},
      {"aiter::gemm_a16w16", {Formula::kLinear}},
      // SDPA and its backends: (q, k, v, ...) as [B, H, N, D].
      {"aten::scaled_dot_product_attention", {Formula::kAttention, {L::kBHND, false, 0, 5, C::kBool, A::kTopLeft}}},
      {"aten::_scaled_dot_product_flash_attention",
       {Formula::kAttention, {L::kBHND, false, 0, 4, C::kBool, A::kTopLeft}}},
      {"aten::_scaled_dot_product_flash_attention_for_cpu",
       {Formula::kAttention, {L::kBHND, false, 0, 4, C::kBool, A::kTopLeft}}},
      {"aten::_scaled_dot_product_efficient_attention",
       {Formula::kAttention, {L::kBHND, false, 0, 6, C::kBool, A::kTopLeft}}},
      {"aten::_scaled_dot_product_cudnn_attention",
       {Formula::kAttention, {L::kBHND, false, 0, 6, C::kBool, A::kTopLeft}}},
      {"aten::_scaled_dot_product_fused_attention_overrideable",
       {Formula::kAttention, {L::kBHND, false, 0, 5, C::kBool, A::kTopLeft}}},
      {"aten::_scaled_dot_product_flash_attention_backward",
       {Formula::kAttention, {L::kBHND, true, 1, 11, C::kBool, A::kTopLeft}}},
      {"aten::_scaled_dot_product_efficient_attention_backward",
       {Formula::kAttention, {L::kBHND, true, 1, 11, C::kBool, A::kTopLeft}}},
      {"aten::_scaled_dot_product_cudnn_attention_backward",
       {Formula::kAttention, {L::kBHND, true, 1, 14, C::kBool, A::kTopLeft}}},
      // Kernel-level ops: [B, N, H, D], or [total, H, D] with cumulative lengths.
      {"aten::_flash_attention_forward",
       {Formula::kAttention, {L::kBNHD, false, 0, 8, C::kBool, A::kBottomRight, 3, 4, 5, 6}}},
      {"aten::_flash_attention_backward",
       {Formula::kAttention, {L::kBNHD, true, 1, 11, C::kBool, A::kBottomRight, 6, 7, 8, 9}}},
      {"aten::_efficient_attention_forward",
       {Formula::kAttention, {L::kBNHD, false, 0, 9, C::kMaskType, A::kTopLeft, 4, 5, 6, 7}}},
      {"aten::_efficient_attention_backward",
       {Formula::kAttention, {L::kBNHD, true, 1, 14, C::kMaskType, A::kTopLeft, 6, 7, 8, 9}}},
      // Dao-AILab flash_attn >= 2.6 torch.library ops.
      {"flash_attn::_flash_attn_forward", {Formula::kAttention, {L::kBNHD, false, 0, 5, C::kBool, A::kBottomRight}}},
      {"flash_attn::_flash_attn_backward", {Formula::kAttention, {L::kBNHD, true, 1, 11, C::kBool, A::kBottomRight}}},
      {"flash_attn::_flash_attn_varlen_forward",
       {Formula::kAttention, {L::kBNHD, false, 0, 9, C::kBool, A::kBottomRight, 3, 4, 5, 6}}},
      {"flash_attn::_flash_attn_varlen_backward",
       {Formula::kAttention, {L::kBNHD, true, 1, 15, C::kBool, A::kBottomRight, 9, 10, 11, 12}}},
      // Convolutions: {stride, padding, dilation, groups, transposed,
      // output_padding, fixed_transposed, bias}.
      {"aten::convolution", {Formula::kConvolution, {}, {3, 4, 5, 8, 6, 7, false, 2}}},
      {"aten::_convolution", {Formula::kConvolution, {}, {3, 4, 5, 8, 6, 7, false, 2}}},
      {"aten::conv1d", {Formula::kConvolution, {}, {3, 4, 5, 6, -1, -1, false, 2}}},
      {"aten::conv2d", {Formula::kConvolution, {}, {3, 4, 5, 6, -1, -1, false, 2}}},
      {"aten::conv3d", {Formula::kConvolution, {}, {3, 4, 5, 6, -1, -1, false, 2}}},
      {"aten::conv_transpose1d", {Formula::kConvolution, {}, {3, 4, 7, 6, -1, 5, true, 2}}},
      {"aten::conv_transpose2d", {Formula::kConvolution, {}, {3, 4, 7, 6, -1, 5, true, 2}}},
      {"aten::conv_transpose3d", {Formula::kConvolution, {}, {3, 4, 7, 6, -1, 5, true, 2}}},
      {"aten::cudnn_convolution", {Formula::kConvolution, {}, {3, 2, 4, 5, -1, -1, false, -1}}},
      {"aten::cudnn_convolution_transpose", {Formula::kConvolution, {}, {4, 2, 5, 6, -1, 3, true, -1}}},
      {"aten::miopen_convolution", {Formula::kConvolution, {}, {4, 3, 5, 6, -1, -1, false, 2}}},
      {"aten::miopen_depthwise_convolution", {Formula::kConvolution, {}, {4, 3, 5, 6, -1, -1, false, 2}}},
      {"aten::miopen_convolution_transpose", {Formula::kConvolution, {}, {5, 3, 6, 7, -1, 4, true, 2}}},
      {"aten::convolution_backward", {Formula::kConvolutionBackward}},
      {"aten::cudnn_convolution_backward", {Formula::kConvolutionBackward}},
  };
  return *table;
}

}  // namespace

OpShapeView ViewOpShapes(const RankTrace& trace, uint32_t shapes_index) {
  const OpShapes& shapes = trace.op_shapes[shapes_index];
  OpShapeView view;
  view.dims = shapes.input_dims;
  view.types.reserve(shapes.input_types.size());
  for (uint32_t id : shapes.input_types)
    view.types.push_back(trace.strings.Get(id));
  view.concrete.reserve(shapes.concrete_inputs.size());
  for (uint32_t id : shapes.concrete_inputs)
    view.concrete.push_back(trace.strings.Get(id));
  return view;
}

bool HasOpCostFormula(std::string_view op_name) {
  return Table().contains(op_name);
}

StatusOr<OpCost> ComputeOpCost(std::string_view op_name, const OpShapeView& shapes, const OpFlopsOptions& options) {
  auto it = Table().find(op_name);
  if (it == Table().end())
    return UnsupportedError(std::string(op_name) + ": no FLOPs formula");
  const Entry& e = it->second;
  switch (e.formula) {
    case Formula::kAttention:
      return AttentionCost(op_name, e.attention, shapes);
    case Formula::kConvolution:
      return ConvolutionCost(op_name, e.conv, shapes);
    case Formula::kConvolutionBackward:
      return ConvolutionBackwardCost(op_name, op_name == "aten::cudnn_convolution_backward", shapes);
    default:
      return GemmCost(op_name, e.formula, shapes, options);
  }
}

}  // namespace mfu
