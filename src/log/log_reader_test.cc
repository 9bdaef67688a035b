// The reader: detection by content over every excerpt in tests/data/logs,
// chunked reading (the same timeline for any chunk size), forcing a format,
// JSON documents, errors and bounds.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "log/log_parser.h"
#include "log/log_test_util.h"
#include "mfu/training_log.h"
#include "testing/log_gen.h"

namespace mfu {
namespace {

using log_testing::ExcerptPath;
using log_testing::ExpectSameTimeline;
using log_testing::ReadExcerpt;

struct Excerpt {
  const char* file;
  const char* format;  // the LogFormatId detection must give
};

// Every excerpt and the format it was printed by (tests/data/logs/README.md).
// wt-logfmt's formats read only once their factories are in
// log_internal::MakeLogParser; until then the file must fail with the
// no-steps error rather than be taken for another format.
constexpr Excerpt kExcerpts[] = {
    {"megatron-lm_aws-gpt3-slurm-srun.log", "megatron-lm"},
    {"megatron-lm_t5-draft-notes-2023.log", "megatron-lm"},
    // Only the iteration line, no Step Time line: indistinguishable from
    // Megatron-LM's (Bridge prints the same line, training-logs.md sec. 3.1).
    {"megatron-bridge_mtp-doc-iteration-line.log", "megatron-lm"},
    {"megatron-bridge_golden-values-deepseek-fsdp-gb200.json", "megatron-bridge"},
    {"nemo2_resiliency-demo-notebook.log", "nemo2"},
    {"nemo2_aws-skypilot-ray.log", "nemo2"},
    {"deepspeed_flops-profiler-readme-bert.log", "deepspeed"},
    {"deepspeed_cifar10-tutorial-2020.log", "deepspeed"},
    {"torchtitan_aws-llama3-8b-slurm-ansi.log", "torchtitan"},
    {"torchtitan_aurora-xpu-blendcorpus.log", "torchtitan"},
    {"hf-transformers_aws-esm2-ddp-srun.log", "hf-trainer"},
    {"hf-transformers_ezpz-fsdp-aurora.log", "hf-trainer"},
    {"maxtext_understand-logs-v5p.log", "maxtext"},
    {"maxtext_maxtest-getting-started.log", "maxtext"},
    {"nanogpt_rtx4070tis-shakespeare-char.log", "nanogpt"},
    {"composer_aws-mpt-console.log", "composer"},
    {"llm-foundry_train-readme-console.log", "composer"},
    {"composer_examples-deeplab-old-console.log", "composer"},
    {"picotron_aws-smollm-ec2.log", "picotron"},
};

bool HasReader(const char* id) {
  std::optional<LogFormat> format = ParseLogFormat(id);
  return format && log_internal::MakeLogParser(*format) != nullptr;
}

TEST(LogReader, DetectsEveryExcerpt) {
  RealFileSystem fs;
  for (const Excerpt& e : kExcerpts) {
    StatusOr<LogTimeline> t = ReadTrainingLogFile(fs, ExcerptPath(e.file));
    if (HasReader(e.format)) {
      ASSERT_TRUE(t.ok()) << e.file << ": " << t.status().message();
      EXPECT_STREQ(LogFormatId(t->format), e.format) << e.file;
      EXPECT_FALSE(t->steps.empty()) << e.file;
    } else {
      ASSERT_FALSE(t.ok()) << e.file << " read as " << LogFormatId(t->format) << " but no " << e.format
                           << " reader exists yet";
      EXPECT_NE(t.status().message().find("no training step lines found"), std::string::npos) << e.file;
    }
  }
}

// One line of each wt-logfmt format (from its source's format string, see
// the <framework>_parser_test.cc files) is detected as that format and no
// other, here without the headers that help.
TEST(LogReader, DetectsOneLineOfEachLogfmtFormat) {
  struct OneLine {
    const char* text;
    const char* format;
  };
  const OneLine lines[] = {
      {"[titan] 2026-08-21 10:00:00,123 - root - INFO - step: 10  loss:  2.34567  grad_norm:  1.2345  "
       "memory: 40.12GiB(50.15%)  tps: 12,345  tflops: 456.78  mfu: 46.19%\n",
       "torchtitan"},
      {"{'loss': 2.9859, 'grad_norm': 0.97, 'learning_rate': 4.1e-05, 'epoch': 0.16}\n", "hf-trainer"},
      {"{\n  \"global_step\": 10,\n  \"log_history\": [\n    {\"loss\": 2.5, \"step\": 10}\n  ]\n}\n",
       "hf-trainer-state"},
      {"completed step: 3, seconds: 5.402, TFLOP/s/device: 141.542, Tokens/s/device: 9098.189, total_weights: "
       "196608, loss: 11.379\n",
       "maxtext"},
      {"iter 10: loss 4.1081, time 482.82ms, mfu 9.63%\n", "nanogpt"},
      {"[batch=1/100]:\n\t Train loss/train/total: 10.9736\n", "composer"},
      {"[rank 2] Step: 1     | Loss: 10.9062 | Global batch size:   2.05K | Tokens/s:  199.02 | Tokens/s/GPU:   "
       "24.88 | Tokens:   2.05K | MFU:  0.01% | Memory usage:   1.75GB\n",
       "picotron"},
  };
  for (const OneLine& l : lines) {
    StatusOr<LogTimeline> t = ReadTrainingLog(l.text, "one.log");
    ASSERT_TRUE(t.ok()) << l.format << ": " << t.status().message();
    EXPECT_STREQ(LogFormatId(t->format), l.format);
    EXPECT_EQ(t->steps.size(), 1u) << l.format;
  }
}

TEST(LogReader, SameTimelineForAnyChunkSize) {
  for (const Excerpt& e : kExcerpts) {
    if (!HasReader(e.format))
      continue;
    const std::string text = ReadExcerpt(e.file);
    StatusOr<LogTimeline> whole = ReadTrainingLog(text, e.file);
    ASSERT_TRUE(whole.ok()) << e.file;
    for (size_t chunk : {size_t{1}, size_t{3}, size_t{64}, size_t{1000}}) {
      TrainingLogReader reader(e.file, {});
      for (size_t at = 0; at < text.size(); at += chunk)
        ASSERT_TRUE(reader.Feed(std::string_view(text).substr(at, chunk)).ok());
      StatusOr<LogTimeline> pieces = reader.Finish();
      ASSERT_TRUE(pieces.ok()) << e.file << " chunk " << chunk;
      ExpectSameTimeline(*whole, *pieces, std::string(e.file) + " chunk " + std::to_string(chunk));
    }
  }
}

TEST(LogReader, FileReadInChunksMatchesWholeText) {
  // InMemoryFileSystem uses FileSystem's default ReadFileInChunks; the real
  // one reads 4 MiB at a time. Both must give the in-memory result.
  const std::string name = "nemo2_resiliency-demo-notebook.log";
  const std::string text = ReadExcerpt(name);
  InMemoryFileSystem fs;
  fs.AddFile("logs/run.log", text);
  StatusOr<LogTimeline> from_fs = ReadTrainingLogFile(fs, "logs/run.log");
  ASSERT_TRUE(from_fs.ok());
  StatusOr<LogTimeline> in_memory = ReadTrainingLog(text, "logs/run.log");
  ASSERT_TRUE(in_memory.ok());
  ExpectSameTimeline(*in_memory, *from_fs, name);
  EXPECT_EQ(from_fs->origin, "logs/run.log");
  EXPECT_EQ(from_fs->stats.bytes, static_cast<int64_t>(text.size()));
}

TEST(FileSystemChunks, RealAndInMemoryGiveTheFileInOrder) {
  // FileSystem::ReadFileInChunks (added for the log reader): the pieces
  // concatenate to ReadFile's text, none larger than asked.
  const std::string path = ExcerptPath("torchtitan_aurora-xpu-blendcorpus.log");
  RealFileSystem real;
  const std::string whole = *real.ReadFile(path);
  InMemoryFileSystem memory;
  memory.AddFile("a.log", whole);
  for (uint64_t chunk : {uint64_t{1}, uint64_t{4096}, uint64_t{1} << 22}) {
    std::string joined_real;
    std::string joined_memory;
    ASSERT_TRUE(real.ReadFileInChunks(path, chunk,
                                      [&](std::string_view piece) {
                                        EXPECT_LE(piece.size(), chunk);
                                        joined_real.append(piece);
                                        return Status::Ok();
                                      })
                    .ok());
    ASSERT_TRUE(memory
                    .ReadFileInChunks("a.log", chunk,
                                      [&](std::string_view piece) {
                                        EXPECT_LE(piece.size(), chunk);
                                        joined_memory.append(piece);
                                        return Status::Ok();
                                      })
                    .ok());
    EXPECT_EQ(joined_real, whole);
    EXPECT_EQ(joined_memory, whole);
  }
  // The sink's error stops the read and comes back.
  int calls = 0;
  Status st = real.ReadFileInChunks(path, 100, [&](std::string_view) {
    ++calls;
    return ParseError("stop");
  });
  EXPECT_EQ(st.message(), "stop");
  EXPECT_EQ(calls, 1);
  // Not a regular file, a directory, a missing file: ReadFile's messages.
  auto no_sink = [](std::string_view) { return Status::Ok(); };
  st = real.ReadFileInChunks("/dev/null", 100, no_sink);
  EXPECT_EQ(st.message(), "/dev/null: not a regular file (character device)");
  st = real.ReadFileInChunks(std::string(MFU_SOURCE_DIR) + "/tests", 100, no_sink);
  EXPECT_NE(st.message().find("is a directory, expected a file"), std::string::npos);
  st = real.ReadFileInChunks(ExcerptPath("missing.log"), 100, no_sink);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_EQ(memory.ReadFileInChunks("b.log", 100, no_sink).code(), StatusCode::kNotFound);
}

TEST(LogReader, NoStepsErrorNamesOriginAndFormats) {
  StatusOr<LogTimeline> t = ReadTrainingLog("hello\nworld\n", "job.out");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message().rfind("job.out: no training step lines found (formats tried: ", 0), 0u)
      << t.status().message();
  EXPECT_NE(t.status().message().find("megatron-lm"), std::string::npos);
  EXPECT_NE(t.status().message().find("deepspeed"), std::string::npos);
  // Header lines without a step line: the closest format is named.
  t = ReadTrainingLog("ining-demo/0 [default0]:Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/8\n", "nemo.out");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("; closest: nemo2, header lines but no step line)"), std::string::npos)
      << t.status().message();
  // An empty file, and one of blanks.
  EXPECT_FALSE(ReadTrainingLog("", "empty.log").ok());
  EXPECT_FALSE(ReadTrainingLog("\n\n   \n", "blank.log").ok());
  // A missing file is kNotFound naming it.
  RealFileSystem fs;
  StatusOr<LogTimeline> missing = ReadTrainingLogFile(fs, ExcerptPath("no-such-file.log"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no-such-file.log"), std::string::npos);
}

TEST(LogReader, ForcedFormat) {
  // A Megatron line read as NeMo finds nothing; read as Megatron it does.
  const std::string line =
      " iteration      100/  300000 | consumed samples:         3200 | elapsed time per iteration (ms): 3738.6 |\n";
  LogReadOptions nemo;
  nemo.format = LogFormat::kNemo2;
  StatusOr<LogTimeline> t = ReadTrainingLog(line, "x.log", nemo);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("formats tried: nemo2)"), std::string::npos) << t.status().message();
  LogReadOptions megatron;
  megatron.format = LogFormat::kMegatronLm;
  t = ReadTrainingLog(line, "x.log", megatron);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->format, LogFormat::kMegatronLm);
  EXPECT_EQ(t->steps.at(0).step, 100);
  // The Bridge reader reads Megatron's line too (its own iteration line).
  LogReadOptions bridge;
  bridge.format = LogFormat::kMegatronBridge;
  t = ReadTrainingLog(line, "x.log", bridge);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->format, LogFormat::kMegatronBridge);
}

