#include "sources/call_return.h"

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

// /proc/TID/syscall as the kernel writes it (proc_pid_syscall): the number,
// six hex arguments, then the stack and instruction pointers.
TEST(CallReturn, ParsesAThreadBlockedInACall) {
  const auto call = parse_proc_syscall(
      "1 0x5 0x7f3a1c000000 0x100000 0x0 0x0 0x0 0x7ffd4c8e1a28 0x7f3a2b51e887\n");
  ASSERT_TRUE(call);
  EXPECT_EQ(call->number, 1);
  EXPECT_EQ(call->args[0], 5u);
  EXPECT_EQ(call->args[2], 0x100000u);
}

TEST(CallReturn, NoCallOnACpuOrOutsideOneOrMalformed) {
  EXPECT_FALSE(parse_proc_syscall("running\n"));
  EXPECT_FALSE(parse_proc_syscall("-1 0x7ffd4c8e1a28 0x7f3a2b51e887\n"));
  EXPECT_FALSE(parse_proc_syscall(""));
  EXPECT_FALSE(parse_proc_syscall("1 0x5 0x0 0x0 0x0 0x0 0x0 0x1\n"));          // 8 words
  EXPECT_FALSE(parse_proc_syscall("1 0x5 0x0 0x0 0x0 0x0 0x0 0x1 0x2 0x3\n"));  // 10 words
  EXPECT_FALSE(parse_proc_syscall("1 0xZZ 0x0 0x0 0x0 0x0 0x0 0x1 0x2\n"));
  EXPECT_FALSE(parse_proc_syscall("x 0x5 0x0 0x0 0x0 0x0 0x0 0x1 0x2\n"));
}

// /proc/TID/stat (proc(5)): utime is the 14th field; the command name
// before it may hold spaces and parentheses.
TEST(CallReturn, TheUserTimeOfAStatLine) {
  EXPECT_EQ(parse_proc_stat_utime("4242 (python3) R 1 4242 4242 0 -1 4194304 1200 0 0 0 "
                                  "731 52 0 0 20 0 9 0 123456 1000000 2000 ...\n"),
            731u);
  EXPECT_EQ(parse_proc_stat_utime("4243 (pt_main (x) y) S 1 2 3 0 -1 0 0 0 0 0 17 5 0 0\n"), 17u);
  EXPECT_FALSE(parse_proc_stat_utime("4242 (python3) R 1 4242"));
  EXPECT_FALSE(parse_proc_stat_utime("no parenthesis 1 2 3 4 5 6 7 8 9 10 11 12 13 14"));
  EXPECT_FALSE(parse_proc_stat_utime("4242 (x) R 1 2 3 0 -1 0 0 0 0 0 -5 5\n"));
}

BlockedSyscall in_call(long number) {
  BlockedSyscall c;
  c.number = number;
  return c;
}

TEST(CallReturn, ACloseHasReturnedOnceTheThreadWaitsInAnotherCall) {
  EXPECT_TRUE(call_returned(in_call(SYS_futex), IoOp::Close, IoVia::Syscall));
  EXPECT_TRUE(call_returned(in_call(SYS_read), IoOp::Close, IoVia::Syscall));
  EXPECT_TRUE(call_returned(in_call(SYS_ioctl), IoOp::Close, IoVia::Syscall));
  // Each of these may be flushing the file it began to close.
  for (long nr :
       {long{SYS_close}, long{SYS_close_range}, long{SYS_dup3}, long{SYS_exit},
        long{SYS_exit_group}, long{SYS_execve}, long{SYS_execveat}, long{SYS_io_uring_enter}})
    EXPECT_FALSE(call_returned(in_call(nr), IoOp::Close, IoVia::Syscall)) << nr;
}

TEST(CallReturn, AnFsyncOrFtruncateOnlyInItsOwnCalls) {
  EXPECT_FALSE(call_returned(in_call(SYS_fsync), IoOp::Fsync, IoVia::Syscall));
  EXPECT_FALSE(call_returned(in_call(SYS_fdatasync), IoOp::Fsync, IoVia::Syscall));
  EXPECT_FALSE(call_returned(in_call(SYS_msync), IoOp::Fsync, IoVia::Syscall));
  EXPECT_FALSE(call_returned(in_call(SYS_sync_file_range), IoOp::Fsync, IoVia::Syscall));
  EXPECT_TRUE(call_returned(in_call(SYS_close), IoOp::Fsync, IoVia::Syscall));
  EXPECT_FALSE(call_returned(in_call(SYS_ftruncate), IoOp::Ftruncate, IoVia::Syscall));
  EXPECT_TRUE(call_returned(in_call(SYS_fsync), IoOp::Ftruncate, IoVia::Syscall));
}

