#include "sources/flush_return.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

BlockedSyscall in_call(long number) {
  BlockedSyscall c;
  c.number = number;
  return c;
}

TEST(FlushReturn, ACloseHasReturnedOnceTheThreadWaitsInAnotherCall) {
  EXPECT_TRUE(flush_returned(in_call(SYS_futex), IoOp::Close));
  EXPECT_TRUE(flush_returned(in_call(SYS_read), IoOp::Close));
  EXPECT_TRUE(flush_returned(in_call(SYS_ioctl), IoOp::Close));
  // Each of these may be flushing the file it began to close.
  for (long nr :
       {long{SYS_close}, long{SYS_close_range}, long{SYS_dup3}, long{SYS_exit},
        long{SYS_exit_group}, long{SYS_execve}, long{SYS_execveat}, long{SYS_io_uring_enter}})
    EXPECT_FALSE(flush_returned(in_call(nr), IoOp::Close)) << nr;
}

TEST(FlushReturn, AnFsyncOrFtruncateOnlyInItsOwnCalls) {
  EXPECT_FALSE(flush_returned(in_call(SYS_fsync), IoOp::Fsync));
  EXPECT_FALSE(flush_returned(in_call(SYS_fdatasync), IoOp::Fsync));
  EXPECT_FALSE(flush_returned(in_call(SYS_msync), IoOp::Fsync));
  EXPECT_FALSE(flush_returned(in_call(SYS_sync_file_range), IoOp::Fsync));
  EXPECT_TRUE(flush_returned(in_call(SYS_close), IoOp::Fsync));
  EXPECT_FALSE(flush_returned(in_call(SYS_ftruncate), IoOp::Ftruncate));
  EXPECT_TRUE(flush_returned(in_call(SYS_fsync), IoOp::Ftruncate));
  // Not a flush: never taken for returned.
  EXPECT_FALSE(flush_returned(in_call(SYS_futex), IoOp::Write));
}

// Only the file layer can miss a call's exit: syscall mode gets no query.
TEST(FlushReturn, AQueryOnlyForTheFileLayer) {
  EXPECT_TRUE(flush_returned_query("file_layer"));
  EXPECT_FALSE(flush_returned_query("syscall"));
  EXPECT_FALSE(flush_returned_query(""));
}

// A /proc tree laid out as the kernel's.
TEST(FlushReturn, ReadFromProcOnlyWhatIsKnownCounts) {
  test::ScratchDir dir;
  const auto task = dir.path() / "4242";
  std::filesystem::create_directories(task);
  const std::string root = dir.path().string();
  std::ofstream(task / "syscall") << SYS_futex << " 0x7f00 0x80 0x0 0x0 0x0 0x0 0x7ffd0 0x7f001\n";
  EXPECT_TRUE(flush_returned_unseen(4242, IoOp::Close, root));
  std::ofstream(task / "syscall") << SYS_close << " 0x5 0x0 0x0 0x0 0x0 0x0 0x7ffd0 0x7f001\n";
  EXPECT_FALSE(flush_returned_unseen(4242, IoOp::Close, root));
  std::ofstream(task / "syscall") << "running\n";
  EXPECT_FALSE(flush_returned_unseen(4242, IoOp::Close, root)) << "on a CPU: not known";
  std::ofstream(task / "syscall") << "-1 0x7ffd0 0x7f001\n";
  EXPECT_FALSE(flush_returned_unseen(4242, IoOp::Close, root))
      << "outside a call (a killed thread's exit flushes there): not known";
  EXPECT_FALSE(flush_returned_unseen(4343, IoOp::Close, root)) << "a thread that is gone";
}

// The real /proc: a thread of this process waiting in read(2) on a pipe has
// left any close it began; one blocked in fsync-like calls is not asked here.
TEST(FlushReturn, AThreadWaitingInARealReadHasLeftItsClose) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0) << std::strerror(errno);
  std::atomic<pid_t> reader{0};
  std::thread t([&] {
    reader = gettid();
    char byte = 0;
    (void)!read(fds[0], &byte, 1);
  });
  bool returned = false;
  for (int i = 0; i < 200 && !returned; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (reader != 0)
      returned = flush_returned_unseen(static_cast<uint32_t>(reader.load()), IoOp::Close);
  }
  EXPECT_TRUE(returned);
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  t.join();
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace ckpt
