// The structural scanner: event spans and metadata must not depend on how the
// input is chunked, and strings (escaped quotes, braces, backslash runs) must
// never be mistaken for structure.

#include "trace/scanner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace mfu::trace {
namespace {

struct ScanResult {
  std::vector<std::string> events;
  std::string metadata;
  uint64_t not_objects = 0;
  uint64_t too_large = 0;
  bool finished = false;
  size_t most_kept = 0;  // the largest carry-over between chunks
};

uint64_t Count(const DiagnosticCounter& d, const char* name) {
  for (const auto& x : d.Finish()) {
    if (std::string(x.name) == name)
      return x.count;
  }
  return 0;
}

// Feeds `doc` in chunks of `chunk` bytes, keeping bytes from KeepFrom() as the
// reader does.
ScanResult Scan(const std::string& doc, size_t chunk, uint64_t max_event_bytes = TraceScanner::kMaxEventBytes) {
  TraceScanner scanner(max_event_bytes);
  DiagnosticCounter diagnostics;
  ScanResult r;
  std::string buffer;
  uint64_t base = 0;
  for (size_t at = 0; at < doc.size(); at += chunk) {
    buffer += doc.substr(at, chunk);
    std::vector<EventSpan> spans;
    scanner.Scan(buffer.data(), base, buffer.size(), spans, diagnostics);
    for (const auto& s : spans)
      r.events.push_back(doc.substr(s.offset, s.length));
    const uint64_t keep = scanner.KeepFrom();
    buffer.erase(0, keep - base);
    base = keep;
    r.most_kept = std::max(r.most_kept, buffer.size());
  }
  r.metadata = scanner.metadata_json();
  r.not_objects = Count(diagnostics, "event_not_object");
  r.too_large = Count(diagnostics, "event_too_large");
  r.finished = scanner.finished();
  return r;
}

const std::string kEvent1 = R"({"ph": "X", "name": "a \"quoted\" {brace} [x]", "ts": 1, "dur": 2})";
const std::string kEvent2 = R"({"ph": "X", "name": "back\\\\", "args": {"Input Dims": [[1, 2], []]}, "ts": 3})";

TEST(Scanner, SpansAndMetadataIndependentOfChunking) {
  const std::string doc = std::string(R"({"schemaVersion": 1, "deviceProperties": [{"name": "H100"}],)") +
                          "\n\"traceEvents\": [\n  " + kEvent1 + ",\n  " + kEvent2 + "\n],\n" +
                          R"("baseTimeNanoseconds": 1000, "traceName": "x"})";
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{64}, size_t{100}, doc.size()}) {
    ScanResult r = Scan(doc, chunk);
    ASSERT_EQ(r.events.size(), 2u) << "chunk " << chunk;
    EXPECT_EQ(r.events[0], kEvent1);
    EXPECT_EQ(r.events[1], kEvent2);
    EXPECT_EQ(r.metadata, R"({"schemaVersion": 1, "deviceProperties": [{"name": "H100"}],)"
                          "\n\"traceEvents\": [],\n"
                          R"("baseTimeNanoseconds": 1000, "traceName": "x"})");
    EXPECT_TRUE(r.finished);
    EXPECT_EQ(r.not_objects, 0u);
  }
}

TEST(Scanner, BackslashRunsAcrossSimdBlocks) {
  // Long strings force the 64-byte block path; an even run of backslashes
  // before a quote ends the string, an odd run escapes it.
  std::string name(70, 'x');
  name += std::string(8, '\\') + "\\\"" + std::string(61, 'y');
  const std::string event = "{\"name\": \"" + name + "\", \"ph\": \"X\"}";
  std::string doc = "{\"traceEvents\": [" + event + ", " + event + "]}";
  for (size_t chunk : {size_t{3}, size_t{64}, size_t{4096}}) {
    ScanResult r = Scan(doc, chunk);
    ASSERT_EQ(r.events.size(), 2u) << chunk;
    EXPECT_EQ(r.events[1], event);
  }
}

TEST(Scanner, BareArrayFormat) {
  ScanResult r = Scan("[" + kEvent1 + "," + kEvent2 + "]", 5);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.metadata, R"({"traceEvents":[]})");
  EXPECT_TRUE(r.finished);
}

