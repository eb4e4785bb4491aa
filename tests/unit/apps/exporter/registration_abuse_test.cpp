// The registration socket under hostile input (issue 22): any local user can
// connect, so bytes that are not UTF-8, requests that are not JSON or have
// the wrong types, floods and endless lines must be answered or cut off,
// counted by reason and logged once, and never end the exporter. Each test
// then shows the exporter still serves a well-behaved client.
#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apps/exporter/registration_server.h"
#include "as_user.h"
#include "exporter_thread.h"
#include "probes/exporter_feed.h"
#include "probes/failure_reporter.h"
#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

using test::ExporterThread;
using ::testing::Contains;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// A client speaking the protocol by hand, so it can send anything.
class RawClient {
 public:
  explicit RawClient(const std::string& path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawClient() { close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  [[nodiscard]] bool connected() const { return connected_; }
  // False once the exporter has closed the connection.
  bool send_bytes(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  // Reads until `want` appears in what was received, the peer closes, or 5 s.
  bool read_until(const std::string& want) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (received_.find(want) == std::string::npos) {
      if (!read_some(deadline)) return false;
    }
    return true;
  }
  // True when the exporter closed the connection within 5 s.
  bool closed_by_peer() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (read_some(deadline)) {
    }
    return eof_;
  }
  // True when the exporter has already closed the connection (no waiting).
  bool closed_by_peer_now() {
    while (read_some(std::chrono::steady_clock::now() + std::chrono::milliseconds(20))) {
    }
    return eof_;
  }
  [[nodiscard]] const std::string& received() const { return received_; }

 private:
  bool read_some(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || eof_) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char buf[65536];
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    received_.append(buf, static_cast<size_t>(n));
    return true;
  }
  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string received_;
};

std::string register_line() {
  return "{\"op\":\"register\",\"client\":\"abuse\",\"tgids\":[" + std::to_string(getpid()) +
         "]}\n";
}

class RegistrationAbuseTest : public ::testing::Test {
 protected:
  RegistrationOptions options() {
    RegistrationOptions o;
    o.socket_path = scratch_ / "run/exporter.sock";
    return o;
  }
  // A well-behaved client still registers and has a sync answered.
  static void still_serves(const std::string& path) {
    RawClient good(path);
    ASSERT_TRUE(good.connected());
    ASSERT_TRUE(good.send_bytes(register_line()));
    ASSERT_TRUE(good.read_until("\"ok\":true")) << good.received();
    ASSERT_TRUE(good.send_bytes("{\"op\":\"sync\",\"seq\":99}\n"));
    EXPECT_TRUE(good.read_until("{\"sync\":99}")) << good.received();
  }
  test::ScratchDir scratch_;
};

// The reproducer: registered, then a line with a byte that is not UTF-8.
// Before the fix the reply's echo threw type_error.316 and aborted.
TEST_F(RegistrationAbuseTest, ANonUtf8LineAfterRegisteringIsAnsweredAndCounted) {
  ExporterThread exporter(options());
  ASSERT_EQ(exporter.error(), "");
  RawClient c(options().socket_path);
  ASSERT_TRUE(c.send_bytes(register_line()));
  ASSERT_TRUE(c.read_until("\"ok\":true"));
  ASSERT_TRUE(c.send_bytes("{\"op\":\"x\xff\xfe\"}\n"));
  ASSERT_TRUE(c.send_bytes("\xc3\x28 not json\n"));
  ASSERT_TRUE(c.send_bytes("{\"op\":\"sync\",\"seq\":5}\n"));
  ASSERT_TRUE(c.read_until("{\"sync\":5}")) << c.received();
  EXPECT_THAT(c.received(), HasSubstr("\"error\":\"request: "));
  EXPECT_THAT(exporter.rejected(), SizeIs(2));
  EXPECT_THAT(exporter.rejected(), Each(std::string(kRejectMalformed)));
  // Logged once for the client, however many of its requests are refused.
  const auto notes = exporter.notes();
  ASSERT_THAT(notes, SizeIs(1));
  EXPECT_THAT(notes[0], HasSubstr("client uid "));
  EXPECT_THAT(notes[0], HasSubstr("(malformed)"));
  still_serves(options().socket_path);
}

