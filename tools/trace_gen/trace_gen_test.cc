// trace_gen end to end: generate traces from a real DLRM rank, parse them with
// ParseTraceFile and check that every copy is the source shifted in time, with
// its link ids offset consistently and unique across copies.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "mfu/trace.h"

namespace {

const std::string kSource =
    std::string(MFU_SOURCE_DIR) + "/tests/data/traces/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json.gz";

// A fresh output directory under the build tree (tests never touch /tmp).
std::string OutDir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(MFU_BINARY_DIR) / "trace_gen_test" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir.parent_path());
  return dir.string();
}

int RunTraceGen(const std::string& args) {
  const std::string command = std::string(MFU_TRACE_GEN) + " " + args + " > /dev/null 2>&1";
  const int rc = std::system(command.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

mfu::RankTrace Parse(const std::string& path) {
  mfu::StatusOr<mfu::RankTrace> trace = mfu::ParseTraceFile(mfu::RealFileSystem(), path);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  return trace.ok() ? std::move(trace).value() : mfu::RankTrace();
}

// out's ids in copy k, minus the source's: one constant per copy (0 for copy
// 0), and the copies' id sets are disjoint.
void CheckIds(const std::vector<int64_t>& source, const std::vector<int64_t>& out, size_t copies, const char* what) {
  const size_t n = source.size();
  std::set<int64_t> seen;
  for (size_t k = 0; k < copies; ++k) {
    bool have_offset = false;
    int64_t offset = 0;
    std::set<int64_t> ids;
    for (size_t i = 0; i < n; ++i) {
      const int64_t id = out[k * n + i];
      if (source[i] <= 0) {
        ASSERT_EQ(id, source[i]) << what << " copy " << k << " event " << i;
        continue;
      }
      if (!have_offset) {
        offset = id - source[i];
        have_offset = true;
      }
      ASSERT_EQ(id - source[i], offset) << what << " copy " << k << " event " << i;
      ids.insert(id);
    }
    if (k == 0) {
      EXPECT_EQ(offset, 0) << what;
    }
    for (int64_t id : ids)
      ASSERT_EQ(seen.count(id), 0u) << what << " " << id << " reused by copy " << k;
    seen.insert(ids.begin(), ids.end());
  }
}

// "ProfilerStep#12" in the source is "ProfilerStep#(12 + k)" in copy k (the
// DLRM rank has one step).
std::string ExpectedName(std::string_view source_name, size_t k) {
  constexpr std::string_view kStep = "ProfilerStep#";
  if (!source_name.starts_with(kStep))
    return std::string(source_name);
  return std::string(kStep) +
         std::to_string(std::stoll(std::string(source_name.substr(kStep.size()))) + static_cast<int64_t>(k));
}

void CheckTiled(const mfu::RankTrace& source, const mfu::RankTrace& out, size_t copies) {
  const size_t n = source.num_events();
  ASSERT_GT(n, 0u);
  ASSERT_EQ(out.num_events(), copies * n);
  EXPECT_EQ(out.error_count(), 0u);
  int64_t previous_shift = 0, previous_end = INT64_MIN;
  for (size_t k = 0; k < copies; ++k) {
    // Events are sorted by (ts, -dur, file offset), so copy k is the slice
    // [k n, (k + 1) n) in the source's order, every ts moved by one shift.
    const int64_t shift = out.ts_ns[k * n] - source.ts_ns[0];
    int64_t begin = INT64_MAX, end = INT64_MIN;
    for (size_t i = 0; i < n; ++i) {
      const size_t j = k * n + i;
      ASSERT_EQ(out.ts_ns[j] - source.ts_ns[i], shift) << "copy " << k << " event " << i;
      ASSERT_EQ(out.dur_ns[j], source.dur_ns[i]);
      ASSERT_EQ(out.kind[j], source.kind[i]);
      ASSERT_EQ(out.event_name(j), ExpectedName(source.event_name(i), k));
      begin = std::min(begin, out.ts_ns[j]);
      end = std::max(end, out.end_ns(j));
    }
    EXPECT_EQ(shift % 1000, 0) << "shifts are whole microseconds";
    if (k > 0) {
      EXPECT_GT(shift, previous_shift);
      EXPECT_GT(begin, previous_end) << "copy " << k << " overlaps copy " << k - 1;
    }
    previous_shift = shift;
    previous_end = end;
  }
  CheckIds(source.correlation, out.correlation, copies, "correlation");
  CheckIds(source.external_id, out.external_id, copies, "External id");
}

TEST(TraceGen, TwoRanksThreeCopies) {
  const std::string dir = OutDir("two_ranks");
  ASSERT_EQ(RunTraceGen("--source " + kSource + " --ranks 2 --repeat 3 --seed 7 --out " + dir), 0);
  const mfu::RankTrace source = Parse(kSource);
  int64_t first_ts[2] = {0, 0};
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const mfu::RankTrace out = Parse(dir + "/rank" + std::to_string(rank) + ".pt.trace.json");
    CheckTiled(source, out, 3);
    EXPECT_EQ(out.rank, rank);
    EXPECT_EQ(out.world_size, 2);
    EXPECT_EQ(out.device_name(), source.device_name());
    first_ts[rank] = out.ts_ns.empty() ? 0 : out.ts_ns[0];
  }
  // The per-rank skew is under 50 us.
  EXPECT_LT(std::abs(first_ts[1] - first_ts[0]), 50'000);
}

TEST(TraceGen, GzipUntilTargetBytes) {
  const std::string dir = OutDir("gzip_target");
  const std::string path = dir + "/one.json.gz";
  std::filesystem::create_directories(dir);
  ASSERT_EQ(RunTraceGen("--source " + kSource + " --target-bytes 2M --out " + path), 0);
  const mfu::RankTrace source = Parse(kSource);
  const mfu::RankTrace out = Parse(path);
  ASSERT_GE(out.input_bytes, 2'000'000u);
  ASSERT_EQ(out.num_events() % source.num_events(), 0u);
  const size_t copies = out.num_events() / source.num_events();
  EXPECT_GE(copies, 2u);
  CheckTiled(source, out, copies);
}

TEST(TraceGen, UsageErrors) {
  const std::string dir = OutDir("usage");
  EXPECT_EQ(RunTraceGen("--ranks 2 --repeat 1 --out " + dir), 2);      // no --source
  EXPECT_EQ(RunTraceGen("--source " + kSource + " --out " + dir), 2);  // no size
  EXPECT_EQ(RunTraceGen("--source " + kSource + " --ranks 2 --repeat 1 --out " + dir + "/x.json"), 2);
  EXPECT_EQ(RunTraceGen("--source " + dir + "/missing.json --repeat 1 --out " + dir), 1);
}

}  // namespace
