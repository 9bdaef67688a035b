// The counting jobs' request checks (issue #12 "zero, negative and NaN read
// as not given"): every numeric field of CalcRequest, MemoryRequest and
// FlopsRequest rejects zero (where 0 is not its documented "not given"),
// negative, NaN and infinite values with a message naming the parameter; and
// the defaults that change the answer come back as notes.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "mfu/calc.h"
#include "mfu/flops.h"
#include "mfu/hwdb.h"
#include "mfu/memory.h"
#include "mfu/model.h"
#include "mfu/result.h"

namespace mfu {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

const ModelSpec& Llama8b() {
  static const ModelSpec spec = *LoadModel(mfu::RealFileSystem(), "llama-3.1-8b");
  return spec;
}

const HardwareDb& Hardware() {
  static const HardwareDb db = *HardwareDb::LoadBuiltin();
  return db;
}

// One bad value of one field, and the parameter the message must name.
struct BadValue {
  const char* param;
  std::function<void(void*)> set;  // applied to the request
  const char* label;
};

std::string Label(const testing::TestParamInfo<BadValue>& info) {
  return info.param.label;
}

// ------------------------------------------------------------------ calc

CalcRequest GoodCalc() {
  CalcRequest r;
  r.model = Llama8b();
  r.gpu = "h100";
  r.throughput.gpus = 8;
  r.throughput.seq_len = 8192;
  r.tokens_per_sec = "40000";
  return r;
}

class CalcRejects : public testing::TestWithParam<BadValue> {};

TEST_P(CalcRejects, NamingTheParameter) {
  CalcRequest r = GoodCalc();
  GetParam().set(&r);
  StatusOr<CalcReport> c = RunCalc(Hardware(), r);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << c.status().message();
  EXPECT_NE(c.status().message().find(std::string("parameter '") + GetParam().param + "'"), std::string::npos)
      << c.status().message();
}

// A step time given as the source (the whole-job throughput removed).
std::function<void(void*)> StepTime(double s) {
  return [s](void* p) {
    auto* r = static_cast<CalcRequest*>(p);
    r->tokens_per_sec.clear();
    r->throughput.global_batch = 64;
    r->throughput.step_time_s = s;
  };
}
std::function<void(void*)> PerGpu(double v) {
  return [v](void* p) {
    auto* r = static_cast<CalcRequest*>(p);
    r->tokens_per_sec.clear();
    r->throughput.tokens_per_s_per_gpu = v;
  };
}
std::function<void(void*)> Tokens(const char* text) {
  return [text](void* p) { static_cast<CalcRequest*>(p)->tokens_per_sec = text; };
}

INSTANTIATE_TEST_SUITE_P(
    Fields, CalcRejects,
    testing::Values(BadValue{"step_time", StepTime(-1), "step_time_negative"},
                    BadValue{"step_time", StepTime(kNan), "step_time_nan"},
                    BadValue{"step_time", StepTime(kInf), "step_time_inf"},
                    BadValue{"tokens_per_sec_per_gpu", PerGpu(-5), "per_gpu_negative"},
                    BadValue{"tokens_per_sec_per_gpu", PerGpu(kNan), "per_gpu_nan"},
                    BadValue{"tokens_per_sec_per_gpu", PerGpu(kInf), "per_gpu_inf"},
                    BadValue{"tokens_per_sec", Tokens("0"), "tokens_zero"},
                    BadValue{"tokens_per_sec", Tokens("-5"), "tokens_negative"},
                    BadValue{"tokens_per_sec", Tokens("nan"), "tokens_nan"},
                    BadValue{"tokens_per_sec", Tokens("inf"), "tokens_inf"},
                    BadValue{"global_batch",
                             [](void* p) {
                               auto* r = static_cast<CalcRequest*>(p);
                               r->tokens_per_sec.clear();
                               r->throughput.step_time_s = 1;
                               r->throughput.global_batch = -64;
                             },
                             "global_batch_negative"},
                    BadValue{"gpus", [](void* p) { static_cast<CalcRequest*>(p)->throughput.gpus = 0; }, "gpus_zero"},
                    BadValue{"gpus", [](void* p) { static_cast<CalcRequest*>(p)->throughput.gpus = -8; },
                             "gpus_negative"}),
    Label);

// 1e12 tokens/s on 8 H100s: 1.25e11 tokens/s per GPU x 6 x 8.03e9 FLOPs per
// token (6N alone, attention aside) = 6.0e21 FLOP/s against a 989 TFLOP/s
// peak: about 6 million percent. A data error (exit 1), naming the cause.
TEST(CalcAbovePeak, IsADataErrorWithTheLikelyCause) {
  CalcRequest r = GoodCalc();
  r.tokens_per_sec = "1e12";
  StatusOr<CalcReport> c = RunCalc(Hardware(), r);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(c.status().message().find("above 100% of the dense bf16 peak"), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find("for the whole job, not per GPU"), std::string::npos);
  EXPECT_NE(c.status().message().find("the model is not the one that ran"), std::string::npos);
  r.tokens_per_sec = "40000";
  StatusOr<CalcReport> ok = RunCalc(Hardware(), r);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_TRUE(ok->notes.empty());
}

// ---------------------------------------------------------------- memory

class MemoryRejects : public testing::TestWithParam<BadValue> {};

TEST_P(MemoryRejects, NamingTheParameter) {
  MemoryRequest r;
  r.model = Llama8b();
  GetParam().set(&r);
  StatusOr<MemoryReport> m = EstimateMemory(r);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument) << m.status().message();
  EXPECT_NE(m.status().message().find(std::string("parameter '") + GetParam().param + "'"), std::string::npos)
      << m.status().message();
}

