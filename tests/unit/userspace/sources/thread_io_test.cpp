// /proc/PID/task/TID/io, as the kernel writes it (fs/proc/base.c
// do_io_accounting), and our own threads read live.
#include "sources/thread_io.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace ckpt {
namespace {

TEST(ThreadIoTest, ParsesTheKernelsLayout) {
  const std::string text =
      "rchar: 323934931\nwchar: 323929600\nsyscr: 632687\nsyscw: 632675\n"
      "read_bytes: 4096\nwrite_bytes: 323932160\ncancelled_write_bytes: 8192\n";
  auto io = parse_thread_io(text);
  ASSERT_TRUE(io);
  EXPECT_EQ(io->read_bytes, 4096u);
  EXPECT_EQ(io->write_bytes, 323932160u);
  EXPECT_EQ(io->cancelled_write_bytes, 8192u);
  // Without CONFIG_TASK_IO_ACCOUNTING the last three lines are not there.
  EXPECT_FALSE(parse_thread_io("rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\n"));
  EXPECT_FALSE(parse_thread_io("read_bytes: x\nwrite_bytes: 1\ncancelled_write_bytes: 0\n"));
}

TEST(ThreadIoTest, ReadsEveryThreadOfAProcess) {
  const auto self = static_cast<uint32_t>(getpid());
  auto threads = read_threads_io(self);
  ASSERT_FALSE(threads.empty()) << "this kernel keeps per-task I/O counters";
  bool main_thread = false;
  for (const auto& t : threads) main_thread |= t.tid == self;
  EXPECT_TRUE(main_thread);
  EXPECT_TRUE(read_threads_io(self, "/nonexistent-proc").empty());
}

}  // namespace
}  // namespace ckpt
