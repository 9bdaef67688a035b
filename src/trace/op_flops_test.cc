// FLOPs from shapes: every formula against a hand computation, the linking
// and nesting rules on hand-built traces, the per-class summary, and the
// H100 Qwen1.5-0.5B inference trace against TraceLens's own report for it.
//
// TraceLens reference (AMD-AGI/TraceLens @171dd747, MIT):
// tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs/,
// GEMM.csv and SDPA_fwd.csv, columns GFLOPS_first, Data Moved (MB)_first
// (MiB), name_count, "Kernel Time (us)_sum" and TFLOPS/s_mean:
//
//   op                 M     N     K     bias  GFLOPS         MiB          count  kernel us (sum)
//   aten::mm           8944  2816  1024  False 51.581550592   71.0078125   48     4055.25244140625
//   aten::addmm        8944  1024  1024  True  18.766086144   36.939453125 72     2329.075927734375
//   aten::mm           8944  1024  2816  False 51.581550592   71.0078125   24     1835.287109375
//   aten::mm           8944  1024  1024  False 18.756927488   36.9375      24     778.14208984375
//   aten::bmm (fp32)   32    559   1     False 3.5776e-05     0.0704917... 1      3.52001953125
//   _scaled_dot_product_flash_attention B16 N559 H16 d64 causal:
//                                        10.239377408   69.875       24     2722.704345703125
//
// TraceLens adds M*N to addmm for the bias (flops_func: 2MNK + MN); mfu
// counts matrix-unit work only, so ours is theirs minus 8944*1024.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "mfu/result.h"
#include "mfu/trace_breakdown.h"
#include "mfu/trace_flops.h"
#include "testing/trace_builder.h"

namespace mfu {
namespace {

using testing::OpArgs;
using testing::TraceBuilder;
using B = TraceBuilder;

constexpr double kMiB = 1024.0 * 1024.0;
const std::string kBf16 = "c10::BFloat16";

StatusOr<OpCost> Cost(std::string_view name, const OpArgs& args, const OpFlopsOptions& options = {}) {
  OpShapeView view;
  view.dims = args.dims;
  for (const std::string& t : args.types)
    view.types.push_back(t);
  for (const std::string& c : args.concrete)
    view.concrete.push_back(c);
  return ComputeOpCost(name, view, options);
}

OpCost CostOk(std::string_view name, const OpArgs& args) {
  StatusOr<OpCost> c = Cost(name, args);
  EXPECT_TRUE(c.ok()) << name << ": " << c.status().message();
  return c.ok() ? *c : OpCost{};
}

// ---- GEMM formulas ----------------------------------------------------------

TEST(OpCost, MmMatchesTraceLens) {
  OpCost c = CostOk("aten::mm", {{{8944, 1024}, {1024, 2816}}, {kBf16, kBf16}, {"", ""}});
  EXPECT_EQ(c.cls, KernelClass::kGemm);
  EXPECT_EQ(c.dtype, DType::kBf16);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 8944 * 1024 * 2816);  // 51.581550592 GF
  EXPECT_DOUBLE_EQ(c.flops, 51.581550592e9);
  EXPECT_DOUBLE_EQ(c.bytes / kMiB, 71.0078125);  // (MK + KN + MN) x 2 bytes
  EXPECT_FALSE(c.backward);
}

TEST(OpCost, AddmmCountsMatrixWorkOnly) {
  OpCost c = CostOk("aten::addmm", {{{1024}, {8944, 1024}, {1024, 1024}, {}, {}},
                                    {kBf16, kBf16, kBf16, "Scalar", "Scalar"},
                                    {"", "", "", "1", "1"}});
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 8944 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(c.flops, 18.766086144e9 - 8944.0 * 1024);  // TraceLens minus its bias term
  EXPECT_DOUBLE_EQ(c.bytes / kMiB, 36.939453125);             // bias read included, as TraceLens
}

TEST(OpCost, BmmFp32MatchesTraceLens) {
  OpCost c = CostOk("aten::bmm", {{{1, 32, 1}, {1, 1, 559}}, {"float", "float"}, {"", ""}});
  EXPECT_EQ(c.dtype, DType::kFp32);
  EXPECT_DOUBLE_EQ(c.flops, 35776);  // 3.5776e-05 GF
  EXPECT_DOUBLE_EQ(c.bytes, (32 + 559 + 32 * 559) * 4.0);
  EXPECT_DOUBLE_EQ(c.bytes / kMiB, 0.07049179077148438);
}

TEST(OpCost, BaddbmmAndBatchedShapes) {
  OpCost c = CostOk("aten::baddbmm", {{{4, 8, 16}, {4, 8, 32}, {4, 32, 16}, {}, {}}, {kBf16, kBf16, kBf16}, {}});
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 4 * 8 * 32 * 16);
  EXPECT_DOUBLE_EQ(c.bytes, 2.0 * (4 * 8 * 32 + 4 * 32 * 16 + 4 * 8 * 16 + 4 * 8 * 16));
}