template <typename T>
std::function<void(void*)> SetMemory(T MemoryRequest::*field, T value) {
  return [field, value](void* p) { static_cast<MemoryRequest*>(p)->*field = value; };
}

INSTANTIATE_TEST_SUITE_P(
    Fields, MemoryRejects,
    testing::Values(
        BadValue{"context", SetMemory(&MemoryRequest::context, int64_t{-1}), "context_negative"},
        BadValue{"gpus", SetMemory(&MemoryRequest::gpus, int64_t{-8}), "gpus_negative"},
        BadValue{"gbs", SetMemory(&MemoryRequest::global_batch, int64_t{-1}), "gbs_negative"},
        BadValue{"micro_batch", SetMemory(&MemoryRequest::micro_batch, int64_t{0}), "micro_batch_zero"},
        BadValue{"micro_batch", SetMemory(&MemoryRequest::micro_batch, int64_t{-2}), "micro_batch_negative"},
        BadValue{"seq_len", SetMemory(&MemoryRequest::seq_len, std::optional<int64_t>(0)), "seq_len_zero"},
        BadValue{"seq_len", SetMemory(&MemoryRequest::seq_len, std::optional<int64_t>(-4096)), "seq_len_negative"},
        BadValue{"tp", SetMemory(&MemoryRequest::tp, int64_t{0}), "tp_zero"},
        BadValue{"tp", SetMemory(&MemoryRequest::tp, int64_t{-2}), "tp_negative"},
        BadValue{"pp", SetMemory(&MemoryRequest::pp, int64_t{0}), "pp_zero"},
        BadValue{"cp", SetMemory(&MemoryRequest::cp, int64_t{-1}), "cp_negative"},
        BadValue{"zero", SetMemory(&MemoryRequest::zero, std::optional<int>(7)), "zero_stage"}),
    Label);