TEST(Scanner, NonObjectElementsAreCountedOnce) {
  std::string many;
  for (int i = 0; i < 40; ++i)
    many += kEvent1 + R"(, 3, "s t", null, [1, [2]], )";
  const std::string doc = "{\"traceEvents\": [" + many + kEvent2 + "]}";
  for (size_t chunk : {size_t{1}, size_t{13}, size_t{64}, doc.size()}) {
    ScanResult r = Scan(doc, chunk);
    EXPECT_EQ(r.events.size(), 41u) << chunk;
    EXPECT_EQ(r.not_objects, 160u) << chunk;  // 4 stray elements x 40
  }
}

TEST(Scanner, TruncatedInsideEvents) {
  const std::string doc = "{\"deviceProperties\": [], \"traceEvents\": [" + kEvent1 + ", {\"ph\": \"X\", \"na";
  ScanResult r = Scan(doc, 16);
  EXPECT_EQ(r.events.size(), 1u);
  EXPECT_FALSE(r.finished);
  EXPECT_EQ(r.metadata, "{\"deviceProperties\": [], \"traceEvents\": []");
}

// Issue #12: gigabytes of whitespace inside traceEvents were all carried over
// from chunk to chunk (quadratic time, memory = the whitespace). The gap
// between events is now checked as it streams by: nothing of it is kept.
TEST(Scanner, WhitespaceBetweenEventsIsNotKept) {
  const std::string gap(1 << 20, ' ');
  const std::string doc = "{\"traceEvents\": [" + kEvent1 + "," + gap + "\n\t," + gap + kEvent2 + gap + "]}";
  for (size_t chunk : {size_t{4096}, size_t{65536}}) {
    ScanResult r = Scan(doc, chunk);
    ASSERT_EQ(r.events.size(), 2u) << chunk;
    EXPECT_EQ(r.events[1], kEvent2);
    EXPECT_TRUE(r.finished);
    EXPECT_EQ(r.not_objects, 0u);
    // At most an event and a chunk (the old carry-over was the whole gap).
    EXPECT_LE(r.most_kept, chunk + kEvent2.size()) << chunk;
  }
}

// Stray elements inside a long gap are still counted once each when the gap
// is checked chunk by chunk (a token or string cut by a chunk boundary).
TEST(Scanner, StrayElementsInLongGapCountedOnce) {
  const std::string gap(5000, ' ');
  const std::string doc =
      "{\"traceEvents\": [" + kEvent1 + "," + gap + "12345" + gap + "\"a, b\"" + gap + ", null" + gap + kEvent2 + "]}";
  for (size_t chunk : {size_t{1}, size_t{3}, size_t{64}, size_t{1000}}) {
    ScanResult r = Scan(doc, chunk);
    EXPECT_EQ(r.events.size(), 2u) << chunk;
    EXPECT_EQ(r.not_objects, 3u) << chunk;
    EXPECT_LE(r.most_kept, chunk + kEvent2.size()) << chunk;
  }
}

// An event past the cap is skipped and counted, and its bytes are not kept
// (a 100 MB kernel name must not be carried in memory).
TEST(Scanner, OversizedEventIsSkippedAndCounted) {
  const std::string big = "{\"ph\": \"X\", \"name\": \"" + std::string(20000, 'k') + "\", \"ts\": 1}";
  const std::string doc = "{\"traceEvents\": [" + kEvent1 + ", " + big + ", " + kEvent2 + "]}";
  for (size_t chunk : {size_t{64}, size_t{1000}}) {
    ScanResult r = Scan(doc, chunk, /*max_event_bytes=*/4096);
    ASSERT_EQ(r.events.size(), 2u) << chunk;
    EXPECT_EQ(r.events[0], kEvent1);
    EXPECT_EQ(r.events[1], kEvent2);
    EXPECT_EQ(r.too_large, 1u);
    EXPECT_TRUE(r.finished);
    EXPECT_LE(r.most_kept, 4096 + chunk) << chunk;
  }
  // Under the cap it is kept whole.
  ScanResult r = Scan(doc, 1000, /*max_event_bytes=*/big.size());
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[1], big);
  EXPECT_EQ(r.too_large, 0u);
}

}  // namespace
}  // namespace mfu::trace
