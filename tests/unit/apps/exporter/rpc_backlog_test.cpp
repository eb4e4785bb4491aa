// RPC backlog depth per NFS server from the real mountstats sample
// (tests/data/third_party/mountstats) and later snapshots of it made by editing its xprt: line with
// known deltas: depth = (delta bklog_u + delta sending_u) / delta sends.
#include "apps/exporter/rpc_backlog.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sources/mountstats.h"

namespace ckpt {
namespace {

const std::string kSample =
    CKPTSCOPE_SOURCE_DIR "/tests/data/third_party/mountstats/procfs-fixture-nfs4-tcp.mountstats";

// The sample's transport line: port 832, 6428 sends, bklog_u 0, sending_u 26.
const std::string kSampleXprt = "xprt:\ttcp 832 0 1 0 11 6428 6428 0 12154 0 24 26 5726";
// Its one NFS mount: 192.168.1.1:/srv/test, port=0 (the default, 2049).
const std::string kServer = "192.168.1.1:2049";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string sample_text() {
  std::string text = read_file(kSample);
  EXPECT_NE(text.find(kSampleXprt), std::string::npos)
      << kSample
      << " is missing or changed: the mountstats sample in tests/data/third_party is needed";
  return text;
}

std::vector<NfsMountStats> parse(const std::string& text) {
  auto m = parse_mountstats(text);
  EXPECT_TRUE(m) << (m ? "" : m.error().message);
  return m ? *m : std::vector<NfsMountStats>{};
}

// A TCP transport line as the kernel prints it (xs_tcp_print_stats), the
// sample's other fields kept.
std::string xprt(uint64_t port, uint64_t sends, uint64_t bklog_u, uint64_t sending_u) {
  return "xprt:\ttcp " + std::to_string(port) + " 0 1 0 11 " + std::to_string(sends) + " " +
         std::to_string(sends) + " 0 12154 " + std::to_string(bklog_u) + " 24 " +
         std::to_string(sending_u) + " 5726";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The sample with its transport line replaced.
std::string sample_with(const std::string& xprt_line) {
  return replace(sample_text(), kSampleXprt, xprt_line);
}

// The sample's NFS mount block (from its device line to the end), mounted
// again at `mount_point` with `xprt_line` as its transport, to append to a
// snapshot: a second mount of the same server.
std::string extra_mount(const std::string& mount_point, const std::string& xprt_line) {
  std::string text = sample_text();
  auto at = text.find("device 192.168.1.1:/srv/test");
  EXPECT_NE(at, std::string::npos);
  std::string block = at == std::string::npos ? "" : text.substr(at);
  block = replace(block, "mounted on /mnt/nfs/test", "mounted on " + mount_point);
  block = replace(block, kSampleXprt, xprt_line);
  if (!block.empty() && block.back() != '\n') block += '\n';
  return block;
}

std::string with_newline(std::string text) {
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text;
}

// A minimal NFS mount block as the kernel prints it, for servers the sample
// does not have.
std::string mount_block(const std::string& device, const std::string& mount_point,
                        const std::string& opts, const std::string& xprt_line) {
  return "device " + device + " mounted on " + mount_point +
         " with fstype nfs4 statvers=1.1\n"
         "\topts:\t" +
         opts +
         "\n"
         "\tage:\t100\n"
         "\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)\n"
         "\t" +
         xprt_line +
         "\n"
         "\tper-op statistics\n"
         "\t        NULL: 0 0 0 0 0 0 0 0 0\n";
}

TEST(RpcBacklogTest, ServerLabelOfTheRealSample) {
  auto mounts = parse(sample_text());
  ASSERT_EQ(mounts.size(), 1u);
  EXPECT_EQ(mount_server_label(mounts[0]), kServer) << "port=0 is the default port, 2049";
}

TEST(RpcBacklogTest, ServerLabelIPv4AndIPv6) {
  const std::string opts4 = "rw,vers=4.2,proto=tcp,port=2049,timeo=600,addr=10.0.0.5";
  auto v4 = parse(mount_block("10.0.0.5:/ckpt", "/ckpt", opts4, xprt(700, 0, 0, 0)));
  ASSERT_EQ(v4.size(), 1u);
  EXPECT_EQ(mount_server_label(v4[0]), "10.0.0.5:2049");

  // An IPv6 server: the device spells it in brackets, the label too.
  const std::string opts6 = "rw,vers=4.2,proto=tcp6,port=0,timeo=600";
  auto v6 = parse(mount_block("[fd00::5]:/ckpt", "/ckpt6", opts6, xprt(701, 0, 0, 0)));
  ASSERT_EQ(v6.size(), 1u);
  EXPECT_EQ(mount_server_label(v6[0]), "[fd00::5]:2049");

  // addr= wins over the device; a port other than 2049 is kept.
  const std::string opts6b = "rw,vers=4.1,proto=tcp6,port=20049,addr=fd00::6";
  auto v6b = parse(mount_block("[fd00::6]:/ckpt", "/ckpt6b", opts6b, xprt(702, 0, 0, 0)));
  ASSERT_EQ(v6b.size(), 1u);
  EXPECT_EQ(mount_server_label(v6b[0]), "[fd00::6]:20049");

  // A host name is no address: no label (nothing resolves it).
  auto named = parse(mount_block("filer-01:/ckpt", "/ckpt", "rw,vers=4.2", xprt(703, 0, 0, 0)));
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(mount_server_label(named[0]), "");
}

TEST(RpcBacklogTest, FirstSnapshotIsTheBaseline) {
  RpcBacklogDepth depth;
  auto out = depth.update(parse(sample_text()));
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(out.contains(kServer));
  EXPECT_EQ(out.at(kServer), 0.0) << "the mount's life totals are not an interval";
}

TEST(RpcBacklogTest, DepthIsWaitingPerSendBetweenSnapshots) {
  RpcBacklogDepth depth;
  depth.update(parse(sample_text()));
  // 200 more sends; backlog grew by 300, sending queue by 100: 2 RPCs waiting per send.
  auto out = depth.update(parse(sample_with(xprt(832, 6428 + 200, 0 + 300, 26 + 100))));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(out.at(kServer), 2.0);
  // Then 8 sends that saw 3 in the backlog and 2 waiting for the socket in all.
  out = depth.update(parse(sample_with(xprt(832, 6628 + 8, 300 + 3, 126 + 2))));
  EXPECT_DOUBLE_EQ(out.at(kServer), 0.625);
  // Only the sending queue.
  out = depth.update(parse(sample_with(xprt(832, 6636 + 4, 303, 128 + 2))));
  EXPECT_DOUBLE_EQ(out.at(kServer), 0.5);
}

TEST(RpcBacklogTest, NoSendsIsZero) {
  RpcBacklogDepth depth;
  depth.update(parse(sample_text()));
  auto out = depth.update(parse(sample_text()));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out.at(kServer), 0.0);
}

TEST(RpcBacklogTest, SharedTransportCountsOnce) {
  // /mnt/nfs/test and /mnt/nfs/other share one transport (port 832: the same
  // xprt line in both blocks); /mnt/nfs/third has its own (port 900).
  RpcBacklogDepth depth;
  const std::string t0 = with_newline(sample_text()) + extra_mount("/mnt/nfs/other", kSampleXprt) +
                         extra_mount("/mnt/nfs/third", xprt(900, 1000, 0, 0));
  auto out = depth.update(parse(t0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out.at(kServer), 0.0);

  const std::string shared = xprt(832, 6428 + 100, 0 + 50, 26);    // 0.5 per send
  const std::string own = xprt(900, 1000 + 100, 0 + 200, 0 + 50);  // 2.5 per send
  const std::string t1 = with_newline(sample_with(shared)) + extra_mount("/mnt/nfs/other", shared) +
                         extra_mount("/mnt/nfs/third", own);
  auto mounts = parse(t1);
  ASSERT_EQ(mounts.size(), 3u);
  out = depth.update(mounts);
  ASSERT_EQ(out.size(), 1u);
  // (50 + 250) / (100 + 100); counting the shared transport twice would give
  // (100 + 250) / 300.
  EXPECT_DOUBLE_EQ(out.at(kServer), 1.5);
}

TEST(RpcBacklogTest, NconnectTransportsOfOneMountAreSummed) {
  RpcBacklogDepth depth;
  auto two = [](const std::string& a, const std::string& b) {
    return replace(sample_text(), kSampleXprt, a + "\n\t" + b);
  };
  auto before = parse(two(xprt(832, 100, 0, 0), xprt(833, 100, 0, 0)));
  ASSERT_EQ(before.size(), 1u);
  ASSERT_EQ(before[0].xprts.size(), 2u);
  depth.update(before);
  auto out = depth.update(parse(two(xprt(832, 110, 30, 0), xprt(833, 130, 0, 0))));
  EXPECT_DOUBLE_EQ(out.at(kServer), 30.0 / 40.0);
}

TEST(RpcBacklogTest, ServersAreKeptApart) {
  RpcBacklogDepth depth;
  const std::string opts6 = "rw,vers=4.2,proto=tcp6,port=0";
  auto snap = [&](uint64_t v4_sends, uint64_t v4_bklog, uint64_t v6_sends, uint64_t v6_sending) {
    return parse(
        with_newline(sample_with(xprt(832, v4_sends, v4_bklog, 26))) +
        mount_block("[fd00::5]:/ckpt", "/ckpt6", opts6, xprt(701, v6_sends, 0, v6_sending)));
  };
  auto out = depth.update(snap(6428, 0, 10, 0));
  ASSERT_EQ(out.size(), 2u);
  out = depth.update(snap(6428 + 10, 10, 10 + 4, 12));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_DOUBLE_EQ(out.at(kServer), 1.0);
  EXPECT_DOUBLE_EQ(out.at("[fd00::5]:2049"), 3.0);
}

TEST(RpcBacklogTest, TransportThatDisappearsIsForgotten) {
  RpcBacklogDepth depth;
  depth.update(parse(sample_text()));  // port 832: 6428 sends
  // The connection went away; a new one (port 900) is the baseline.
  auto out = depth.update(parse(sample_with(xprt(900, 10, 0, 0))));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out.at(kServer), 0.0);
  // Port 832 again (same counters, 100 sends later): it was forgotten, so it
  // is a new baseline and only port 900 counts: 50 / 100.
  const std::string both = xprt(832, 6428 + 100, 0 + 100, 26) + "\n\t" + xprt(900, 10 + 100, 50, 0);
  out = depth.update(parse(sample_with(both)));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(out.at(kServer), 0.5) << "remembering port 832 would give (100 + 50) / 200";
}

TEST(RpcBacklogTest, MountThatDisappearsLeavesNoServer) {
  RpcBacklogDepth depth;
  depth.update(parse(sample_text()));
  auto out = depth.update({});
  EXPECT_TRUE(out.empty());
  // Mounted again: a baseline, not a delta against the old counters.
  out = depth.update(parse(sample_with(xprt(832, 6428 + 100, 1000, 26))));
  EXPECT_EQ(out.at(kServer), 0.0);
}

TEST(RpcBacklogTest, CountersThatGoDownAreANewTransportNotAWrap) {
  // 64-bit counters of sends do not wrap; smaller values on the same client
  // port mean the mount went and came back between snapshots (the port
  // range 665-1023 is small). That interval is a baseline, not 2^64 sends.
  RpcBacklogDepth depth;
  depth.update(parse(sample_with(xprt(832, 5000, 9000, 26))));
  auto out = depth.update(parse(sample_with(xprt(832, 30, 15, 6))));
  EXPECT_EQ(out.at(kServer), 0.0);
  // From the new baseline on, deltas as usual: 40 sends, 20 + 20 waiting.
  out = depth.update(parse(sample_with(xprt(832, 70, 35, 26))));
  EXPECT_DOUBLE_EQ(out.at(kServer), 1.0);
}

TEST(RpcBacklogTest, MountByHostNameIsSkipped) {
  RpcBacklogDepth depth;
  const std::string named =
      mount_block("filer-01:/ckpt", "/ckpt", "rw,vers=4.2", xprt(703, 5, 0, 0));
  auto out = depth.update(parse(with_newline(sample_text()) + named));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out.contains(kServer));
}

}  // namespace
}  // namespace ckpt