// `mfu memory --model llama-3.1-8b` states its three defaults: the 4096-token
// sequence, the KV context taken from it, Megatron-Core's 18-byte state
// (bf16 weights 2 + fp32 main grads 4 + fp32 master 4 + two fp32 moments 8).
TEST(EstimateMemory, NotesTheDefaultsThatChangeTheAnswer) {
  MemoryRequest r;
  r.model = Llama8b();
  StatusOr<MemoryReport> m = EstimateMemory(r);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->notes.size(), 3u);
  EXPECT_EQ(m->notes[0].code, "default_seq_len");
  EXPECT_NE(m->notes[0].message.find("4096"), std::string::npos);
  EXPECT_EQ(m->notes[1].code, "default_context");
  EXPECT_NE(m->notes[1].message.find("4096 tokens"), std::string::npos);
  EXPECT_EQ(m->notes[2].code, "default_state");
  EXPECT_NE(m->notes[2].message.find("(18 bytes per parameter"), std::string::npos) << m->notes[2].message;
  for (const Note& n : m->notes)
    EXPECT_EQ(n.kind, NoteKind::kAssumption);
  r.seq_len = 8192;
  r.context = 32768;
  r.framework = "deepspeed";  // only echoed: the note is for the default framework
  m = EstimateMemory(r);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(m->notes.empty());
}

// ----------------------------------------------------------------- flops

class FlopsRejects : public testing::TestWithParam<BadValue> {};

TEST_P(FlopsRejects, NamingTheParameter) {
  FlopsRequest r;
  r.model = Llama8b();
  GetParam().set(&r);
  StatusOr<FlopsReport> f = CountFlops(r);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find(std::string("parameter '") + GetParam().param + "'"), std::string::npos)
      << f.status().message();
}

template <typename T>
std::function<void(void*)> SetFlops(T FlopsRequest::*field, T value, const char* inference = "") {
  return [field, value, inference](void* p) {
    auto* r = static_cast<FlopsRequest*>(p);
    r->*field = value;
    r->inference = inference;
  };
}

INSTANTIATE_TEST_SUITE_P(
    Fields, FlopsRejects,
    testing::Values(
        // The issue: `flops --context -1` said "needs --context".
        BadValue{"context", SetFlops(&FlopsRequest::context, int64_t{-1}, "decode"), "context_negative"},
        BadValue{"cached", SetFlops(&FlopsRequest::cached, int64_t{-1}, "prefill"), "cached_negative"},
        BadValue{"batch", SetFlops(&FlopsRequest::batch, int64_t{0}), "batch_zero"},
        BadValue{"batch", SetFlops(&FlopsRequest::batch, int64_t{-1}), "batch_negative"},
        BadValue{"frames", SetFlops(&FlopsRequest::frames, int64_t{-81}), "frames_negative"}),
    Label);

TEST(CountFlops, NotesTheDefaultSequenceLength) {
  FlopsRequest r;
  r.model = Llama8b();
  StatusOr<FlopsReport> f = CountFlops(r);
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->notes.size(), 1u);
  EXPECT_EQ(f->notes[0].code, "default_seq_len");
  EXPECT_EQ(f->notes[0].kind, NoteKind::kAssumption);
  EXPECT_NE(f->notes[0].message.find("4096 tokens"), std::string::npos) << f->notes[0].message;
  r.seq_len = 8192;
  f = CountFlops(r);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->notes.empty());
  // A decode step counts keys by its context: no sequence length taken.
  FlopsRequest d;
  d.model = Llama8b();
  d.inference = "decode";
  d.context = 1024;
  f = CountFlops(d);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_TRUE(f->notes.empty());
}

// The shared bandwidth rule: 1.2 is above the HBM bandwidth, 1.0 is not.
TEST(Notes, BandwidthAbovePeakIsAWarning) {
  std::optional<Note> n = CheckBandwidthPlausible(1.2, "the measured TPOT's MBU", "x");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->code, "mbu_above_peak");
  EXPECT_EQ(n->message,
            "the measured TPOT's MBU 120.0% is above 100% of the HBM bandwidth, which no job reaches: likely x");
  EXPECT_FALSE(CheckBandwidthPlausible(1.0, "MBU", "").has_value());
  EXPECT_TRUE(CheckBandwidthPlausible(kNan, "MBU", "").has_value());
}

}  // namespace
}  // namespace mfu
