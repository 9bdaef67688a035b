#pragma once

// What the trace job's tests share (job_test.cc, verdict_test.cc): the
// builtin catalog, loaded once, and the H100 options every case starts from.

#include <gtest/gtest.h>

#include <utility>

#include "mfu/catalog.h"
#include "mfu/trace_job.h"

namespace mfu::testing {

inline const Catalog& BuiltinCatalog() {
  static const Catalog* catalog = [] {
    auto loaded = Catalog::LoadBuiltin();
    EXPECT_TRUE(loaded.ok()) << loaded.status().message();
    return new Catalog(std::move(loaded).value());
  }();
  return *catalog;
}

// The job on an H100 (its dense BF16 peak is 989.4 TFLOP/s).
inline TraceJobOptions H100Job(int threads = 2) {
  TraceJobOptions o;
  o.gpu_override = "h100";
  o.threads = threads;
  return o;
}

// `model` at 128 tokens per sequence; the caller sets tokens or batch.
inline TraceModelRequest ModelRequest128(ModelSpec model) {
  TraceModelRequest m;
  m.model = std::move(model);
  m.seq_len = 128;
  return m;
}

}  // namespace mfu::testing
