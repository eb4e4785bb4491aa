// The exporter's HTTP side with idle and slow clients (issue 22): a few
// connections that never finish their request used to hold both of
// civetweb's two worker threads, and every scrape waited for ever. Now 50
// idle connections leave a scrape answered well within a second, and an
// unfinished request is closed after the request timeout.
#include "apps/exporter/metrics_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/counter.h>

namespace ckpt {
namespace {

using ::testing::HasSubstr;

uint16_t free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

int connect_to(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Reads until the peer closes or `timeout_ms` passes; what was read.
std::string read_all(int fd, int timeout_ms) {
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return got;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) return got;
    char buf[8192];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return got;
    got.append(buf, static_cast<size_t>(n));
  }
}

// One GET /metrics: the answer and how long it took.
std::pair<std::string, double> scrape(uint16_t port) {
  const auto t0 = std::chrono::steady_clock::now();
  const int fd = connect_to(port);
  if (fd < 0) return {"", 0};
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  (void)send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string got = read_all(fd, 3000);
  close(fd);
  return {got, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

class MetricsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = std::make_shared<prometheus::Registry>();
    prometheus::BuildCounter().Name("test_total").Help("a test").Register(*registry_).Add({});
    port_ = free_port();
    auto address = parse_listen_address("127.0.0.1:" + std::to_string(port_));
    ASSERT_TRUE(address);
    HttpLimits limits;
    limits.request_timeout_ms = 1000;  // the tests wait for it; production has 5 s
    auto server = MetricsServer::start(*address, registry_, "<p>index</p>", limits);
    ASSERT_TRUE(server) << server.error().message;
    server_ = std::move(*server);
  }
  std::shared_ptr<prometheus::Registry> registry_;
  uint16_t port_ = 0;
  std::unique_ptr<MetricsServer> server_;
};

TEST_F(MetricsServerTest, FiftyIdleConnectionsLeaveAScrapeAnsweredWithinASecond) {
  std::vector<int> idle;
  for (int i = 0; i < 50; ++i) {
    const int fd = connect_to(port_);
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  // Half of them have sent part of a request, the rest nothing at all.
  for (size_t i = 0; i < idle.size(); i += 2) (void)send(idle[i], "GET /met", 8, MSG_NOSIGNAL);
  for (int i = 0; i < 5; ++i) {
    auto [answer, seconds] = scrape(port_);
    EXPECT_THAT(answer, HasSubstr("200 OK"));
    EXPECT_THAT(answer, HasSubstr("test_total 0"));
    EXPECT_LT(seconds, 1.0);
  }
  for (int fd : idle) close(fd);
}

TEST_F(MetricsServerTest, AnUnfinishedRequestIsClosedAfterTheRequestTimeout) {
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  (void)send(fd, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL);
  const auto t0 = std::chrono::steady_clock::now();
  read_all(fd, 10000);  // returns when the server hangs up
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  close(fd);
  EXPECT_LT(waited, 5.0) << "the server held an unfinished request past its 1 s timeout";
}

TEST(CivetwebOptions, SetThreadsQueueTimeoutsAndKeepAlive) {
  auto address = parse_listen_address(":9464");
  ASSERT_TRUE(address);
  const auto o = civetweb_options(*address, HttpLimits{});
  auto value = [&o](const std::string& key) {
    for (size_t i = 0; i + 1 < o.size(); i += 2)
      if (o[i] == key) return o[i + 1];
    return std::string("(unset)");
  };
  EXPECT_EQ(value("num_threads"), "64");
  EXPECT_EQ(value("connection_queue"), "64");
  EXPECT_EQ(value("request_timeout_ms"), "5000");
  EXPECT_EQ(value("enable_keep_alive"), "no");
  EXPECT_EQ(value("keep_alive_timeout_ms"), "500");
  EXPECT_EQ(value("listening_ports"), address->civetweb());
}

}  // namespace
}  // namespace ckpt
