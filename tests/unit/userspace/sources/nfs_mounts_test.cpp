// The NFS mounts' records from real mountstats text: the sample in
// tests/data/third_party/mountstats (a production-like NFSv4 mount with a
// wrapped counter) and a later snapshot of it, with the eBPF cross-check side.
#include "sources/nfs_mounts.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace ckpt {
namespace {

const std::string kSample =
    CKPTSCOPE_SOURCE_DIR "/tests/data/third_party/mountstats/procfs-fixture-nfs4-tcp.mountstats";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<NfsMountStats> parse(const std::string& text) {
  auto m = parse_mountstats(text);
  EXPECT_TRUE(m) << (m ? "" : m.error().message);
  return m ? *m : std::vector<NfsMountStats>{};
}

// The sample, 10 s later: 100 more READs of 1 MiB, age +10.
std::string later(std::string text) {
  auto replace = [&](const std::string& from, const std::string& to) {
    auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("age:\t13968", "age:\t13978");
  replace("READ: 1298 1298 0 207680 1210292152 6 79386 79407",
          "READ: 1398 1398 0 223680 1315149752 7 80386 81407");
  replace("bytes:\t1207640230 0 0 0 1210214218 0 295483 0",
          "bytes:\t1312497830 0 0 0 1315071818 0 321083 0");
  return text;
}

TEST(NfsMountsTest, ServerComesFromTheDeviceWhenThereIsNoAddrOption) {
  auto mounts = parse(read_file(kSample));
  ASSERT_EQ(mounts.size(), 1u) << kSample << " is missing or changed";
  EXPECT_EQ(nfs_mount_server(mounts[0]), "192.168.1.1");
  auto eps = nfs_mount_endpoints(mounts);
  ASSERT_EQ(eps.size(), 1u);
  EXPECT_EQ(eps[0].host, "192.168.1.1");
  EXPECT_EQ(eps[0].port, 2049) << "port=0 means the default";
  NfsMountStats v6;
  v6.device = "[fd00::9]:/export";
  EXPECT_EQ(nfs_mount_server(v6), "fd00::9");
  NfsMountStats named;
  named.device = "filer-01:/ckpt";
  EXPECT_EQ(nfs_mount_server(named), "filer-01");
  EXPECT_TRUE(nfs_mount_endpoints({named}).empty()) << "a host name is not an endpoint";
  named.opts["addr"] = "10.1.2.3";
  named.opts["port"] = "20049";
  auto ep = nfs_mount_endpoints({named});
  ASSERT_EQ(ep.size(), 1u);
  EXPECT_EQ(ep[0].host, "10.1.2.3");
  EXPECT_EQ(ep[0].port, 20049);
}

TEST(NfsMountsTest, DeltaOfTheRealSampleWithTheEbpfSide) {
  const std::string text = read_file(kSample);
  auto before = parse(text);
  auto after = parse(later(text));
  RpcTotals t{"192.168.1.1:2049", 4, {}};
  RpcOpStats read;
  read.op = "READ";
  read.count = 100;
  read.bytes_received = 104'857'600;
  t.ops.push_back(read);
  RpcTotals other{"10.0.0.1:2049", 4, {read}};  // another server: not this mount's
  auto records = nfs_mount_records(before, after, std::vector<RpcTotals>{t, other});
  ASSERT_EQ(records.size(), 1u);
  const auto& r = records[0];
  EXPECT_EQ(r.device, "192.168.1.1:/srv/test");
  EXPECT_EQ(r.mount_point, "/mnt/nfs/test");
  EXPECT_EQ(r.version, "4.0");
  EXPECT_EQ(r.server, "192.168.1.1");
  EXPECT_EQ(r.interval_s, 10u);
  EXPECT_FALSE(r.since_mount);
  EXPECT_EQ(r.normal_read_bytes, 104'857'600u);
  EXPECT_EQ(r.server_read_bytes, 104'857'600u);
  // Only ops that moved: READ. The wrapped ACCESS queue sum did not change.
  ASSERT_EQ(r.ops.size(), 1u);
  EXPECT_EQ(r.ops[0].op, "READ");
  EXPECT_EQ(r.ops[0].ops, 100u);
  EXPECT_EQ(r.ops[0].bytes_received, 104'857'600u);
  EXPECT_EQ(r.ops[0].rtt_ms, 1000u);
  EXPECT_FALSE(r.ops[0].errors) << "iostats 1.0 has no per-op errors";
  ASSERT_TRUE(r.ebpf_ops);
  ASSERT_EQ(r.ebpf_ops->size(), 1u);
  EXPECT_EQ((*r.ebpf_ops)[0].count, 100u);

  auto without = nfs_mount_records(before, after, std::nullopt);
  EXPECT_FALSE(without[0].ebpf_ops) << "eBPF did not run: unknown, not zero";
}

TEST(NfsMountsTest, MountsSharingServerAndVersionGetNoEbpfSide) {
  const std::string text = read_file(kSample);
  auto mounts = parse(text);
  ASSERT_EQ(mounts.size(), 1u);
  auto twice = mounts;
  twice.push_back(mounts[0]);
  twice[1].mount_point = "/mnt/nfs/other";
  auto records = nfs_mount_records(twice, twice, std::vector<RpcTotals>{});
  ASSERT_EQ(records.size(), 2u);
  EXPECT_FALSE(records[0].ebpf_ops);
  EXPECT_FALSE(records[1].ebpf_ops);
}

}  // namespace
}  // namespace ckpt