TEST(CallReturn, AReadOrWriteOnlyInItsFamily) {
  for (long nr : {long{SYS_read}, long{SYS_pread64}, long{SYS_readv}, long{SYS_preadv},
                  long{SYS_preadv2}, long{SYS_io_uring_enter}})
    EXPECT_FALSE(call_returned(in_call(nr), IoOp::Read, IoVia::Syscall)) << nr;
  for (long nr : {long{SYS_write}, long{SYS_pwrite64}, long{SYS_writev}, long{SYS_pwritev},
                  long{SYS_pwritev2}})
    EXPECT_FALSE(call_returned(in_call(nr), IoOp::Write, IoVia::Syscall)) << nr;
  EXPECT_TRUE(call_returned(in_call(SYS_write), IoOp::Read, IoVia::Syscall));
  EXPECT_TRUE(call_returned(in_call(SYS_futex), IoOp::Write, IoVia::Syscall));
  EXPECT_TRUE(call_returned(in_call(SYS_nanosleep), IoOp::Read, IoVia::Syscall));
  // A copy runs in its own call only, whichever half is asked about.
  EXPECT_FALSE(call_returned(in_call(SYS_copy_file_range), IoOp::Write, IoVia::CopyFileRange));
  EXPECT_TRUE(call_returned(in_call(SYS_write), IoOp::Write, IoVia::CopyFileRange));
  EXPECT_FALSE(call_returned(in_call(SYS_sendfile), IoOp::Write, IoVia::Sendfile));
  EXPECT_FALSE(call_returned(in_call(SYS_splice), IoOp::Write, IoVia::Sendfile));
  EXPECT_TRUE(call_returned(in_call(SYS_copy_file_range), IoOp::Write, IoVia::Sendfile));
}

// A Linux AIO announcement is a submission or a wait: in io_submit,
// io_getevents or io_pgetevents only.
TEST(CallReturn, AnAioAnnouncementOnlyInTheAioCalls) {
  for (long nr : {long{SYS_io_submit}, long{SYS_io_getevents}, long{SYS_io_pgetevents}}) {
    EXPECT_FALSE(call_returned(in_call(nr), IoOp::Write, IoVia::Aio)) << nr;
    EXPECT_FALSE(call_returned(in_call(nr), IoOp::Read, IoVia::Aio)) << nr;
  }
  EXPECT_TRUE(call_returned(in_call(SYS_write), IoOp::Write, IoVia::Aio));
  EXPECT_TRUE(call_returned(in_call(SYS_futex), IoOp::Read, IoVia::Aio));
  // A read(2) is not a wait for completions.
  EXPECT_TRUE(call_returned(in_call(SYS_io_getevents), IoOp::Read, IoVia::Syscall));
}

TEST(CallReturn, APathCallOnlyInTheCallsOfItsName) {
  EXPECT_FALSE(call_returned(in_call(SYS_openat), IoOp::Open, IoVia::Syscall));
  EXPECT_FALSE(call_returned(in_call(SYS_openat2), IoOp::Open, IoVia::Syscall));
  EXPECT_TRUE(call_returned(in_call(SYS_renameat2), IoOp::Open, IoVia::Syscall));
  EXPECT_FALSE(call_returned(in_call(SYS_renameat2), IoOp::Rename, IoVia::Syscall));
  EXPECT_FALSE(call_returned(in_call(SYS_mkdirat), IoOp::Mkdir, IoVia::Syscall));
  EXPECT_FALSE(call_returned(in_call(SYS_unlinkat), IoOp::Unlink, IoVia::Syscall));
  EXPECT_TRUE(call_returned(in_call(SYS_futex), IoOp::Unlink, IoVia::Syscall));
}

// Only the file layer can miss a call's exit: syscall mode gets no query.
TEST(CallReturn, AQueryOnlyForTheFileLayer) {
  EXPECT_TRUE(call_returned_query("file_layer"));
  EXPECT_FALSE(call_returned_query("syscall"));
  EXPECT_FALSE(call_returned_query(""));
}

CallStartEvent started(uint32_t tid, IoOp op, uint64_t start_ns = 100) {
  CallStartEvent c;
  c.tid = tid;
  c.op = op;
  c.start_ns = start_ns;
  return c;
}