TEST(OpCost, MatmulBroadcasts) {
  auto flops = [](std::vector<std::vector<int64_t>> dims) {
    return CostOk("aten::matmul", {std::move(dims), {kBf16, kBf16}, {}}).flops;
  };
  EXPECT_DOUBLE_EQ(flops({{2, 3, 4, 5}, {5, 6}}), 2.0 * 6 * 4 * 5 * 6);      // batch 2x3
  EXPECT_DOUBLE_EQ(flops({{7, 1, 4, 5}, {3, 5, 6}}), 2.0 * 21 * 4 * 5 * 6);  // batch broadcast 7x3
  EXPECT_DOUBLE_EQ(flops({{5}, {5}}), 10.0);                                 // dot
  EXPECT_DOUBLE_EQ(flops({{3, 5}, {5}}), 30.0);                              // mv
  EXPECT_DOUBLE_EQ(flops({{16, 559, 1024}, {1024, 1024}}), 2.0 * 8944 * 1024 * 1024);
  StatusOr<OpCost> bad = Cost("aten::matmul", {{{2, 4, 5}, {3, 5, 6}}, {kBf16, kBf16}, {}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(OpCost, LinearAndCustomLinearGemms) {
  OpArgs args{{{16, 559, 1024}, {2816, 1024}, {}}, {kBf16, kBf16, ""}, {"", "", ""}};
  EXPECT_DOUBLE_EQ(CostOk("aten::linear", args).flops, 2.0 * 8944 * 1024 * 2816);
  OpArgs vllm{{{32, 2880}, {5120, 2880}, {5120}}, {kBf16, kBf16, kBf16}, {"", "", ""}};
  EXPECT_DOUBLE_EQ(CostOk("vllm::rocm_unquantized_gemm", vllm).flops, 2.0 * 32 * 2880 * 5120);
}

TEST(OpCost, ScaledMmIsFp8) {
  OpCost c =
      CostOk("aten::_scaled_mm",
             {{{128, 256}, {256, 512}, {}, {}}, {"c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float"}, {}});
  EXPECT_EQ(c.dtype, DType::kFp8);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 128 * 256 * 512);
  EXPECT_DOUBLE_EQ(c.bytes, 128.0 * 256 + 256.0 * 512 + 128.0 * 512 * 2);  // fp8 in, bf16 out
}

TEST(OpCost, GroupedMm) {
  // Forward MoE: 1000 routed tokens x 8 experts [8, 512, 256].
  OpCost c = CostOk("aten::_grouped_mm", {{{1000, 512}, {8, 512, 256}, {8}}, {kBf16, kBf16, "int"}, {}});
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 1000 * 512 * 256);
}

TEST(OpCost, Fp32UsesTf32WhenAsked) {
  OpArgs args{{{64, 64}, {64, 64}}, {"float", "float"}, {}};
  EXPECT_EQ(CostOk("aten::mm", args).dtype, DType::kFp32);
  OpFlopsOptions tf32;
  tf32.fp32_matmul_uses_tf32 = true;
  EXPECT_EQ(Cost("aten::mm", args, tf32)->dtype, DType::kTf32);
}

TEST(OpCost, ErrorsSayWhy) {
  EXPECT_EQ(Cost("aten::add", {{{4}, {4}}, {kBf16, kBf16}, {}}).status().code(), StatusCode::kUnsupported);
  EXPECT_FALSE(HasOpCostFormula("aten::add"));
  EXPECT_TRUE(HasOpCostFormula("aten::mm"));
  StatusOr<OpCost> ints = Cost("aten::mm", {{{4, 8}, {8, 4}}, {"long int", "long int"}, {}});
  EXPECT_EQ(ints.status().code(), StatusCode::kUnsupported);
  StatusOr<OpCost> inner = Cost("aten::mm", {{{4, 8}, {9, 4}}, {kBf16, kBf16}, {}});
  EXPECT_EQ(inner.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(inner.status().message().find("aten::mm"), std::string::npos);
  StatusOr<OpCost> missing = Cost("aten::mm", {{{4, 8}}, {kBf16}, {}});
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
}

// ---- attention --------------------------------------------------------------

OpArgs Sdpa(std::vector<int64_t> q, std::vector<int64_t> kv, const std::string& is_causal) {
  // aten::scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)
  return {{q, kv, kv, {}, {}, {}, {}, {}},
          {kBf16, kBf16, kBf16, "", "Scalar", "Scalar", "Scalar", "Scalar"},
          {"", "", "", "", "0.", is_causal, "0.125", "False"}};
}

TEST(OpCost, SdpaCausalIsHalfAndMatchesTraceLens) {
  OpCost c = CostOk("aten::scaled_dot_product_attention", Sdpa({16, 16, 559, 64}, {16, 16, 559, 64}, "True"));
  EXPECT_EQ(c.cls, KernelClass::kAttention);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 16 * 16 * 559 * 559 * (64 + 64) / 2);
  EXPECT_DOUBLE_EQ(c.flops, 10.239377408e9);
  EXPECT_DOUBLE_EQ(c.bytes / kMiB, 69.875);  // q, k, v, o
  EXPECT_FALSE(c.estimated);
  OpCost full = CostOk("aten::scaled_dot_product_attention", Sdpa({16, 16, 559, 64}, {16, 16, 559, 64}, "False"));
  EXPECT_DOUBLE_EQ(full.flops, 2 * c.flops);
}

TEST(OpCost, FlashBackendsAndLayouts) {
  // _scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, return_debug_mask, scale): [B,H,N,D].
  OpArgs sdpa_flash{{{16, 16, 559, 64}, {16, 16, 559, 64}, {16, 16, 559, 64}, {}, {}, {}, {}},
                    {kBf16, kBf16, kBf16, "Scalar", "Scalar", "Scalar", "Scalar"},
                    {"", "", "", "0.", "True", "False", "0.125"}};
  EXPECT_DOUBLE_EQ(CostOk("aten::_scaled_dot_product_flash_attention", sdpa_flash).flops, 10.239377408e9);
  // _flash_attention_forward(q, k, v, cum_q, cum_k, max_q, max_k, dropout, is_causal, ...): [B,N,H,D],
  // the arguments the H100 Qwen trace records.
  OpArgs flash{{{16, 559, 16, 64}, {16, 559, 16, 64}, {16, 559, 16, 64}, {}, {}, {}, {}, {}, {}, {}, {}},
               {kBf16, kBf16, kBf16, "", "", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"},
               {"", "", "", "", "", "559", "559", "0.", "True", "False", "0.125"}};
  EXPECT_DOUBLE_EQ(CostOk("aten::_flash_attention_forward", flash).flops, 10.239377408e9);
}

TEST(OpCost, GroupedQueryAttention) {
  OpCost c = CostOk("aten::scaled_dot_product_attention", Sdpa({2, 8, 128, 64}, {2, 2, 128, 64}, "False"));
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 2 * 8 * 128 * 128 * 128);  // per query head; KV heads do not matter
  EXPECT_DOUBLE_EQ(c.bytes, 2.0 * (2 * 8 * 128 * 64 * 2 + 2 * 2 * 128 * 64 * 2));
}

TEST(OpCost, CausalAlignmentWhenLengthsDiffer) {
  // 64 queries, 256 keys, d = 32: full = 2 * 64 * 256 * 64 = 2,097,152.
  const double full = 2.0 * 64 * 256 * 64;
  // aten SDPA's is_causal is top-left: row i sees i + 1 keys -> 64 / (2 * 256).
  EXPECT_DOUBLE_EQ(CostOk("aten::scaled_dot_product_attention", Sdpa({1, 1, 64, 32}, {1, 1, 256, 32}, "True")).flops,
                   full * 0.125);
  // flash_attn's causal is bottom-right: the last query sees every key -> 1 - 64 / 512.
  OpArgs fa{{{1, 64, 1, 32}, {1, 256, 1, 32}, {1, 256, 1, 32}, {}, {}, {}},
            {kBf16, kBf16, kBf16, "Scalar", "Scalar", "Scalar"},
            {"", "", "", "0.0", "0.17", "True"}};
  EXPECT_DOUBLE_EQ(CostOk("flash_attn::_flash_attn_forward", fa).flops, full * 0.875);
  // _efficient_attention_forward: custom_mask_type 0 none, 1 top-left, 2 bottom-right (index 9).
  auto efficient = [&](const std::string& mask) {
    OpArgs e{{{1, 64, 1, 32}, {1, 256, 1, 32}, {1, 256, 1, 32}, {}, {}, {}, {}, {}, {}, {}},
             {kBf16, kBf16, kBf16, "", "", "", "", "", "Scalar", "Scalar"},
             {"", "", "", "", "", "", "", "", "0.", mask}};
    return CostOk("aten::_efficient_attention_forward", e).flops;
  };
  EXPECT_DOUBLE_EQ(efficient("0"), full);
  EXPECT_DOUBLE_EQ(efficient("1"), full * 0.125);
  EXPECT_DOUBLE_EQ(efficient("2"), full * 0.875);
}

TEST(OpCost, AttentionBackwardIsTwoAndAHalfForwards) {
  // _scaled_dot_product_flash_attention_backward(grad_out, q, k, v, out, logsumexp, cum_q, cum_k,
  // max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset, scale)
  std::vector<int64_t> x{16, 16, 559, 64};
  OpArgs bwd{{x, x, x, x, x, {16, 16, 559}, {}, {}, {}, {}, {}, {}, {}, {}, {}},
             {kBf16, kBf16, kBf16, kBf16, kBf16, "float", "", "", "Scalar", "Scalar", "Scalar", "Scalar", "", "", ""},
             {"", "", "", "", "", "", "", "", "559", "559", "0.", "True", "", "", "0.125"}};
  OpCost c = CostOk("aten::_scaled_dot_product_flash_attention_backward", bwd);
  EXPECT_TRUE(c.backward);
  EXPECT_DOUBLE_EQ(c.flops, 2.5 * 10.239377408e9);
  const double el = 16.0 * 16 * 559 * 64;
  EXPECT_DOUBLE_EQ(c.bytes, 2 * 8 * el);  // reads q, k, v, o, dO; writes dq, dk, dv
}

TEST(OpCost, VariableLengthAttentionIsEstimated) {
  // 3 sequences, 300 tokens in all, the longest 200: estimated as one of
  // 200 and two of 50. Non-causal, 4 heads of 64.
  OpArgs varlen{{{300, 4, 64}, {300, 4, 64}, {300, 4, 64}, {4}, {4}, {}, {}, {}, {}},
                {kBf16, kBf16, kBf16, "int", "int", "Scalar", "Scalar", "Scalar", "Scalar"},
                {"", "", "", "", "", "200", "200", "0.", "False"}};
  OpCost c = CostOk("aten::_flash_attention_forward", varlen);
  EXPECT_TRUE(c.estimated);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 4 * 200 * 200 * 128 + 2 * (2.0 * 4 * 50 * 50 * 128));
}

