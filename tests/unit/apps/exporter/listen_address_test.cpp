// `--listen` parsing, its display form, and check_can_listen and
// open_bound_socket against real sockets on loopback (no root needed).
#include "apps/exporter/listen_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt {
namespace {

using ::testing::HasSubstr;

// --- parse_listen_address: accepted -------------------------------------------

TEST(ListenAddressTest, IPv4) {
  auto a = parse_listen_address("127.0.0.1:9464");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9464);
  EXPECT_FALSE(a->v6);
  EXPECT_EQ(a->display(), "127.0.0.1:9464");
}

TEST(ListenAddressTest, IPv6InBrackets) {
  auto a = parse_listen_address("[::1]:9464");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 9464);
  EXPECT_TRUE(a->v6);
  EXPECT_EQ(a->display(), "[::1]:9464");

  auto b = parse_listen_address("[fd00::5]:65535");
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->host, "fd00::5");
  EXPECT_EQ(b->port, 65535);
  EXPECT_EQ(b->display(), "[fd00::5]:65535");
}

TEST(ListenAddressTest, EveryAddress) {
  auto a = parse_listen_address(":9464");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->host, "");
  EXPECT_EQ(a->port, 9464);
  EXPECT_EQ(a->display(), ":9464");
  EXPECT_EQ(kDefaultExporterPort, 9464);
}

TEST(ListenAddressTest, IPv4AnyAndPortOne) {
  auto a = parse_listen_address("0.0.0.0:1");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->host, "0.0.0.0");
  EXPECT_EQ(a->port, 1);
  EXPECT_FALSE(a->v6);
  EXPECT_EQ(a->display(), "0.0.0.0:1");
}

TEST(ListenAddressTest, DisplayParsesBackToTheSameAddress) {
  for (const char* text : {"127.0.0.1:9464", "[::1]:9464", ":9464", "0.0.0.0:1", "[fd00::5]:80"}) {
    auto a = parse_listen_address(text);
    ASSERT_TRUE(a) << text << ": " << a.error().message;
    EXPECT_EQ(a->display(), text);
    auto b = parse_listen_address(a->display());
    ASSERT_TRUE(b) << b.error().message;
    EXPECT_EQ(b->host, a->host);
    EXPECT_EQ(b->port, a->port);
    EXPECT_EQ(b->v6, a->v6);
  }
}

// --- parse_listen_address: rejected -------------------------------------------

struct Rejected {
  const char* input;
  const char* reason;  // a part of the message that says what is wrong
};

void PrintTo(const Rejected& r, std::ostream* os) { *os << "'" << r.input << "'"; }

class ListenAddressRejectTest : public ::testing::TestWithParam<Rejected> {};

TEST_P(ListenAddressRejectTest, NamesTheInputAndTheReason) {
  const Rejected& r = GetParam();
  auto a = parse_listen_address(r.input);
  ASSERT_FALSE(a) << r.input << " was accepted as " << a->display();
  EXPECT_THAT(a.error().message, HasSubstr(std::string("'") + r.input + "'"));
  EXPECT_THAT(a.error().message, HasSubstr(r.reason));
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, ListenAddressRejectTest,
    ::testing::Values(Rejected{"nonsense", "expected ADDR:PORT, [IPV6]:PORT or :PORT"},
                      Rejected{"9464", "expected ADDR:PORT, [IPV6]:PORT or :PORT"},
                      Rejected{"", "expected ADDR:PORT"},
                      Rejected{"1.2.3.4.5:80", "'1.2.3.4.5' is not an IPv4 address"},
                      Rejected{"127.0.0.1:0", "the port must be a number from 1 to 65535"},
                      Rejected{"127.0.0.1:65536", "the port must be a number from 1 to 65535"},
                      Rejected{"127.0.0.1:99999999999999999999", "from 1 to 65535"},
                      Rejected{"127.0.0.1:", "the port must be a number from 1 to 65535"},
                      Rejected{"127.0.0.1:-1", "from 1 to 65535"},
                      Rejected{"127.0.0.1:94a", "from 1 to 65535"},
                      Rejected{":0", "from 1 to 65535"},
                      Rejected{"::1:80", "an IPv6 address goes in brackets, [::1]:PORT"},
                      Rejected{"fd00::5:9464", "brackets"},
                      Rejected{"[::1]", "expected ADDR:PORT, [IPV6]:PORT or :PORT"},
                      Rejected{"[::1]80", "expected ADDR:PORT, [IPV6]:PORT or :PORT"},
                      Rejected{"[::1:80", "expected ADDR:PORT"},
                      Rejected{"[]:80", "expected ADDR:PORT"},
                      Rejected{"[nothost]:80", "'nothost' is not an IPv6 address"},
                      Rejected{"[127.0.0.1]:80", "not an IPv6 address"},
                      Rejected{"host.example:80", "'host.example' is not an IPv4 address"},
                      Rejected{"localhost:9464", "not an IPv4 address"}));

