// Stitcher throughput in events per second on one core (target: >= 2 M/s),
// on a stream shaped like a real save: per thread, a CPU window, then writes
// and the occasional fsync/close on checkpoint files, plus non-checkpoint I/O.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "stitch/stitcher.h"

namespace ckpt {
namespace {

class NoMaxima : public MaximaProvider {
 public:
  StageMax storage(Direction, const std::vector<FileId>&) override { return {}; }
  StageMax serialize(size_t /*threads*/) override { return {}; }
  StageMax transport(const std::string&) override { return {}; }
};

std::vector<Event> make_stream(size_t n) {
  std::vector<Event> events;
  events.reserve(n);
  uint64_t t = 1'000'000'000;
  for (size_t i = 0; i < n; ++i) {
    t += 2000;
    const uint32_t tid = 100 + static_cast<uint32_t>(i % 8);
    if (i % 16 == 15) {
      events.emplace_back(CpuEvent{t - 1500, t, 100, tid, 1000});
      continue;
    }
    IoEvent e;
    e.tgid = 100;
    e.tid = tid;
    e.start_ns = t - 1000;
    e.end_ns = t;
    e.cpu_window_start_ns = t - 1800;
    e.cpu_ns = 600;
    const uint64_t shard = i % 64;
    e.file = FileId{42, 1000 + shard};
    e.path = "/nfs/run/checkpoint-7/shard-" + std::to_string(shard) + ".pt";
    if (i % 97 == 0) {
      e.file = FileId{42, 5};
      e.path = "/nfs/run/train.log";
    }
    e.op = i % 200 == 0 ? IoOp::Fsync : IoOp::Write;
    e.ret = e.op == IoOp::Write ? 4096 : 0;
    events.emplace_back(std::move(e));
  }
  return events;
}

void BM_StitchSave(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  const std::vector<Event> stream = make_stream(n);
  Config config = Config::defaults();
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<Event> copy = stream;
    Stitcher s(config, std::make_shared<NoMaxima>(), StageAvailability{true, true});
    state.ResumeTiming();
    for (auto& e : copy) s.on_event(std::move(e));
    s.finish();
    benchmark::DoNotOptimize(s.take_checkpoints());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(BM_StitchSave)->Arg(1 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ckpt

BENCHMARK_MAIN();
