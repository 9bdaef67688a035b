// Readable kernel names (mfu/trace_kernel_names.h): expected strings written
// by hand from the C++ signature rules (return type, template arguments and
// parameter list removed).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mfu/trace_kernel_names.h"

namespace mfu {
namespace {

TEST(ShortKernelName, DropsReturnTypeTemplatesAndParameters) {
  EXPECT_EQ(ShortKernelName("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)"),
            "cutlass::Kernel<...>");
  EXPECT_EQ(ShortKernelName("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  // Nested templates, a lambda with its own parameter list, "->" inside.
  EXPECT_EQ(ShortKernelName("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
                            "namespace)::add_kernel(at::TensorIteratorBase&)::{lambda(float, float)#1}, "
                            "at::detail::Array<char*, 3> >(int, float*)"),
            "at::native::vectorized_elementwise_kernel<...>");
  EXPECT_EQ(ShortKernelName("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int)"),
            "at::native::vectorized_layer_norm_kernel<...>");
}

TEST(ShortKernelName, LeavesOtherNamesAlone) {
  EXPECT_EQ(ShortKernelName("ampere_sgemm_128x64_tn"), "ampere_sgemm_128x64_tn");
  EXPECT_EQ(ShortKernelName("Memcpy HtoD (Pageable -> Device)"), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(ShortKernelName("triton_poi_fused_add_0"), "triton_poi_fused_add_0");
}

TEST(ShortKernelName, CutsOnlyWhatIsStillTooLong) {
  // 21 characters after shortening; a limit of 20 keeps 17 and "...".
  EXPECT_EQ(ShortKernelName("void cutlass::Kernel2<int, float>(int)", 20), "cutlass::Kernel2<...");
  EXPECT_EQ(ShortKernelName("abcdefghijklmnopqrstuvwxyz", 20), "abcdefghijklmnopq...");
  EXPECT_EQ(ShortKernelName("abc", 20), "abc");
}

TEST(ShortKernelNames, DifferentKernelsNeverLookTheSame) {
  const std::vector<std::string> names = {
      "void gemm<float, 128>(int)", "void gemm<half, 64>(int)", "ampere_sgemm_128x64_tn",
      "void gemm<float, 128>(int)",  // the first again: the same short name
  };
  const std::vector<std::string> s = ShortKernelNames(names);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], "gemm<...> [1]");
  EXPECT_EQ(s[1], "gemm<...> [2]");
  EXPECT_EQ(s[2], "ampere_sgemm_128x64_tn");
  EXPECT_EQ(s[3], "gemm<...> [1]");
}

TEST(ShortKernelNames, CutNamesThatCollideGetSuffixesWithinTheLimit) {
  const std::vector<std::string> names = {"a_very_long_kernel_name_number_one", "a_very_long_kernel_name_number_two"};
  const std::vector<std::string> s = ShortKernelNames(names, 20);
  // 20 - len(" [1]") = 16: 13 characters and "...", then the suffix.
  EXPECT_EQ(s[0], "a_very_long_k... [1]");
  EXPECT_EQ(s[1], "a_very_long_k... [2]");
  EXPECT_LE(s[0].size(), 20u);
}

}  // namespace
}  // namespace mfu
