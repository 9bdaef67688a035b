// The trace reader: exact timestamps for the three Kineto generations, base
// time, formats (gzip, legacy string tids, B/E pairs, uint64 ids), counted
// diagnostics, and results independent of the thread count.

#include <gtest/gtest.h>

#include <string>

#include "base/file_system.h"
#include "mfu/trace.h"
#include "testing/trace_builder.h"
#include "trace/event_parser.h"

namespace mfu {
namespace {

using testing::DiagnosticCount;

std::string GzipStored(const std::string& text) {
  return mfu::testing::GzipText(text, 0);
}

std::string SmallTrace(size_t padding) {
  return "{\"traceEvents\": [" + std::string(padding, ' ') +
         "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 5},\n"
         "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 20, \"dur\": 5}]}";
}

// Each member's CRC-32 and length are checked against its trailer (with
// libdeflate's CRC): a changed payload byte that keeps the deflate stream
// valid is reported, the events read before it are kept.
TEST(TraceReader, GzipCrcMismatchIsReported) {
  const std::string json = SmallTrace(0);
  std::string gz = GzipStored(json);
  ASSERT_TRUE(ParseTraceBuffer(gz, "ok.json.gz").ok());
  const size_t at = gz.find("\"ts\": 20");
  ASSERT_NE(at, std::string::npos);
  gz[at + 7] = '3';  // ts 20 -> 30: still JSON, still deflate
  auto t = ParseTraceBuffer(gz, "bad.json.gz");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(DiagnosticCount(*t, "truncated_input"), 1u);
  bool named = false;
  for (const auto& d : t->diagnostics) {
    for (const auto& e : d.examples)
      named |= e.snippet.find("CRC-32") != std::string::npos;
  }
  EXPECT_TRUE(named);
}

// Members whose 8-byte trailer straddles the reader's 1 MiB input buffers,
// and two members back to back: every split point parses without a false
// CRC or length error.
TEST(TraceReader, GzipTrailerAcrossInputBuffers) {
  size_t straddled = 0;
  for (size_t target = (size_t{1} << 20) - 2; target <= (size_t{1} << 20) + 10; ++target) {
    // Padding such that the member is `target` bytes (stored blocks: the
    // size follows the padding byte for byte once the block count settles).
    size_t padding = target - SmallTrace(0).size();
    std::string gz = GzipStored(SmallTrace(padding));
    for (int i = 0; i < 4 && gz.size() != target; ++i) {
      padding = padding + target - gz.size();
      gz = GzipStored(SmallTrace(padding));
    }
    ASSERT_EQ(gz.size(), target);
    const size_t delta = target - ((size_t{1} << 20) - 2);
    straddled += target > (size_t{1} << 20) && target < (size_t{1} << 20) + 8 ? 1 : 0;
    auto t = ParseTraceBuffer(gz, "straddle.json.gz");
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t->num_events(), 2u) << delta;
    EXPECT_EQ(t->error_count(), 0u) << delta;
    EXPECT_EQ(DiagnosticCount(*t, "truncated_input"), 0u) << delta << " (" << gz.size() << " bytes)";
  }
  EXPECT_EQ(straddled, 7u);  // trailers split 1+7 ... 7+1 across the first two reads
  // Two members: the second's events follow the first's bytes.
  const std::string first = "{\"traceEvents\": [" + std::string(200000, ' ');
  const std::string second =
      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}";
  auto t = ParseTraceBuffer(GzipStored(first) + GzipStored(second), "two.json.gz");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->num_events(), 1u);
  EXPECT_EQ(DiagnosticCount(*t, "truncated_input"), 0u);
}

TEST(ParseMicrosToNs, ExactForEveryGeneration) {
  int64_t ns = 0;
  bool truncated = false, via_double = false;
  // (a) integer epoch microseconds (2023 DLRM).
  ASSERT_TRUE(trace::ParseMicrosToNs("1694128201435418", ns, truncated, via_double));
  EXPECT_EQ(ns, 1694128201435418000);
  // (b) 19 significant digits, not representable in a double (HTA ns_resolution).
  ASSERT_TRUE(trace::ParseMicrosToNs("1712195495505582.988", ns, truncated, via_double));
  EXPECT_EQ(ns, 1712195495505582988);
  // (c) relative to baseTimeNanoseconds with a 3-digit fraction.
  ASSERT_TRUE(trace::ParseMicrosToNs("4458677009853.422", ns, truncated, via_double));
  EXPECT_EQ(ns, 4458677009853422);
  ASSERT_TRUE(trace::ParseMicrosToNs("10.0", ns, truncated, via_double));
  EXPECT_EQ(ns, 10000);
  ASSERT_TRUE(trace::ParseMicrosToNs("0.5", ns, truncated, via_double));
  EXPECT_EQ(ns, 500);
  ASSERT_TRUE(trace::ParseMicrosToNs("1.23456", ns, truncated, via_double));
  EXPECT_EQ(ns, 1234);
  EXPECT_TRUE(truncated);
  ASSERT_TRUE(trace::ParseMicrosToNs("1.5e3", ns, truncated, via_double));
  EXPECT_EQ(ns, 1500000);
  EXPECT_TRUE(via_double);
  ASSERT_TRUE(trace::ParseMicrosToNs("-5", ns, truncated, via_double));
  EXPECT_EQ(ns, -5000);
  EXPECT_FALSE(trace::ParseMicrosToNs("abc", ns, truncated, via_double));
  EXPECT_FALSE(trace::ParseMicrosToNs("99999999999999999999", ns, truncated, via_double));
}