TEST(OpCost, MissingCausalFlagIsEstimatedAsFull) {
  OpArgs args = Sdpa({1, 2, 16, 8}, {1, 2, 16, 8}, "");
  args.concrete.clear();
  OpCost c = CostOk("aten::scaled_dot_product_attention", args);
  EXPECT_TRUE(c.estimated);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 2 * 16 * 16 * 16);
}

// ---- convolutions -----------------------------------------------------------

TEST(OpCost, Conv2dWithStride) {
  // OWLv2's patch embedding (TraceLens h100 owlv2 trace): 1008 / 14 = 72.
  OpArgs args{{{1, 3, 1008, 1008}, {1024, 3, 14, 14}, {}, {}, {}, {}, {}},
              {kBf16, kBf16, "", "ScalarList", "ScalarList", "ScalarList", "Scalar"},
              {"", "", "", "[14, 14]", "[0, 0]", "[1, 1]", "1"}};
  OpCost c = CostOk("aten::conv2d", args);
  EXPECT_EQ(c.cls, KernelClass::kConvolution);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * (1024 * 72 * 72) * (3 * 14 * 14));
  EXPECT_DOUBLE_EQ(c.bytes, 2.0 * (3 * 1008 * 1008 + 1024 * 3 * 14 * 14 + 1024 * 72 * 72));
  // cuDNN's schema puts padding before stride.
  OpArgs cudnn{{{1, 3, 1008, 1008}, {1024, 3, 14, 14}, {}, {}, {}, {}, {}, {}, {}},
               {kBf16, kBf16, "ScalarList", "ScalarList", "ScalarList", "Scalar", "Scalar", "Scalar", "Scalar"},
               {"", "", "[0, 0]", "[14, 14]", "[1, 1]", "1", "False", "False", "True"}};
  EXPECT_DOUBLE_EQ(CostOk("aten::cudnn_convolution", cudnn).flops, c.flops);
}

