// Classifier throughput (target: at least 100 MB/s of log text on one core).
// The log is what a long training run prints: progress lines, NCCL INFO
// chatter, warnings, a checkpoint now and then, and the failure at the end.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/classifier/classifier.h"

namespace {

using ckpt::classify::Classifier;

std::string training_log(size_t bytes) {
  std::string text;
  text.reserve(bytes + 4096);
  for (uint64_t i = 0; text.size() < bytes; ++i) {
    text += "[2026-11-02 03:58:01] rank0: step " + std::to_string(i) +
            " | loss 2.1432 | lr 2.4e-04 | grad_norm 0.912 | tok/s 912344\n";
    if (i % 50 == 0)
      text += "gpu041:22011:22055 [0] NCCL INFO Channel 03/0 : 0[3b000] -> 1[5e000] via P2P/IPC\n";
    if (i % 500 == 0)
      text +=
          "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py:557: UserWarning: "
          "This DataLoader will create 16 worker processes in total.\n";
    if (i % 2000 == 0)
      text += "saving checkpoint to /mnt/ckpt/run7/step_" + std::to_string(i) + "\n";
  }
  text +=
      "Traceback (most recent call last):\n  File \"train.py\", line 142, in main\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n";
  return text;
}

const std::string& log_text() {
  static const std::string text = training_log(size_t{64} << 20);
  return text;
}

void BM_ClassifyText(benchmark::State& state) {
  const Classifier& c = Classifier::builtin();
  for (auto _ : state) benchmark::DoNotOptimize(c.classify_text(log_text()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(log_text().size()));
}
BENCHMARK(BM_ClassifyText)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The whole file, tail first (no early stop: a cause below the top rule
// means reading to the start), from the page cache.
void BM_ClassifyFileWhole(benchmark::State& state) {
  auto path = std::filesystem::temp_directory_path() /
              ("ckpt-classifier-bench-" + std::to_string(getpid()) + ".log");
  std::ofstream(path, std::ios::binary) << log_text();
  const Classifier& c = Classifier::builtin();
  ckpt::classify::ScanOptions options;
  options.stop_when_settled = false;
  for (auto _ : state) benchmark::DoNotOptimize(c.classify_file(path.string(), options));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(log_text().size()));
  std::filesystem::remove(path);
}
BENCHMARK(BM_ClassifyFileWhole)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
