// Kernel classification: the built-in table against real kernel names (taken
// verbatim from the traces under shared/traces/, including DeepSeek's
// profile-data train.json and the TraceLens B200 / MI300X traces), user rules
// and their errors, and ClassifyEvents over the traces in tests/data.

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "mfu/trace_classify.h"
#include "testing/trace_builder.h"

namespace mfu {
namespace {

KernelClass Kernel(std::string_view name) {
  return testing::BuiltinClassifier().Classify(TraceEventKind::kKernel, name);
}

struct NameCase {
  const char* name;
  KernelClass expected;
};

void ExpectClasses(const std::vector<NameCase>& cases) {
  for (const NameCase& c : cases) {
    const int rule = testing::BuiltinClassifier().MatchingRule(c.name);
    EXPECT_EQ(KernelClassName(Kernel(c.name)), std::string(KernelClassName(c.expected)))
        << c.name << " (rule "
        << (rule < 0 ? "none" : testing::BuiltinClassifier().all()[static_cast<size_t>(rule)].origin) << ")";
  }
}

TEST(KernelClassNames, RoundTrip) {
  for (size_t i = 0; i < kNumKernelClasses; ++i) {
    const auto c = static_cast<KernelClass>(i);
    auto parsed = ParseKernelClass(KernelClassName(c));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, c);
  }
  auto bad = ParseKernelClass("gemn");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("did you mean 'gemm'"), std::string::npos) << bad.status().message();
}

TEST(KernelClassifier, BuiltinLoads) {
  EXPECT_GT(testing::BuiltinClassifier().all().size(), 50u);
  for (const auto& rule : testing::BuiltinClassifier().all()) {
    EXPECT_FALSE(rule.source.empty()) << rule.origin << " has no source";
    EXPECT_NE(rule.cls, KernelClass::kUnclassified) << rule.origin;
  }
}

