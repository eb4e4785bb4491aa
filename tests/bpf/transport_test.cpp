// The transport stage against a real TCP stack: a loopback link in a
// network namespace of the test's own, made lossy with nftables so that the
// kernel retransmits, and a server that resets its connections.
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.h"

namespace ckpt::test {
namespace {

using ::testing::HasSubstr;

class Netns {
 public:
  Netns() : name_("ckpt-test-" + std::to_string(getpid())) {
    ok_ =
        std::system(("ip netns add " + name_ + " && ip netns exec " + name_ + " ip link set lo up")
                        .c_str()) == 0;
  }
  ~Netns() { (void)std::system(("ip netns del " + name_ + " 2>/dev/null").c_str()); }
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] std::string exec() const { return "ip netns exec " + name_ + " "; }
  [[nodiscard]] std::vector<std::string> exec_argv() const {
    return {"ip", "netns", "exec", name_};
  }

 private:
  std::string name_;
  bool ok_ = false;
};

std::string free_port(int offset) { return std::to_string(30000 + (getpid() + offset) % 20000); }

TEST(TransportTest, LossyLinkRetransmitsAreCountedAndBytesStayExact) {
  REQUIRE_ROOT();
  Netns ns;
  ASSERT_TRUE(ns.ok()) << "ip netns add failed";
  ScratchDir dir;
  const std::string port = free_port(1);
  // Drop 3% of the data segments toward the sink as they arrive: the sender
  // retransmits. (A drop in the output hook would not: TCP sees the local
  // error and simply sends the segment again, as a first transmission.)
  ASSERT_EQ(
      std::system((ns.exec() + "nft add table inet lossy && " + ns.exec() +
                   "nft add chain inet lossy out '{ type filter hook input priority 0; }' && " +
                   ns.exec() + "nft add rule inet lossy out tcp dport " + port +
                   " numgen random mod 100 '<' 3 drop")
                      .c_str()),
      0);
  const uint64_t bytes = 8ull << 20;
  std::string sink = ns.exec() +
                     join({kWorkload, "sink", "--listen", "127.0.0.1:" + port, "--ready-file",
                           dir / "ready", "--expect-bytes", std::to_string(bytes)}) +
                     " >" + quote(dir / "sink.json") + " 2>&1 &";
  ASSERT_EQ(std::system(sink.c_str()), 0);
  for (int i = 0; i < 100 && !std::filesystem::exists(dir / "ready"); ++i) usleep(50'000);
  ASSERT_TRUE(std::filesystem::exists(dir / "ready")) << slurp(dir / "sink.json");
  std::ofstream(dir / "cfg.json") << R"({"failures": {"retransmit_storm_per_s": 1}})";
  std::vector<std::string> argv = {
      kCkptscope,   "run",      "--trace",        dir / "trace.db",     "--log-dir",
      dir / "logs", "--config", dir / "cfg.json", "--storage-endpoint", "127.0.0.1:" + port,
      "--"};
  for (const auto& a : ns.exec_argv()) argv.push_back(a);
  for (const auto& a :
       {kWorkload, std::string("--dir"), dir / "ckpt", std::string("--shards"), std::string("2"),
        std::string("--shard-size"), std::string("4M"), std::string("--checkpoints"),
        std::string("1"), std::string("--mode"), std::string("save"), std::string("--tcp-sink"),
        "127.0.0.1:" + port, std::string("--ground-truth"), dir / "truth.json"})
    argv.push_back(a);
  auto r = run(argv, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  Trace t = read_trace_or_fail(dir / "trace.db");
  ASSERT_EQ(t.connections.size(), 1u) << r.err;
  const auto& c = t.connections[0];
  EXPECT_GT(c.retransmits, 0u) << "3% loss and no retransmit seen";
  EXPECT_NEAR(static_cast<double>(c.bytes_sent), static_cast<double>(bytes), 0.01 * bytes);
  // Every retransmit the kernel made is in the samples' cumulative counter.
  uint32_t max_retrans = 0;
  for (const auto& s : t.tcp_samples) max_retrans = std::max(max_retrans, s.total_retrans);
  EXPECT_EQ(max_retrans, c.retransmits);
  ASSERT_EQ(t.checkpoints.size(), 1u);
  std::vector<std::string> kinds;
  for (const auto& f : t.checkpoints[0].failures) kinds.push_back(f.kind);
  if (c.retransmits >= 10) {
    EXPECT_THAT(kinds, ::testing::Contains("tcp_retransmit_storm"));
  }
}

TEST(TransportTest, AResetFromTheServerIsAFailure) {
  REQUIRE_ROOT();
  Netns ns;
  ASSERT_TRUE(ns.ok()) << "ip netns add failed";
  ScratchDir dir;
  const std::string port = free_port(2);
  // A server that accepts, then closes with SO_LINGER {1, 0}: a reset.
  const std::string server =
      "import socket,struct,sys\n"
      "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
      "s.bind(('127.0.0.1'," +
      port +
      ")); s.listen(1)\n"
      "open(sys.argv[1],'w').close()\n"
      "c,_=s.accept(); c.recv(100)\n"
      "c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii',1,0)); c.close()\n";
  const std::string client =
      "import socket,time\n"
      "c=socket.create_connection(('127.0.0.1'," +
      port +
      "))\n"
      "c.sendall(b'x'*50)\n"
      "time.sleep(0.5)\n"
      "try:\n  c.sendall(b'y'*50); c.recv(10)\nexcept OSError as e:\n  print(e)\n";
  std::ofstream(dir / "server.py") << server;
  std::ofstream(dir / "client.py") << client;
  ASSERT_EQ(std::system((ns.exec() + "python3 " + quote(dir / "server.py") + " " +
                         quote(dir / "ready") + " >/dev/null 2>&1 &")
                            .c_str()),
            0);
  for (int i = 0; i < 100 && !std::filesystem::exists(dir / "ready"); ++i) usleep(50'000);
  ASSERT_TRUE(std::filesystem::exists(dir / "ready"));
  std::vector<std::string> argv = {kCkptscope,
                                   "run",
                                   "--trace",
                                   dir / "trace.db",
                                   "--log-dir",
                                   dir / "logs",
                                   "--storage-endpoint",
                                   "127.0.0.1:" + port,
                                   "--"};
  for (const auto& a : ns.exec_argv()) argv.push_back(a);
  argv.push_back("python3");
  argv.push_back(dir / "client.py");
  auto r = run(argv, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  Trace t = read_trace_or_fail(dir / "trace.db");
  ASSERT_EQ(t.connections.size(), 1u) << r.err;
  EXPECT_GE(t.connections[0].resets, 1u);
  ASSERT_FALSE(t.failures.empty()) << "the reset is the job's failure (no checkpoint around it)";
  EXPECT_EQ(t.failures[0].kind, "tcp_reset");
  EXPECT_THAT(t.failures[0].evidence, HasSubstr("127.0.0.1:" + port));
  EXPECT_THAT(r.err, HasSubstr("tcp_reset")) << "the summary shows it";
}

}  // namespace
}  // namespace ckpt::test
