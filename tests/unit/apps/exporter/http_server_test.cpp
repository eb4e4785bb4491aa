// The exporter's event-driven HTTP server (issue 36) against real sockets on
// loopback: the bound on connections and eviction at it, running out of file
// descriptors (in a forked child with a low RLIMIT_NOFILE), every deadline,
// and the protocol's edges (431, 400, 405, 505, HEAD, keep-alive,
// pipelining). Deadlines are short here; production's are in HttpLimits.
#include "apps/exporter/http_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/apps/exporter/http_client.h"

namespace ckpt {
namespace {

using test::body_of;
using test::closed_within;
using test::connect_to;
using test::read_one_answer;
using test::read_until_closed;
using test::request;
using test::send_all;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// What the server told its hooks, readable from the test's thread.
class Counts {
 public:
  HttpServerHooks hooks() {
    HttpServerHooks h;
    h.answered = [this](int status) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++answered_[status];
    };
    h.closed = [this](HttpCloseReason reason) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++closed_[reason];
    };
    h.open_connections = [this](size_t open) { open_ = open; };
    return h;
  }
  int answered(int status) {
    std::lock_guard<std::mutex> lock(mutex_);
    return answered_[status];
  }
  int closed(HttpCloseReason reason) {
    std::lock_guard<std::mutex> lock(mutex_);
    return closed_[reason];
  }
  // Waits up to `timeout_ms` for closed(reason) to reach `at_least`.
  bool wait_closed(HttpCloseReason reason, int at_least, int timeout_ms = 3000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      if (closed(reason) >= at_least) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return closed(reason) >= at_least;
  }
  size_t open() const { return open_.load(); }

 private:
  std::mutex mutex_;
  std::map<int, int> answered_;
  std::map<HttpCloseReason, int> closed_;
  std::atomic<size_t> open_{0};
};

// "/" says hello, "/path..." echoes the path, "/big" is 32 MiB, anything
// else is 404.
HttpResponse test_handler(const HttpRequest& r) {
  if (r.path == "/") return {200, "text/plain", "", "hello"};
  if (r.path == "/big") return {200, "text/plain", "", std::string(32u << 20, 'x')};
  if (r.path == "/throw") throw std::runtime_error("the handler failed");
  if (r.path.starts_with("/echo")) return {200, "text/plain", "", std::string(r.path)};
  return {404, "text/plain", "", "no"};
}

ListenAddress loopback(uint16_t port) {
  auto a = parse_listen_address(fmt::format("127.0.0.1:{}", port));
  EXPECT_TRUE(a);
  return a ? *a : ListenAddress{};
}

class HttpServerTest : public ::testing::Test {
 protected:
  void start(const HttpLimits& limits) {
    port_ = test::free_loopback_port();
    auto server = HttpServer::start(loopback(port_), test_handler, limits, counts_.hooks());
    ASSERT_TRUE(server) << server.error().message;
    server_ = std::move(*server);
  }
  Counts counts_;
  uint16_t port_ = 0;
  std::unique_ptr<HttpServer> server_;
};

// --- deadlines ---------------------------------------------------------------

TEST_F(HttpServerTest, AnUnfinishedRequestIsClosedAfterTheRequestTimeout) {
  HttpLimits limits;
  limits.request_timeout_ms = 300;
  start(limits);
  const int half = connect_to(port_);
  const int silent = connect_to(port_);
  ASSERT_GE(half, 0);
  ASSERT_GE(silent, 0);
  ASSERT_TRUE(send_all(half, "GET / HTTP/1.1\r\nHost: x\r\n"));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(closed_within(half, 3000)) << "a request begun was held past its 300 ms";
  EXPECT_TRUE(closed_within(silent, 3000)) << "a connection that sent nothing was held";
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, 0.2) << "closed before its timeout";
  close(half);
  close(silent);
  EXPECT_TRUE(counts_.wait_closed(HttpCloseReason::kRequestTimeout, 2));
}

TEST_F(HttpServerTest, ARequestTrickledInStillEndsAtTheRequestTimeout) {
  // A byte every 50 ms: the timeout counts from the connection, not from the
  // last byte, so a slow client holds it no longer than a silent one.
  HttpLimits limits;
  limits.request_timeout_ms = 400;
  start(limits);
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  const auto t0 = std::chrono::steady_clock::now();
  bool closed = false;
  for (int i = 0; i < 60 && !closed; ++i) {
    closed = !send_all(fd, "X") || closed_within(fd, 50);
  }
  const double held = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  close(fd);
  EXPECT_TRUE(closed);
  EXPECT_LT(held, 1.5);
  EXPECT_TRUE(counts_.wait_closed(HttpCloseReason::kRequestTimeout, 1));
}

