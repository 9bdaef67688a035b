// trainer_state.json reader tests. The document is written by hand from
// TrainerState.save_to_json (json.dumps(asdict(state), indent=2,
// sort_keys=True); transformers src/transformers/trainer_callback.py
// @55093b758b33, training-logs.md section 7.3): log_history entries are the on_log
// dicts with "step" added, an eval entry, and the final train_runtime entry
// with total_flos.

#include <gtest/gtest.h>

#include <cmath>

#include "log/log_formats_test_util.h"

namespace mfu {
namespace {

using testing::CountEvents;
using testing::ReadLog;
using testing::TrainSteps;

constexpr char kState[] = R"({
  "best_global_step": null,
  "best_metric": null,
  "best_model_checkpoint": null,
  "epoch": 1.0,
  "eval_steps": 500,
  "global_step": 30,
  "is_hyper_param_search": false,
  "is_local_process_zero": true,
  "is_world_process_zero": true,
  "log_history": [
    {
      "epoch": 0.3333333333333333,
      "grad_norm": 6.847109794616699,
      "learning_rate": 5e-05,
      "loss": 2.5586,
      "num_input_tokens_seen": 1966080,
      "step": 10,
      "train_runtime": 40.0,
      "train_tokens_per_second": 49152.0
    },
    {
      "epoch": 0.6666666666666666,
      "grad_norm": NaN,
      "learning_rate": 3.3e-05,
      "loss": NaN,
      "num_input_tokens_seen": 3932160,
      "step": 20,
      "train_runtime": 70.0,
      "train_tokens_per_second": 56173.7
    },
    {
      "epoch": 0.6666666666666666,
      "eval_loss": 2.25,
      "eval_runtime": 14.81,
      "eval_samples_per_second": 6.752,
      "eval_steps_per_second": 0.844,
      "step": 20
    },
    {
      "epoch": 1.0,
      "grad_norm": 0.8283581137657166,
      "learning_rate": 1.6e-05,
      "loss": 2.3369,
      "num_input_tokens_seen": 5898240,
      "step": 30,
      "train_runtime": 110.0,
      "train_tokens_per_second": 53620.4
    },
    {
      "epoch": 1.0,
      "step": 30,
      "total_flos": 4.783e+15,
      "train_loss": 2.489668021202087,
      "train_runtime": 125.5,
      "train_samples_per_second": 5.641,
      "train_steps_per_second": 0.235
    }
  ],
  "logging_nan_inf_filter": true,
  "logging_steps": 10,
  "max_steps": 30,
  "num_input_tokens_seen": 5898240,
  "num_train_epochs": 1,
  "save_steps": 500,
  "stateful_callbacks": {},
  "total_flos": 4.783e+15,
  "train_batch_size": 8,
  "trial_name": null,
  "trial_params": null
}
)";

TEST(HfTrainerStateParser, LogHistoryEveryField) {
  LogTimeline t = ReadLog(kState);
  EXPECT_EQ(t.format, LogFormat::kHfTrainerState);
  EXPECT_EQ(t.header.train_iters, 30);
  EXPECT_EQ(t.header.log_interval, 10);
  EXPECT_EQ(t.header.micro_batch, 8);
  std::vector<LogStep> steps = TrainSteps(t);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].step, 10);
  EXPECT_DOUBLE_EQ(steps[0].loss, 2.5586);
  EXPECT_DOUBLE_EQ(steps[0].grad_norm, 6.847109794616699);
  EXPECT_DOUBLE_EQ(steps[0].learning_rate, 5e-05);
  EXPECT_DOUBLE_EQ(steps[0].consumed_tokens, 1966080);
  EXPECT_DOUBLE_EQ(steps[0].step_time_s, 4.0);  // 40 s over steps 1-10
  EXPECT_DOUBLE_EQ(steps[0].tokens_per_s, 1966080 / 40.0);
  EXPECT_TRUE(std::isnan(steps[1].loss));  // Python's bare NaN
  EXPECT_TRUE(std::isnan(steps[1].grad_norm));
  EXPECT_DOUBLE_EQ(steps[1].step_time_s, 3.0);  // (70 - 40) / 10
  EXPECT_DOUBLE_EQ(steps[1].tokens_per_s, (3932160 - 1966080) / 30.0);
  EXPECT_EQ(steps[1].steps_covered, 10);
  EXPECT_DOUBLE_EQ(steps[2].step_time_s, 4.0);  // (110 - 70) / 10
  EXPECT_DOUBLE_EQ(steps[2].logged_total_flos, 4.783e15);
  EXPECT_TRUE(std::isnan(steps[1].logged_total_flos));
  ASSERT_EQ(t.steps.size(), 4u);
  EXPECT_TRUE(t.steps[2].validation);
  EXPECT_DOUBLE_EQ(t.steps[2].loss, 2.25);
  EXPECT_EQ(CountEvents(t, LogEventKind::kEvaluation), 1);
  ASSERT_EQ(CountEvents(t, LogEventKind::kJobEnd), 1);
  for (const LogEvent& e : t.events) {
    if (e.kind == LogEventKind::kJobEnd) {
      EXPECT_DOUBLE_EQ(e.duration_s, 125.5);
      EXPECT_EQ(e.step, 30);
      EXPECT_EQ(e.line, 5);  // its position in log_history
    }
  }
}

TEST(HfTrainerStateParser, BadDocumentsAreErrors) {
  LogReadOptions options;
  options.format = LogFormat::kHfTrainerState;
  StatusOr<LogTimeline> t = ReadTrainingLog("{\"log_history\": [ {\"step\": 1, ", "trainer_state.json", options);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("trainer_state.json"), std::string::npos) << t.status().message();
  t = ReadTrainingLog("{\"global_step\": 3}", "state.json", options);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("log_history"), std::string::npos) << t.status().message();
}

}  // namespace
}  // namespace mfu