// --- check_can_listen -------------------------------------------------------------

// A socket of the test's own, closed at the end.
class Socket {
 public:
  explicit Socket(int family) : fd_(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0)) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  [[nodiscard]] int fd() const { return fd_; }

  // Binds to addr:0 (a port the kernel picks) and returns the port, 0 on failure.
  uint16_t bind_any_port(const char* addr) {
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (addr[0] != '\0' && std::string(addr).find(':') != std::string::npos) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      a->sin6_family = AF_INET6;
      if (inet_pton(AF_INET6, addr, &a->sin6_addr) != 1) return 0;
      len = sizeof(*a);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      a->sin_family = AF_INET;
      if (inet_pton(AF_INET, addr, &a->sin_addr) != 1) return 0;
      len = sizeof(*a);
    }
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0) return 0;
    len = sizeof(ss);
    if (getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
    return ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                          : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  }

 private:
  int fd_;
};

// A port nobody listens on now: one the kernel picked, let go at once.
uint16_t free_port(const char* addr) {
  Socket s(std::string(addr).find(':') != std::string::npos ? AF_INET6 : AF_INET);
  return s.bind_any_port(addr);
}

bool have_ipv6_loopback() {
  Socket s(AF_INET6);
  return s.fd() >= 0 && s.bind_any_port("::1") != 0;
}

ListenAddress parsed(const std::string& text) {
  auto a = parse_listen_address(text);
  EXPECT_TRUE(a) << text << ": " << (a ? "" : a.error().message);
  return a ? *a : ListenAddress{};
}

TEST(ListenAddressCheckTest, FreeLoopbackPortIsFine) {
  const uint16_t port = free_port("127.0.0.1");
  ASSERT_NE(port, 0);
  auto ok = check_can_listen(parsed("127.0.0.1:" + std::to_string(port)));
  EXPECT_TRUE(ok) << ok.error().message;
}

TEST(ListenAddressCheckTest, FreePortOnEveryAddressIsFine) {
  const uint16_t port = free_port("0.0.0.0");
  ASSERT_NE(port, 0);
  auto ok = check_can_listen(parsed(":" + std::to_string(port)));
  EXPECT_TRUE(ok) << ok.error().message;
}

TEST(ListenAddressCheckTest, FreeIPv6LoopbackPortIsFine) {
  if (!have_ipv6_loopback()) GTEST_SKIP() << "the kernel has no IPv6 loopback";
  const uint16_t port = free_port("::1");
  ASSERT_NE(port, 0);
  auto ok = check_can_listen(parsed("[::1]:" + std::to_string(port)));
  EXPECT_TRUE(ok) << ok.error().message;
}

