#pragma once

// Test fixtures (target mfu_testing, test-only): a builder of RankTraces
// with shapes, External ids and launch correlations, a class assignment by
// name that does not depend on the classifier's table, and a test
// accelerator with round peaks.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/trace.h"
#include "mfu/trace_classify.h"

namespace mfu::testing {

struct OpArgs {
  std::vector<std::vector<int64_t>> dims;
  std::vector<std::string> types;
  std::vector<std::string> concrete;
};

class TraceBuilder {
 public:
  static constexpr uint32_t kMain = 0;  // the training loop's thread
  static constexpr uint32_t kCpu = kMain;
  static constexpr uint32_t kAutograd = 1;  // autograd's device thread
  static constexpr uint32_t kStream7 = 2;
  static constexpr uint32_t kStream8 = 3;

  TraceBuilder() {
    t_.tracks.push_back({"100", "100", false, -1, -1});
    t_.tracks.push_back({"100", "101", false, -1, -1});
    t_.tracks.push_back({"0", "7", true, 0, 7});
    t_.tracks.push_back({"0", "8", true, 0, 8});
  }

  // A cpu_op (with shapes when `args` has dims or types).
  void Op(const std::string& name, int64_t ts, int64_t dur, int64_t external_id, OpArgs args = {},
          uint32_t track = kMain) {
    Pending p{ts, dur, TraceEventKind::kCpuOp, name, track};
    p.external_id = external_id;
    p.has_shapes = !args.dims.empty() || !args.types.empty();
    p.args = std::move(args);
    pending_.push_back(std::move(p));
  }
  void Annotation(const std::string& name, int64_t ts, int64_t dur, uint32_t track = kMain,
                  TraceEventKind kind = TraceEventKind::kUserAnnotation) {
    pending_.push_back({ts, dur, kind, name, track});
  }
  // A runtime call at [launch_ts, launch_ts + 5) on `launch_track` carrying
  // `runtime_external_id`, and the GPU event it launched carrying
  // `gpu_external_id` (kNoId: none, as on ROCm).
  void Launch(int64_t launch_ts, TraceEventKind kind, const std::string& name, int64_t ts, int64_t dur, uint32_t stream,
              int64_t runtime_external_id, int64_t gpu_external_id, uint32_t launch_track = kMain) {
    const int64_t correlation = next_correlation_++;
    Pending rt{launch_ts, 5, TraceEventKind::kRuntime, "cudaLaunchKernel", launch_track};
    rt.correlation = correlation;
    rt.external_id = runtime_external_id;
    pending_.push_back(std::move(rt));
    Pending gpu{ts, dur, kind, name, stream};
    gpu.correlation = correlation;
    gpu.external_id = gpu_external_id;
    pending_.push_back(std::move(gpu));
  }
  // A kernel linked to op `external_id` both ways (the CUDA case).
  void Kernel(int64_t launch_ts, const std::string& name, int64_t ts, int64_t dur, uint32_t stream, int64_t external_id,
              TraceEventKind kind = TraceEventKind::kKernel) {
    Launch(launch_ts, kind, name, ts, dur, stream, external_id, external_id);
  }
  // A runtime launch [launch_ts, launch_ts + launch_dur) on kMain and the
  // GPU op it launched (no External ids).
  void Launch(int64_t launch_ts, int64_t launch_dur, TraceEventKind kind, const std::string& name, int64_t ts,
              int64_t dur, uint32_t stream) {
    Launch(launch_ts, kind, name, ts, dur, stream, kNoId, kNoId);
    pending_[pending_.size() - 2].dur = launch_dur;
  }
  // A CPU event on kMain.
  void Cpu(TraceEventKind kind, const std::string& name, int64_t ts, int64_t dur) {
    pending_.push_back({ts, dur, kind, name, kMain});
  }
  // A GPU event with no launch (Orphan with the arguments in event order).
  void Gpu(TraceEventKind kind, const std::string& name, int64_t ts, int64_t dur, uint32_t stream) {
    Orphan(name, ts, dur, stream, kind);
  }
  // A GPU event with no launch in the trace.
  void Orphan(const std::string& name, int64_t ts, int64_t dur, uint32_t stream,
              TraceEventKind kind = TraceEventKind::kKernel) {
    pending_.push_back({ts, dur, kind, name, stream});
  }
  void Device(const std::string& name) { t_.devices.push_back({0, name, 132, 0}); }

  // Events sorted like the parser sorts them: (ts, -dur).
  RankTrace Build() {
    std::stable_sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
      return std::make_pair(a.ts, -a.dur) < std::make_pair(b.ts, -b.dur);
    });
    for (const Pending& p : pending_) {
      t_.ts_ns.push_back(p.ts);
      t_.dur_ns.push_back(p.dur);
      t_.kind.push_back(p.kind);
      t_.name.push_back(t_.strings.Intern(p.name));
      t_.track.push_back(p.track);
      t_.correlation.push_back(p.correlation);
      t_.external_id.push_back(p.external_id);
      t_.collective.push_back(kNoIndex);
      if (p.has_shapes) {
        OpShapes s;
        s.input_dims = p.args.dims;
        for (const std::string& x : p.args.types)
          s.input_types.push_back(t_.strings.Intern(x));
        for (const std::string& x : p.args.concrete)
          s.concrete_inputs.push_back(t_.strings.Intern(x));
        t_.shapes.push_back(static_cast<uint32_t>(t_.op_shapes.size()));
        t_.op_shapes.push_back(std::move(s));
      } else {
        t_.shapes.push_back(kNoIndex);
      }
    }
    pending_.clear();
    return std::move(t_);
  }

 private:
  struct Pending {
    int64_t ts;
    int64_t dur;
    TraceEventKind kind;
    std::string name;
    uint32_t track;
    int64_t correlation = kNoId;
    int64_t external_id = kNoId;
    bool has_shapes = false;
    OpArgs args{};
  };
  RankTrace t_;
  std::vector<Pending> pending_;
  int64_t next_correlation_ = 1000;
};