std::string stat_line(uint64_t utime) {
  return "4242 (python3) R 1 4242 4242 0 -1 4194304 1200 0 0 0 " + std::to_string(utime) +
         " 52 0 0 20 0 9 0 123456\n";
}

// A /proc tree laid out as the kernel's.
TEST(CallReturn, FromProcOnlyWhatIsKnownCounts) {
  test::ScratchDir dir;
  const auto task = dir.path() / "4242";
  std::filesystem::create_directories(task);
  UnseenReturnCheck returned(dir.path().string());
  auto say = [&](const std::string& syscall_line) {
    std::ofstream(task / "syscall") << syscall_line;
  };
  say(std::to_string(SYS_futex) + " 0x7f00 0x80 0x0 0x0 0x0 0x0 0x7ffd0 0x7f001\n");
  EXPECT_TRUE(returned(started(4242, IoOp::Close)));
  EXPECT_TRUE(returned(started(4242, IoOp::Read)));
  say(std::to_string(SYS_close) + " 0x5 0x0 0x0 0x0 0x0 0x0 0x7ffd0 0x7f001\n");
  EXPECT_FALSE(returned(started(4242, IoOp::Close)));
  say("-1 0x7ffd0 0x7f001\n");
  EXPECT_FALSE(returned(started(4242, IoOp::Close)))
      << "outside a call (a killed thread's exit flushes there): not known";
  EXPECT_TRUE(returned(started(4242, IoOp::Write))) << "a write runs inside a system call";
  EXPECT_FALSE(returned(started(4343, IoOp::Write))) << "a thread that is gone";
}

// On a CPU, /proc/TID/syscall names no call: the thread has left its call
// once its user time grows between two questions about the same call; a
// thread in the call (system time) or waiting for a CPU (neither) has not.
TEST(CallReturn, OnACpuTheUserTimeSays) {
  test::ScratchDir dir;
  const auto task = dir.path() / "4242";
  std::filesystem::create_directories(task);
  UnseenReturnCheck returned(dir.path().string());
  std::ofstream(task / "syscall") << "running\n";
  std::ofstream(task / "stat") << stat_line(700);
  const CallStartEvent read = started(4242, IoOp::Read, 100);
  EXPECT_FALSE(returned(read)) << "the first look: nothing to compare with";
  EXPECT_FALSE(returned(read)) << "no user time since: in the call, or waiting for a CPU";
  std::ofstream(task / "stat") << stat_line(712);
  EXPECT_TRUE(returned(read)) << "it ran in user space since";
  std::ofstream(task / "stat") << stat_line(730);
  const CallStartEvent next = started(4242, IoOp::Read, 200);
  EXPECT_FALSE(returned(next)) << "a later call starts its own comparison";
  EXPECT_FALSE(returned(next));
  std::filesystem::remove(task / "stat");
  EXPECT_FALSE(returned(next)) << "no stat: not known";
}

// The real /proc: a thread of this process waiting in read(2) on a pipe has
// left a close or a write it began, and may be in the read it began; one
// spinning in user space has left its read once its user time shows it.
TEST(CallReturn, RealThreadsInAReadAndInUserSpace) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0) << std::strerror(errno);
  std::atomic<pid_t> reader{0};
  std::thread t([&] {
    reader = gettid();
    char byte = 0;
    (void)!read(fds[0], &byte, 1);
  });
  UnseenReturnCheck returned;
  bool left_close = false;
  for (int i = 0; i < 200 && !left_close; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (reader != 0)
      left_close = returned(started(static_cast<uint32_t>(reader.load()), IoOp::Close));
  }
  EXPECT_TRUE(left_close);
  const auto tid = static_cast<uint32_t>(reader.load());
  EXPECT_TRUE(returned(started(tid, IoOp::Write)));
  EXPECT_FALSE(returned(started(tid, IoOp::Read)));
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  t.join();
  close(fds[0]);
  close(fds[1]);

  std::atomic<bool> stop{false};
  std::atomic<pid_t> spinner{0};
  std::thread spin([&] {
    spinner = gettid();
    volatile uint64_t n = 0;
    while (!stop) n = n + 1;
  });
  while (spinner == 0) std::this_thread::yield();
  const CallStartEvent read = started(static_cast<uint32_t>(spinner.load()), IoOp::Read);
  bool left_read = returned(read);
  for (int i = 0; i < 300 && !left_read; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    left_read = returned(read);
  }
  stop = true;
  spin.join();
  EXPECT_TRUE(left_read) << "a thread computing in user space is in no read";
}

}  // namespace
}  // namespace ckpt