TEST(TraceReader, BaseTimeAfterEventsAndMetadata) {
  const std::string doc = R"({"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}],
    "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8,
                        "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "ranks": [0, 1]}]},
    "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5.5, "dur": 1.25,
       "args": {"stream": 7, "device": 0, "correlation": 9, "External id": 4}}
    ],
    "baseTimeNanoseconds": 1700000000000000000})";
  auto t = ParseTraceBuffer(doc, "doc.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->num_events(), 1u);
  EXPECT_EQ(t->ts_ns[0], 1700000000000000000 + 5500);
  EXPECT_EQ(t->dur_ns[0], 1250);
  EXPECT_EQ(t->rank, 3);
  EXPECT_EQ(t->world_size, 8);
  EXPECT_EQ(t->device_name(), "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(t->process_groups.size(), 1u);
  EXPECT_EQ(t->process_groups[0].ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(t->event_track(0).gpu);
  EXPECT_EQ(t->event_track(0).stream, 7);
  EXPECT_EQ(t->correlation[0], 9);
  EXPECT_EQ(t->external_id[0], 4);
  EXPECT_EQ(t->error_count(), 0u);
}

TEST(TraceReader, LegacyStringTidsBeginEndAndUint64Ids) {
  const std::string doc = R"({"traceEvents": [
      {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 7", "ts": 10, "dur": 2,
       "args": {"external id": 5, "correlation": 10159970886766084423}},
      {"ph": "B", "cat": "user_annotation", "name": "region", "pid": 1, "tid": 1, "ts": 1},
      {"ph": "E", "cat": "user_annotation", "name": "region", "pid": 1, "tid": 1, "ts": 4},
      {"ph": "E", "cat": "user_annotation", "name": "orphan", "pid": 1, "tid": 1, "ts": 5},
      {"ph": "s", "cat": "ac2g", "id": 1, "pid": 1, "tid": 1, "ts": 1},
      {"ph": "X", "cat": "mystery", "name": "m", "pid": 1, "tid": 1, "ts": 6, "dur": 1}
    ]})";
  auto t = ParseTraceBuffer(doc, "legacy.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->num_events(), 3u);  // kernel, the paired region, the unknown-category event
  EXPECT_EQ(t->event_name(0), "region");
  EXPECT_EQ(t->dur_ns[0], 3000);
  EXPECT_EQ(t->event_name(1), "m");  // sorted by ts: region (1), m (6), k (10)
  EXPECT_EQ(t->kind[2], TraceEventKind::kKernel);
  EXPECT_EQ(t->event_track(2).stream, 7);
  EXPECT_EQ(t->external_id[2], 5);
  EXPECT_EQ(static_cast<uint64_t>(t->correlation[2]), 10159970886766084423ull);
  EXPECT_EQ(DiagnosticCount(*t, "uint64_id"), 1u);
  EXPECT_EQ(DiagnosticCount(*t, "unmatched_begin_end"), 1u);
  EXPECT_EQ(DiagnosticCount(*t, "flow_events"), 1u);
  EXPECT_EQ(DiagnosticCount(*t, "unknown_category"), 1u);
}

TEST(TraceReader, MalformedEventsAreCountedNotFatal) {
  const std::string doc = R"({"traceEvents": [
      {"ph": "X", "name": "ok", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
      {"ph": "X", "name": "no dur", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 1},
      {"name": "no ph", "ts": 1},
      {"ph": "X", "name": "bad ts", "cat": "cpu_op", "ts": "soon", "dur": 1},
      {"ph": "X", "name": "neg", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 2, "dur": -3},
      {"ph": "X", "name": "broken", "ts": 1, "dur": 1,, }
    ]})";
  auto t = ParseTraceBuffer(doc, "bad.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->num_events(), 2u);
  EXPECT_EQ(DiagnosticCount(*t, "missing_dur"), 1u);
  EXPECT_EQ(DiagnosticCount(*t, "missing_ph"), 1u);
  EXPECT_EQ(DiagnosticCount(*t, "missing_ts"), 1u);
  EXPECT_EQ(DiagnosticCount(*t, "negative_dur"), 1u);
  EXPECT_EQ(DiagnosticCount(*t, "json_syntax_error"), 1u);
  EXPECT_EQ(t->error_count(), 4u);
}

