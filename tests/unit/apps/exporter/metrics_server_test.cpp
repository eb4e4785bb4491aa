// The exporter's HTTP side with idle and slow clients (issues 22 and 36):
// 200 connections opened at once and never finished used to delay a scrape
// by 14.75 s (civetweb, a thread per connection). Now 1000 idle connections
// leave every one of 20 scrapes in a row answered well within a second; the
// text, its gzip form, the index page, IPv6, and the server's own counts in
// the registry it serves.
#include "apps/exporter/metrics_server.h"

#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/counter.h>

#include "tests/unit/apps/exporter/http_client.h"

namespace ckpt {
namespace {

using test::body_of;
using test::request;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The gzip member `data`, inflated; "" when it is not one.
std::string gunzip(const std::string& data) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return "";
  std::string out;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  char buf[65536];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
  }
  inflateEnd(&zs);
  return rc == Z_STREAM_END ? out : "";
}

// The exposition without the server's own families, which change with
// every request.
std::string without_http_families(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.find("ckptscope_http_") == std::string::npos) out += line + "\n";
  return out;
}

// The value of the sample `series` (name and labels, as exposed), -1 if absent.
double sample(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

bool have_ipv6_loopback() {
  const int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return ok;
}

class MetricsServerTest : public ::testing::Test {
 protected:
  void start(const HttpLimits& limits = {}, const std::string& where = "127.0.0.1:{}") {
    registry_ = std::make_shared<prometheus::Registry>();
    auto& family =
        prometheus::BuildCounter().Name("test_total").Help("a test").Register(*registry_);
    // Enough series that the text is worth compressing.
    for (int i = 0; i < 200; ++i)
      family.Add({{"series", std::to_string(i)}}).Increment(static_cast<double>(i));
    port_ = test::free_loopback_port();
    auto address = parse_listen_address(fmt::format(fmt::runtime(where), port_));
    ASSERT_TRUE(address) << address.error().message;
    auto server = MetricsServer::start(*address, registry_, "<p>index</p>", limits);
    ASSERT_TRUE(server) << server.error().message;
    server_ = std::move(*server);
  }
  std::shared_ptr<prometheus::Registry> registry_;
  uint16_t port_ = 0;
  std::unique_ptr<MetricsServer> server_;
};

// Issue 36's done-when: idle connections cannot delay a scrape past a second.
TEST_F(MetricsServerTest, AThousandIdleConnectionsLeaveEveryScrapeWithinASecond) {
  // The test holds 1000 client ends and the server 1000 server ends.
  if (test::raise_open_files(4096) < 2200)
    GTEST_SKIP() << "needs root to raise RLIMIT_NOFILE's hard limit past 2200";
  HttpLimits limits;
  limits.max_connections = 1100;  // all of them held: none evicted
  start(limits);
  test::IdleConnections idle;
  ASSERT_EQ(idle.open(port_, 1000), 1000u);
  std::vector<double> seconds;
  for (int i = 0; i < 20; ++i) {
    const auto t = request(port_, "/metrics", "", 3000);
    EXPECT_THAT(t.answer, StartsWith("HTTP/1.1 200 OK")) << "scrape " << i;
    EXPECT_THAT(t.answer, HasSubstr("test_total{series=\"199\"} 199")) << "scrape " << i;
    EXPECT_LT(t.seconds, 1.0) << "scrape " << i;
    seconds.push_back(t.seconds);
  }
  EXPECT_EQ(idle.closed_by_server(), 0u) << "the idle connections were to be held throughout";
  std::printf("1000 idle connections: 20 scrapes, median %.2f ms, max %.2f ms\n",
              1000 * test::median(seconds),
              1000 * *std::max_element(seconds.begin(), seconds.end()));
}

TEST_F(MetricsServerTest, ServesTheTextFormatWithItsContentType) {
  start();
  const auto t = request(port_, "/metrics");
  EXPECT_THAT(t.answer, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(t.answer,
              HasSubstr("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  EXPECT_THAT(body_of(t.answer), HasSubstr("# TYPE test_total counter\n"));
  EXPECT_THAT(body_of(t.answer), HasSubstr("test_total{series=\"7\"} 7\n"));
}

TEST_F(MetricsServerTest, GzipWhenTheScraperAllowsItDecompressesToTheSameText) {
  start();
  const auto plain = request(port_, "/metrics");
  const auto zipped = request(port_, "/metrics", "Accept-Encoding: gzip\r\n");
  EXPECT_THAT(zipped.answer, HasSubstr("\r\nContent-Encoding: gzip\r\n"));
  const std::string text = gunzip(body_of(zipped.answer));
  ASSERT_FALSE(text.empty()) << "not a gzip body";
  EXPECT_LT(body_of(zipped.answer).size(), text.size() / 3);
  EXPECT_EQ(without_http_families(text), without_http_families(body_of(plain.answer)));
  // Refused by weight: plain text.
  const auto refused = request(port_, "/metrics", "Accept-Encoding: gzip;q=0\r\n");
  EXPECT_THAT(refused.answer, Not(HasSubstr("Content-Encoding")));
}

TEST_F(MetricsServerTest, TheIndexPageAndNothingElse) {
  start();
  const auto index = request(port_, "/");
  EXPECT_THAT(index.answer, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(index.answer, HasSubstr("Content-Type: text/html; charset=utf-8\r\n"));
  EXPECT_EQ(body_of(index.answer), "<p>index</p>");
  EXPECT_THAT(request(port_, "/metricsx").answer, StartsWith("HTTP/1.1 404 Not Found"));
  EXPECT_THAT(exporter_index_html("1.2.3"), HasSubstr("<a href=\"/metrics\">/metrics</a>"));
  EXPECT_THAT(exporter_index_html("1.2.3"), HasSubstr("Version 1.2.3."));
}

TEST_F(MetricsServerTest, TheServersOwnCountsMove) {
  HttpLimits limits;
  limits.request_timeout_ms = 200;
  start(limits);
  // A request never finished, then closed by the timeout; a 404.
  const int fd = test::connect_to(port_);
  ASSERT_GE(fd, 0);
  test::send_all(fd, "GET /met");
  EXPECT_TRUE(test::closed_within(fd, 3000));
  close(fd);
  request(port_, "/nope");
  std::string text;
  // Each count lands as its connection closes: a few scrapes at most.
  for (int i = 0; i < 20; ++i) {
    text = body_of(request(port_, "/metrics").answer);
    if (sample(text, "ckptscope_http_connections_closed_total{reason=\"answered\"}") >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GE(sample(text, "ckptscope_http_requests_total{code=\"200\"}"), 1);
  EXPECT_EQ(sample(text, "ckptscope_http_requests_total{code=\"404\"}"), 1);
  EXPECT_EQ(sample(text, "ckptscope_http_requests_total{code=\"431\"}"), 0) << "exists at 0";
  EXPECT_EQ(sample(text, "ckptscope_http_connections_closed_total{reason=\"request_timeout\"}"), 1);
  EXPECT_GE(sample(text, "ckptscope_http_connections_closed_total{reason=\"answered\"}"), 2);
  EXPECT_EQ(sample(text, "ckptscope_http_connections_closed_total{reason=\"evicted\"}"), 0);
  EXPECT_GE(sample(text, "ckptscope_http_connections_open"), 1) << "this scrape's own";
  EXPECT_EQ(sample(text, "ckptscope_http_connections_limit"),
            static_cast<double>(server_->connection_limit()));
}

TEST_F(MetricsServerTest, AtTheBoundAScrapeIsAnsweredAndTheEvictionCounted) {
  HttpLimits limits;
  limits.max_connections = 50;
  start(limits);
  test::IdleConnections idle;
  ASSERT_EQ(idle.open(port_, 50), 50u);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto t = request(port_, "/metrics");
  EXPECT_THAT(t.answer, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_LT(t.seconds, 1.0);
  EXPECT_EQ(
      sample(body_of(t.answer), "ckptscope_http_connections_closed_total{reason=\"evicted\"}"), 1);
  EXPECT_EQ(idle.closed_by_server(), 1u);
}

TEST_F(MetricsServerTest, ServesOnIPv6) {
  if (!have_ipv6_loopback()) GTEST_SKIP() << "the kernel has no IPv6 loopback";
  start({}, "[::1]:{}");
  const int fd = test::connect_to(port_, /*v6=*/true);
  ASSERT_GE(fd, 0);
  test::send_all(fd, "GET /metrics HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(test::read_until_closed(fd, 3000), StartsWith("HTTP/1.1 200 OK"));
  close(fd);
}

TEST_F(MetricsServerTest, EveryAddressIsIPv4AndIPv6) {
  start({}, ":{}");
  EXPECT_THAT(request(port_, "/metrics").answer, StartsWith("HTTP/1.1 200 OK")) << "IPv4";
  if (!have_ipv6_loopback()) GTEST_SKIP() << "the kernel has no IPv6 loopback";
  const int fd = test::connect_to(port_, /*v6=*/true);
  ASSERT_GE(fd, 0);
  test::send_all(fd, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(test::read_until_closed(fd, 3000), StartsWith("HTTP/1.1 200 OK")) << "IPv6";
  close(fd);
}

TEST(MetricsServerStart, APortInUseIsNamed) {
  auto registry = std::make_shared<prometheus::Registry>();
  const uint16_t port = test::free_loopback_port();
  auto address = parse_listen_address(fmt::format("127.0.0.1:{}", port));
  ASSERT_TRUE(address);
  auto first = MetricsServer::start(*address, registry, "");
  ASSERT_TRUE(first) << first.error().message;
  auto second = MetricsServer::start(*address, registry, "");
  ASSERT_FALSE(second) << "two servers on one port";
  EXPECT_THAT(second.error().message,
              HasSubstr(fmt::format("cannot listen on 127.0.0.1:{}", port)));
  EXPECT_THAT(second.error().message, HasSubstr("in use"));
}

}  // namespace
}  // namespace ckpt
