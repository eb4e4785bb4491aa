// `run`/`attach` registering with the exporter over a real Unix socket: the
// exporter's RegistrationServer (served from a thread of its own, as the
// exporter's loop would) and the collector's ExporterFeed. Kernel records
// laid out by bpf/jobio.h and bpf/tcp.h go through byte for byte: the job's
// own, its forked children's, the node's TCP records; never another
// process's. Syncs, drops, a full client buffer, a refused registration.
#include "apps/exporter/registration_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "as_user.h"
#include "exporter_thread.h"
#include "jobio.h"
#include "probes/exporter_feed.h"
#include "probes/failure_reporter.h"
#include "tcp.h"
#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

using ::testing::HasSubstr;

ckpt_io_record io_record(uint32_t tgid, int64_t ret) {
  ckpt_io_record r{};
  r.hdr.kind = CKPT_REC_IO;
  r.hdr.op = CKPT_OP_WRITE;
  r.hdr.tgid = tgid;
  r.hdr.tid = tgid;
  r.hdr.start_ns = 1000;
  r.hdr.end_ns = 2000;
  r.ret = ret;
  r.requested = static_cast<uint64_t>(ret);
  r.dev = 8;
  r.ino = 77;
  r.fd = 5;
  r.file_type = CKPT_FT_REGULAR;
  return r;
}

ckpt_proc_record proc_record(uint32_t op, uint32_t tgid, uint32_t child) {
  ckpt_proc_record r{};
  r.hdr.kind = CKPT_REC_PROC;
  r.hdr.op = op;
  r.hdr.tgid = tgid;
  r.hdr.tid = tgid;
  r.child_tgid = child;
  return r;
}

using test::ExporterThread;

struct Received {
  std::vector<std::string> jobio, tcp, nfs;
};

Expected<std::unique_ptr<ExporterFeed>> connect_feed(const std::string& path, Received& got,
                                                     std::vector<uint32_t> tgids = {}) {
  return ExporterFeed::connect(
      path, tgids, "test",
      [&got](const void* d, size_t n) { got.jobio.emplace_back(static_cast<const char*>(d), n); },
      [&got](const void* d, size_t n) { got.tcp.emplace_back(static_cast<const char*>(d), n); },
      [&got](const void* d, size_t n) { got.nfs.emplace_back(static_cast<const char*>(d), n); });
}

template <typename R>
std::string bytes_of(const R& r) {
  return std::string(reinterpret_cast<const char*>(&r), sizeof(r));
}

class RegistrationTest : public ::testing::Test {
 protected:
  RegistrationOptions options() {
    RegistrationOptions o;
    o.socket_path = scratch_ / "run/exporter.sock";  // the directory is created
    return o;
  }
  test::ScratchDir scratch_;
};

TEST_F(RegistrationTest, TheJobsRecordsAndItsChildrensGoThroughByteForByte) {
  ExporterThread exporter(options());
  ASSERT_EQ(exporter.error(), "");
  Received got;
  const auto me = static_cast<uint32_t>(getpid());
  auto feed = connect_feed(options().socket_path, got, {me});
  ASSERT_TRUE(feed) << feed.error().message;
  EXPECT_TRUE((*feed)->tcp_enabled());
  EXPECT_FALSE((*feed)->nfs_enabled());
  EXPECT_THAT((*feed)->description(), HasSubstr("the node exporter at"));

  const auto mine = io_record(me, 4096);
  const auto other = io_record(me + 1, 1);  // not registered: never forwarded
  const auto fork = proc_record(CKPT_PROC_FORK, me, 4'000'001);
  const auto childs = io_record(4'000'001, 8192);
  ckpt_tcp_record tcp{};
  tcp.sock_cookie = 42;
  exporter.offer(ForwardRing::Jobio, mine);
  exporter.offer(ForwardRing::Jobio, other);
  exporter.offer(ForwardRing::Jobio, fork);
  exporter.offer(ForwardRing::Jobio, childs);
  exporter.offer(ForwardRing::Tcp, tcp);
  (*feed)->sync(2000);
  ASSERT_EQ(got.jobio.size(), 3u);
  EXPECT_EQ(got.jobio[0], bytes_of(mine));
  EXPECT_EQ(got.jobio[1], bytes_of(fork));
  EXPECT_EQ(got.jobio[2], bytes_of(childs));
  ASSERT_EQ(got.tcp.size(), 1u);
  EXPECT_EQ(got.tcp[0], bytes_of(tcp));
  EXPECT_GE(exporter.drains_.load(), 1);  // a sync drains the rings first
  // The exporter's drop counters came with the sync, and the client's own.
  auto drops = (*feed)->drops();
  auto find = [&drops](const std::string& source, const std::string& cause) -> int64_t {
    for (const auto& d : drops)
      if (d.source == source && d.cause == cause) return static_cast<int64_t>(d.count);
    return -1;
  };
  EXPECT_EQ(find("jobio", "ringbuf_full"), 3);
  EXPECT_EQ(find("exporter", "forward_buffer_full"), 0);
}