// A string value followed by ':' ends simdjson's on-demand object iteration
// early without an error when the bytes after the event look like more JSON
// (found by the differential fuzzer: the mmap path, which pads a copy of the
// last event with zeros, saw a syntax error where the buffer path saw only a
// missing ts). Whatever follows the event, it is a syntax error.
TEST(TraceReader, EarlyEndOfAnEventIsASyntaxErrorWhateverFollows) {
  const std::string event =
      R"({"ph": "X", "cat": "cpu_op", "name": "n", "pid": 1, "tid": 1, "ts": "x": "tid": 7, "dur": 5, "cbid": 2})";
  for (const std::string& tail : {std::string("}\n]}\n"), std::string("]}"),
                                  std::string(",\n" + std::string(200, ' ') + "{\"ph\": \"i\", \"ts\": 3}]}")}) {
    const std::string doc =
        "{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"ts\": 1, \"dur\": 1},\n" + event + tail;
    auto t = ParseTraceBuffer(doc, "early.json");
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(DiagnosticCount(*t, "json_syntax_error"), 1u) << tail;
    EXPECT_EQ(DiagnosticCount(*t, "missing_ts"), 0u) << tail;
  }
}

TEST(TraceReader, NothingUsableIsAnError) {
  auto not_json = ParseTraceBuffer("hello", "x.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.status().code(), StatusCode::kParse);
  EXPECT_NE(not_json.status().message().find("x.json: not a Kineto/Chrome trace"), std::string::npos);
  auto all_bad = ParseTraceBuffer(R"({"traceEvents": [{"ts": 1}, 7]})", "y.json");
  ASSERT_FALSE(all_bad.ok());
  EXPECT_NE(all_bad.status().message().find("y.json: no usable event"), std::string::npos);
  EXPECT_EQ(ParseTraceFile(RealFileSystem(), testing::TestTracePath("does_not_exist.json")).status().code(),
            StatusCode::kNotFound);
}

TEST(TraceReader, TruncatedFileKeepsEventsAndMetadata) {
  base::RealFileSystem fs;
  auto gz = fs.ReadFile(testing::TestTracePath("nccl_collectives_a100.json.gz"));
  ASSERT_TRUE(gz.ok());
  auto whole = ParseTraceBuffer(*gz, "whole");
  ASSERT_TRUE(whole.ok());
  // Cutting the gzip stream in half cuts the JSON inside traceEvents.
  std::string cut = gz->substr(0, gz->size() / 2);
  auto t = ParseTraceBuffer(cut, "cut.json.gz");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_GT(t->num_events(), 1000u);
  EXPECT_LT(t->num_events(), whole->num_events());
  EXPECT_EQ(DiagnosticCount(*t, "truncated_input"), 1u);
  EXPECT_EQ(DiagnosticCount(*t, "metadata_unreadable"), 0u);
  EXPECT_EQ(t->device_name(), whole->device_name());
  EXPECT_EQ(t->rank, whole->rank);
}

// Files above one 8 MiB chunk are parsed by several threads: results and
// diagnostic examples must be identical for any thread count, and gzip or
// plain input must not matter.
TEST(TraceReader, DeterministicAcrossThreadsAndCompression) {
  const std::string path = testing::TestTracePath("legacy_2021_resnet50.json.gz");  // 35 MB of JSON
  TraceParseOptions one, two;
  one.threads = 1;
  two.threads = 2;
  auto a = ParseTraceFile(RealFileSystem(), path, one);
  auto b = ParseTraceFile(RealFileSystem(), path, two);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_GT(a->input_bytes, 16u << 20);
  EXPECT_EQ(a->ts_ns, b->ts_ns);
  EXPECT_EQ(a->dur_ns, b->dur_ns);
  EXPECT_EQ(a->correlation, b->correlation);
  ASSERT_EQ(a->num_events(), b->num_events());
  for (size_t i = 0; i < a->num_events(); i += 997)
    EXPECT_EQ(a->event_name(i), b->event_name(i));
  for (size_t d = 0; d < a->diagnostics.size(); ++d) {
    EXPECT_EQ(a->diagnostics[d].count, b->diagnostics[d].count);
    ASSERT_EQ(a->diagnostics[d].examples.size(), b->diagnostics[d].examples.size());
    for (size_t e = 0; e < a->diagnostics[d].examples.size(); ++e) {
      EXPECT_EQ(a->diagnostics[d].examples[e].byte_offset, b->diagnostics[d].examples[e].byte_offset);
    }
  }
  // Sorted by (ts, longer first).
  for (size_t i = 1; i < a->num_events(); ++i) {
    ASSERT_LE(a->ts_ns[i - 1], a->ts_ns[i]);
  }
}

}  // namespace
}  // namespace mfu