// Classes by name, independent of data/kernels/kernel_classes.csv: "gemm" ->
// kGemm, "flash" -> kAttention, "conv" -> kConvolution, "elementwise" ->
// kElementwise, "reduce" -> kReduction, "nccl" -> kCommunication; memcpy /
// memset by kind; other GPU events kUnclassified; CPU events kUnclassified.
inline std::vector<KernelClass> ClassesByName(const RankTrace& t) {
  std::vector<KernelClass> out(t.num_events(), KernelClass::kUnclassified);
  for (size_t i = 0; i < t.num_events(); ++i) {
    std::string_view n = t.event_name(i);
    auto has = [n](std::string_view s) { return n.find(s) != std::string_view::npos; };
    if (t.kind[i] == TraceEventKind::kMemcpy) {
      out[i] = KernelClass::kMemcpy;
    } else if (t.kind[i] == TraceEventKind::kMemset) {
      out[i] = KernelClass::kMemset;
    } else if (t.kind[i] != TraceEventKind::kKernel) {
      continue;
    } else if (has("gemm")) {
      out[i] = KernelClass::kGemm;
    } else if (has("flash")) {
      out[i] = KernelClass::kAttention;
    } else if (has("conv")) {
      out[i] = KernelClass::kConvolution;
    } else if (has("elementwise")) {
      out[i] = KernelClass::kElementwise;
    } else if (has("reduce")) {
      out[i] = KernelClass::kReduction;
    } else if (has("nccl")) {
      out[i] = KernelClass::kCommunication;
    }
  }
  return out;
}

// Dense peaks of 1000 TFLOP/s (1e15 FLOP/s) for BF16, 2000 for FP8, 100 for
// FP32 and no TF32: round numbers for hand computation.
inline Accelerator TestGpu() {
  Accelerator a;
  a.id = "test-gpu";
  a.name = "Test GPU";
  a.peak_tflops[static_cast<size_t>(DType::kBf16)] = 1000;
  a.peak_tflops[static_cast<size_t>(DType::kFp16)] = 1000;
  a.peak_tflops[static_cast<size_t>(DType::kFp8)] = 2000;
  a.peak_tflops[static_cast<size_t>(DType::kFp32)] = 100;
  return a;
}

// Kernel time (GPU kernels only) left unclassified by `classes`, as a
// fraction of all kernel time; -1 when the trace has no kernel time.
inline double UnclassifiedKernelShare(const RankTrace& t, const std::vector<KernelClass>& classes) {
  int64_t kernel_ns = 0, unclassified_ns = 0;
  for (size_t i = 0; i < t.num_events(); ++i) {
    if (t.kind[i] != TraceEventKind::kKernel)
      continue;
    kernel_ns += t.dur_ns[i];
    if (classes[i] == KernelClass::kUnclassified)
      unclassified_ns += t.dur_ns[i];
  }
  return kernel_ns > 0 ? static_cast<double>(unclassified_ns) / static_cast<double>(kernel_ns) : -1;
}

// The built-in tables, loaded once per test binary (a failure to load is a
// test failure).
const KernelClassifier& BuiltinClassifier();
const HardwareDb& BuiltinHardware();

// A small generic transformer for FLOPs tests: 2 layers, hidden 256, 4
// heads, gated MLP of 1024, vocabulary 1000.
ModelSpec TinyModel();

// `text` as one gzip member at deflate `level` (0: stored blocks, so payload
// bytes can be changed without breaking the deflate stream).
std::string GzipText(const std::string& text, int level);

// tests/data/traces/<name> in the source tree.
std::string TestTracePath(std::string_view name);

// The single-file real traces in tests/data/traces that every whole-trace
// invariant test walks (CUDA, ROCm, legacy 2021, ns resolution, Triton,
// CPU only).
inline constexpr const char* kRealTraceFiles[] = {"b200_vllm_eager.json.gz",
                                                  "mi300x_resnet_rccl.json.gz",
                                                  "legacy_2021_resnet50.json.gz",
                                                  "nccl_collectives_a100.json.gz",
                                                  "ns_resolution_v100.json.gz",
                                                  "mi250_rocm.json.gz",
                                                  "triton.json.gz",
                                                  "cpu_only.json.gz"};

// The count of diagnostic `name` in `t` (a test failure when it has none).
inline uint64_t DiagnosticCount(const RankTrace& t, std::string_view name) {
  for (const auto& d : t.diagnostics) {
    if (std::string_view(d.name) == name)
      return d.count;
  }
  ADD_FAILURE() << "no diagnostic " << name;
  return 0;
}

}  // namespace mfu::testing