TEST_F(HttpServerTest, AnAnswerNotReadIsClosedAfterTheWriteTimeout) {
  HttpLimits limits;
  limits.write_timeout_ms = 300;
  start(limits);
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  const int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  ASSERT_TRUE(send_all(fd, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n"));
  // 32 MiB never read: the server gives up on it.
  EXPECT_TRUE(counts_.wait_closed(HttpCloseReason::kWriteTimeout, 1, 5000));
  close(fd);
}

TEST_F(HttpServerTest, AnIdleKeptAliveConnectionIsClosedAfterTheKeepAliveTimeout) {
  HttpLimits limits;
  limits.keep_alive_timeout_ms = 300;
  start(limits);
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string rest;
  EXPECT_THAT(read_one_answer(fd, 2000, rest), StartsWith("HTTP/1.1 200 OK"));
  EXPECT_TRUE(closed_within(fd, 3000));
  close(fd);
  EXPECT_TRUE(counts_.wait_closed(HttpCloseReason::kKeepAliveTimeout, 1));
}

// --- the bound on connections, and running out of descriptors ------------------

TEST_F(HttpServerTest, AtTheBoundTheConnectionIdleLongestIsEvicted) {
  HttpLimits limits;
  limits.max_connections = 50;
  start(limits);
  EXPECT_EQ(server_->connection_limit(), 50u);
  const int oldest = connect_to(port_);
  ASSERT_GE(oldest, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // accepted first
  test::IdleConnections idle;
  ASSERT_EQ(idle.open(port_, 49), 49u);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // all 50 accepted
  EXPECT_EQ(counts_.open(), 50u);

  const auto t = request(port_, "/");
  EXPECT_THAT(t.answer, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_LT(t.seconds, 1.0);
  EXPECT_TRUE(closed_within(oldest, 1000)) << "the oldest idle connection was not the one evicted";
  close(oldest);
  EXPECT_GE(counts_.closed(HttpCloseReason::kEvicted), 1);
  EXPECT_EQ(idle.closed_by_server(), 0u) << "a younger connection was evicted before the oldest";
}

// In a child with RLIMIT_NOFILE at 64 and a bound far above it: accept()
// runs out of descriptors, and the server evicts to admit the scrape. The
// child answers "/stats" with what it counted.
TEST(HttpServerFds, OutOfDescriptorsAScrapeIsStillAnsweredWithinASecond) {
  const uint16_t port = test::free_loopback_port();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    rlimit low{64, 64};
    if (setrlimit(RLIMIT_NOFILE, &low) != 0) _exit(3);
    std::atomic<int> evicted{0};
    std::atomic<int> refused{0};
    HttpServerHooks hooks;
    hooks.closed = [&](HttpCloseReason reason) {
      if (reason == HttpCloseReason::kEvicted) ++evicted;
      if (reason == HttpCloseReason::kRefused) ++refused;
    };
    HttpLimits limits;
    limits.max_connections = 10000;  // the descriptors run out first
    auto server = HttpServer::start(
        loopback(port),
        [&](const HttpRequest& r) -> HttpResponse {
          if (r.path == "/stats")
            return {200, "text/plain", "",
                    fmt::format("evicted={} refused={}", evicted.load(), refused.load())};
          return test_handler(r);
        },
        limits, hooks);
    if (!server) _exit(4);
    if (write(ready[1], "r", 1) != 1) _exit(5);
    for (;;) pause();  // until the parent kills it
  }
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1) << "the child's server did not start";
  close(ready[0]);

  test::IdleConnections idle;
  EXPECT_EQ(idle.open(port, 200), 200u);  // the kernel's backlog takes what is not accepted
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::vector<double> seconds;
  for (int i = 0; i < 5; ++i) {
    const auto t = request(port, "/stats", "", 3000);
    EXPECT_THAT(t.answer, StartsWith("HTTP/1.1 200 OK")) << "scrape " << i;
    EXPECT_LT(t.seconds, 1.0) << "scrape " << i;
    seconds.push_back(t.seconds);
    if (i == 4) {
      EXPECT_THAT(body_of(t.answer), Not(HasSubstr("evicted=0 ")))
          << "the descriptors never ran out: the test proves nothing";
      std::printf("out of descriptors (RLIMIT_NOFILE 64, 200 idle): %s; scrapes max %.1f ms\n",
                  body_of(t.answer).c_str(),
                  1000 * *std::max_element(seconds.begin(), seconds.end()));
    }
  }
  EXPECT_GT(idle.closed_by_server(), 0u);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

// In a child with RLIMIT_NOFILE at 64, every descriptor taken by "the rest
// of the process" and no connection to evict: the reserve descriptor lets
// the server accept and close each new connection at once (the client hears
// it, the listen queue moves); once descriptors are free again, scrapes are
// answered.
TEST(HttpServerFds, WithNothingToEvictTheReserveRefusesAtOnceAndTheQueueMoves) {
  const uint16_t port = test::free_loopback_port();
  int ready[2];
  int release[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(release), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    close(release[1]);
    rlimit low{64, 64};
    if (setrlimit(RLIMIT_NOFILE, &low) != 0) _exit(3);
    auto server = HttpServer::start(loopback(port), test_handler, HttpLimits{});
    if (!server) _exit(4);
    // One answered request first: the loop's thread has started. Under the
    // sanitizers its start checks memory through a pipe(2), which fails
    // once every descriptor is taken and reads as a bad vptr.
    if (request(port, "/", "", 3000).answer.rfind("HTTP/1.1 200", 0) != 0) _exit(7);
    std::vector<int> taken;
    for (int fd = open("/dev/null", O_RDONLY | O_CLOEXEC); fd >= 0;
         fd = open("/dev/null", O_RDONLY | O_CLOEXEC))
      taken.push_back(fd);
    if (write(ready[1], "r", 1) != 1) _exit(5);
    char c = 0;
    if (read(release[0], &c, 1) != 1) _exit(6);
    for (int fd : taken) close(fd);
    if (write(ready[1], "r", 1) != 1) _exit(5);
    for (;;) pause();
  }
  close(ready[1]);
  close(release[0]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1) << "the child's server did not start";

  for (int i = 0; i < 3; ++i) {
    const int fd = connect_to(port);
    ASSERT_GE(fd, 0);
    EXPECT_TRUE(closed_within(fd, 1000)) << "connection " << i << " left waiting in the queue";
    close(fd);
  }
  ASSERT_EQ(write(release[1], "r", 1), 1);
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  const auto t = request(port, "/", "", 3000);
  EXPECT_THAT(t.answer, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_LT(t.seconds, 1.0);
  close(ready[0]);
  close(release[1]);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

TEST(HttpServerLimits, TheDefaultBoundLeavesDescriptorsToTheRestOfTheProcess) {
  EXPECT_EQ(connection_limit_for(1024), 1024 - kFdsKeptForTheRest);
  EXPECT_EQ(connection_limit_for(20000), kMaxConnectionLimit);
  EXPECT_EQ(connection_limit_for(1048576), kMaxConnectionLimit);
  EXPECT_EQ(connection_limit_for(300), 150u) << "half of a small limit";
  EXPECT_EQ(connection_limit_for(20), kMinConnectionLimit);
  EXPECT_EQ(connection_limit_for(0), kMinConnectionLimit);
}

// --- the protocol ---------------------------------------------------------------

TEST_F(HttpServerTest, ARequestHeadPastTheBoundIsAnswered431AndClosed) {
  start(HttpLimits{});
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  send_all(fd, "GET / HTTP/1.1\r\nX-Long: " + std::string(20000, 'a'));
  EXPECT_THAT(read_until_closed(fd, 3000),
              StartsWith("HTTP/1.1 431 Request Header Fields Too Large"));
  close(fd);
  EXPECT_TRUE(counts_.wait_closed(HttpCloseReason::kTooLarge, 1));
  EXPECT_EQ(counts_.answered(431), 1);
}

TEST_F(HttpServerTest, OtherMethodsAre405WithAllow) {
  start(HttpLimits{});
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  send_all(fd, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  const std::string answer = read_until_closed(fd, 3000);
  close(fd);
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 405 Method Not Allowed"));
  EXPECT_THAT(answer, HasSubstr("Allow: GET, HEAD\r\n"));
  EXPECT_THAT(answer, HasSubstr("Connection: close\r\n")) << "its body is never read";
  EXPECT_EQ(counts_.answered(405), 1);
}

TEST_F(HttpServerTest, ABodilessOtherMethodKeepsTheConnection) {
  start(HttpLimits{});
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  std::string rest;
  send_all(fd, "DELETE / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(read_one_answer(fd, 2000, rest), StartsWith("HTTP/1.1 405"));
  send_all(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(read_one_answer(fd, 2000, rest), StartsWith("HTTP/1.1 200 OK"));
  close(fd);
}

TEST_F(HttpServerTest, MalformedRequestsAre400AndAnotherMajorVersion505) {
  start(HttpLimits{});
  for (const char* bad : {"GARBAGE\r\n\r\n", "GET /\r\n\r\n", "GET / HTTP/1.1\r\nNo colon\r\n\r\n",
                          "GET / HTTP/1.1\r\n Folded: x\r\n\r\n", "GET nopath HTTP/1.1\r\n\r\n"}) {
    const int fd = connect_to(port_);
    ASSERT_GE(fd, 0);
    send_all(fd, bad);
    EXPECT_THAT(read_until_closed(fd, 3000), StartsWith("HTTP/1.1 400 Bad Request")) << bad;
    close(fd);
  }
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  send_all(fd, "GET / HTTP/2.0\r\n\r\n");
  EXPECT_THAT(read_until_closed(fd, 3000), StartsWith("HTTP/1.1 505"));
  close(fd);
  EXPECT_TRUE(counts_.wait_closed(HttpCloseReason::kMalformed, 6));
}

TEST_F(HttpServerTest, UnknownPathIs404AndAThrowingHandler500) {
  start(HttpLimits{});
  EXPECT_THAT(request(port_, "/nothing-here").answer, StartsWith("HTTP/1.1 404 Not Found"));
  const auto t = request(port_, "/throw");
  EXPECT_THAT(t.answer, StartsWith("HTTP/1.1 500"));
  EXPECT_THAT(body_of(t.answer), HasSubstr("the handler failed"));
  EXPECT_THAT(request(port_, "/").answer, StartsWith("HTTP/1.1 200 OK")) << "still serving";
}

TEST_F(HttpServerTest, HeadSendsTheHeadersOnly) {
  start(HttpLimits{});
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  send_all(fd, "HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string answer = read_until_closed(fd, 3000);
  close(fd);
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(answer, HasSubstr("Content-Length: 5\r\n")) << "the length a GET would have";
  EXPECT_EQ(body_of(answer), "");
}

TEST_F(HttpServerTest, KeepAliveServesTwoRequestsOnOneConnection) {
  start(HttpLimits{});
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  std::string rest;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(send_all(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    const std::string answer = read_one_answer(fd, 2000, rest);
    EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK")) << "request " << i;
    EXPECT_THAT(answer, Not(HasSubstr("Connection: close")));
    EXPECT_EQ(body_of(answer), "hello");
  }
  close(fd);
  EXPECT_EQ(counts_.answered(200), 2);
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  start(HttpLimits{});
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  send_all(fd,
           "GET /echo/a HTTP/1.1\r\nHost: x\r\n\r\n"
           "GET /echo/b HTTP/1.1\r\nHost: x\r\n\r\n"
           "\r\n"  // a stray empty line between requests, which RFC 9112 lets a client send
           "GET /echo/c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string answers = read_until_closed(fd, 3000);
  close(fd);
  const size_t a = answers.find("/echo/a");
  const size_t b = answers.find("/echo/b");
  const size_t c = answers.find("/echo/c");
  ASSERT_NE(a, std::string::npos) << answers;
  ASSERT_NE(b, std::string::npos) << answers;
  ASSERT_NE(c, std::string::npos) << answers;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
}

TEST_F(HttpServerTest, Http10ClosesUnlessAskedToKeepAlive) {
  start(HttpLimits{});
  int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  send_all(fd, "GET / HTTP/1.0\r\n\r\n");
  EXPECT_THAT(read_until_closed(fd, 3000), HasSubstr("Connection: close\r\n"));
  close(fd);
  fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  std::string rest;
  send_all(fd, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  EXPECT_THAT(read_one_answer(fd, 2000, rest), HasSubstr("Connection: keep-alive\r\n"));
  close(fd);
}

TEST_F(HttpServerTest, OpenConnectionsAreReported) {
  start(HttpLimits{});
  test::IdleConnections idle;
  ASSERT_EQ(idle.open(port_, 5), 5u);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (counts_.open() != 5 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(counts_.open(), 5u);
}

// --- listening -------------------------------------------------------------------

TEST(HttpServerListen, APortInUseIsNamed) {
  const uint16_t port = test::free_loopback_port();
  auto first = HttpServer::start(loopback(port), test_handler);
  ASSERT_TRUE(first) << first.error().message;
  auto second = HttpServer::start(loopback(port), test_handler);
  ASSERT_FALSE(second);
  EXPECT_THAT(second.error().message, HasSubstr(fmt::format("127.0.0.1:{}", port)));
  EXPECT_THAT(second.error().message, HasSubstr("in use"));
}

TEST(HttpServerListen, AnAddressNotOnThisHostIsNamed) {
  auto a = parse_listen_address("192.0.2.1:9464");  // TEST-NET-1, RFC 5737
  ASSERT_TRUE(a);
  auto server = HttpServer::start(*a, test_handler);
  ASSERT_FALSE(server);
  EXPECT_THAT(server.error().message, HasSubstr("192.0.2.1:9464"));
  EXPECT_THAT(server.error().message, HasSubstr("not one of this host's"));
}

}  // namespace
}  // namespace ckpt
