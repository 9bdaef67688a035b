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

#include "mfu/file_system.h"
#include "mfu/status.h"
#include "mfu/trace.h"

namespace mfu {

enum class KernelClass : uint8_t {
  kGemm = 0,       // dense matrix multiplies (cuBLAS, CUTLASS, hipBLASLt, Triton mm, grouped GEMM)
  kAttention,      // flash / memory-efficient / fused attention
  kConvolution,    // cuDNN / MIOpen convolutions (matrix units)
  kElementwise,    // elementwise, activations, norms, casts, rotary, copies done by kernels
  kReduction,      // reductions, softmax, sorting, scans, embedding bag
  kCommunication,  // NCCL (old and new names), RCCL, DeepEP, NVSHMEM, custom all-reduce
  kMemcpy,         // memcpy activities (not kernels)
  kMemset,         // memset activities
  kUnclassified,   // a kernel no rule matched
};
inline constexpr size_t kNumKernelClasses = 9;
// "gemm", "attention", "convolution", "elementwise", "reduction",
// "communication", "memcpy", "memset", "unclassified".
const char* KernelClassName(KernelClass c);
// The class named `name` (one of the names above). kInvalidArgument otherwise,
// with a "did you mean" suggestion when one is close.
StatusOr<KernelClass> ParseKernelClass(std::string_view name);

// Matrix-unit classes: the "matrix-op share" of the MFU waterfall.
inline bool IsMatrixClass(KernelClass c) {
  return c == KernelClass::kGemm || c == KernelClass::kAttention || c == KernelClass::kConvolution;
}

class KernelClassifier {
 public:
  // The rules compiled into the binary (data/kernels/kernel_classes.csv).
  // An error means the embedded table is broken: a bug in mfu.
  static StatusOr<KernelClassifier> LoadBuiltin();

  // Adds the rules of a CSV with the columns of data/kernels/kernel_classes.csv
  // (`class,match,pattern,source`; `source` may be empty). The new rules are
  // tried before every rule already present, so a user file added after
  // LoadBuiltin() overrides the built-in table; within one file the first
  // matching row wins. Errors (kParse, kInvalidArgument) name
  // "`origin`:LINE" and leave the classifier unchanged: an unknown class
  // (with a suggestion), an unknown match kind, an empty pattern, an invalid
  // regex, a missing column.
  Status AddCsv(std::string_view csv, std::string_view origin);
  // Reads `path` through `fs` and calls AddCsv; kNotFound when it cannot be
  // read.
  Status AddFile(const FileSystem& fs, const std::string& path);

  // Class of a GPU event: memcpy/memset by kind, kernels by name (the first
  // matching rule; kUnclassified when none matches). Every other kind is
  // kUnclassified. Patterns are matched case-sensitively against the name
  // without its trailing parameter list ("void f<T>(int, float*)" is matched
  // as "void f<T>"), so argument types cannot trigger a rule.
  KernelClass Classify(TraceEventKind kind, std::string_view name) const;
  // The index into rules() of the rule that classifies kernel `name`, or -1.
  int MatchingRule(std::string_view name) const;

  struct Rule {
    KernelClass cls;
    enum class Match : uint8_t { kPrefix, kContains, kRegex } match;
    std::string pattern;
    std::string source;  // why the rule exists (library, vendor docs)
    std::string origin;  // "file.csv:12"
  };
  // In matching order (the newest file's rules first).
  const std::vector<Rule>& all() const { return rules_; }

 private:
  struct Compiled;  // the regexes (std::regex), built once per rule set
  std::vector<Rule> rules_;
  std::shared_ptr<const Compiled> compiled_;  // shared by copies; immutable
};

// Class of every event of `trace`, indexed like its event columns
// (kUnclassified for non-GPU events too). Each distinct kernel name is
// classified once.
std::vector<KernelClass> ClassifyEvents(const RankTrace& trace, const KernelClassifier& classifier);

}  // namespace mfu