TEST(OpCost, MiopenConvolutionWithPadding) {
  // ResNet on MI300X (TraceLens mi300 resnet trace): 14x14, 3x3, padding 1,
  // stride 2 -> (14 + 2 - 2 - 1) / 2 + 1 = 7.
  OpArgs args{{{10, 256, 14, 14}, {512, 256, 3, 3}, {}, {}, {}, {}, {}, {}, {}},
              {kBf16, kBf16, "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "Scalar", "Scalar"},
              {"", "", "", "[1, 1]", "[2, 2]", "[1, 1]", "1", "False", "False"}};
  EXPECT_DOUBLE_EQ(CostOk("aten::miopen_convolution", args).flops, 2.0 * (10 * 512 * 7 * 7) * (256 * 9));
}

TEST(OpCost, GroupedAndTransposedConvolutions) {
  // Depthwise: 32 groups of one channel, 3x3, padding 1.
  OpArgs dw{{{2, 32, 16, 16}, {32, 1, 3, 3}, {}, {}, {}, {}, {}, {}, {}},
            {kBf16, kBf16, "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"},
            {"", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "32"}};
  EXPECT_DOUBLE_EQ(CostOk("aten::convolution", dw).flops, 2.0 * (2 * 32 * 16 * 16) * 9);
  // conv_transpose2d(x, w, bias, stride 2, padding 1, output_padding 0, groups 1, dilation 1):
  // 8x8 -> (8 - 1) * 2 - 2 + 3 + 1 = 16; each output gets 16 channels x 4 taps.
  OpArgs tr{{{1, 16, 8, 8}, {16, 8, 4, 4}, {}, {}, {}, {}, {}, {}},
            {kBf16, kBf16, "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList"},
            {"", "", "", "[2, 2]", "[1, 1]", "[0, 0]", "1", "[1, 1]"}};
  OpCost t = CostOk("aten::conv_transpose2d", tr);
  EXPECT_DOUBLE_EQ(t.flops, 2.0 * (8 * 16 * 16) * (16 * 4));
  EXPECT_DOUBLE_EQ(t.bytes, 2.0 * (16 * 8 * 8 + 16 * 8 * 4 * 4 + 8 * 16 * 16));
}

TEST(OpCost, ConvolutionBackwardFollowsOutputMask) {
  // MI300X ResNet: grad_output = input = [10, 512, 7, 7], weight [512, 512, 3, 3].
  auto args = [](const std::string& mask) {
    return OpArgs{{{10, 512, 7, 7}, {10, 512, 7, 7}, {512, 512, 3, 3}, {}, {}, {}, {}, {}, {}, {}, {}},
                  {kBf16, kBf16, kBf16, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList",
                   "Scalar", "ScalarList"},
                  {"", "", "", "[0]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", mask}};
  };
  const double forward = 2.0 * (10 * 512 * 49) * (512 * 9);
  OpCost both = CostOk("aten::convolution_backward", args("[True, True, False]"));
  EXPECT_TRUE(both.backward);
  EXPECT_DOUBLE_EQ(both.flops, 2 * forward);
  EXPECT_DOUBLE_EQ(CostOk("aten::convolution_backward", args("[False, True, True]")).flops, forward);
}

TEST(OpCost, ConvolutionNeedsConcreteInputs) {
  OpArgs legacy{{{32, 3, 224, 224}, {64, 3, 7, 7}, {}, {}, {}, {}, {}, {}, {}},
                {"float", "float", "", "GenericList", "GenericList", "GenericList", "Bool", "GenericList", "Int"},
                {}};
  EXPECT_EQ(Cost("aten::convolution", legacy).status().code(), StatusCode::kInvalidArgument);
}

// ---- linking and attribution ------------------------------------------------

OpArgs MmArgs(int64_t m, int64_t k, int64_t n, const std::string& type = kBf16) {
  return {{{m, k}, {k, n}}, {type, type}, {"", ""}};
}

struct Attributed {
  RankTrace trace;
  std::vector<KernelClass> classes;
  std::vector<uint32_t> launches;
  FlopsAttribution a;
};

Attributed Attribute(RankTrace trace) {
  Attributed r;
  r.trace = std::move(trace);
  r.classes = testing::ClassesByName(r.trace);
  r.launches = LinkLaunches(r.trace);
  r.a = AttributeOpFlops(r.trace, r.classes, r.launches);
  return r;
}

size_t Find(const RankTrace& t, std::string_view name) {
  for (size_t i = 0; i < t.num_events(); ++i) {
    if (t.event_name(i) == name)
      return i;
  }
  ADD_FAILURE() << "no event " << name;
  return 0;
}

TEST(AttributeOpFlops, InnermostOpIsCountedAndMemsetsCarryNothing) {
  // aten::linear > aten::addmm launching a memset and a GEMM (as cuBLAS does).
  B b;
  b.Op("aten::linear", 0, 100, 1, {{{4, 8}, {16, 8}, {16}}, {kBf16, kBf16, kBf16}, {}});
  b.Op("aten::addmm", 10, 80, 2, {{{16}, {4, 8}, {8, 16}, {}, {}}, {kBf16, kBf16, kBf16, "Scalar", "Scalar"}, {}});
  b.Kernel(20, "Memset (Device)", 200, 10, B::kStream7, 2, TraceEventKind::kMemset);
  b.Kernel(30, "sm90_xmma_gemm_bf16bf16", 210, 100, B::kStream7, 2);
  Attributed r = Attribute(b.Build());
  ASSERT_EQ(r.a.ops.size(), 1u);
  EXPECT_EQ(r.trace.event_name(r.a.ops[0].event), "aten::addmm");
  EXPECT_EQ(r.a.ops_nested, 1u);  // aten::linear
  EXPECT_EQ(r.a.ops_with_formula, 2u);
  EXPECT_EQ(r.a.ops[0].gpu_events, 2u);
  EXPECT_EQ(r.a.ops[0].carriers, 1u);
  const size_t gemm = Find(r.trace, "sm90_xmma_gemm_bf16bf16"), memset = Find(r.trace, "Memset (Device)");
  EXPECT_DOUBLE_EQ(r.a.flops[gemm], 2.0 * 4 * 8 * 16);
  EXPECT_DOUBLE_EQ(r.a.flops[memset], 0);
  EXPECT_EQ(r.a.cost_op[memset], 0u);  // part of the op, carrying nothing
  EXPECT_EQ(r.a.launch_op[gemm], Find(r.trace, "aten::addmm"));
  EXPECT_EQ(r.a.linked_by_external_id, 2u);
}

TEST(AttributeOpFlops, SplitsAnOpOverItsMatrixKernelsByDuration) {
  // Split-K: two GEMM kernels of 30 and 10 ns for one 4000-FLOP mm.
  B b;
  b.Op("aten::mm", 0, 50, 7, MmArgs(10, 10, 20));
  b.Kernel(10, "gemm_splitk", 100, 30, B::kStream7, 7);
  b.Kernel(20, "gemm_splitk_reduce", 130, 10, B::kStream7, 7);
  Attributed r = Attribute(b.Build());
  EXPECT_DOUBLE_EQ(r.a.flops[Find(r.trace, "gemm_splitk")], 3000);
  EXPECT_DOUBLE_EQ(r.a.flops[Find(r.trace, "gemm_splitk_reduce")], 1000);
  // No matrix kernel at all (a Triton GEMM the classifier calls elementwise):
  // the FLOPs go to every kernel the op launched.
  B c;
  c.Op("aten::mm", 0, 50, 7, MmArgs(10, 10, 20));
  c.Kernel(10, "triton_elementwise_mm", 100, 40, B::kStream7, 7);
  Attributed s = Attribute(c.Build());
  EXPECT_DOUBLE_EQ(s.a.flops[Find(s.trace, "triton_elementwise_mm")], 4000);
}

TEST(AttributeOpFlops, RocmKernelsLinkThroughTheirRuntimeEvent) {
  B b;
  // Kernel without External id; its runtime event has the op's.
  b.Op("aten::mm", 0, 50, 3, MmArgs(8, 8, 8));
  b.Launch(10, TraceEventKind::kKernel, "gemm_a", 100, 10, B::kStream7, 3, kNoId);
  // Neither carries one: the op around the runtime event.
  b.Op("aten::bmm", 60, 50, kNoId, {{{2, 8, 8}, {2, 8, 8}}, {kBf16, kBf16}, {}});
  b.Launch(70, TraceEventKind::kKernel, "gemm_b", 200, 10, B::kStream7, kNoId, kNoId);
  // A kernel whose launch is not in the trace.
  b.Orphan("gemm_c", 300, 10, B::kStream7);
  Attributed r = Attribute(b.Build());
  EXPECT_EQ(r.a.linked_by_correlation, 1u);
  EXPECT_EQ(r.a.linked_by_enclosing_op, 1u);
  EXPECT_EQ(r.a.unlinked, 1u);
  EXPECT_DOUBLE_EQ(r.a.flops[Find(r.trace, "gemm_a")], 2.0 * 8 * 8 * 8);
  EXPECT_DOUBLE_EQ(r.a.flops[Find(r.trace, "gemm_b")], 2.0 * 2 * 8 * 8 * 8);
  EXPECT_DOUBLE_EQ(r.a.flops[Find(r.trace, "gemm_c")], 0);
}

TEST(AttributeOpFlops, KernelsOutsideTheCountedOpCarryNothing) {
  // aten::linear launches a bias add beside its aten::mm: the add is inside
  // the (nested, uncounted) linear, so it carries no FLOPs.
  B b;
  b.Op("aten::linear", 0, 100, 1, {{{4, 8}, {16, 8}, {16}}, {kBf16, kBf16, kBf16}, {}});
  b.Op("aten::mm", 10, 30, 2, MmArgs(4, 8, 16));
  b.Op("aten::add_", 50, 30, 3);
  b.Kernel(15, "gemm_k", 200, 10, B::kStream7, 2);
  b.Kernel(55, "elementwise_add", 210, 10, B::kStream7, 3);
  Attributed r = Attribute(b.Build());
  ASSERT_EQ(r.a.ops.size(), 1u);
  EXPECT_EQ(r.a.cost_op[Find(r.trace, "elementwise_add")], kNoIndex);
  EXPECT_DOUBLE_EQ(r.a.flops[Find(r.trace, "gemm_k")], 2.0 * 4 * 8 * 16);
}

TEST(AttributeOpFlops, Tf32FromKernelNames) {
  B b;
  b.Op("aten::mm", 0, 10, 1, MmArgs(8, 8, 8, "float"));
  b.Kernel(1, "sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n", 100, 10, B::kStream7, 1);
  b.Op("aten::mm", 20, 10, 2, MmArgs(8, 8, 8, "float"));
  b.Kernel(21, "volta_sgemm_128x64_nn", 200, 10, B::kStream7, 2);
  Attributed r = Attribute(b.Build());
  ASSERT_EQ(r.a.ops.size(), 2u);
  EXPECT_EQ(r.a.ops[0].cost.dtype, DType::kTf32);
  EXPECT_EQ(r.a.ops[1].cost.dtype, DType::kFp32);
  // No TF32 peak on the test GPU: TF32 falls back to FP32.
  Accelerator gpu = testing::TestGpu();
  EXPECT_DOUBLE_EQ(DensePeakFlops(gpu, DType::kTf32, PeakFallbacks::Kernel()), 100e12);
}

TEST(AttributeOpFlops, CountsBadShapesAndOpsWithoutKernels) {
  B b;
  b.Op("aten::mm", 0, 10, 1, {{{4, 8}, {9, 16}}, {kBf16, kBf16}, {}});  // inner dims differ
  b.Op("aten::mm", 20, 10, 2, MmArgs(4, 8, 16));                        // launched nothing
  // Only its memset is in the trace (a sampled trace): the memset carries nothing.
  b.Op("aten::mm", 40, 10, 3, MmArgs(4, 8, 16));
  b.Kernel(41, "Memset (Device)", 100, 5, B::kStream7, 3, TraceEventKind::kMemset);
  Attributed r = Attribute(b.Build());
  EXPECT_EQ(r.a.ops_bad_shapes, 1u);
  ASSERT_EQ(r.a.bad_shape_examples.size(), 1u);
  EXPECT_NE(r.a.bad_shape_examples[0].find("aten::mm"), std::string::npos);
  EXPECT_EQ(r.a.ops_without_kernels, 2u);
  EXPECT_DOUBLE_EQ(r.a.flops_without_kernels, 2 * (2.0 * 4 * 8 * 16));
  EXPECT_DOUBLE_EQ(r.a.flops[Find(r.trace, "Memset (Device)")], 0);
}

// ---- summary ----------------------------------------------------------------

TEST(SummarizeFlops, PerClassTimeFlopsAndPeak) {
  // Two BF16 GEMMs of 5e11 FLOPs, 1 ms each, on two streams overlapping by
  // 0.5 ms; one GEMM with no shapes (0.5 ms); one elementwise kernel.
  B b;
  b.Op("aten::mm", 0, 10, 1, MmArgs(10000, 5000, 5000));  // 2 * 10000 * 5000 * 5000 = 5e11
  b.Kernel(1, "gemm_1", 1'000'000, 1'000'000, B::kStream7, 1);
  b.Op("aten::mm", 20, 10, 2, MmArgs(10000, 5000, 5000));
  b.Kernel(21, "gemm_2", 1'500'000, 1'000'000, B::kStream8, 2);
  b.Orphan("gemm_unknown", 3'000'000, 500'000, B::kStream7);
  b.Orphan("elementwise_x", 4'000'000, 100'000, B::kStream7);
  Attributed r = Attribute(b.Build());
  Accelerator gpu = testing::TestGpu();
  TraceFlopsSummary s = SummarizeFlops(r.trace, r.classes, r.a, &gpu);
  const ClassFlops& gemm = s[KernelClass::kGemm];
  EXPECT_EQ(gemm.events, 3);
  EXPECT_EQ(gemm.sum_ns, 2'500'000);
  EXPECT_EQ(gemm.union_ns, 1'500'000 + 500'000);
  EXPECT_EQ(gemm.with_flops_sum_ns, 2'000'000);
  EXPECT_DOUBLE_EQ(gemm.flops, 1e12);
  EXPECT_DOUBLE_EQ(gemm.achieved_flops_per_s(), 5e14);  // 1e12 FLOPs in 2 ms of kernels
  EXPECT_DOUBLE_EQ(gemm.at_peak_ns, 1e6);               // 1e12 / 1e15 FLOP/s
  EXPECT_DOUBLE_EQ(gemm.peak_fraction(), 0.5);
  EXPECT_DOUBLE_EQ(s.coverage(), 2.0 / 2.5);
  EXPECT_EQ(s[KernelClass::kElementwise].sum_ns, 100'000);
  EXPECT_EQ(s.accelerator, "test-gpu");
  ASSERT_EQ(s.op_groups.size(), 1u);  // both mm share name, dims and types
  EXPECT_EQ(s.op_groups[0].ops, 2);
  EXPECT_EQ(s.op_groups[0].dims, "[[10000, 5000], [5000, 5000]]");
  EXPECT_DOUBLE_EQ(s.op_groups[0].flops_per_op(), 5e11);

  // A window over the first half of gemm_1: half its time and FLOPs.
  TraceFlopsSummary half = SummarizeFlops(r.trace, r.classes, r.a, &gpu, 1'000'000, 1'500'000);
  EXPECT_EQ(half[KernelClass::kGemm].sum_ns, 500'000);
  EXPECT_DOUBLE_EQ(half[KernelClass::kGemm].flops, 2.5e11);
  EXPECT_DOUBLE_EQ(half[KernelClass::kGemm].peak_fraction(), 0.5);
}

TEST(SummarizeFlops, DtypesWithoutPeakAreSetAside) {
  B b;
  b.Op("aten::mm", 0, 10, 1, MmArgs(100, 100, 100, "c10::Float4_e2m1fn_x2"));  // no FP4 peak on the test GPU
  b.Kernel(1, "gemm_fp4", 100, 1000, B::kStream7, 1);
  Attributed r = Attribute(b.Build());
  Accelerator gpu = testing::TestGpu();
  TraceFlopsSummary s = SummarizeFlops(r.trace, r.classes, r.a, &gpu);
  EXPECT_DOUBLE_EQ(s[KernelClass::kGemm].flops_without_peak, 2e6);
  EXPECT_DOUBLE_EQ(s[KernelClass::kGemm].at_peak_ns, 0);
}

// ---- the H100 Qwen trace against TraceLens ----------------------------------

class QwenH100 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto parsed = ParseTraceFile(RealFileSystem(), testing::TestTracePath("h100_qwen_inference.json.gz"));
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    r_ = new Attributed;
    r_->trace = std::move(parsed).value();
    r_->classes = ClassifyEvents(r_->trace, testing::BuiltinClassifier());
    r_->launches = LinkLaunches(r_->trace);
    r_->a = AttributeOpFlops(r_->trace, r_->classes, r_->launches);
  }
  static void TearDownTestSuite() {
    delete r_;
    r_ = nullptr;
  }
  static const OpGroupFlops* Group(const TraceFlopsSummary& s, std::string_view name, std::string_view dims) {
    for (const OpGroupFlops& g : s.op_groups) {
      if (g.name == name && g.dims == dims)
        return &g;
    }
    ADD_FAILURE() << "no group " << name << " " << dims;
    return nullptr;
  }
  static Attributed* r_;
};
Attributed* QwenH100::r_ = nullptr;

TEST_F(QwenH100, OpsAreLinkedAndNestedOpsCountedOnce) {
  const FlopsAttribution& a = r_->a;
  // 96 mm + 72 addmm + 1 bmm + 24 _flash_attention_forward counted; nested:
  // 168 linear, 97 matmul, 24 SDPA, 24 _scaled_dot_product_flash_attention.
  EXPECT_EQ(a.ops.size(), 96u + 72 + 1 + 24);
  EXPECT_EQ(a.ops_nested, 168u + 97 + 24 + 24);
  EXPECT_EQ(a.ops_bad_shapes, 0u);
  EXPECT_EQ(a.ops_without_kernels, 0u);
  for (const FlopsAttribution::Op& op : a.ops)
    EXPECT_EQ(op.carriers, 1u) << r_->trace.event_name(op.event);
}

TEST_F(QwenH100, GemmAndSdpaMatchTraceLens) {
  auto gpu = ResolveTraceAccelerator(r_->trace, testing::BuiltinHardware(), "");
  ASSERT_TRUE(gpu.ok()) << gpu.status().message();
  EXPECT_EQ((*gpu)->id, "h100-sxm5-80gb");
  TraceFlopsSummary s = SummarizeFlops(r_->trace, r_->classes, r_->a, *gpu);
  struct Row {
    const char* name;
    const char* dims;
    int64_t count;
    double flops_per_op;  // TraceLens GFLOPS_first (addmm minus its M*N bias term)
    double kernel_us;     // TraceLens Kernel Time (us)_sum: every GPU op of the op, memsets included
    double tflops_mean;   // TraceLens TFLOPS/s_mean (a mean of per-op rates; ours is the pooled rate)
  };
  const Row rows[] = {
      {"aten::mm", "[[8944, 1024], [1024, 2816]]", 48, 51.581550592e9, 4055.25244140625, 610.6657102342793},
      {"aten::addmm", "[[1024], [8944, 1024], [1024, 1024], [], []]", 72, 18.766086144e9 - 8944.0 * 1024,
       2329.075927734375, 580.1844380894671},
      {"aten::mm", "[[8944, 2816], [2816, 1024]]", 24, 51.581550592e9, 1835.287109375, 674.5509897222395},
      {"aten::mm", "[[8944, 1024], [1024, 1024]]", 24, 18.756927488e9, 778.14208984375, 578.5261168808248},
      {"aten::bmm", "[[1, 32, 1], [1, 1, 559]]", 1, 3.5776e4, 3.52001953125, 0.01016357996948259},
      {"aten::_flash_attention_forward",
       "[[16, 559, 16, 64], [16, 559, 16, 64], [16, 559, 16, 64], [], [], [], [], [], [], [], [], [], [], [], []]", 24,
       10.239377408e9, 2722.704345703125, 90.28922364189224},
  };
  double gemm_flops = 0;
  for (const Row& row : rows) {
    const OpGroupFlops* g = Group(s, row.name, row.dims);
    if (g == nullptr)
      continue;
    EXPECT_EQ(g->ops, row.count) << row.name << row.dims;
    EXPECT_DOUBLE_EQ(g->flops_per_op(), row.flops_per_op) << row.name << row.dims;
    // TraceLens sums float32 microseconds: agree to 0.01 us per op.
    EXPECT_NEAR(static_cast<double>(g->gpu_sum_ns) / 1e3, row.kernel_us, 0.01 * static_cast<double>(row.count))
        << row.name << row.dims;
    const double pooled_tflops = g->flops / (static_cast<double>(g->gpu_sum_ns) * 1e-9) / 1e12;
    EXPECT_NEAR(pooled_tflops, row.tflops_mean, 0.01 * row.tflops_mean) << row.name << row.dims;
    if (g->cls == KernelClass::kGemm)
      gemm_flops += g->flops;
  }
  // Every linked GEMM kernel is classified kGemm and carries its op's FLOPs;
  // the 73 GEMM kernels queued before the trace began have no launch and no
  // FLOPs, so coverage is below 1.
  EXPECT_DOUBLE_EQ(s[KernelClass::kGemm].flops, gemm_flops);
  EXPECT_DOUBLE_EQ(s[KernelClass::kAttention].flops, 24 * 10.239377408e9);
  EXPECT_GT(s.coverage(), 0.5);
  EXPECT_LT(s.coverage(), 1.0);
  // H100 SXM dense BF16 peak 989.4 TFLOP/s: the large GEMMs run at ~60%.
  const OpGroupFlops* big = Group(s, "aten::mm", "[[8944, 1024], [1024, 2816]]");
  ASSERT_NE(big, nullptr);
  EXPECT_NEAR(big->at_peak_ns / static_cast<double>(big->gpu_sum_ns), 610.55 / 989.4, 0.005);
}

}  // namespace
}  // namespace mfu
