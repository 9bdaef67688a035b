// FLOPs per token under each convention against independent computations.
// Expected values: shared/reference/flops-reference.csv rows "FLOPs per token"
// (derived from the configs with the formulas of flops-conventions.md by the
// project's researcher, 7 significant digits; those rows exclude DeepSeek-V3's
// MTP module, so the tests drop it too) and closed forms from the papers.

#include "mfu/flops.h"

#include <gtest/gtest.h>

namespace mfu {
namespace {

ModelSpec Load(const char* name) {
  auto spec = LoadModel(mfu::RealFileSystem(), name);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  return spec.ok() ? *spec : ModelSpec{};
}

double Training(const ModelSpec& spec, Convention c, int64_t seq, Recompute r = Recompute::kNone) {
  auto t = ComputeTrainingFlops(spec, c, seq, r);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? t->model_per_token : 0;
}

struct ReferenceRow {
  const char* preset;
  int64_t seq;
  Convention convention;
  double flops_per_token;
};

// flops-reference.csv: kaplan_6N_nonembedding, hf_floating_point_ops_6N,
// palm_nanogpt (= torchtitan), megatron_2025, maxtext, exact_matmul_full_attn.
constexpr ReferenceRow kRows[] = {
    {"llama-3.1-8b-instruct", 8192, Convention::kKaplan, 4.187753e+10},
    {"llama-3.1-8b-instruct", 8192, Convention::kHf, 4.502955e+10},
    {"llama-3.1-8b-instruct", 8192, Convention::kPalm, 5.791445e+10},
    {"llama-3.1-8b-instruct", 8192, Convention::kMegatron, 5.147040e+10},
    {"llama-3.1-8b-instruct", 8192, Convention::kMaxtext, 5.147040e+10},
    {"llama-3.1-8b-instruct", 8192, Convention::kExact, 5.791285e+10},
    {"llama-3.1-70b-instruct", 8192, Convention::kKaplan, 4.107142e+11},
    {"llama-3.1-70b-instruct", 8192, Convention::kHf, 4.170182e+11},
    {"llama-3.1-70b-instruct", 8192, Convention::kPalm, 4.814427e+11},
    {"llama-3.1-70b-instruct", 8192, Convention::kMegatron, 4.492225e+11},
    {"llama-3.1-70b-instruct", 8192, Convention::kExact, 4.814348e+11},
    {"mixtral-8x7b-v0.1", 4096, Convention::kKaplan, 7.570669e+10},
    {"mixtral-8x7b-v0.1", 4096, Convention::kHf, 2.794303e+11},
    {"mixtral-8x7b-v0.1", 4096, Convention::kPalm, 8.293557e+10},
    {"mixtral-8x7b-v0.1", 4096, Convention::kMegatron, 7.970646e+10},
    {"mixtral-8x7b-v0.1", 4096, Convention::kMaxtext, 7.971275e+10},
    {"mixtral-8x7b-v0.1", 4096, Convention::kExact, 8.293397e+10},
    {"deepseek-v3", 4096, Convention::kKaplan, 2.141936e+11},
    {"deepseek-v3", 4096, Convention::kHf, 4.020598e+12},
    {"deepseek-v3", 4096, Convention::kPalm, 2.811583e+11},
    {"deepseek-v3", 4096, Convention::kMegatron, 2.498113e+11},
    {"deepseek-v3", 4096, Convention::kMaxtext, 2.504499e+11},
    {"deepseek-v3", 4096, Convention::kExact, 2.811522e+11},
    {"qwen3-30b-a3b", 4096, Convention::kKaplan, 1.638422e+10},
    {"qwen3-30b-a3b", 4096, Convention::kHf, 1.813257e+11},
    {"qwen3-30b-a3b", 4096, Convention::kPalm, 2.791488e+10},
    {"qwen3-30b-a3b", 4096, Convention::kMegatron, 2.300628e+10},
    {"qwen3-30b-a3b", 4096, Convention::kMaxtext, 2.308178e+10},
    {"qwen3-30b-a3b", 4096, Convention::kExact, 2.791362e+10},
    {"qwen3-32b", 4096, Convention::kKaplan, 1.872378e+11},
    {"qwen3-32b", 4096, Convention::kHf, 1.919053e+11},
    {"qwen3-32b", 4096, Convention::kPalm, 2.176751e+11},
    {"qwen3-32b", 4096, Convention::kMegatron, 2.047861e+11},
    {"qwen3-32b", 4096, Convention::kExact, 2.176710e+11},
    {"llama-3.1-405b", 8192, Convention::kKaplan, 2.409904e+12},
    {"llama-3.1-405b", 8192, Convention::kHf, 2.422512e+12},
    {"llama-3.1-405b", 8192, Convention::kPalm, 2.625449e+12},
    {"llama-3.1-405b", 8192, Convention::kMegatron, 2.523956e+12},
    {"llama-3.1-405b", 8192, Convention::kExact, 2.625425e+12},
};

class ReferenceFlops : public ::testing::TestWithParam<ReferenceRow> {};

TEST_P(ReferenceFlops, MatchesReferenceTo7Digits) {
  const ReferenceRow& row = GetParam();
  ModelSpec spec = Load(row.preset);
  spec.mtp_layers = 0;  // the reference rows count the main model only
  double got = Training(spec, row.convention, row.seq);
  EXPECT_NEAR(got / row.flops_per_token, 1.0, 1e-6)
      << row.preset << " " << ConventionName(row.convention) << ": got " << got;
}

INSTANTIATE_TEST_SUITE_P(Presets, ReferenceFlops, ::testing::ValuesIn(kRows));

TEST(Flops, PrefillIsOneForwardOfMegatron) {
  // flops-reference.csv inference_prefill_fwd (1x forward, causal/2) at the
  // same sequence length as the training rows.
  ModelSpec spec = Load("llama-3.1-8b-instruct");
  auto p = ComputePrefillFlops(spec, Convention::kMegatron, 1, 8192);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->per_token.total() / 1.715680e+10, 1.0, 1e-6);
  ModelSpec v3 = Load("deepseek-v3");  // MTP stays in the spec: inference skips it
  auto p3 = ComputePrefillFlops(v3, Convention::kMegatron, 2, 4096);
  ASSERT_TRUE(p3.ok());
  // Megatron has no router; the reference row counts it (2*h*E per MoE
  // layer = 2*7168*256*58).
  EXPECT_NEAR((p3->per_token.total() + 2.0 * 7168 * 256 * 58) / 8.348330e+10, 1.0, 1e-6);
  EXPECT_DOUBLE_EQ(p3->tokens, 2 * 4096.0);
}

// Korthikanti et al. 2022 closed forms for a GPT (MHA, 4h MLP, non-causal):
// model FLOPs per iteration 72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h)); with
// selective recompute 72*B*s*l*h^2*(1 + s/(3h) + V/(12*l*h)); Narayanan et
// al. 2021 full recompute 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)).
TEST(Flops, KorthikantiAndNarayananClosedForms) {
  struct Gpt {
    double l, h, a;
  };
  for (Gpt g : {Gpt{48, 6144, 64}, Gpt{96, 12288, 96}, Gpt{105, 20480, 128}, Gpt{128, 25600, 160}}) {
    GenericModelOptions o;
    o.layers = static_cast<int64_t>(g.l);
    o.hidden = static_cast<int64_t>(g.h);
    o.heads = static_cast<int64_t>(g.a);
    o.vocab = 51200;
    o.gated_mlp = false;
    auto spec = BuildGenericModel(o);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    const double s = 2048, v = 51200, l = g.l, h = g.h;
    const double model = 72 * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
    const double selective = 72 * l * h * h * (1 + s / (3 * h) + v / (12 * l * h));
    const double full = 96 * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
    auto none = ComputeTrainingFlops(*spec, Convention::kExact, 2048, Recompute::kNone);
    auto sel = ComputeTrainingFlops(*spec, Convention::kExact, 2048, Recompute::kSelective);
    auto all = ComputeTrainingFlops(*spec, Convention::kExact, 2048, Recompute::kFull);
    ASSERT_TRUE(none.ok() && sel.ok() && all.ok());
    EXPECT_NEAR(none->model_per_token / model, 1.0, 1e-12);
    EXPECT_NEAR(sel->hardware_per_token / selective, 1.0, 1e-12);
    EXPECT_NEAR(all->hardware_per_token / full, 1.0, 1e-12);
    EXPECT_DOUBLE_EQ(sel->model_per_token, none->model_per_token);
  }
}

TEST(Flops, SelectiveLiteralAddsOneForwardCore) {
  ModelSpec spec = Load("llama-3.1-8b-instruct");
  auto t = ComputeTrainingFlops(spec, Convention::kMegatron, 8192, Recompute::kSelectiveLiteral);
  ASSERT_TRUE(t.ok());
  // Causal core per layer: 2 * (2*a*d*T/2) = 2*32*128*8192 per token, 32 layers.
  EXPECT_DOUBLE_EQ(t->recompute_per_token, 32.0 * 2 * 32 * 128 * 8192);
}

// torchtitan's op-level policy on Llama-3.1-8B (h 4096, 8 KV heads of 128,
// ffn 14336, 32 layers): per layer the forward order is wq, wk, wv, wo, w1,
// w3, w2 and every second mm runs again: wk (4096 x 1024), wo (4096 x 4096)
// and w3 (4096 x 14336), 2 FLOPs per weight and token. The attention kernel
// is saved.
TEST(Flops, SelectiveOpRecomputesEverySecondLinear) {
  ModelSpec spec = Load("llama-3.1-8b-instruct");
  for (Convention convention : {Convention::kMegatron, Convention::kMaxtext}) {
    auto t = ComputeTrainingFlops(spec, convention, 8192, Recompute::kSelectiveOp);
    ASSERT_TRUE(t.ok());
    const double per_layer = 2.0 * (4096.0 * 1024 + 4096.0 * 4096 + 4096.0 * 14336);
    EXPECT_DOUBLE_EQ(t->recompute_per_token, 32 * per_layer);
    EXPECT_DOUBLE_EQ(t->hardware_per_token, t->model_per_token + 32 * per_layer);
  }
  // A plain MLP (fc1, fc2): fc2 is the sixth mm, recomputed.
  GenericModelOptions o;
  o.layers = 2;
  o.hidden = 1024;
  o.heads = 16;
  o.vocab = 1000;
  o.gated_mlp = false;
  auto gpt = BuildGenericModel(o);
  ASSERT_TRUE(gpt.ok());
  auto plain = ComputeTrainingFlops(*gpt, Convention::kExact, 1024, Recompute::kSelectiveOp);
  ASSERT_TRUE(plain.ok());
  EXPECT_DOUBLE_EQ(plain->recompute_per_token, 2 * 2.0 * (1024.0 * 1024 + 1024.0 * 1024 + 4096.0 * 1024));
  EXPECT_EQ(ParseRecompute("op").value(), Recompute::kSelectiveOp);
  EXPECT_EQ(ParseRecompute("selective-op").value(), Recompute::kSelectiveOp);
  EXPECT_STREQ(RecomputeName(Recompute::kSelectiveOp), "selective-op");
}

// Megatron's --recompute-modules under selective recompute: core_attn is
// Korthikanti's 3x the forward core; mlp runs the dense MLP's forward GEMMs
// again (Llama-3.1-8B: 2 x 3 x 4096 x 14336 per token and layer), moe the
// router's, routed and shared experts' (Qwen3-30B-A3B: router 2 x 2048 x
// 128, 8 experts of 2 x 3 x 2048 x 768, no shared, per layer); layernorm
// and moe_act no GEMM.
TEST(Flops, RecomputeModulesCountTheirForwardGemms) {
  ModelSpec llama = Load("llama-3.1-8b-instruct");
  auto none = ComputeTrainingFlops(llama, Convention::kMegatron, 8192, Recompute::kNone);
  auto attn = ComputeTrainingFlops(llama, Convention::kMegatron, 8192, Recompute::kSelective);
  auto mlp = ComputeTrainingFlops(llama, Convention::kMegatron, 8192, Recompute::kSelective,
                                  kRecomputeCoreAttn | kRecomputeMlp);
  auto act = ComputeTrainingFlops(llama, Convention::kMegatron, 8192, Recompute::kSelective,
                                  kRecomputeLayernorm | kRecomputeMoeAct);
  ASSERT_TRUE(none.ok() && attn.ok() && mlp.ok() && act.ok());
  EXPECT_DOUBLE_EQ(mlp->recompute_per_token - attn->recompute_per_token, 32 * 2.0 * 3 * 4096 * 14336);
  EXPECT_DOUBLE_EQ(act->recompute_per_token, 0);
  ModelSpec qwen = Load("qwen3-30b-a3b");
  // Megatron's convention counts no router; MaxText's does.
  auto moe = ComputeTrainingFlops(qwen, Convention::kMegatron, 4096, Recompute::kSelective, kRecomputeMoe);
  auto moe_router = ComputeTrainingFlops(qwen, Convention::kMaxtext, 4096, Recompute::kSelective, kRecomputeMoe);
  ASSERT_TRUE(moe.ok() && moe_router.ok());
  EXPECT_DOUBLE_EQ(moe->recompute_per_token, 48 * 8 * 2.0 * 3 * 2048 * 768);
  EXPECT_DOUBLE_EQ(moe_router->recompute_per_token, 48 * (2.0 * 2048 * 128 + 8 * 2.0 * 3 * 2048 * 768));
  EXPECT_EQ(ParseRecomputeModules("moe_act, LayerNorm").value(), kRecomputeMoeAct | kRecomputeLayernorm);
  EXPECT_EQ(RecomputeModulesName(kRecomputeMoeAct | kRecomputeCoreAttn), "core_attn,moe_act");
  EXPECT_EQ(ParseRecomputeModules("moe_act,mla_up").status().message(),
            "recompute module 'mla_up' is not one of core_attn, layernorm, moe_act, mlp, moe, shared_experts, "
            "mla_up_proj");
  EXPECT_EQ(ParseRecomputeModules("mla_up_proj").value(), kRecomputeMlaUpProj);
  EXPECT_EQ(CheckRecomputeModules(qwen, kRecomputeMlaUpProj, Recompute::kSelective).message(),
            "parameter 'recompute_modules': mla_up_proj needs multi-latent attention (" + qwen.name + " has none)");
  EXPECT_FALSE(ParseRecomputeModules("moe_act,").ok());
  EXPECT_FALSE(ParseRecomputeModules("").ok());
}

// DeepSeek-V3's mla_up_proj runs its 61 layers' up-projections again, by
// hand: q_up 1536 -> 128 heads x (128 + 64), kv_up 512 -> 128 x (128 key +
// 128 value), 2 FLOPs per multiply-add.
TEST(Flops, MlaUpProjRecomputesTheUpProjections) {
  auto spec = LoadModel(RealFileSystem(), "deepseek-v3");
  ASSERT_TRUE(spec.ok());
  const double per_layer = 2.0 * 1536 * 128 * 192 + 2.0 * 512 * 128 * 256;
  EXPECT_DOUBLE_EQ(MlaUpProjFlopsPerLayer(*spec), per_layer);
  auto core = ComputeTrainingFlops(*spec, Convention::kMegatron, 4096, Recompute::kSelective, kRecomputeCoreAttn);
  auto both = ComputeTrainingFlops(*spec, Convention::kMegatron, 4096, Recompute::kSelective,
                                   kRecomputeCoreAttn | kRecomputeMlaUpProj);
  ASSERT_TRUE(core.ok() && both.ok());
  EXPECT_DOUBLE_EQ(both->recompute_per_token - core->recompute_per_token, 61 * per_layer);
  EXPECT_TRUE(CheckRecomputeModules(*spec, kRecomputeMlaUpProj, Recompute::kSelective).ok());
}

TEST(Flops, ComponentsSumToTotal) {
  for (const char* name : {"llama-3.1-8b-instruct", "deepseek-v3", "gpt-oss-120b", "wan2.1-t2v-14b"}) {
    ModelSpec spec = Load(name);
    for (const auto& info : AllConventions()) {
      auto t = ComputeTrainingFlops(spec, info.convention, 4096, Recompute::kNone);
      if (!t.ok())
        continue;  // parameter conventions refuse DiTs
      double sum = 0;
      for (double v : t->forward.forward) {
        EXPECT_GE(v, 0) << name << " " << info.name;
        sum += v;
      }
      EXPECT_DOUBLE_EQ(sum, t->forward.total());
      EXPECT_DOUBLE_EQ(t->model_per_token, 3 * sum);
    }
  }
}

TEST(Flops, WanForwardMatchesReference) {
  // flops-reference.csv: Wan2.1-T2V-14B, 6.523e15 FLOPs per DiT forward at
  // 81x720x1280 (75,600 tokens) and 1.678e15 at 81x480x832 (32,760 tokens).
  ModelSpec wan = Load("wan2.1-t2v-14b");
  auto tokens = DitTokens(wan, 81, 720, 1280);
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ(*tokens, 75600);
  auto f = ComputePrefillFlops(wan, Convention::kExact, 1, *tokens);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_NEAR(f->total / 6.523e15, 1.0, 5e-4);
  const double core =
      (f->per_token[FlopsComponent::kAttnScores] + f->per_token[FlopsComponent::kAttnContext]) * f->tokens;
  EXPECT_NEAR(core / f->total, 0.72, 0.01);  // "72% of it in the L^2 self-attention core"
  auto small = DitTokens(wan, 81, 480, 832);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(*small, 32760);
  auto f480 = ComputePrefillFlops(wan, Convention::kExact, 1, *small);
  ASSERT_TRUE(f480.ok());
  EXPECT_NEAR(f480->total / 1.678e15, 1.0, 5e-4);
}

TEST(Flops, DecodeIsTwoNPlusAttention) {
  // flops-conventions.md section 14.8: decode = 2*N_active_matmul + 4*L*a*d*ctx.
  ModelSpec spec = Load("llama-3.1-8b-instruct");
  auto d = ComputeDecodeFlops(spec, Convention::kExact, 1, 4096);
  ASSERT_TRUE(d.ok());
  const double matmul = 8'030'261'248.0 - 128256.0 * 4096 - (65.0 * 4096);  // no embedding, no norms
  EXPECT_DOUBLE_EQ(d->per_token.total(), 2 * matmul + 4.0 * 32 * 32 * 128 * 4096);
}

TEST(Flops, MlaAbsorbedDecodeDoesMoreAttentionWork) {
  // flops-conventions.md section 14.8: absorbed attention per layer per key is
  // 2*a*(kv_lora+rope) + 2*a*kv_lora = 2*128*(576+512) versus
  // 2*128*(192+128) non-absorbed: ~3.4x.
  ModelSpec v3 = Load("deepseek-v3");
  auto naive = ComputeDecodeFlops(v3, Convention::kExact, 1, 32768, MlaMode::kNonAbsorbed);
  auto absorbed = ComputeDecodeFlops(v3, Convention::kExact, 1, 32768, MlaMode::kAbsorbed);
  ASSERT_TRUE(naive.ok() && absorbed.ok());
  auto core = [](const FlopsBreakdown& f) { return f[FlopsComponent::kAttnScores] + f[FlopsComponent::kAttnContext]; };
  EXPECT_DOUBLE_EQ(core(absorbed->per_token) / core(naive->per_token), (576.0 + 512) / (192.0 + 128));
  EXPECT_DOUBLE_EQ(core(naive->per_token), 61 * 2.0 * 128 * (192 + 128) * 32768);
}

TEST(Flops, SlidingWindowCountedOnlyByMaxtext) {
  // Mistral-7B-v0.1: every layer slides over 4096 keys. At T=8192 the exact
  // causal-window area per sequence is T*W - W^2/2 (MaxText), i.e. per token
  // (T*W - W^2/2)/T keys, versus T/2 for Megatron (window ignored).
  ModelSpec spec = Load("mistral-7b-v0.1");
  spec.max_position_embeddings = 0;
  auto mx = ComputeTrainingFlops(spec, Convention::kMaxtext, 8192, Recompute::kNone);
  auto mg = ComputeTrainingFlops(spec, Convention::kMegatron, 8192, Recompute::kNone);
  ASSERT_TRUE(mx.ok() && mg.ok());
  const double keys_window = (8192.0 * 4096 - 4096.0 * 4096 / 2) / 8192;
  EXPECT_DOUBLE_EQ(mx->forward[FlopsComponent::kAttnScores], 32 * 2.0 * 32 * 128 * keys_window);
  EXPECT_DOUBLE_EQ(mg->forward[FlopsComponent::kAttnScores], 32 * 2.0 * 32 * 128 * 4096);
}

TEST(Flops, MegatronPadsVocabTo128) {
  ModelSpec gpt2 = Load("gpt2");  // V = 50257 -> 50304
  auto t = ComputeTrainingFlops(gpt2, Convention::kMegatron, 1024, Recompute::kNone);
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->forward[FlopsComponent::kLmHead], 2.0 * 768 * 50304);
}

