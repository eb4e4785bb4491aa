#include "calibrate/memory_bench.h"

#include <sched.h>

#include <algorithm>
#include <atomic>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt {
namespace {

using ::testing::HasSubstr;

MemoryBenchOptions small() {
  MemoryBenchOptions o;
  o.bytes = 8ull << 20;
  o.rounds = 3;
  o.threads = 2;
  return o;
}

TEST(MemoryBench, CopiesWithOneThreadAndWithAllAndKeepsTheBestRound) {
  auto r = measure_memory_copy(small());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->threads, 2u);
  EXPECT_EQ(r->bytes, 8ull << 20);
  EXPECT_EQ(r->rounds, 3u);
  ASSERT_EQ(r->one_thread_rounds.size(), 3u);
  ASSERT_EQ(r->all_threads_rounds.size(), 3u);
  for (double v : r->one_thread_rounds) EXPECT_GT(v, 0);
  EXPECT_EQ(r->one_thread_Bps,
            *std::max_element(r->one_thread_rounds.begin(), r->one_thread_rounds.end()));
  EXPECT_EQ(r->all_threads_Bps,
            *std::max_element(r->all_threads_rounds.begin(), r->all_threads_rounds.end()));
}

TEST(MemoryBench, ByDefaultEveryCpuItMayRunOnCopies) {
  auto o = small();
  o.threads = 0;
  o.rounds = 1;
  auto r = measure_memory_copy(o);
  ASSERT_TRUE(r) << r.error().message;
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(r->threads, static_cast<unsigned>(CPU_COUNT(&set)));
}

TEST(MemoryBench, BytesNotAWholePageAreRoundedUp) {
  auto o = small();
  o.bytes = (2ull << 20) + 1;
  auto r = measure_memory_copy(o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->bytes, (2ull << 20) + 4096);
}

TEST(MemoryBench, BadOptionsAreRefusedNamingWhatIsWrong) {
  auto o = small();
  o.bytes = 4096;
  auto r = measure_memory_copy(o);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("at least 1 MiB"));
  o = small();
  o.rounds = 0;
  r = measure_memory_copy(o);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("0 rounds: from 1 to 100"));
  o = small();
  o.threads = 5000;
  r = measure_memory_copy(o);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("5000 threads: at most 4096"));
}

TEST(MemoryBench, RefusedWhenTheBuffersWouldTakeOverHalfOfWhatIsAvailable) {
  auto o = small();  // 8 MiB: 16 MiB of buffers
  o.available_bytes = []() -> Expected<uint64_t> { return (32ull << 20) - 1; };
  auto r = measure_memory_copy(o);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("needs 16 MiB"));
  EXPECT_THAT(r.error().message, HasSubstr("give fewer bytes"));
  o.available_bytes = []() -> Expected<uint64_t> { return 32ull << 20; };
  EXPECT_TRUE(measure_memory_copy(o));
  o.available_bytes = []() -> Expected<uint64_t> { return make_error("no meminfo here"); };
  r = measure_memory_copy(o);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("no meminfo here"));
}

TEST(MemoryBench, AStopRequestEndsItWithAnError) {
  std::atomic<bool> stop{true};
  auto o = small();
  o.stop = &stop;
  auto r = measure_memory_copy(o);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("stopped"));
}

TEST(MemoryBench, TheKernelSaysWhatIsAvailable) {
  auto a = meminfo_available_bytes();
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_GT(*a, 0u);
}

}  // namespace
}  // namespace ckpt