// A valid line whose first 200 bytes end inside a multi-byte character: the
// "unknown request" echo (first 200 bytes) cut it in two.
TEST_F(RegistrationAbuseTest, AnEchoCutInsideAMultiByteCharacterIsValidUtf8) {
  ExporterThread exporter(options());
  ASSERT_EQ(exporter.error(), "");
  RawClient c(options().socket_path);
  ASSERT_TRUE(c.send_bytes(register_line()));
  ASSERT_TRUE(c.read_until("\"ok\":true"));
  // {"op":"nope","pad":"aaa...é..." with "é" (2 bytes) at bytes 199-200.
  std::string line = "{\"op\":\"nope\",\"pad\":\"";
  line += std::string(199 - line.size(), 'a');
  line += "\xc3\xa9 and more\"}\n";
  ASSERT_EQ(line.substr(199, 2), "\xc3\xa9");
  ASSERT_TRUE(c.send_bytes(line));
  ASSERT_TRUE(c.send_bytes("{\"op\":\"sync\",\"seq\":6}\n"));
  ASSERT_TRUE(c.read_until("{\"sync\":6}")) << c.received();
  EXPECT_THAT(c.received(), HasSubstr("unknown request: {\\\"op\\\":\\\"nope\\\""));
  EXPECT_THAT(c.received(), HasSubstr("\xef\xbf\xbd"));  // U+FFFD for the cut character
  EXPECT_THAT(exporter.rejected(), SizeIs(1));
  still_serves(options().socket_path);
}

TEST_F(RegistrationAbuseTest, AFirstRequestThatIsNotUtf8IsAnsweredThenClosed) {
  ExporterThread exporter(options());
  ASSERT_EQ(exporter.error(), "");
  RawClient c(options().socket_path);
  ASSERT_TRUE(c.send_bytes("{\"op\":\"register\",\"client\":\"\xff\",\"tgids\":[1]}\n"));
  EXPECT_TRUE(c.closed_by_peer());
  EXPECT_THAT(c.received(), HasSubstr("\"ok\":false"));
  EXPECT_THAT(c.received(), HasSubstr("the first request must be"));
  EXPECT_THAT(exporter.rejected(), Contains(std::string(kRejectMalformed)));
  still_serves(options().socket_path);
}

// Wrong types (nlohmann's value() throws on them) are malformed requests.
TEST_F(RegistrationAbuseTest, WrongTypesAreMalformedRequestsNotExceptions) {
  ExporterThread exporter(options());
  ASSERT_EQ(exporter.error(), "");
  {
    RawClient c(options().socket_path);
    ASSERT_TRUE(c.send_bytes("{\"op\":\"register\",\"client\":7,\"tgids\":[" +
                             std::to_string(getpid()) + "]}\n"));
    EXPECT_TRUE(c.closed_by_peer());
    EXPECT_THAT(c.received(), HasSubstr("/client"));  // the field, by its JSON pointer
  }
  RawClient c(options().socket_path);
  ASSERT_TRUE(c.send_bytes(register_line()));
  ASSERT_TRUE(c.read_until("\"ok\":true"));
  ASSERT_TRUE(c.send_bytes("{\"op\":1}\n[1,2]\n\"op\"\n{\"op\":\"trace\",\"tgid\":99999999999}\n"));
  ASSERT_TRUE(c.send_bytes("{\"op\":\"sync\",\"seq\":8}\n"));
  ASSERT_TRUE(c.read_until("{\"sync\":8}")) << c.received();
  const auto rejected = exporter.rejected();
  EXPECT_THAT(rejected, SizeIs(5));
  EXPECT_THAT(rejected, Contains(std::string(kRejectNotPermitted)));  // no process 99999999999
  still_serves(options().socket_path);
}

TEST_F(RegistrationAbuseTest, AClientSendingTooManyBytesASecondIsCutOff) {
  auto o = options();
  o.max_bytes_per_s = 256u << 10;
  ExporterThread exporter(o);
  ASSERT_EQ(exporter.error(), "");
  RawClient c(o.socket_path);
  ASSERT_TRUE(c.send_bytes(register_line()));
  ASSERT_TRUE(c.read_until("\"ok\":true"));
  // Syncs without pause, 1 MiB of them: past the byte limit well within a second.
  std::string flood;
  while (flood.size() < (1u << 20)) flood += "{\"op\":\"sync\",\"seq\":1}\n";
  (void)c.send_bytes(flood);  // may fail half way: the exporter hung up
  EXPECT_TRUE(c.closed_by_peer());
  EXPECT_THAT(exporter.rejected(), Contains(std::string(kRejectFlood)));
  still_serves(o.socket_path);
}