TEST(Flops, RejectsBadLengths) {
  ModelSpec spec = Load("llama-3.1-8b-instruct");
  EXPECT_EQ(ComputeTrainingFlops(spec, Convention::kMegatron, 0, Recompute::kNone).status().code(),
            StatusCode::kInvalidArgument);
  auto too_long = ComputeTrainingFlops(spec, Convention::kMegatron, 200000, Recompute::kNone);
  EXPECT_NE(too_long.status().message().find("max_position_embeddings"), std::string::npos);
  EXPECT_EQ(too_long.status().code(), StatusCode::kOutOfRange);
  EXPECT_FALSE(ComputeDecodeFlops(spec, Convention::kMegatron, 0, 10).ok());
  EXPECT_FALSE(ComputeTrainingFlops(Load("wan2.1-t2v-14b"), Convention::kPalm, 1000, Recompute::kNone).ok());
}

TEST(Conventions, ParseNamesAndAliases) {
  EXPECT_EQ(*ParseConvention("torchtitan"), Convention::kPalm);
  EXPECT_EQ(*ParseConvention("MEGATRON"), Convention::kMegatron);
  auto bad = ParseConvention("megatorn");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("did you mean 'megatron'"), std::string::npos);
  EXPECT_FALSE(ParseRecompute("sometimes").ok());
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// llm-foundry counts attention as 12*l*d_model*s (mpt flops_per_batch), with
// d_model even when heads*head_dim differs (Qwen3-32B: 64*128 != 5120):
// 6*(32,762,123,264 - 151,936*5,120) + 12*64*5,120*4,096.
TEST(Flops, LlmFoundryAttentionUsesDModel) {
  auto spec = LoadModel(mfu::RealFileSystem(), "qwen3-32b");
  ASSERT_TRUE(spec.ok());
  auto t = ComputeTrainingFlops(*spec, Convention::kLlmFoundry, 4096, Recompute::kNone);
  ASSERT_TRUE(t.ok());
  const double expected = 6 * (32'762'123'264.0 - 151936.0 * 5120) + 12.0 * 64 * 5120 * 4096;
  EXPECT_NEAR(t->model_per_token / expected, 1.0, 1e-12);
}

// MaxText counts an MTP module as one more decoder layer only (no eh_proj, no
// logits); Megatron adds eh_proj (2h -> h) and a logits GEMM per module.
TEST(Flops, MtpAccountingPerConvention) {
  auto v3 = LoadModel(mfu::RealFileSystem(), "deepseek-v3");
  ASSERT_TRUE(v3.ok());
  ModelSpec no_mtp = *v3;
  no_mtp.mtp_layers = 0;
  auto mx = ComputeTrainingFlops(*v3, Convention::kMaxtext, 4096, Recompute::kNone);
  auto mx0 = ComputeTrainingFlops(no_mtp, Convention::kMaxtext, 4096, Recompute::kNone);
  auto mg = ComputeTrainingFlops(*v3, Convention::kMegatron, 4096, Recompute::kNone);
  auto mg0 = ComputeTrainingFlops(no_mtp, Convention::kMegatron, 4096, Recompute::kNone);
  ASSERT_TRUE(mx.ok() && mx0.ok() && mg.ok() && mg0.ok());
  // Megatron's module = the layer (without the router GEMM, 2*h*E) + eh_proj
  // (2*2h*h) + logits (2*h*V); MaxText's = the layer with its router.
  const double h = 7168, v = 129280, e = 256;
  EXPECT_NEAR(mg->forward[FlopsComponent::kMtp] - mx->forward[FlopsComponent::kMtp], 4 * h * h + 2 * h * v - 2 * h * e,
              1.0);
  EXPECT_NEAR(mx->model_per_token - mx0->model_per_token, 3 * mx->forward[FlopsComponent::kMtp], 1.0);
  EXPECT_GT(mg->model_per_token - mg0->model_per_token, mx->model_per_token - mx0->model_per_token);
}

}  // namespace
}  // namespace mfu