TEST(LogReader, MaxStepsIsOutOfRange) {
  std::string text;
  for (int i = 1; i <= 10; ++i)
    text += " iteration " + std::to_string(i) + "/ 100 | elapsed time per iteration (ms): 10.0 |\n";
  LogReadOptions options;
  options.max_steps = 5;
  StatusOr<LogTimeline> t = ReadTrainingLog(text, "big.log", options);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(t.status().message().rfind("big.log: ", 0), 0u) << t.status().message();
}

TEST(LogReader, StepsAfterALongPreambleAreKept) {
  // More than the detection window (200,000 lines) of noise, then steps:
  // none of them is lost.
  std::string text;
  for (int i = 0; i < 200'100; ++i)
    text += "noise\n";
  for (int i = 1; i <= 3; ++i)
    text += " iteration " + std::to_string(i) + "/ 100 | elapsed time per iteration (ms): 10.0 |\n";
  StatusOr<LogTimeline> t = ReadTrainingLog(text, "late.log");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->steps.size(), 3u);
  EXPECT_EQ(t->steps[0].line, 200'101);
}

TEST(LogReader, LongLineWithoutNewlineIsBounded) {
  // 3 MiB without a newline after a real step: read, the long line cut
  // and counted, no error.
  std::string text = " iteration 1/ 10 | elapsed time per iteration (ms): 10.0 |\n";
  text += std::string(size_t{3} << 20, 'x');
  StatusOr<LogTimeline> t = ReadTrainingLog(text, "long.log");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->steps.size(), 1u);
  EXPECT_EQ(t->stats.partial_lines, 1);
  EXPECT_EQ(t->stats.lines, 2);
}

