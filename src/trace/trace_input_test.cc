// Trace input robustness (issue #12): truncated gzip named as such, the
// event cap, the progress callback, whitespace and long names in bounded
// memory, permission errors said as such.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mfu/trace.h"
#include "testing/trace_builder.h"
#include "trace/event_parser.h"

namespace mfu {
namespace {

using testing::DiagnosticCount;

std::string Gzip(const std::string& text) {
  return mfu::testing::GzipText(text, 6);
}

std::string Event(const std::string& name, int ts) {
  return "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + name +
         "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(ts) + ", \"dur\": 5}";
}

std::string Doc(const std::vector<std::string>& events, const std::string& gap = "") {
  std::string doc = "{\"traceEvents\": [";
  for (size_t i = 0; i < events.size(); ++i)
    doc += (i > 0 ? "," + gap : "") + events[i];
  return doc + "]}";
}

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// Issue #12: a gzip cut after 43 bytes said "no traceEvents array found in
// 43 bytes"; it is a truncated gzip stream.
TEST(TraceInput, TruncatedGzipIsNamed) {
  const std::string doc = Doc({Event("a", 10), Event("b", 20)});
  const std::string gz = Gzip(doc);
  ASSERT_GT(gz.size(), 43u);
  auto cut = ParseTraceBuffer(gz.substr(0, 12), "cut.json.gz");  // header only: nothing decompressed
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("cut.json.gz: truncated gzip stream"), std::string::npos)
      << cut.status().message();
  const std::string path = WriteTemp("cut.json.gz", gz.substr(0, 12));
  auto file = ParseTraceFile(RealFileSystem(), path);
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("truncated gzip stream"), std::string::npos) << file.status().message();
  // Cut inside the events: the events before the cut are kept, the
  // truncation is counted with the gzip reason.
  auto tail = ParseTraceBuffer(gz.substr(0, gz.size() - 4), "tail.json.gz");
  ASSERT_TRUE(tail.ok()) << tail.status().message();
  EXPECT_EQ(DiagnosticCount(*tail, "truncated_input"), 1u);
}

TEST(TraceInput, MaxEventsCapsEveryPath) {
  const std::string doc = Doc({Event("a", 10), Event("b", 20), Event("c", 30)});
  TraceParseOptions capped;
  capped.max_events = 2;
  auto buffer = ParseTraceBuffer(doc, "three.json", capped);
  ASSERT_FALSE(buffer.ok());
  EXPECT_EQ(buffer.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(buffer.status().message().find("three.json: more than 2 events"), std::string::npos)
      << buffer.status().message();
  const std::string plain = WriteTemp("three.json", doc);  // the mapped path
  auto mapped = ParseTraceFile(RealFileSystem(), plain, capped);
  ASSERT_FALSE(mapped.ok());
  EXPECT_NE(mapped.status().message().find(plain + ": more than 2 events"), std::string::npos);
  auto gz = ParseTraceFile(RealFileSystem(), WriteTemp("three.json.gz", Gzip(doc)), capped);
  ASSERT_FALSE(gz.ok());
  EXPECT_EQ(gz.status().code(), StatusCode::kOutOfRange);
  capped.max_events = 3;  // at the cap: fine
  auto exact = ParseTraceFile(RealFileSystem(), plain, capped);
  ASSERT_TRUE(exact.ok()) << exact.status().message();
  EXPECT_EQ(exact->num_events(), 3u);
}

TEST(TraceInput, ProgressIsReportedAsBytesAdvance) {
  std::vector<std::string> events;
  for (int i = 0; i < 200; ++i)
    events.push_back(Event("op", i * 10));
  const std::string doc = Doc(events, std::string(1000, ' '));
  TraceParseOptions options;
  options.progress_interval_bytes = 4096;
  std::vector<TraceProgress> seen;
  options.progress = [&](const TraceProgress& p) { seen.push_back(p); };
  const std::string path = WriteTemp("progress.json", doc);
  auto t = ParseTraceFile(RealFileSystem(), path, options);
  ASSERT_TRUE(t.ok()) << t.status().message();
  // ~280 KB read 8 MiB at a time (the whole file in one chunk): one report
  // at the end of the chunk, with every event.
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().path, path);
  EXPECT_EQ(seen.back().bytes_read, doc.size());
  EXPECT_EQ(seen.back().total_bytes, doc.size());
  EXPECT_EQ(seen.back().events, 200u);
}

