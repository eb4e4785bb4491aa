// The end-of-run accounting's sums: each exited thread's own counters, less
// what it had moved before the trace began, against the trace's figures.
#include "stitch/io_accounting.h"

#include <gtest/gtest.h>

namespace ckpt {
namespace {

ProcEvent exit_of(uint32_t tid, uint64_t read, uint64_t written, uint64_t cancelled,
                  ProcEvent::Kind kind = ProcEvent::Kind::ThreadExit) {
  ProcEvent ev;
  ev.kind = kind;
  ev.tgid = 100;
  ev.tid = tid;
  ev.thread_io = ProcEvent::ThreadIo{read, written, cancelled};
  return ev;
}

CheckpointRecord save_of(std::vector<uint64_t> written) {
  CheckpointRecord c;
  for (uint64_t w : written) {
    FileIoRecord f;
    f.bytes_written = w;
    c.file_io.push_back(f);
  }
  return c;
}

TEST(IoAccountingTest, SumsEachThreadsOwnCountersLessItsBaselineAndWhatWasDropped) {
  IoAccounting a;
  a.baseline(101, ProcEvent::ThreadIo{1000, 5 << 20, 0});  // running before attach
  a.on_exit(exit_of(101, 1000 + 4096, (5 << 20) + (8 << 20), 0));
  a.on_exit(exit_of(102, 0, 3 << 20, 1 << 20));  // 1 MiB dirtied, then truncated away
  a.on_exit(exit_of(100, 0, 0, 0, ProcEvent::Kind::Exit));
  ProcEvent fork;
  fork.kind = ProcEvent::Kind::Fork;
  a.on_exit(fork);  // not an exit: nothing
  ProcEvent bare = exit_of(103, 0, 0, 0);
  bare.thread_io.reset();  // a kernel without the counters
  a.on_exit(bare);
  EXPECT_EQ(a.threads_without_counters(), 1u);

  const std::vector<CheckpointRecord> cps = {save_of({8 << 20, 0}), save_of({1 << 20})};
  auto r = a.record(cps, IoAccounting::OutsideCheckpoints{1 << 20, 2, 16 << 20}, 0, 4096);
  EXPECT_EQ(r.threads, 3u);
  EXPECT_EQ(r.kernel_read_bytes, 4096u);
  EXPECT_EQ(r.kernel_written_bytes, (8u << 20) + (2u << 20));
  EXPECT_EQ(r.traced_written_bytes, (8u << 20) + (1u << 20) + (1u << 20));
  EXPECT_EQ(r.files_written, 2u + 2u);
  EXPECT_EQ(r.unseen_written_bytes(), 0u);
  EXPECT_EQ(r.allowance_bytes(), (16u << 20) + 2u * 4096u * 4u);
  EXPECT_FALSE(r.notice());
}

TEST(IoAccountingTest, AMissAboveTheSlackIsANoticeUnlessTheJobStillRuns) {
  IoAccounting a;
  a.on_exit(exit_of(101, 0, 100 << 20, 0));
  auto r =
      a.record({save_of({10 << 20})}, IoAccounting::OutsideCheckpoints{0, 0, 16 << 20}, 0, 4096);
  EXPECT_EQ(r.unseen_written_bytes(), 90u << 20);
  EXPECT_TRUE(r.notice());
  // Just under the slack: the kernel's pages and the notice threshold.
  auto within = a.record({save_of({(100u << 20) - (16u << 20) - 2 * 4096})},
                         IoAccounting::OutsideCheckpoints{0, 0, 16 << 20}, 0, 4096);
  EXPECT_FALSE(within.notice());
  auto running =
      a.record({save_of({10 << 20})}, IoAccounting::OutsideCheckpoints{0, 0, 16 << 20}, 2, 4096);
  EXPECT_FALSE(running.notice()) << "threads still running are not in the sums";
  // The trace saw more than the kernel counted (reflinks, O_DIRECT on a file
  // system that does not count it): nothing unseen.
  auto more =
      a.record({save_of({200 << 20})}, IoAccounting::OutsideCheckpoints{0, 0, 16 << 20}, 0, 4096);
  EXPECT_EQ(more.unseen_written_bytes(), 0u);
  EXPECT_FALSE(IoAccounting().record({}, {}, 0, 4096).notice()) << "no thread counted";
}

}  // namespace
}  // namespace ckpt