TEST(LogReader, BinaryGarbageIsNotAStep) {
  std::string text;
  for (int i = 0; i < 4096; ++i)
    text.push_back(static_cast<char>((i * 7919) % 256));
  StatusOr<LogTimeline> t = ReadTrainingLog(text, "garbage.bin");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
}

TEST(LogReader, JsonDocumentNotKnownIsReadAsLines) {
  // A JSON object no whole-document reader claims falls back to lines,
  // which hold no step here.
  StatusOr<LogTimeline> t = ReadTrainingLog("{\n  \"a\": 1\n}\n", "x.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("no training step lines"), std::string::npos);
  // Malformed JSON forced as Bridge's document: a parse error naming the file.
  LogReadOptions bridge;
  bridge.format = LogFormat::kMegatronBridge;
  t = ReadTrainingLog("{\n  \"0\": {\"lm loss\": 1.0,\n", "golden.json", bridge);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message().rfind("golden.json: ", 0), 0u) << t.status().message();
}

TEST(LogReader, LargeInputStartingLikeJsonIsReadAsLines) {
  // Over the 64 MiB document bound: a JSONL-like file is read as lines, the
  // same in one piece or in chunks; forced as a whole-document format it is
  // an error.
  const std::string record = "{\"loss\": 1.0, \"step\": 1}\n";
  std::string text;
  text.reserve((size_t{65} << 20) + 200);
  while (text.size() <= (size_t{64} << 20))
    text += record;
  text += " iteration 7/ 10 | elapsed time per iteration (ms): 10.0 |\n";
  StatusOr<LogTimeline> whole = ReadTrainingLog(text, "big.jsonl");
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  ASSERT_EQ(whole->steps.size(), 1u);
  EXPECT_EQ(whole->steps[0].step, 7);
  TrainingLogReader reader("big.jsonl", {});
  for (size_t at = 0; at < text.size(); at += size_t{3} << 20)
    ASSERT_TRUE(reader.Feed(std::string_view(text).substr(at, size_t{3} << 20)).ok());
  StatusOr<LogTimeline> pieces = reader.Finish();
  ASSERT_TRUE(pieces.ok());
  ExpectSameTimeline(*whole, *pieces, "big.jsonl");
  LogReadOptions bridge;
  bridge.format = LogFormat::kMegatronBridge;
  StatusOr<LogTimeline> forced = ReadTrainingLog(text, "big.json", bridge);
  ASSERT_FALSE(forced.ok());
  EXPECT_EQ(forced.status().message(), "big.json: JSON document larger than 64 MiB");
}

