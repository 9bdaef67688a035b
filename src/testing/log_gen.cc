// The mixed training log of log_gen.h: line shapes copied from real logs
// (tests/data/logs: the srun prefix of megatron-lm_aws-gpt3-slurm-srun.log,
// the NCCL INFO lines of fsdp_aws-slurm-examples.log, torchtitan's logging
// format from torchtitan/tools/logging.py L20-22 @b5bcd76).

#include "testing/log_gen.h"

#include <fmt/format.h>

#include <cinttypes>

namespace mfu::testing {
namespace {

// SplitMix64: small, deterministic, good enough for choosing noise.
struct Rng {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint32_t Below(uint32_t n) { return static_cast<uint32_t>(Next() % n); }
};

// 2026-01-16 07:32:24 UTC as the first step's time.
constexpr int64_t kStartEpochS = 1768548744;

void Timestamp(std::string& out, int64_t epoch_s, int micros) {
  const int64_t days = epoch_s / 86400;
  const int64_t secs = epoch_s % 86400;
  // civil_from_days (H. Hinnant).
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  fmt::format_to(std::back_inserter(out), "{:04}-{:02}-{:02} {:02}:{:02}:{:02}", y, m, d, secs / 3600, (secs / 60) % 60,
                 secs % 60);
  if (micros >= 0)
    fmt::format_to(std::back_inserter(out), ".{:06}", micros);
}

void IterationLine(std::string& out, int node, int64_t step, int64_t train_iters, int64_t epoch_s, Rng& rng) {
  fmt::format_to(std::back_inserter(out), "{}:  [", node);
  Timestamp(out, epoch_s, static_cast<int>(rng.Below(1000000)));
  fmt::format_to(std::back_inserter(out),
                 "] iteration {:8d}/{:8d} | consumed samples: {:12d} | elapsed time per iteration (ms): 1234.5 |"
                 " throughput per GPU (TFLOP/s/GPU): 456.7 | energy per GPU (J/iter/GPU): 864.2 |"
                 " power per GPU (W/GPU): 700.1 | learning rate: {:.6E} | global batch size:  1024 |"
                 " lm loss: {:.6E} | loss scale: 1.0 | grad norm: {:.3f} | number of skipped iterations:   0 |"
                 " number of nan iterations:   0 |\n",
                 step, train_iters, step * 1024, 3e-4 * static_cast<double>(rng.Below(1000)) / 1000.0,
                 2.0 + static_cast<double>(rng.Below(100000)) / 10000.0, static_cast<double>(rng.Below(5000)) / 1000.0);
}

void NoiseLine(std::string& out, int nodes, int ranks_per_node, int64_t epoch_s, Rng& rng) {
  const int node = static_cast<int>(rng.Below(static_cast<uint32_t>(nodes)));
  const int rank = static_cast<int>(rng.Below(static_cast<uint32_t>(ranks_per_node)));
  switch (rng.Below(8)) {
    case 0:
    case 1:
    case 2:
      fmt::format_to(std::back_inserter(out),
                     "{}: node-{}:{}:{} [{}] NCCL INFO Channel {:02}/0 : {}[{}] -> {}[{}] via P2P/IPC/read\n", node,
                     node, 41000 + rank, 41200 + rank, rank, rng.Below(32), rank, rank, (rank + 1) % ranks_per_node,
                     (rank + 1) % ranks_per_node);
      break;
    case 3:
      fmt::format_to(std::back_inserter(out), "{}: [titan] ", node);
      Timestamp(out, epoch_s, -1);
      fmt::format_to(std::back_inserter(out), ",{:03} - root - INFO - Dataloader worker {} prefetched {} samples\n",
                     rng.Below(1000), rank, rng.Below(4096));
      break;
    case 4:
      fmt::format_to(std::back_inserter(out), "{}: [", node);
      Timestamp(out, epoch_s, -1);
      fmt::format_to(std::back_inserter(out),
                     ",{:03}] [INFO] [logging.py:96:log_dist] [Rank {}] (after {} iterations) memory (MB) | "
                     "allocated: {:.1f} | max allocated: {:.1f} | reserved: {} | max reserved: {}\n",
                     rng.Below(1000), node * ranks_per_node + rank, rng.Below(100000), 20000.0 + rng.Below(10000),
                     40000.0 + rng.Below(10000), 60000 + rng.Below(100), 60000 + rng.Below(100));
      break;
    case 5:
      fmt::format_to(std::back_inserter(out),
                     "{}: /usr/lib/python3/dist-packages/torch/utils/checkpoint.py:{}: UserWarning: "
                     "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.\n",
                     node, 400 + rng.Below(100));
      break;
    case 6: {
      // tqdm redraws: two bars on one physical line, separated by \r.
      const uint32_t done = rng.Below(999);
      for (uint32_t k = 0; k < 2; ++k) {
        const uint32_t n = done + k;
        fmt::format_to(std::back_inserter(out), "{}{}: {:3d}%|{:<10}| {}/1000 [00:{:02}<01:{:02}, {:.2f}it/s]",
                       k == 0 ? "" : "\r", node, n / 10, std::string(n / 100, '#'), n, rng.Below(60), rng.Below(60),
                       1.0 + rng.Below(100) / 10.0);
      }
      out.push_back('\n');
      break;
    }
    default:
      fmt::format_to(std::back_inserter(out),
                     "{}: node-{}:{}:{} [{}] NCCL INFO comm 0x{:x} rank {} nranks {} cudaDev {} busId {:x}0 "
                     "commId 0x{:x} - Init COMPLETE\n",
                     node, node, 41000 + rank, 41200 + rank, rank, rng.Next() & 0xffffffffffULL,
                     node * ranks_per_node + rank, nodes * ranks_per_node, rank, 0x18 + rank, rng.Next());
      break;
  }
}

}  // namespace

LogGenSummary GenerateMixedLog(const LogGenOptions& options, const std::function<void(std::string_view)>& sink) {
  LogGenSummary summary;
  summary.step_time_s = 1.2345;
  summary.tflops_per_gpu = 456.7;
  Rng rng{options.seed};
  std::string buffer;
  buffer.reserve(size_t{1} << 21);
  const int64_t per_step = options.lines_per_step > 0 ? options.lines_per_step : 1;
  const int64_t train_iters = options.lines / per_step + 1;
  const int nodes = options.nodes > 0 ? options.nodes : 1;
  const int ranks = options.ranks_per_node > 0 ? options.ranks_per_node : 1;
  for (int64_t i = 0; i < options.lines; ++i) {
    const int64_t epoch_s = kStartEpochS + i / per_step;
    if (i % per_step == per_step - 1) {
      ++summary.steps;
      IterationLine(buffer, nodes - 1, summary.steps, train_iters, kStartEpochS + summary.steps, rng);
    } else {
      NoiseLine(buffer, nodes, ranks, epoch_s, rng);
    }
    if (buffer.size() >= (size_t{1} << 20)) {
      summary.bytes += static_cast<int64_t>(buffer.size());
      sink(buffer);
      buffer.clear();
    }
  }
  summary.bytes += static_cast<int64_t>(buffer.size());
  if (!buffer.empty())
    sink(buffer);
  summary.lines = options.lines;
  return summary;
}

std::string GenerateMixedLogText(const LogGenOptions& options, LogGenSummary* summary) {
  std::string out;
  LogGenSummary s = GenerateMixedLog(options, [&](std::string_view piece) { out.append(piece); });
  if (summary != nullptr)
    *summary = s;
  return out;
}

}  // namespace mfu::testing