TEST_F(RegistrationAbuseTest, AClientSendingTooManyRequestsASecondIsCutOff) {
  auto o = options();
  o.max_requests_per_s = 50;
  ExporterThread exporter(o);
  ASSERT_EQ(exporter.error(), "");
  RawClient c(o.socket_path);
  ASSERT_TRUE(c.send_bytes(register_line()));
  ASSERT_TRUE(c.read_until("\"ok\":true"));
  std::string many;
  for (int i = 0; i < 200; ++i) many += "{\"op\":\"sync\",\"seq\":" + std::to_string(i) + "}\n";
  (void)c.send_bytes(many);
  EXPECT_TRUE(c.closed_by_peer());
  EXPECT_THAT(exporter.rejected(), Contains(std::string(kRejectFlood)));
  const auto notes = exporter.notes();
  ASSERT_THAT(notes, SizeIs(1));
  EXPECT_THAT(notes[0], HasSubstr("more than 50 requests in a second"));
  still_serves(o.socket_path);
}

TEST_F(RegistrationAbuseTest, ALineLongerThanTheLimitCutsTheClientOff) {
  auto o = options();
  o.max_line_bytes = 4096;
  ExporterThread exporter(o);
  ASSERT_EQ(exporter.error(), "");
  RawClient c(o.socket_path);
  ASSERT_TRUE(c.send_bytes(register_line()));
  ASSERT_TRUE(c.read_until("\"ok\":true"));
  (void)c.send_bytes(std::string(8192, 'x'));  // no newline: a line that never ends
  EXPECT_TRUE(c.closed_by_peer());
  EXPECT_THAT(exporter.rejected(), Contains(std::string(kRejectLineTooLong)));
  still_serves(o.socket_path);
}

// A flood of connections, each refused, is no flood of log lines.
TEST_F(RegistrationAbuseTest, NotesAcrossClientsAreRateLimitedTheCounterIsNot) {
  auto o = options();
  o.max_notes_per_minute = 2;
  ExporterThread exporter(o);
  ASSERT_EQ(exporter.error(), "");
  for (int i = 0; i < 5; ++i) {
    RawClient c(o.socket_path);
    ASSERT_TRUE(c.send_bytes("nonsense\n"));
    EXPECT_TRUE(c.closed_by_peer());
  }
  EXPECT_THAT(exporter.rejected(), SizeIs(5));
  EXPECT_THAT(exporter.notes(), SizeIs(2));
}

TEST_F(RegistrationAbuseTest, TooManyClientsAreRefusedAndCounted) {
  auto o = options();
  o.max_clients = 1;
  ExporterThread exporter(o);
  ASSERT_EQ(exporter.error(), "");
  RawClient first(o.socket_path);
  ASSERT_TRUE(first.send_bytes(register_line()));
  ASSERT_TRUE(first.read_until("\"ok\":true"));
  RawClient second(o.socket_path);
  EXPECT_TRUE(second.closed_by_peer());
  EXPECT_THAT(second.received(), HasSubstr("too many clients"));
  EXPECT_THAT(exporter.rejected(), Contains(std::string(kRejectTooManyClients)));
}

// Issue 36: 64 connections that never registered held every slot, and
// every other job was refused. Now a connection gets a short time to register.
TEST_F(RegistrationAbuseTest, AClientThatNeverRegistersIsClosedAfterTheTimeout) {
  auto o = options();
  o.register_timeout_ms = 300;
  ExporterThread exporter(o);
  ASSERT_EQ(exporter.error(), "");
  RawClient idle(o.socket_path);
  ASSERT_TRUE(idle.connected());
  EXPECT_TRUE(idle.closed_by_peer());
  EXPECT_THAT(idle.received(), HasSubstr("no register request within 300 ms"));
  EXPECT_THAT(exporter.rejected(), Contains(std::string(kRejectRegisterTimeout)));
  still_serves(o.socket_path);
}

// Connects `count` times to `path` as the calling user and says how many
// connections the exporter refused with an answer containing `why` (a
// refused one is answered and closed at once; an accepted one stays quiet).
// Returns when told to by `done`, holding the accepted connections till then.
int refused_of(const std::string& path, int count, const char* why, test::Signal& counted,
               test::Signal& done) {
  std::vector<std::unique_ptr<RawClient>> held;
  for (int i = 0; i < count; ++i) held.push_back(std::make_unique<RawClient>(path));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int refused = 0;
  for (auto& c : held)
    if (c->closed_by_peer_now() && c->received().find(why) != std::string::npos) ++refused;
  counted.give();
  done.take();
  return refused;
}