TEST_F(RegistrationTest, AProcessTracedLaterAndOneThatExitedStopsBeingForwarded) {
  ExporterThread exporter(options());
  ASSERT_EQ(exporter.error(), "");
  Received got;
  auto feed = connect_feed(options().socket_path, got);
  ASSERT_TRUE(feed) << feed.error().message;
  const auto me = static_cast<uint32_t>(getpid());
  exporter.offer(ForwardRing::Jobio, io_record(me, 1));  // before trace_tgid: not ours yet
  (*feed)->sync(2000);
  ASSERT_TRUE((*feed)->trace_tgid(me));
  exporter.offer(ForwardRing::Jobio, io_record(me, 2));
  exporter.offer(ForwardRing::Jobio, proc_record(CKPT_PROC_EXIT, me, 0));
  exporter.offer(ForwardRing::Jobio, io_record(me, 3));  // a reused pid: not the job
  (*feed)->sync(2000);
  ASSERT_EQ(got.jobio.size(), 2u);
  EXPECT_EQ(got.jobio[0], bytes_of(io_record(me, 2)));
  // No such process: refused, with the reason.
  auto refused = (*feed)->trace_tgid(4'000'000'000u);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr("no process 4000000000"));
}

TEST_F(RegistrationTest, NfsTurningOnIsToldToTheClient) {
  ExporterThread exporter(options());
  Received got;
  auto feed = connect_feed(options().socket_path, got, {static_cast<uint32_t>(getpid())});
  ASSERT_TRUE(feed) << feed.error().message;
  EXPECT_FALSE((*feed)->nfs_enabled());
  exporter.nfs_ = true;
  (*feed)->sync(2000);
  EXPECT_TRUE((*feed)->nfs_enabled());
  EXPECT_TRUE((*feed)->start_nfs_if_available());
}

TEST_F(RegistrationTest, AClientThatDoesNotReadLosesRecordsCountedNeverTheExporterBlocked) {
  RegistrationOptions o = options();
  o.client_buffer_bytes = 64 * 1024;
  ExporterThread exporter(o);
  Received got;
  const auto me = static_cast<uint32_t>(getpid());
  auto feed = connect_feed(o.socket_path, got, {me});
  ASSERT_TRUE(feed) << feed.error().message;
  // Far more than the socket and the 64 KiB buffer hold, while the client
  // reads nothing.
  const int kRecords = 20'000;
  for (int i = 0; i < kRecords; ++i) exporter.offer(ForwardRing::Jobio, io_record(me, i + 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  (*feed)->sync(5000);
  uint64_t dropped = 0;
  for (const auto& d : (*feed)->drops())
    if (d.source == "exporter" && d.cause == "forward_buffer_full") dropped = d.count;
  EXPECT_GT(dropped, 0u);
  // Every record is either received or counted: none is lost silently.
  EXPECT_EQ(got.jobio.size() + dropped, static_cast<size_t>(kRecords));
}

TEST_F(RegistrationTest, ARegistrationNeedsAProcessThatExists) {
  ExporterThread exporter(options());
  Received got;
  auto feed = connect_feed(options().socket_path, got, {4'000'000'000u});
  ASSERT_FALSE(feed);
  EXPECT_THAT(feed.error().message, HasSubstr("refused: no process 4000000000"));
}

TEST_F(RegistrationTest, AUserMayRegisterOnlyItsOwnProcesses) {
  ExporterThread exporter(options());
  ASSERT_EQ(exporter.error(), "");
  const std::string path = options().socket_path;
  chmod(scratch_.path().c_str(), 0755);  // mkdtemp's 0700 would stop uid 65534 at the door
  // As uid 65534 (dropped in a child when we are root), ask for pid 1 (root's).
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (geteuid() == 0 && setresuid(65534, 65534, 65534) != 0) _exit(10);
    Received got;
    auto feed = connect_feed(path, got, {1});
    if (feed) _exit(11);
    const bool says_why =
        feed.error().message.find("belongs to uid 0, not to the caller") != std::string::npos;
    _exit(says_why ? 0 : 12);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: setresuid failed, 11: registered, 12: wrong message";
}

// What a client gets of its job after the job exec'd a program that changed
// its credentials (the kernel's record of it comes before the program's
// first call), and how many such processes it was told of.
struct AfterPrivilegedExec {
  std::vector<std::string> jobio;
  uint64_t left = 0;
};

// Issue 36: `passwd` run by an unprivileged user's job read /etc/shadow as
// root, and the calls reached that user's trace. At a privileged exec the
// process leaves an unprivileged client's trace, with whatever it forks
// later; the client is told how many processes left. Root's client keeps
// everything, as root could see it anyway.
void offer_privileged_exec(ExporterThread& exporter, uint32_t tgid) {
  exporter.offer(ForwardRing::Jobio, io_record(tgid, 100));
  auto exec = proc_record(CKPT_PROC_EXEC_PRIVILEGED, tgid, 0);
  exec.uid = 65534;
  exec.euid = 0;
  exporter.offer(ForwardRing::Jobio, exec);
  exporter.offer(ForwardRing::Jobio, io_record(tgid, 676));  // /etc/shadow, as root
  exporter.offer(ForwardRing::Jobio, proc_record(CKPT_PROC_FORK, tgid, 4'000'002));
  exporter.offer(ForwardRing::Jobio, io_record(4'000'002, 9));
}

TEST_F(RegistrationTest, APrivilegedExecLeavesAnUnprivilegedClientsTrace) {
  if (geteuid() != 0) GTEST_SKIP() << "switching users needs root; not root";
  ExporterThread exporter(options());
  ASSERT_EQ(exporter.error(), "");
  const std::string path = options().socket_path;
  chmod(scratch_.path().c_str(), 0755);
  test::Signal registered, offered;
  // The client as uid 65534, tracing itself; its exit status tells what it got.
  test::AsUser nobody(65534, [&] {
    Received got;
    auto feed = connect_feed(path, got, {static_cast<uint32_t>(getpid())});
    if (!feed) return 10;
    registered.give();
    offered.take();
    (*feed)->sync(2000);
    uint64_t left = 99;
    for (const auto& d : (*feed)->drops())
      if (d.source == "exporter" && d.cause == "credentials_changed") left = d.count;
    if (left != 1) return 11;
    // Only the call before the exec.
    if (got.jobio.size() != 1 || got.jobio[0].size() != sizeof(ckpt_io_record)) return 12;
    ckpt_io_record first{};
    std::memcpy(&first, got.jobio[0].data(), sizeof(first));
    return first.ret == 100 ? 0 : 13;
  });
  ASSERT_TRUE(registered.take());
  // The child's pid is its tgid; AsUser keeps it private, so ask the kernel.
  uint32_t child_tgid = 0;
  ASSERT_TRUE(exporter.ask([&child_tgid](const RegistrationServer& s) {
    for (uint32_t pid = 1; pid < 4'000'000 && child_tgid == 0; ++pid)
      if (s.traces(pid)) child_tgid = pid;
    return child_tgid != 0;
  }));
  offer_privileged_exec(exporter, child_tgid);
  offered.give();
  EXPECT_EQ(nobody.wait(), 0) << "10: not registered, 11: not told it left, 12: got its calls "
                                 "after the exec, 13: not the call before it";
  EXPECT_FALSE(exporter.ask([child_tgid](const RegistrationServer& s) {
    return s.traces(child_tgid) || s.traces(4'000'002);
  }));
}

TEST_F(RegistrationTest, RootsClientKeepsAProcessThroughAPrivilegedExec) {
  ExporterThread exporter(options());
  ASSERT_EQ(exporter.error(), "");
  if (geteuid() != 0) GTEST_SKIP() << "a root client needs root; not root";
  Received got;
  const auto me = static_cast<uint32_t>(getpid());
  auto feed = connect_feed(options().socket_path, got, {me});
  ASSERT_TRUE(feed) << feed.error().message;
  offer_privileged_exec(exporter, me);
  (*feed)->sync(2000);
  EXPECT_EQ(got.jobio.size(), 5u);
  for (const auto& d : (*feed)->drops())
    if (d.source == "exporter" && d.cause == "credentials_changed") EXPECT_EQ(d.count, 0u);
}

// `logwatch` beside the exporter: its failures are counted as the node's (a
// novelty as log_anomaly, a known fault as its own kind), and the lines its
// budget held back as a count; it is sent no records (it asked for none), so
// a node's TCP and NFS traffic never fills a buffer it does not read. A kind
// no node-log line can have (a checkpoint's stall) is refused.
TEST_F(RegistrationTest, AFailureReporterIsCountedAndSentNoRecords) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: failure reports are taken from root only";
  ExporterThread exporter(options());
  ASSERT_EQ(exporter.error(), "");
  auto reporter = FailureReporter::connect(options().socket_path, "ckptscope logwatch");
  ASSERT_TRUE(reporter) << reporter.error().message;
  ckpt_tcp_record tcp{};
  tcp.event = CKPT_TCP_RETRANSMIT;
  exporter.offer(ForwardRing::Tcp, tcp);
  FailureRecord f{"log_anomaly", 42, "line 7: new template: NFS: server <*> not responding", {}};
  ASSERT_TRUE((*reporter)->report(f));
  FailureRecord mce{"machine_check",
                    43,
                    "line 9: known_fault (score 1.00): mce: [Hardware Error]: Machine check "
                    "events logged",
                    {}};
  ASSERT_TRUE((*reporter)->report(mce));
  ASSERT_TRUE((*reporter)->report_held_back(5));
  ASSERT_TRUE((*reporter)->report_held_back(2));
  FailureRecord other{"stall", 44, "spoofed", {}};
  ASSERT_TRUE((*reporter)->report(other));  // refused by the exporter, answered later
  std::vector<FailureRecord> got;
  for (int i = 0; i < 2000 && (got.size() < 2 || exporter.held_back() < 7); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    got = exporter.failures();
  }
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[0].kind, "log_anomaly");
  EXPECT_EQ(got[0].time_ns, 42U);
  EXPECT_EQ(got[0].evidence, f.evidence);
  EXPECT_EQ(got[1].kind, "machine_check");
  EXPECT_EQ(exporter.held_back(), 7U);
  // The refusal of the second kind reaches the reporter with the reason; no
  // record frame ever arrived (it would not parse as an answer line).
  Expected<void> next;
  for (int i = 0; i < 2000 && next; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    next = (*reporter)->report(f);
  }
  ASSERT_FALSE(next);
  EXPECT_THAT(next.error().message,
              HasSubstr("failure kind 'stall' is not one a client may report"));
}

TEST_F(RegistrationTest, AFailureReportFromANonRootUserIsRefusedWithTheReason) {
  const std::string path = options().socket_path;
  chmod(scratch_.path().c_str(), 0755);
  // Forked before the exporter's thread starts: a child forked from a
  // process with threads may find the allocator's lock (ASan's too) held by
  // one of them, forever (it hung 2 runs in 3 under ASan). It waits on a
  // pipe until the exporter listens.
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(go[1]);
    char ready = 0;
    if (read(go[0], &ready, 1) != 1) _exit(15);
    if (geteuid() == 0 && setresuid(65534, 65534, 65534) != 0) _exit(10);
    auto reporter = FailureReporter::connect(path, "ckptscope logwatch");
    if (!reporter) _exit(11);
    if (!(*reporter)->report({"log_anomaly", 1, "x", {}})) _exit(12);
    for (int i = 0; i < 2000; ++i) {
      usleep(1000);
      auto next = (*reporter)->report({"log_anomaly", 2, "y", {}});
      if (!next)
        _exit(next.error().message.find("taken from root only") != std::string::npos ? 0 : 13);
    }
    _exit(14);
  }
  close(go[0]);
  ExporterThread exporter(options());
  const bool listening = exporter.error().empty();
  const char ready = 'g';
  EXPECT_EQ(write(go[1], &ready, 1), 1);
  close(go[1]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(listening) << exporter.error();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: setresuid, 11: connect, 12: first send, 13: wrong "
                                       "message, 14: never refused, 15: never told to start";
  EXPECT_TRUE(exporter.failures().empty());
}

TEST_F(RegistrationTest, ALiveExporterSocketIsNotTakenOverADeadOnesIs) {
  {
    ExporterThread first(options());
    ASSERT_EQ(first.error(), "");
    auto second = RegistrationServer::listen(options(), {});
    ASSERT_FALSE(second);
    EXPECT_THAT(second.error().message, HasSubstr("another exporter is serving it"));
  }
  // A socket file left behind (a killed exporter) is replaced.
  const std::string path = options().socket_path;
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  close(fd);  // bound, never listening: what a dead exporter leaves
  ExporterThread again(options());
  EXPECT_EQ(again.error(), "");
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);  // any user may register its own processes
  // Not a socket: refused, never deleted.
  const std::string file = scratch_ / "plain";
  std::ofstream(file) << "x";
  RegistrationOptions o = options();
  o.socket_path = file;
  auto bad = RegistrationServer::listen(o, {});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("exists and is not a socket"));
}

TEST_F(RegistrationTest, NoExporterThereIsAClearErrorForTheFallback) {
  Received got;
  auto feed = connect_feed(scratch_ / "none.sock", got);
  ASSERT_FALSE(feed);
  EXPECT_THAT(feed.error().message, HasSubstr("no exporter at"));
}

}  // namespace
}  // namespace ckpt
