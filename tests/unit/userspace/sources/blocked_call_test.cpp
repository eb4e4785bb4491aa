#include "sources/blocked_call.h"

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
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "probes/probe_manager.h"
#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

// /proc/TID/syscall as the kernel writes it (proc_pid_syscall): the number,
// six hex arguments, then the stack and instruction pointers.
TEST(BlockedCall, ParsesAThreadBlockedInACall) {
  const auto call = parse_proc_syscall(
      "1 0x5 0x7f3a1c000000 0x100000 0x0 0x0 0x0 0x7ffd4c8e1a28 0x7f3a2b51e887\n");
  ASSERT_TRUE(call);
  EXPECT_EQ(call->number, 1);
  EXPECT_EQ(call->args[0], 5u);
  EXPECT_EQ(call->args[2], 0x100000u);
}

TEST(BlockedCall, NoCallOnACpuOrOutsideOneOrMalformed) {
  EXPECT_FALSE(parse_proc_syscall("running\n"));
  EXPECT_FALSE(parse_proc_syscall("-1 0x7ffd4c8e1a28 0x7f3a2b51e887\n"));
  EXPECT_FALSE(parse_proc_syscall(""));
  EXPECT_FALSE(parse_proc_syscall("1 0x5 0x0 0x0 0x0 0x0 0x0 0x1\n"));          // 8 words
  EXPECT_FALSE(parse_proc_syscall("1 0x5 0x0 0x0 0x0 0x0 0x0 0x1 0x2 0x3\n"));  // 10 words
  EXPECT_FALSE(parse_proc_syscall("1 0xZZ 0x0 0x0 0x0 0x0 0x0 0x1 0x2\n"));
  EXPECT_FALSE(parse_proc_syscall("x 0x5 0x0 0x0 0x0 0x0 0x0 0x1 0x2\n"));
}

TEST(BlockedCall, TheDescriptorOfDataCallsOnly) {
  BlockedSyscall call;
  call.args = {3, 0, 4, 0, 0, 0};
  for (long nr : {SYS_read, SYS_write, SYS_pwrite64, SYS_writev, SYS_fsync, SYS_fdatasync}) {
    call.number = nr;
    EXPECT_EQ(file_fd_of(call), 3) << nr;
    EXPECT_FALSE(second_fd_of(call)) << nr;
  }
  call.number = SYS_copy_file_range;  // (fd_in, off_in, fd_out, ...)
  EXPECT_EQ(file_fd_of(call), 4);
  EXPECT_EQ(second_fd_of(call), 3);
  for (long nr : {SYS_futex, SYS_nanosleep, SYS_epoll_wait, SYS_openat}) {
    call.number = nr;
    EXPECT_FALSE(file_fd_of(call)) << nr;
  }
}

// The path from a /proc tree laid out as the kernel's: a write on fd 5,
// which links to the checkpoint file; a read on a pipe names no path.
TEST(BlockedCall, ThePathOfTheFileTheThreadIsBlockedOn) {
  test::ScratchDir dir;
  const auto task = dir.path() / "4242";
  std::filesystem::create_directories(task / "fd");
  std::ofstream(task / "syscall") << SYS_write
                                  << " 0x5 0x7f00 0x100000 0x0 0x0 0x0 0x7ffd0 0x7f001\n";
  std::filesystem::create_symlink("/nfs/run/checkpoint-1/shard-0.pt", task / "fd" / "5");
  std::filesystem::create_symlink("pipe:[81234]", task / "fd" / "6");
  EXPECT_EQ(proc_call_state(4242, dir.path().string()).path, "/nfs/run/checkpoint-1/shard-0.pt");
  std::ofstream(task / "syscall") << SYS_read << " 0x6 0x7f00 0x1000 0x0 0x0 0x0 0x7ffd0 0x7f001\n";
  EXPECT_FALSE(proc_call_state(4242, dir.path().string()).path);
  std::ofstream(task / "syscall") << "running\n";
  EXPECT_FALSE(proc_call_state(4242, dir.path().string()).path);
  EXPECT_FALSE(proc_call_state(4343, dir.path().string()).path) << "a thread that is gone";
}