TEST(LogReader, FailureLinesBecomeEvents) {
  const std::string text =
      " iteration        1/     100 | elapsed time per iteration (ms): 1000.0 |\n"
      "[rank3]:[E ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.\n"
      "Traceback (most recent call last):\n"
      "0: Traceback (most recent call last):\n"
      "Killed\n";
  StatusOr<LogTimeline> t = ReadTrainingLog(text, "fail.log");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->events.size(), 3u);  // the second traceback is another rank's copy
  for (const LogEvent& e : t->events)
    EXPECT_EQ(e.kind, LogEventKind::kFailure);
  EXPECT_EQ(t->events[0].line, 2);
  EXPECT_EQ(t->events[1].detail, "Traceback (most recent call last):");
  EXPECT_EQ(t->events[2].detail, "Killed");
}

TEST(LogReader, GeneratedMultiNodeLog) {
  // The benchmark's log (src/testing/log_gen.h): every 25th line an
  // iteration line on the last node ("3:"), NCCL/logging/tqdm noise from
  // all four nodes between. Every step is read, none twice, no restart.
  testing::LogGenOptions options;
  options.lines = 5000;
  testing::LogGenSummary summary;
  const std::string text = testing::GenerateMixedLogText(options, &summary);
  EXPECT_EQ(summary.steps, 200);
  EXPECT_EQ(summary.bytes, static_cast<int64_t>(text.size()));
  StatusOr<LogTimeline> t = ReadTrainingLog(text, "gen.log");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, LogFormat::kMegatronLm);
  ASSERT_EQ(static_cast<int64_t>(t->steps.size()), summary.steps);
  EXPECT_EQ(t->attempts, 1);
  EXPECT_EQ(t->stats.lines, 5000);
  EXPECT_EQ(t->stats.chosen_rank, "3:");
  EXPECT_EQ(t->stats.partial_lines, 0);
  for (size_t i = 0; i < t->steps.size(); ++i) {
    EXPECT_EQ(t->steps[i].step, static_cast<int64_t>(i) + 1);
    EXPECT_DOUBLE_EQ(t->steps[i].step_time_s, summary.step_time_s);
    EXPECT_DOUBLE_EQ(t->steps[i].logged_tflops_per_gpu, summary.tflops_per_gpu);
  }
  EXPECT_TRUE(t->events.empty());
}

}  // namespace
}  // namespace mfu