// Whitespace inside traceEvents across many 8 MiB chunks of a gzip stream:
// both events kept, nothing counted.
TEST(TraceInput, GzipWhitespaceAcrossChunks) {
  const std::string doc = Doc({Event("a", 10), Event("b", 20)}, std::string(20u << 20, ' '));
  auto t = ParseTraceBuffer(Gzip(doc), "spaces.json.gz");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->num_events(), 2u);
  EXPECT_EQ(t->error_count(), 0u);
  EXPECT_EQ(t->input_bytes, doc.size());
}

TEST(TraceInput, LongNamesAreCutAndCounted) {
  const std::string name(trace::kMaxNameBytes + 1000, 'k');
  auto t = ParseTraceBuffer(Doc({Event(name, 10), Event("short", 20)}), "long.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->num_events(), 2u);
  EXPECT_EQ(t->event_name(0).size(), trace::kMaxNameBytes);
  EXPECT_EQ(t->event_name(1), "short");
  EXPECT_EQ(DiagnosticCount(*t, "long_name_truncated"), 1u);
}

// Files come from the FileSystem the caller passes (#11): an in-memory job
// directory parses as the disk's would, plain and gzip alike, other files
// ignored; what the file system refuses is refused with its message.
TEST(TraceInput, ReadsThroughTheFileSystemItIsGiven) {
  InMemoryFileSystem fs;
  const std::string plain = Doc({Event("a", 10), Event("b", 20)});
  fs.AddFile("job/rank0.json", plain);
  fs.AddFile("job/rank1.json.gz", Gzip(Doc({Event("c", 30)})));
  fs.AddFile("job/notes.txt", "not a trace");
  auto one = ParseTraceFile(fs, "job/rank0.json");
  auto buffer = ParseTraceBuffer(plain, "job/rank0.json");
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ(one->num_events(), 2u);
  EXPECT_EQ(one->num_events(), buffer->num_events());
  EXPECT_EQ(one->event_name(1), buffer->event_name(1));
  auto set = ParseTraceSet(fs, "job");
  ASSERT_TRUE(set.ok()) << set.status().message();
  ASSERT_EQ(set->size(), 2u);
  EXPECT_EQ((*set)[0].path, "job/rank0.json");
  EXPECT_EQ((*set)[1].path, "job/rank1.json.gz");
  EXPECT_EQ((*set)[1].num_events(), 1u);
  auto text = ReadTraceBytes(fs, "job/rank1.json.gz");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, Doc({Event("c", 30)}));
  auto missing = ParseTraceFile(fs, "job/rank2.json");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ParseTraceSet(fs, "empty").status().code(), StatusCode::kNotFound);
  fs.AddDirectory("nothing");
  EXPECT_EQ(ParseTraceSet(fs, "nothing").status().message(),
            "nothing: no *.json or *.json.gz trace files in this directory");
}

// A FIFO is refused at once (fopen used to block on one with no writer).
TEST(TraceInput, FifoIsNotARegularFile) {
  const std::string fifo = ::testing::TempDir() + "/trace_fifo.json";
  ::unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto t = ParseTraceFile(RealFileSystem(), fifo);
  ::unlink(fifo.c_str());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(t.status().message(), fifo + ": not a regular file (fifo)");
}

// Issue #12: an unreadable directory said "no *.json files".
TEST(TraceInput, UnreadableDirectoryIsPermissionDenied) {
  if (geteuid() == 0)
    GTEST_SKIP() << "root reads any directory (InputsE2e.UnreadableFilesSayPermissionDenied runs the CLI as nobody)";
  const std::string dir = ::testing::TempDir() + "/unreadable_traces";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/rank0.json") << Doc({Event("a", 1)});
  ASSERT_EQ(chmod(dir.c_str(), 0), 0);
  auto set = ParseTraceSet(RealFileSystem(), dir);
  chmod(dir.c_str(), 0755);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(), dir + ": permission denied");
}

}  // namespace
}  // namespace mfu
