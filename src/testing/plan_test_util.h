#pragma once

// Fixtures shared by the plan module's tests: built-in databases, generic
// models and a PerfModel with efficiency parameters fixed here (so that no
// expectation depends on the shipped calibration).

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "mfu/cluster.h"
#include "mfu/framework.h"
#include "mfu/hwdb.h"
#include "mfu/model.h"
#include "mfu/perf_model.h"
#include "mfu/planner.h"
#include "mfu/vector_kernels.h"

namespace mfu::plan_test {

// Efficiency parameters fixed here so that no expectation depends on the
// shipped calibration.
inline EfficiencyParams TestEfficiency() {
  EfficiencyParams e;
  e.family = "test";
  e.matmul_peak_fraction = 0.7;
  e.matmul_half_dim = 64;
  e.fp8_matmul_peak_fraction = 0.6;
  e.fp4_matmul_peak_fraction = 0.5;
  e.attention_peak_fraction = 0.5;
  e.attention_half_seq = 200;
  e.attention_bwd_fraction = 0.4;
  e.attention_bwd_half_seq = 400;
  e.attention_fa2_ratio = 0.6;
  e.vector_bw_fraction = 0.7;
  e.quant_bw_fraction = 0.55;  // unlike vector_bw_fraction: a test tells them apart
  e.permute_bw_fraction = 0.45;
  e.scaleup_bw_fraction = 0.75;
  e.scaleout_bw_fraction = 0.75;
  e.alltoall_nic_ratio = 0.75;
  e.overlap_efficiency = 0.8;
  e.kernel_overhead_us = 4;
  e.memory_reserved_gib = 3;
  e.vector_kernels[static_cast<size_t>(VectorKernel::kNorm)] = {2, 100, 0.4, "test"};
  e.vector_kernels[static_cast<size_t>(VectorKernel::kResidualAdd)] = {1, 0, 0.9, "test"};
  e.vector_kernels[static_cast<size_t>(VectorKernel::kActivation)] = {1.5, 100, 0.5, "test"};
  return e;
}

inline const HardwareDb& Hw() {
  static const HardwareDb* db = [] {
    StatusOr<HardwareDb> d = HardwareDb::LoadBuiltin();
    EXPECT_TRUE(d.ok()) << d.status().message();
    return new HardwareDb(d.ok() ? std::move(d).value() : HardwareDb());
  }();
  return *db;
}

inline const ClusterDb& Clusters() {
  static const ClusterDb* db = [] {
    StatusOr<ClusterDb> d = ClusterDb::LoadBuiltin();
    EXPECT_TRUE(d.ok()) << d.status().message();
    return new ClusterDb(d.ok() ? std::move(d).value() : ClusterDb());
  }();
  return *db;
}

inline const Accelerator* Gpu(const char* name) {
  StatusOr<const Accelerator*> a = Hw().Find(name);
  EXPECT_TRUE(a.ok()) << a.status().message();
  return a.ok() ? *a : nullptr;
}

inline const Cluster* FindCluster(const char* name) {
  StatusOr<const Cluster*> c = Clusters().Find(name);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : nullptr;
}

inline ModelSpec Generic(int64_t layers, int64_t hidden, int64_t heads, int64_t ffn, int64_t vocab,
                         int64_t kv_heads = 0, bool gated = true) {
  GenericModelOptions o;
  o.layers = layers;
  o.hidden = hidden;
  o.heads = heads;
  o.kv_heads = kv_heads;
  o.ffn = ffn;
  o.vocab = vocab;
  o.gated_mlp = gated;
  StatusOr<ModelSpec> m = BuildGenericModel(o);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : ModelSpec();
}

inline ModelSpec GenericMoe(int64_t layers, int64_t hidden, int64_t heads, int64_t experts, int64_t top_k,
                            int64_t moe_ffn, int64_t vocab) {
  GenericModelOptions o;
  o.layers = layers;
  o.hidden = hidden;
  o.heads = heads;
  o.experts = experts;
  o.top_k = top_k;
  o.moe_ffn = moe_ffn;
  o.vocab = vocab;
  StatusOr<ModelSpec> m = BuildGenericModel(o);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : ModelSpec();
}

// A model (held by the caller) on `gpus` GPUs of `cluster` (null: one h100
// domain) with efficiency `e` and framework profile `fw`.
inline PerfModel MakeWith(const ModelSpec& model, int64_t seq, int64_t gpus, const char* cluster,
                          const EfficiencyParams& e, const FrameworkProfile& fw = {},
                          uint32_t recompute_modules = kDefaultRecomputeModules) {
  TrainingSetup s;
  s.recompute_modules = recompute_modules;
  s.model = &model;
  s.seq_len = seq;
  s.gpu = cluster != nullptr ? Gpu(FindCluster(cluster)->accelerator.c_str()) : Gpu("h100-sxm5-80gb");
  s.cluster = cluster != nullptr ? FindCluster(cluster) : nullptr;
  s.gpus = gpus;
  s.efficiency = e;
  s.framework = fw;
  StatusOr<PerfModel> p = PerfModel::Create(s);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

// The same with the test efficiency and the default framework profile.
inline PerfModel Make(const ModelSpec& model, int64_t seq, int64_t gpus, const char* cluster) {
  return MakeWith(model, seq, gpus, cluster, TestEfficiency());
}

// A built-in framework profile (data/frameworks/frameworks.csv) by name.
inline const FrameworkProfile& Framework(const char* name) {
  static const FrameworkDb* db = *FrameworkDb::Builtin();
  return **db->Find(name);
}

// A configuration of the given sizes, everything else the defaults.
inline TrainingConfig Layout(int64_t tp, int64_t pp, int64_t cp, int64_t gbs) {
  TrainingConfig c;
  c.tp = tp;
  c.pp = pp;
  c.cp = cp;
  c.global_batch = gbs;
  return c;
}

// The planner's default search for a global batch, listing `top_k`.
inline PlanOptions Search(int64_t gbs, size_t top_k) {
  PlanOptions o;
  o.global_batch = gbs;
  o.top_k = top_k;
  return o;
}

}  // namespace mfu::plan_test