// A feed whose probes saw threads leave the CPU inside calls.
class ParkedFeed : public ProbeFeed {
 public:
  std::map<uint32_t, ParkedCall> parked;
  Expected<void> trace_tgid(uint32_t) override { return {}; }
  Expected<int> poll(int) override { return 0; }
  Expected<void> start_nfs_if_available() override { return {}; }
  [[nodiscard]] bool nfs_enabled() const override { return false; }
  [[nodiscard]] bool tcp_enabled() const override { return false; }
  Expected<void> add_storage_endpoint(const StorageEndpoint&) override { return {}; }
  [[nodiscard]] std::vector<TcpLatest> tcp_latest() const override { return {}; }
  [[nodiscard]] std::vector<DropRecord> drops() const override { return {}; }
  [[nodiscard]] std::vector<ProgramStats> program_stats() const override { return {}; }
  [[nodiscard]] const std::vector<std::string>& notes() const override { return notes_; }
  void sync(int) override {}
  [[nodiscard]] std::optional<ParkedCall> parked_call(uint32_t tid) const override {
    auto it = parked.find(tid);
    if (it == parked.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::vector<std::string> notes_;
};

// /proc first; the probes' parked call only for a thread /proc says is
// running (woken inside its call, or computing: /proc cannot tell), never
// for one blocked in another call or gone (a parked entry a missed exit left).
TEST(BlockedCall, TheProbesAnswerForAThreadProcSaysIsRunning) {
  test::ScratchDir dir;
  const auto task = dir.path() / "4242";
  std::filesystem::create_directories(task / "fd");
  std::filesystem::create_symlink("/nfs/run/checkpoint-1/shard-0.pt", task / "fd" / "5");
  const std::string root = dir.path().string();
  const FileId shard{42, 1000};
  ParkedFeed feed;
  feed.parked[4242] = ParkedCall{123, {shard}, 5};

  std::ofstream(task / "syscall") << "running\n";
  ProcCallState state = proc_call_state(4242, root);
  EXPECT_TRUE(state.running);
  EXPECT_FALSE(state.gone);
  auto call = call_in_progress(4242, &feed, root);
  ASSERT_TRUE(call);
  EXPECT_EQ(call->path, "");
  EXPECT_EQ(call->files, std::vector<FileId>{shard});
  EXPECT_FALSE(call_in_progress(4242, nullptr, root)) << "no probes: /proc's answer alone";
  feed.parked[4242].files.clear();  // no file to name
  EXPECT_FALSE(call_in_progress(4242, &feed, root));
  feed.parked[4242].files = {shard};

  // On a CPU inside the call since running_since_ns: finishing it, until
  // that has lasted kParkedRunningLimitNs (then its exit was most likely
  // missed, and it computes in user space).
  const uint64_t now = 50'000'000'000;
  feed.parked[4242].running_since_ns = now - kParkedRunningLimitNs + 1;
  EXPECT_TRUE(call_in_progress(4242, &feed, root, now)) << "woken just now";
  feed.parked[4242].running_since_ns = now - kParkedRunningLimitNs;
  EXPECT_FALSE(call_in_progress(4242, &feed, root, now)) << "on a CPU for the whole limit";
  feed.parked[4242].running_since_ns = 0;
  EXPECT_TRUE(call_in_progress(4242, &feed, root, now)) << "off its CPU, waiting for one";

  std::ofstream(task / "syscall") << SYS_write
                                  << " 0x5 0x7f00 0x100000 0x0 0x0 0x0 0x7ffd0 0x7f001\n";
  call = call_in_progress(4242, &feed, root);
  ASSERT_TRUE(call);
  EXPECT_EQ(call->path, "/nfs/run/checkpoint-1/shard-0.pt");
  EXPECT_TRUE(call->files.empty()) << "/proc named the call: the probes are not asked";

  std::ofstream(task / "syscall") << SYS_futex << " 0x5 0x0 0x0 0x0 0x0 0x0 0x7ffd0 0x7f001\n";
  EXPECT_FALSE(proc_call_state(4242, root).running);
  EXPECT_FALSE(call_in_progress(4242, &feed, root)) << "blocked in another call";
  std::ofstream(task / "syscall") << "-1 0x7ffd0 0x7f001\n";
  EXPECT_FALSE(call_in_progress(4242, &feed, root)) << "blocked outside any call";

  feed.parked[4343] = ParkedCall{123, {shard}, 5};
  EXPECT_TRUE(proc_call_state(4343, root).gone);
  EXPECT_FALSE(call_in_progress(4343, &feed, root)) << "a thread that is gone";
}

// The real /proc: a thread of this process blocked in read(2) on a named
// pipe in a checkpoint directory is seen blocked on that path, and on
// nothing once the read returned.
TEST(BlockedCall, AThreadBlockedInARealReadIsSeenOnItsPath) {
  test::ScratchDir dir;
  std::filesystem::create_directories(dir.path() / "checkpoint-1");
  const std::string fifo = dir / "checkpoint-1/shard-0.pt";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const int fd = open(fifo.c_str(), O_RDWR);  // O_RDWR: the open does not wait for a writer
  ASSERT_GE(fd, 0) << std::strerror(errno);
  std::atomic<pid_t> reader{0};
  std::thread t([&] {
    reader = gettid();
    char byte = 0;
    (void)!read(fd, &byte, 1);
  });
  std::optional<std::string> seen;
  for (int i = 0; i < 200 && !seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (reader != 0) seen = proc_call_state(static_cast<uint32_t>(reader.load())).path;
  }
  EXPECT_EQ(seen, std::filesystem::canonical(fifo).string());
  const pid_t tid = reader.load();
  ASSERT_EQ(write(fd, "x", 1), 1);
  t.join();
  EXPECT_FALSE(proc_call_state(static_cast<uint32_t>(tid)).path) << "the thread is gone";
  close(fd);
}

}  // namespace
}  // namespace ckpt
