#pragma once

// Kernel classification driven by a data table (data/kernels/kernel_classes.csv),
// extensible by a user file. Names are matched by ordered rules; the first
// matching rule wins, and an unmatched GPU kernel is kUnclassified (reported,
// never silently called compute).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/status.h"
#include "mfu/trace.h"

namespace mfu {

enum class KernelClass : uint8_t {
  kGemm = 0,        // dense matrix multiplies (cuBLAS, CUTLASS, hipBLASLt, Triton mm, grouped GEMM)
  kAttention,       // flash / memory-efficient / fused attention
  kConvolution,     // cuDNN / MIOpen convolutions (matrix units)
  kElementwise,     // elementwise, activations, norms, casts, rotary, copies done by kernels
  kReduction,       // reductions, softmax, sorting, scans, embedding bag
  kCommunication,   // NCCL (old and new names), RCCL, DeepEP, NVSHMEM, custom all-reduce
  kMemcpy,          // memcpy activities (not kernels)
  kMemset,          // memset activities
  kUnclassified,    // a kernel no rule matched
};
inline constexpr size_t kNumKernelClasses = 9;
const char* KernelClassName(KernelClass c);
StatusOr<KernelClass> ParseKernelClass(std::string_view name);

// Matrix-unit classes: the "matrix-op share" of the MFU waterfall.
inline bool IsMatrixClass(KernelClass c) {
  return c == KernelClass::kGemm || c == KernelClass::kAttention || c == KernelClass::kConvolution;
}

class KernelClassifier {
 public:
  // The rules compiled into the binary.
  static StatusOr<KernelClassifier> LoadBuiltin();
  // Adds rules from a CSV with the columns of data/kernels/kernel_classes.csv;
  // user rules are tried before the built-in ones. Errors name file:line.
  Status AddRulesCsv(std::string_view csv, std::string_view origin);
  Status AddRulesFile(const std::string& path);

  // Class of a GPU event: memcpy/memset by kind, kernels by name.
  KernelClass Classify(TraceEventKind kind, std::string_view name) const;

  struct Rule {
    KernelClass cls;
    enum class Match : uint8_t { kPrefix, kContains, kRegex } match;
    std::string pattern;
    std::string source;  // why the rule exists (library, vendor docs)
  };
  const std::vector<Rule>& rules() const { return rules_; }

 private:
  std::vector<Rule> rules_;
  struct Compiled;                  // regexes, built once
  std::vector<int> regex_index_;    // rule -> compiled regex or -1
  std::shared_ptr<const void> compiled_;
};

// Class of every event of `trace` (kUnclassified for non-GPU events too),
// computed once per unique name.
std::vector<KernelClass> ClassifyEvents(const RankTrace& trace, const KernelClassifier& classifier);

}  // namespace mfu