TEST(KernelClassifier, Communication) {
  ExpectClasses({
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", KernelClass::kCommunication},
      {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
       KernelClass::kCommunication},
      {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", KernelClass::kCommunication},
      {"ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", KernelClass::kCommunication},  // RCCL too
      {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", KernelClass::kCommunication},
      // DeepSeek profile-data train.json (DeepEP as dpsk::ep).
      {"void dpsk::ep::internode::dispatch<false, 8, false, 8>(int4*, float*, long*, float*, "
       "dpsk::ep::internode::SourceMeta*, int4 const*, float const*, long const*)",
       KernelClass::kCommunication},
      {"void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*, bool const*)",
       KernelClass::kCommunication},
      {"void dpsk::ep::internode::notify_dispatch<false, 8>(int const*, long*, int, int const*)",
       KernelClass::kCommunication},
      {"void dpsk::ep::internode::cached_notify<false>(int, int, int, int, int*)", KernelClass::kCommunication},
      {"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*)", KernelClass::kCommunication},
      {"void deep_ep::internode_ll::combine<false>(void*, void*, int*)", KernelClass::kCommunication},
      {"nvshmemi_proxy_kernel(nvshmemi_device_state*)", KernelClass::kCommunication},
      {"void vllm::cross_device_reduce_1stage<c10::BFloat16, 8>(vllm::RankData*, vllm::RankSignals, int)",
       KernelClass::kCommunication},
      {"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long)",
       KernelClass::kCommunication},
  });
}

TEST(KernelClassifier, Gemm) {
  ExpectClasses({
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       KernelClass::kGemm},
      {"ampere_sgemm_128x64_nn", KernelClass::kGemm},
      {"volta_sgemm_128x32_nt", KernelClass::kGemm},
      {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nt_align1>(cutlass_80_tensorop_s1688gemm_"
       "256x128_32x3_nt_align1::Params)",
       KernelClass::kGemm},
      {"void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_tn_align1>(Params)", KernelClass::kGemm},
      {"nvjet_tst_192x8_64x8_4x1_v_bz_TNT", KernelClass::kGemm},
      {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT320x224x64_MI16x16x1_SN_LDSB0_AFC1", KernelClass::kGemm},
      {"Cijk_Ailk_Bljk_BBS_BH_MT256x256x32_MI32x32x8x1_SN_1LDSB1_APM1", KernelClass::kGemm},
      // DeepSeek's FP8 grouped GEMMs (DeepGEMM-style CUTLASS kernels).
      {"void cutlass::device_kernel<dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel>(dpsk::grouped_gemm::"
       "cuda::m_grouped_fp8_ptp128c::GemmKernel::Params)",
       KernelClass::kGemm},
      {"void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel>(Params)",
       KernelClass::kGemm},
      {"void deep_gemm::fp8_gemm_kernel<4096u, 7168u, 128u, 160u, 128u, 1u, 8u, 128u, 4u, 3u, 2u, 1u, "
       "(deep_gemm::GemmType)1>(__nv_bfloat16*, float*, int*, unsigned int, CUtensorMap_st, CUtensorMap_st)",
       KernelClass::kGemm},
      {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>>>(Params)",
       KernelClass::kGemm},
      {"bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut",
       KernelClass::kGemm},
      {"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1", KernelClass::kGemm},
      {"triton_tem_fused_addmm_0", KernelClass::kGemm},
      {"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>(Params)",
       KernelClass::kGemm},
      {"void splitKreduce_kernel<float, float, float, float, true, false, false>(cublasSplitKParams<float>)",
       KernelClass::kGemm},
      {"gemm", KernelClass::kGemm},
  });
}

TEST(KernelClassifier, Attention) {
  ExpectClasses({
      {"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
       "cutlass::bfloat16_t>>(pytorch_flash::Flash_fwd_params)",
       KernelClass::kAttention},
      {"void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2>>(Params)",
       KernelClass::kAttention},
      {"void cutlass::device_kernel<flash::FlashAttnBwd<flash::CollectiveMainloopBwd<2, cute::tuple<cute::C<1>>>>>("
       "Params)",
       KernelClass::kAttention},
      {"void flash::compute_attn_ws<Flash_fwd_kernel_traits<192, 128, 128, 12, 2, false, 1, cutlass::bfloat16_t, "
       "128>, true>(flash::Flash_fwd_params)",
       KernelClass::kAttention},
      {"fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t>::Params)",
       KernelClass::kAttention},
      {"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext", KernelClass::kAttention},
      {"_ZN5aiter18fmha_fwd_hd128_bf16_causal_rtne_group", KernelClass::kAttention},
      {"ck_fmha_fwd_kernel", KernelClass::kAttention},
      {"attn_fwd", KernelClass::kAttention},
      {"_attn_bwd", KernelClass::kAttention},
      {"kernel_unified_attention_3d", KernelClass::kAttention},
      {"void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16>(int)", KernelClass::kAttention},
      {"void mem_efficient_attention_kernel(int)", KernelClass::kAttention},
      {"triton_tem_fused__flex_attention_0", KernelClass::kAttention},
  });
}

TEST(KernelClassifier, Convolution) {
  ExpectClasses({
      {"void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int)",
       KernelClass::kConvolution},
      {"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4",
       KernelClass::kConvolution},
      {"cudnn_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1", KernelClass::kConvolution},
      {"void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::"
       "WinogradDataParams<float, float>)",
       KernelClass::kConvolution},
      {"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int)", KernelClass::kConvolution},
      {"void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_128x128_32x4_nhwc_align4>(Params)",
       KernelClass::kConvolution},
      {"_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_v3INS_34GridwiseGemm",
       KernelClass::kConvolution},
      {"igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x256x32_wt32x32x8_ws1x2_wr2x2", KernelClass::kConvolution},
      {"naive_conv_fwd_nchw_float_double_float", KernelClass::kConvolution},
      {"MIOpenConvUni", KernelClass::kConvolution},
  });
}

TEST(KernelClassifier, ElementwiseAndNorms) {
  ExpectClasses({
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, "
       "3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
       KernelClass::kElementwise},
      {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{"
       "lambda()#2}>(int)",
       KernelClass::kElementwise},
      {"void at::native::elementwise_kernel<128, 2, "
       "at::native::gpu_kernel_impl<at::native::BinaryFunctor<float>>>(int)",
       KernelClass::kElementwise},
      {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*)",
       KernelClass::kElementwise},
      {"void layer_norm::ln_fwd_kernel<layer_norm::Kernel_traits<__nv_bfloat16>>(layer_norm::FwdParams)",
       KernelClass::kElementwise},
      {"void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*, c10::BFloat16 const*)",
       KernelClass::kElementwise},
      {"triton_poi_fused_addmm_gelu_view_15", KernelClass::kElementwise},
      // A pointwise kernel fused around SDPA is still pointwise.
      {"triton_poi_fused__scaled_dot_product_flash_attention_cat_transpose_view_10", KernelClass::kElementwise},
      {"void cuda::per_token_cast_to_fp8_with_channels<__nv_bfloat16, 128, false, 128, false>(__nv_bfloat16 const*)",
       KernelClass::kElementwise},
      {"void cuda::swiglu_forward_backward_with_weight_impl<__nv_bfloat16>(__nv_bfloat16*)", KernelClass::kElementwise},
      {"rotary_kernel", KernelClass::kElementwise},
      {"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*)", KernelClass::kElementwise},
      {"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16>(__nv_bfloat16 const*)", KernelClass::kElementwise},
      {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 128, true, 1, true>(cudnnTensorStruct)",
       KernelClass::kElementwise},
      {"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>>(int)", KernelClass::kElementwise},
      {"void fbgemm_gpu::permute_2D_data_kernel<false, int, int, decltype(nullptr)>(int)", KernelClass::kElementwise},
      {"void dpsk::grouped_gemm::cuda::utils::transpose<512, 128, 4, 4>(unsigned char const*)",
       KernelClass::kElementwise},
      // Argument types do not count: flashinfer:: appears only in the parameters.
      {"void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuantizationType)2, "
       "__nv_bfloat16, 32, true>(int, int, __nv_bfloat16 const*, flashinfer::QuantizationSFLayout)",
       KernelClass::kElementwise},
  });
}

TEST(KernelClassifier, Reduction) {
  ExpectClasses({
      {"void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::func_wrapper_t<float>>>(int)",
       KernelClass::kReduction},
      {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float>(c10::BFloat16*)",
       KernelClass::kReduction},
      {"void (anonymous namespace)::softmax_warp_forward<float, float, float, 8, false, false>(float*)",
       KernelClass::kReduction},
      {"void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int>::Policy800>(int*)",
       KernelClass::kReduction},
      {"triton_red_fused_add_mean_mul_pow_rsqrt_0", KernelClass::kReduction},
      {"triton_per_fused__to_copy_add_addmm_mean_mul_pow_rsqrt_transpose_view_8", KernelClass::kReduction},
      {"void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 5ul>(Accessor)",
       KernelClass::kReduction},
      {"void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<float>(Accessor)",
       KernelClass::kReduction},
      {"void at::native::(anonymous namespace)::EmbeddingBag_updateOutputKernel_sum_mean<float, long>(long const*)",
       KernelClass::kReduction},
      {"void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(Info)", KernelClass::kReduction},
  });
}

TEST(KernelClassifier, MemcpyMemsetByKind) {
  EXPECT_EQ(testing::BuiltinClassifier().Classify(TraceEventKind::kMemcpy, "Memcpy HtoD (Pinned -> Device)"),
            KernelClass::kMemcpy);
  EXPECT_EQ(testing::BuiltinClassifier().Classify(TraceEventKind::kMemset, "Memset (Device)"), KernelClass::kMemset);
  EXPECT_EQ(Kernel("dma_request"), KernelClass::kMemcpy);  // MTIA DMA kernels
  // Not GPU activity: never classified.
  EXPECT_EQ(testing::BuiltinClassifier().Classify(TraceEventKind::kRuntime, "cudaLaunchKernel"),
            KernelClass::kUnclassified);
  EXPECT_EQ(testing::BuiltinClassifier().Classify(TraceEventKind::kCpuOp, "aten::mm"), KernelClass::kUnclassified);
}

TEST(KernelClassifier, UnmatchedIsUnclassified) {
  EXPECT_EQ(Kernel("triton__0d1d2d3d4d5d"), KernelClass::kUnclassified);  // old Triton names say nothing
  EXPECT_EQ(Kernel("my_custom_kernel"), KernelClass::kUnclassified);
  EXPECT_EQ(Kernel(""), KernelClass::kUnclassified);
  EXPECT_EQ(testing::BuiltinClassifier().MatchingRule("my_custom_kernel"), -1);
}

TEST(KernelClassifier, UserRulesComeFirst) {
  KernelClassifier c = testing::BuiltinClassifier();
  ASSERT_TRUE(c.AddCsv("class,match,pattern,source\n"
                       "gemm,prefix,my_custom,our GEMM\n"
                       "attention,regex,^volta_sgemm_128x32,pretend\n",
                       "user.csv")
                  .ok());
  EXPECT_EQ(c.Classify(TraceEventKind::kKernel, "my_custom_kernel"), KernelClass::kGemm);
  EXPECT_EQ(c.Classify(TraceEventKind::kKernel, "volta_sgemm_128x32_nt"), KernelClass::kAttention);
  EXPECT_EQ(c.Classify(TraceEventKind::kKernel, "volta_sgemm_64x64_nt"), KernelClass::kGemm);  // built-in
  EXPECT_EQ(c.all().front().origin, "user.csv:2");
  EXPECT_EQ(c.all().size(), testing::BuiltinClassifier().all().size() + 2);
  // The copy it came from is untouched.
  EXPECT_EQ(Kernel("my_custom_kernel"), KernelClass::kUnclassified);

  // A later file overrides an earlier one; `source` is optional.
  ASSERT_TRUE(c.AddCsv("pattern,class,match\nmy_custom,reduction,contains\n", "second.csv").ok());
  EXPECT_EQ(c.Classify(TraceEventKind::kKernel, "my_custom_kernel"), KernelClass::kReduction);

  // Other columns are ignored and the pattern is kept as written: " two" is
  // matched with its space, and the class cell is trimmed.
  ASSERT_TRUE(c.AddCsv("class,match,pattern,notes\n memset ,contains, two,ours\n", "third.csv").ok());
  EXPECT_EQ(c.all().front().pattern, " two");
  EXPECT_EQ(c.Classify(TraceEventKind::kKernel, "kernel two"), KernelClass::kMemset);
  EXPECT_EQ(c.Classify(TraceEventKind::kKernel, "kerneltwo"), KernelClass::kUnclassified);
}

// The rules read through base/table.h, so since #11 each cell error names its
// column after the line, the header's line is given and an empty cell says
// "is empty" (the messages before: "u.csv:3: unknown kernel class 'gem'",
// "u.csv:2: empty pattern", "u.csv: missing column 'match'").
TEST(KernelClassifier, RuleErrorsNameTheLineAndColumn) {
  struct ErrorCase {
    const char* csv;
    const char* message;
  };
  const ErrorCase cases[] = {
      {"class,match,pattern,source\ngemm,prefix,a,x\ngem,prefix,b,x\n",
       "u.csv:3: column 'class': unknown kernel class 'gem' (did you mean 'gemm'?)"},
      {"class,match,pattern,source\ngemm,prefixx,a,x\n", "u.csv:2: column 'match': unknown match 'prefixx'"},
      {"class,match,pattern,source\ngemm,prefix,,x\n", "u.csv:2: column 'pattern' is empty"},
      {"class,match,pattern,source\n,prefix,a,x\n", "u.csv:2: column 'class' is empty"},
      {"class,match,pattern,source\ngemm,regex,(unclosed,x\n", "u.csv:2: column 'pattern': invalid regex '(unclosed'"},
      {"class,pattern,source\ngemm,a,x\n", "u.csv:1: missing column 'match'"},
      {"class,mach,pattern,source\ngemm,prefix,a,x\n", "u.csv:1: missing column 'match' (the header has 'mach')"},
      {"class,match,pattern\ngemm,prefix\n", "u.csv:2: row has 2 fields"},
  };
  for (const ErrorCase& e : cases) {
    KernelClassifier c = testing::BuiltinClassifier();
    Status s = c.AddCsv(e.csv, "u.csv");
    ASSERT_FALSE(s.ok()) << e.csv;
    EXPECT_EQ(s.message().rfind(e.message, 0), 0u) << s.message();
    EXPECT_EQ(c.all().size(), testing::BuiltinClassifier().all().size()) << "a failed file must not add rules";
  }
  KernelClassifier c;
  Status missing = c.AddFile(RealFileSystem(), std::string(MFU_SOURCE_DIR) + "/no/such/rules.csv");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
}

TEST(KernelClassifier, RulesFileFromDisk) {
  KernelClassifier c;
  ASSERT_TRUE(c.AddFile(mfu::RealFileSystem(), std::string(MFU_SOURCE_DIR) + "/data/kernels/kernel_classes.csv").ok());
  EXPECT_EQ(c.all().size(), testing::BuiltinClassifier().all().size());
  EXPECT_EQ(c.Classify(TraceEventKind::kKernel, "nvjet_tst_64x64"), KernelClass::kGemm);
}

TEST(ClassifyEvents, CachesPerNameAndSkipsCpuEvents) {
  RankTrace t;
  t.tracks.push_back({"1", "1", false, -1, -1});
  t.tracks.push_back({"0", "7", true, 0, 7});
  auto add = [&](TraceEventKind kind, const char* name, uint32_t track) {
    t.ts_ns.push_back(static_cast<int64_t>(t.ts_ns.size()) * 1000);
    t.dur_ns.push_back(500);
    t.kind.push_back(kind);
    t.name.push_back(t.strings.Intern(name));
    t.track.push_back(track);
    t.correlation.push_back(kNoId);
    t.external_id.push_back(kNoId);
    t.collective.push_back(kNoIndex);
    t.shapes.push_back(kNoIndex);
  };
  add(TraceEventKind::kCpuOp, "aten::mm", 0);
  add(TraceEventKind::kRuntime, "cudaLaunchKernel", 0);
  add(TraceEventKind::kKernel, "volta_sgemm_128x32_nt", 1);
  add(TraceEventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 1);
  add(TraceEventKind::kKernel, "volta_sgemm_128x32_nt", 1);
  add(TraceEventKind::kMemcpy, "Memcpy DtoD (Device -> Device)", 1);
  add(TraceEventKind::kMemset, "Memset (Device)", 1);
  add(TraceEventKind::kKernel, "mystery", 1);
  const std::vector<KernelClass> expected = {
      KernelClass::kUnclassified, KernelClass::kUnclassified, KernelClass::kGemm,   KernelClass::kCommunication,
      KernelClass::kGemm,         KernelClass::kMemcpy,       KernelClass::kMemset, KernelClass::kUnclassified,
  };
  EXPECT_EQ(ClassifyEvents(t, testing::BuiltinClassifier()), expected);
}

// Every kernel of the real traces in tests/data: the built-in table leaves
// less than 1% of kernel time unclassified on each.
TEST(ClassifyEvents, RealTracesAreAlmostFullyClassified) {
  std::vector<std::string> files;
  for (const char* file : testing::kRealTraceFiles) {
    if (std::string_view(file) != "cpu_only.json.gz")  // no kernels to classify
      files.push_back(file);
  }
  files.push_back("dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json.gz");
  files.push_back("hta_sampled/sampled_rank-0.json.gz");
  for (const std::string& file : files) {
    auto trace = ParseTraceFile(RealFileSystem(), testing::TestTracePath(file));
    ASSERT_TRUE(trace.ok()) << file << ": " << trace.status().message();
    const std::vector<KernelClass> classes = ClassifyEvents(*trace, testing::BuiltinClassifier());
    const double unclassified = testing::UnclassifiedKernelShare(*trace, classes);
    EXPECT_GE(unclassified, 0) << file;  // the trace has kernel time
    EXPECT_LT(unclassified, 0.01) << file;
  }
}

}  // namespace
}  // namespace mfu