TEST(ListenAddressCheckTest, PortInUse) {
  Socket held(AF_INET);
  const uint16_t port = held.bind_any_port("127.0.0.1");
  ASSERT_NE(port, 0);
  ASSERT_EQ(listen(held.fd(), 1), 0);
  const std::string where = "127.0.0.1:" + std::to_string(port);
  auto busy = check_can_listen(parsed(where));
  ASSERT_FALSE(busy) << where << " is held by this test";
  EXPECT_THAT(busy.error().message, HasSubstr("in use"));
  EXPECT_THAT(busy.error().message, HasSubstr(where));
}

TEST(ListenAddressCheckTest, PortInUseOnOneAddressBlocksEveryAddress) {
  Socket held(AF_INET);
  const uint16_t port = held.bind_any_port("127.0.0.1");
  ASSERT_NE(port, 0);
  ASSERT_EQ(listen(held.fd(), 1), 0);
  auto busy = check_can_listen(parsed(":" + std::to_string(port)));
  ASSERT_FALSE(busy);
  EXPECT_THAT(busy.error().message, HasSubstr("in use"));
  EXPECT_THAT(busy.error().message, HasSubstr(":" + std::to_string(port)));
}

TEST(ListenAddressCheckTest, IPv6PortInUse) {
  if (!have_ipv6_loopback()) GTEST_SKIP() << "the kernel has no IPv6 loopback";
  Socket held(AF_INET6);
  const uint16_t port = held.bind_any_port("::1");
  ASSERT_NE(port, 0);
  ASSERT_EQ(listen(held.fd(), 1), 0);
  auto busy = check_can_listen(parsed("[::1]:" + std::to_string(port)));
  ASSERT_FALSE(busy);
  EXPECT_THAT(busy.error().message, HasSubstr("in use"));
  EXPECT_THAT(busy.error().message, HasSubstr("[::1]:" + std::to_string(port)));
}

TEST(ListenAddressCheckTest, AddressNotOnThisHost) {
  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never a host's own address.
  auto bad = check_can_listen(parsed("192.0.2.1:9464"));
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("not one of this host's"));
  EXPECT_THAT(bad.error().message, HasSubstr("192.0.2.1:9464"));
}

TEST(ListenAddressCheckTest, IPv6AddressNotOnThisHost) {
  if (!have_ipv6_loopback()) GTEST_SKIP() << "the kernel has no IPv6 loopback";
  // 2001:db8::/32 is for documentation (RFC 3849).
  auto bad = check_can_listen(parsed("[2001:db8::1]:9464"));
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("not one of this host's"));
  EXPECT_THAT(bad.error().message, HasSubstr("[2001:db8::1]:9464"));
}

TEST(ListenAddressCheckTest, EveryAddressTakesIPv4AndIPv6) {
  const uint16_t port = free_port("0.0.0.0");
  ASSERT_NE(port, 0);
  auto fd = open_bound_socket(parsed(":" + std::to_string(port)));
  ASSERT_TRUE(fd) << fd.error().message;
  ASSERT_EQ(listen(*fd, 1), 0);
  // Held on every address: IPv4 loopback is taken too.
  auto v4 = check_can_listen(parsed("127.0.0.1:" + std::to_string(port)));
  EXPECT_FALSE(v4) << "\":PORT\" did not take IPv4";
  if (have_ipv6_loopback()) {
    auto v6 = check_can_listen(parsed("[::1]:" + std::to_string(port)));
    EXPECT_FALSE(v6) << "\":PORT\" did not take IPv6";
  }
  close(*fd);
}

TEST(ListenAddressCheckTest, PortIsFreeAgainOnceReleased) {
  uint16_t port = 0;
  {
    Socket held(AF_INET);
    port = held.bind_any_port("127.0.0.1");
    ASSERT_NE(port, 0);
    ASSERT_EQ(listen(held.fd(), 1), 0);
    ASSERT_FALSE(check_can_listen(parsed("127.0.0.1:" + std::to_string(port))));
  }
  auto ok = check_can_listen(parsed("127.0.0.1:" + std::to_string(port)));
  EXPECT_TRUE(ok) << ok.error().message << ": the check itself must not keep the port";
}

}  // namespace
}  // namespace ckpt