// The reproducer of issue 36: one unprivileged user opens more connections
// than there are slots. It gets its share; another user and root still
// register.
TEST_F(RegistrationAbuseTest, OneUserCannotTakeEveryClientSlot) {
  if (geteuid() != 0) GTEST_SKIP() << "switching users needs root; not root";
  chmod(scratch_.path().c_str(), 0755);
  auto o = options();
  o.max_clients = 16;
  o.max_clients_per_uid = 4;
  o.root_reserved_clients = 4;
  o.register_timeout_ms = 60'000;
  ExporterThread exporter(o);
  ASSERT_EQ(exporter.error(), "");
  test::Signal counted, done;
  test::AsUser nobody(65534, [&] {
    return refused_of(o.socket_path, 20, "the most one user may have", counted, done);
  });
  ASSERT_TRUE(counted.take());
  // Another user registers a process of its own.
  test::AsUser daemon_user(1, [&] {
    RawClient c(o.socket_path);
    return c.send_bytes(register_line()) && c.read_until("\"ok\":true") ? 0 : 1;
  });
  EXPECT_EQ(daemon_user.wait(), 0);
  still_serves(o.socket_path);
  done.give();
  EXPECT_EQ(nobody.wait(), 16) << "of 20 connections, all but the user's 4 refused";
  const auto rejected = exporter.rejected();
  EXPECT_EQ(std::count(rejected.begin(), rejected.end(), std::string(kRejectUidLimit)), 16);
}

// However many users fill the slots, the last ones are root's.
TEST_F(RegistrationAbuseTest, TheLastSlotsAreRoots) {
  if (geteuid() != 0) GTEST_SKIP() << "switching users needs root; not root";
  chmod(scratch_.path().c_str(), 0755);
  auto o = options();
  o.max_clients = 8;
  o.max_clients_per_uid = 100;
  o.root_reserved_clients = 2;
  o.register_timeout_ms = 60'000;
  ExporterThread exporter(o);
  ASSERT_EQ(exporter.error(), "");
  test::Signal counted, done;
  test::AsUser nobody(
      65534, [&] { return refused_of(o.socket_path, 10, "too many clients", counted, done); });
  ASSERT_TRUE(counted.take());
  still_serves(o.socket_path);
  done.give();
  EXPECT_EQ(nobody.wait(), 4) << "6 of 8 slots taken, 2 left for root";
}

TEST_F(RegistrationAbuseTest, WithASocketGroupTheSocketIsMode0660AndThatGroups) {
  const group* g = getgrgid(getgid());
  ASSERT_NE(g, nullptr);
  auto o = options();
  o.socket_group = g->gr_name;
  ExporterThread exporter(o);
  ASSERT_EQ(exporter.error(), "");
  struct stat st {};
  ASSERT_EQ(stat(o.socket_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_gid, getgid());
  still_serves(o.socket_path);
}

TEST_F(RegistrationAbuseTest, WithoutASocketGroupTheSocketIsMode0666) {
  ExporterThread exporter(options());
  ASSERT_EQ(exporter.error(), "");
  struct stat st {};
  ASSERT_EQ(stat(options().socket_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
}

TEST_F(RegistrationAbuseTest, AnUnknownSocketGroupIsAnError) {
  auto o = options();
  o.socket_group = "ckptscope-no-such-group";
  ExporterThread exporter(o);
  EXPECT_THAT(exporter.error(), HasSubstr("--socket-group ckptscope-no-such-group: no such group"));
}

// logwatch beside the exporter reports a log line as evidence: any bytes.
// Before the fix the reporter's own dump() threw type_error.316.
TEST_F(RegistrationAbuseTest, AFailureReportWithNonUtf8EvidenceArrivesWithReplacements) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: failure reports are taken from root only";
  ExporterThread exporter(options());
  ASSERT_EQ(exporter.error(), "");
  auto reporter = FailureReporter::connect(options().socket_path, "ckptscope logwatch");
  ASSERT_TRUE(reporter) << reporter.error().message;
  FailureRecord f;
  f.kind = "log_anomaly";
  f.evidence = "NCCL WARN \xff\xfe bad bytes";
  f.time_ns = 5;
  ASSERT_TRUE((*reporter)->report(f));
  for (int i = 0; i < 500 && exporter.failures().empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto failures = exporter.failures();
  ASSERT_THAT(failures, SizeIs(1));
  EXPECT_EQ(failures[0].evidence, "NCCL WARN \xef\xbf\xbd\xef\xbf\xbd bad bytes");
}

}  // namespace
}  // namespace ckpt
