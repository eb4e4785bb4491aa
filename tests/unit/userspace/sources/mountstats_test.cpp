#include "sources/mountstats.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace ckpt {
namespace {

const std::string kSample =
    CKPTSCOPE_SOURCE_DIR "/tests/data/third_party/mountstats/procfs-fixture-nfs4-tcp.mountstats";

// The real sample, read once per test; a missing file fails (never skips):
// these numbers are the parser's ground truth.
NfsMountStats real_sample_mount() {
  auto mounts = read_mountstats(kSample);
  if (!mounts) {
    ADD_FAILURE() << mounts.error().message;
    return {};
  }
  if (mounts->size() != 1) {
    ADD_FAILURE() << "expected one NFS mount in " << kSample << ", got " << mounts->size();
    return {};
  }
  return mounts->front();
}

TEST(MountstatsTest, RealSampleIsPresent) {
  ASSERT_TRUE(std::filesystem::exists(kSample))
      << kSample << " is missing: the mountstats sample in tests/data/third_party is needed";
}

TEST(MountstatsTest, ParsesRealSample) {
  auto mounts = read_mountstats(kSample);
  ASSERT_TRUE(mounts) << mounts.error().message;
  ASSERT_EQ(mounts->size(), 1U);  // rootfs, sysfs, proc and ext4 are skipped
  const NfsMountStats& m = mounts->front();
  EXPECT_EQ(m.device, "192.168.1.1:/srv/test");
  EXPECT_EQ(m.mount_point, "/mnt/nfs/test");
  EXPECT_EQ(m.fstype, "nfs4");
  EXPECT_EQ(m.statvers, "1.1");
  EXPECT_EQ(m.opts.at("vers"), "4.0");
  EXPECT_EQ(m.opts.at("wsize"), "1048576");
  EXPECT_EQ(m.opts.at("rsize"), "1048576");
  EXPECT_EQ(m.opts.at("proto"), "tcp");
  EXPECT_EQ(m.opts.at("clientaddr"), "192.168.1.5");
  ASSERT_EQ(m.opts.count("hard"), 1U);
  EXPECT_EQ(m.opts.at("hard"), "");
  EXPECT_EQ(m.opts.size(), 18U);
  EXPECT_EQ(m.age_s, 13968U);
  EXPECT_EQ(m.events, (std::vector<uint64_t>{52, 226, 0, 0,  1, 13, 398, 0, 0, 331, 0, 47, 0, 0,
                                             77, 0,   0, 77, 0, 0,  0,   0, 0, 0,   0, 0,  0}));
  EXPECT_EQ(m.bytes, (std::vector<uint64_t>{1207640230, 0, 0, 0, 1210214218, 0, 295483, 0}));
  EXPECT_EQ(m.normal_read_bytes(), 1207640230U);
  EXPECT_EQ(m.normal_write_bytes(), 0U);
  EXPECT_EQ(m.direct_read_bytes(), 0U);
  EXPECT_EQ(m.direct_write_bytes(), 0U);
  EXPECT_EQ(m.server_read_bytes(), 1210214218U);
  EXPECT_EQ(m.server_write_bytes(), 0U);
  EXPECT_EQ(m.pages_read(), 295483U);
  EXPECT_EQ(m.pages_written(), 0U);
  EXPECT_EQ(m.iostats_version, "1.0");

  ASSERT_EQ(m.xprts.size(), 1U);
  const NfsXprtStats& x = m.xprts[0];
  EXPECT_EQ(x.proto, "tcp");
  EXPECT_EQ(x.port, 832U);
  EXPECT_EQ(x.bind_count, 0U);
  EXPECT_EQ(x.connect_count, 1U);
  EXPECT_EQ(x.connect_time, 0U);
  EXPECT_EQ(x.idle_time, 11U);
  EXPECT_EQ(x.sends, 6428U);
  EXPECT_EQ(x.receives, 6428U);
  EXPECT_EQ(x.bad_xids, 0U);
  EXPECT_EQ(x.req_u, 12154U);
  EXPECT_EQ(x.backlog_u, 0U);
  EXPECT_EQ(x.max_slots, 24U);
  EXPECT_EQ(x.sending_u, 26U);
  EXPECT_EQ(x.pending_u, 5726U);
  EXPECT_EQ(x.raw, "tcp 832 0 1 0 11 6428 6428 0 12154 0 24 26 5726");
  EXPECT_DOUBLE_EQ(x.avg_pending_queue(), 5726.0 / 6428.0);
  EXPECT_DOUBLE_EQ(x.avg_requests_outstanding(), 12154.0 / 6428.0);
  EXPECT_DOUBLE_EQ(x.avg_backlog_queue(), 0.0);

  ASSERT_EQ(m.ops.size(), 4U);
  EXPECT_EQ(m.ops[0].op, "NULL");
  EXPECT_EQ(m.ops[2].op, "WRITE");
  const NfsOpStats* read = m.op("READ");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->ops, 1298U);
  EXPECT_EQ(read->transmissions, 1298U);
  EXPECT_EQ(read->major_timeouts, 0U);
  EXPECT_EQ(read->bytes_sent, 207680U);
  EXPECT_EQ(read->bytes_received, 1210292152U);
  EXPECT_EQ(read->queue_ms, 6U);
  EXPECT_EQ(read->rtt_ms, 79386U);
  EXPECT_EQ(read->execute_ms, 79407U);
  EXPECT_FALSE(read->errors.has_value());
  EXPECT_DOUBLE_EQ(read->avg_rtt_ms(), 79386.0 / 1298.0);
  EXPECT_DOUBLE_EQ(read->avg_queue_ms(), 6.0 / 1298.0);
  EXPECT_DOUBLE_EQ(read->avg_execute_ms(), 79407.0 / 1298.0);
  EXPECT_DOUBLE_EQ(read->bytes_per_op(), (207680.0 + 1210292152.0) / 1298.0);
  const NfsOpStats* access = m.op("ACCESS");
  ASSERT_NE(access, nullptr);
  EXPECT_EQ(access->ops, 2927395007U);
  EXPECT_EQ(access->transmissions, 2927394995U);
  // The wrapped value is the 6th counter, so queue ms by the kernel's field
  // order (Prometheus procfs reads it as CumulativeQueueMilliseconds too).
  EXPECT_EQ(access->queue_ms, 18446743919241604546ULL);  // kept as printed
  EXPECT_EQ(access->rtt_ms, 1667369447U);
  EXPECT_EQ(access->execute_ms, 1953587717U);
  for (const auto& op : m.ops) EXPECT_FALSE(op.errors.has_value()) << op.op;  // iostats 1.0
  EXPECT_EQ(m.op("WRITE")->ops, 0U);
  EXPECT_DOUBLE_EQ(m.op("WRITE")->avg_rtt_ms(), 0.0);  // no RPC: 0, not a division by zero
  EXPECT_EQ(m.op("COMMIT"), nullptr);
}

// An NFSv3 mount over UDP from a kernel with RPC iostats 1.1 (the errors
// field), between two other mounts, and an NFSv4.2 mount with nconnect=2.
constexpr std::string_view kIostats11 =
    "device /dev/sda1 mounted on / with fstype ext4\n"
    "device srv:/export mounted on /mnt/v3 with fstype nfs statvers=1.1\n"
    "\topts:\trw,vers=3,rsize=32768,wsize=32768,proto=udp,hard\n"
    "\tage:\t100\n"
    "\tcaps:\tcaps=0x3fc7,wtmult=4096,dtsize=4096,bsize=0,namlen=255\n"
    "\tsec:\tflavor=1,pseudoflavor=1\n"
    "\tevents:\t1 2 3\n"
    "\tbytes:\t10 20 30 40 50 60 70 80\n"
    "\tRPC iostats version: 1.1  p/v: 100003/3 (nfs)\n"
    "\txprt:\tudp 901 1 500 498 2 700 5 16 40 900\n"
    "\tper-op statistics\n"
    "\t        NULL: 1 1 0 44 24 0 0 0 0\n"
    "\t       WRITE: 200 203 1 26214400 24000 4000 6000 10100 3\n"
    "\t      COMMIT: 2 2 0 300 200 1 20 21 0\n"
    "\n"
    "device tmpfs mounted on /dev/shm with fstype tmpfs\n"
    "device 10.0.0.5:/ckpt mounted on /ckpt with fstype nfs4 statvers=1.1\n"
    "\topts:\trw,vers=4.2,nconnect=2\n"
    "\tage:\t7\n"
    "\timpl_id:\tname='',domain='',date='0,0'\n"
    "\tevents:\t0 0\n"
    "\tbytes:\t0 0 0 0 0 0 0 0\n"
    "\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)\n"
    "\txprt:\ttcp 700 0 1 0 0 10 10 0 10 0 2 0 10\n"
    "\txprt:\ttcp 701 0 1 0 -1 20 20 0 40 0 4 0 20\n"
    "\tper-op statistics\n"
    "\t        READ: 4 4 0 400 4096 1 8 10 1\n"
    "\n";

TEST(MountstatsTest, Iostats11ParsesErrorsUdpAndSeveralTransports) {
  auto mounts = parse_mountstats(kIostats11);
  ASSERT_TRUE(mounts) << mounts.error().message;
  ASSERT_EQ(mounts->size(), 2U);
  const NfsMountStats& v3 = (*mounts)[0];
  EXPECT_EQ(v3.fstype, "nfs");
  EXPECT_EQ(v3.iostats_version, "1.1");
  const NfsOpStats* write = v3.op("WRITE");
  ASSERT_NE(write, nullptr);
  EXPECT_EQ(write->transmissions, 203U);
  EXPECT_EQ(write->major_timeouts, 1U);
  EXPECT_EQ(write->execute_ms, 10100U);
  ASSERT_TRUE(write->errors.has_value());
  EXPECT_EQ(*write->errors, 3U);
  EXPECT_EQ(v3.op("COMMIT")->errors, std::optional<uint64_t>(0));
  ASSERT_EQ(v3.xprts.size(), 1U);
  const NfsXprtStats& udp = v3.xprts[0];
  EXPECT_EQ(udp.proto, "udp");
  EXPECT_EQ(udp.port, 901U);
  EXPECT_EQ(udp.bind_count, 1U);
  EXPECT_EQ(udp.connect_count, 0U);  // not printed for udp
  EXPECT_EQ(udp.idle_time, 0U);
  EXPECT_EQ(udp.sends, 500U);
  EXPECT_EQ(udp.receives, 498U);
  EXPECT_EQ(udp.bad_xids, 2U);
  EXPECT_EQ(udp.req_u, 700U);
  EXPECT_EQ(udp.backlog_u, 5U);
  EXPECT_EQ(udp.max_slots, 16U);
  EXPECT_EQ(udp.sending_u, 40U);
  EXPECT_EQ(udp.pending_u, 900U);
  EXPECT_DOUBLE_EQ(udp.avg_sending_queue(), 40.0 / 500.0);

  const NfsMountStats& v4 = (*mounts)[1];
  EXPECT_EQ(v4.device, "10.0.0.5:/ckpt");
  EXPECT_EQ(v4.opts.at("nconnect"), "2");
  ASSERT_EQ(v4.xprts.size(), 2U);
  EXPECT_EQ(v4.xprts[1].port, 701U);
  EXPECT_EQ(v4.xprts[1].idle_time, 0U);  // printed signed: -1 is "just used"
  EXPECT_EQ(v4.xprts[1].pending_u, 20U);
  ASSERT_EQ(v4.ops.size(), 1U);
  EXPECT_EQ(v4.ops[0].errors, std::optional<uint64_t>(1));
}

constexpr std::string_view kHead =
    "device srv:/e mounted on /m with fstype nfs4 statvers=1.1\n"  // line 1
    "\tage:\t5\n"                                                  // line 2
    "\tRPC iostats version: 1.0  p/v: 100003/4 (nfs)\n"            // line 3
    "\tper-op statistics\n";                                       // line 4

std::string parse_error(std::string_view text) {
  auto mounts = parse_mountstats(text);
  if (mounts) return "parsed without error";
  return mounts.error().message;
}

TEST(MountstatsTest, NonNumberCounterNamesLineAndField) {
  const std::string msg = parse_error(std::string(kHead) + "\t        NULL: 0 0 0 0 0 0 0 0\n" +
                                      "\t        READ: 1 1 0 x12 0 0 0 0\n");
  EXPECT_NE(msg.find("line 6"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'x12'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("READ bytes_sent"), std::string::npos) << msg;

  const std::string events =
      parse_error("device srv:/e mounted on /m with fstype nfs statvers=1.1\n\tevents:\t1 x12 3\n");
  EXPECT_NE(events.find("line 2"), std::string::npos) << events;
  EXPECT_NE(events.find("'x12'"), std::string::npos) << events;

  const std::string age = parse_error(
      "device a:/ mounted on / with fstype ext4\n"
      "device srv:/e mounted on /m with fstype nfs statvers=1.1\n\tage:\tx12\n");
  EXPECT_NE(age.find("line 3"), std::string::npos) << age;
}

TEST(MountstatsTest, PerOpLineWithWrongFieldCountIsAnError) {
  const std::string five = parse_error(std::string(kHead) + "\t       WRITE: 1 2 3 4 5\n");
  EXPECT_NE(five.find("line 5"), std::string::npos) << five;
  EXPECT_NE(five.find("WRITE has 5 fields"), std::string::npos) << five;
  // iostats 1.0 has no errors field: a 9th field does not belong there either.
  const std::string nine = parse_error(std::string(kHead) + "\t       WRITE: 1 2 3 4 5 6 7 8 9\n");
  EXPECT_NE(nine.find("line 5"), std::string::npos) << nine;
  // A version after 1.1 may append fields: the first nine are read, the rest ignored.
  auto later = parse_mountstats(
      "device srv:/e mounted on /m with fstype nfs statvers=1.1\n"
      "\tRPC iostats version: 1.2  p/v: 100003/3 (nfs)\n"
      "\tper-op statistics\n"
      "\t        READ: 1 2 3 4 5 6 7 8 9 10\n");
  ASSERT_TRUE(later) << later.error().message;
  EXPECT_EQ(later->front().ops[0].errors, std::optional<uint64_t>(9));
}

TEST(MountstatsTest, MalformedTransportAndMountLinesAreErrors) {
  const std::string xprt = parse_error(
      "device srv:/e mounted on /m with fstype nfs statvers=1.1\n"
      "\tRPC iostats version: 1.1  p/v: 100003/3 (nfs)\n"
      "\txprt:\ttcp 1 2 3\n");
  EXPECT_NE(xprt.find("line 3"), std::string::npos) << xprt;
  EXPECT_NE(xprt.find("tcp xprt line has 3 numbers"), std::string::npos) << xprt;
  const std::string mount = parse_error("device srv:/e mounted at /m with fstype nfs\n");
  EXPECT_NE(mount.find("line 1"), std::string::npos) << mount;
}

TEST(MountstatsTest, NoNfsMountsGivesEmptyList) {
  auto mounts = parse_mountstats(
      "device rootfs mounted on / with fstype rootfs\n"
      "device proc mounted on /proc with fstype proc\n"
      "no device mounted on /mnt/x with fstype tmpfs\n"
      "device /dev/sda1 mounted on / with fstype ext4\n");
  ASSERT_TRUE(mounts) << mounts.error().message;
  EXPECT_TRUE(mounts->empty());
  auto empty = parse_mountstats("");
  ASSERT_TRUE(empty) << empty.error().message;
  EXPECT_TRUE(empty->empty());
}

TEST(MountstatsTest, UnknownLinesAndSectionsAreSkipped) {
  auto mounts = parse_mountstats(
      "device srv:/e mounted on /m with fstype nfs statvers=1.2\n"
      "\tage:\t9\n"
      "\tfsc:\t1 2 3 4 5\n"                 // fscache counters
      "\tnewcounters:\tnot numbers here\n"  // a label from a later kernel
      "\tRPC iostats version: 1.1  p/v: 100003/3 (nfs)\n"
      "\txprt:\trdma 0 0 1 0 0 5 5 0 5 0 8 0 5 11 12\n"  // kept raw
      "\tper-op statistics\n"
      "\t        READ: 1 1 0 100 4196 0 2 3 0\n"
      "\tper-xprt statistics\n"  // a section this parser does not know
      "\t     xprt0: a b c\n"
      "a line at column 0 that is not a mount\n"
      "device srv:/f mounted on /n with fstype nfs4 statvers=1.1\n"
      "\tage:\t3\n");
  ASSERT_TRUE(mounts) << mounts.error().message;
  ASSERT_EQ(mounts->size(), 2U);
  const NfsMountStats& m = mounts->front();
  EXPECT_EQ(m.age_s, 9U);
  ASSERT_EQ(m.ops.size(), 1U);
  EXPECT_EQ(m.ops[0].op, "READ");
  EXPECT_EQ(m.ops[0].bytes_received, 4196U);
  ASSERT_EQ(m.xprts.size(), 1U);
  EXPECT_EQ(m.xprts[0].proto, "rdma");
  EXPECT_EQ(m.xprts[0].raw, "rdma 0 0 1 0 0 5 5 0 5 0 8 0 5 11 12");
  EXPECT_EQ(m.xprts[0].sends, 0U);
  EXPECT_EQ((*mounts)[1].mount_point, "/n");
  EXPECT_EQ((*mounts)[1].age_s, 3U);
}

TEST(MountstatsTest, OlderKernelTransportLinesLeaveLaterFieldsZero) {
  // Before max_slots, sending_u and pending_u existed: tcp printed 10 numbers, udp 7.
  auto mounts = parse_mountstats(
      "device srv:/e mounted on /m with fstype nfs statvers=1.0\n"
      "\tRPC iostats version: 1.0  p/v: 100003/3 (nfs)\n"
      "\txprt:\ttcp 800 1 2 3 4 50 49 1 70 6\n"
      "\txprt:\tudp 801 1 20 20 0 30 2\n");
  ASSERT_TRUE(mounts) << mounts.error().message;
  const auto& x = mounts->at(0).xprts;
  ASSERT_EQ(x.size(), 2U);
  EXPECT_EQ(x[0].connect_time, 3U);
  EXPECT_EQ(x[0].backlog_u, 6U);
  EXPECT_EQ(x[0].max_slots, 0U);
  EXPECT_EQ(x[0].pending_u, 0U);
  EXPECT_EQ(x[1].sends, 20U);
  EXPECT_EQ(x[1].backlog_u, 2U);
  EXPECT_EQ(x[1].sending_u, 0U);
}

TEST(MountstatsTest, EscapedNamesAreDecoded) {
  auto mounts = parse_mountstats(
      "device srv:/my\\040export mounted on /mnt/with\\040space\\134x with fstype nfs\n");
  ASSERT_TRUE(mounts) << mounts.error().message;
  ASSERT_EQ(mounts->size(), 1U);
  EXPECT_EQ(mounts->front().device, "srv:/my export");
  EXPECT_EQ(mounts->front().mount_point, "/mnt/with space\\x");
  EXPECT_EQ(mounts->front().statvers, "");
}

TEST(MountstatsTest, CounterDeltaIsModular) {
  EXPECT_EQ(counter_delta(10, 25), 15U);
  EXPECT_EQ(counter_delta(7, 7), 0U);
  // The real sample's ACCESS value, then a wrap to 1000.
  EXPECT_EQ(counter_delta(18446743919241604546ULL, 1000),
            1000U + (UINT64_MAX - 18446743919241604546ULL) + 1U);
  EXPECT_EQ(counter_delta(18446743919241604546ULL, 1000), 154467948070ULL);
  EXPECT_EQ(counter_delta(UINT64_MAX, 0), 1U);
}

TEST(MountstatsTest, DeltaAcrossWrappedAccessCounter) {
  const NfsMountStats before = real_sample_mount();
  ASSERT_FALSE(before.ops.empty());
  NfsMountStats after = before;
  after.age_s += 60;
  after.bytes[static_cast<size_t>(NfsBytes::kServerRead)] += 4096;
  NfsOpStats& access = after.ops[3];
  ASSERT_EQ(access.op, "ACCESS");
  access.ops += 10;
  access.transmissions += 10;
  access.queue_ms = 1000;  // wrapped past 2^64 since before
  access.rtt_ms += 50;
  access.execute_ms += 70;
  NfsXprtStats& x = after.xprts.at(0);
  x.sends += 100;
  x.receives += 100;
  x.req_u += 300;
  x.backlog_u += 50;
  x.sending_u += 200;
  x.pending_u += 250;
  x.idle_time = 0;

  const NfsOpStats d_access = delta(before.ops[3], access);
  EXPECT_EQ(d_access.queue_ms, 154467948070ULL);
  EXPECT_EQ(d_access.ops, 10U);

  const NfsMountDelta d = delta(before, after);
  EXPECT_FALSE(d.since_mount);
  EXPECT_EQ(d.device, "192.168.1.1:/srv/test");
  EXPECT_EQ(d.interval_s, 60U);
  EXPECT_EQ(d.server_read_bytes(), 4096U);
  EXPECT_EQ(d.normal_read_bytes(), 0U);
  EXPECT_EQ(d.events, std::vector<uint64_t>(27, 0));
  const NfsOpStats* a = d.op("ACCESS");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->queue_ms, 154467948070ULL);
  EXPECT_DOUBLE_EQ(a->avg_rtt_ms(), 5.0);
  EXPECT_DOUBLE_EQ(a->avg_execute_ms(), 7.0);
  EXPECT_FALSE(a->errors.has_value());
  EXPECT_EQ(d.op("READ")->ops, 0U);
  ASSERT_EQ(d.xprts.size(), 1U);
  EXPECT_EQ(d.xprts[0].sends, 100U);
  EXPECT_EQ(d.xprts[0].port, 832U);      // identity, not differenced
  EXPECT_EQ(d.xprts[0].max_slots, 24U);  // high-water mark, not differenced
  EXPECT_DOUBLE_EQ(d.xprts[0].avg_requests_outstanding(), 3.0);
  EXPECT_DOUBLE_EQ(d.xprts[0].avg_backlog_queue(), 0.5);
  EXPECT_DOUBLE_EQ(d.xprts[0].avg_sending_queue(), 2.0);
  EXPECT_DOUBLE_EQ(d.xprts[0].avg_pending_queue(), 2.5);
}

TEST(MountstatsTest, OpDeltaKeepsErrorsOnlyWhenBothHaveThem) {
  NfsOpStats before{"WRITE", 10, 10, 0, 100, 10, 1, 2, 3, 4};
  NfsOpStats after{"WRITE", 30, 31, 1, 300, 30, 5, 8, 13, 6};
  NfsOpStats d = delta(before, after);
  EXPECT_EQ(d.ops, 20U);
  EXPECT_EQ(d.transmissions, 21U);
  EXPECT_EQ(d.major_timeouts, 1U);
  EXPECT_EQ(d.errors, std::optional<uint64_t>(2));
  EXPECT_DOUBLE_EQ(d.bytes_per_op(), (200.0 + 20.0) / 20.0);
  EXPECT_DOUBLE_EQ(d.avg_queue_ms(), 0.2);
  before.errors.reset();
  EXPECT_FALSE(delta(before, after).errors.has_value());
}

TEST(MountstatsTest, SnapshotDeltaMatchesByDeviceAndMountPoint) {
  auto first = parse_mountstats(kIostats11);
  ASSERT_TRUE(first) << first.error().message;
  std::vector<NfsMountStats> before = *first;
  std::vector<NfsMountStats> after = *first;
  // Listed in another order, one mount remounted (its age went back) and one new.
  std::swap(after[0], after[1]);
  after[1].age_s += 5;  // the v3 mount
  after[1].ops[1].ops += 3;
  after[0].age_s = 2;  // the v4 mount, mounted again
  NfsMountStats fresh = before[0];
  fresh.mount_point = "/mnt/other";
  after.push_back(fresh);

  const std::vector<NfsMountDelta> d = delta(before, after);
  ASSERT_EQ(d.size(), 3U);
  EXPECT_EQ(d[0].mount_point, "/ckpt");
  EXPECT_TRUE(d[0].since_mount);
  EXPECT_EQ(d[0].interval_s, 2U);
  EXPECT_EQ(d[0].op("READ")->ops, 4U);  // the totals of the new mount
  EXPECT_EQ(d[0].xprts.size(), 2U);
  EXPECT_EQ(d[1].mount_point, "/mnt/v3");
  EXPECT_FALSE(d[1].since_mount);
  EXPECT_EQ(d[1].interval_s, 5U);
  EXPECT_EQ(d[1].op("WRITE")->ops, 3U);
  EXPECT_EQ(d[1].op("WRITE")->errors, std::optional<uint64_t>(0));
  EXPECT_EQ(d[1].op("NULL")->ops, 0U);
  EXPECT_EQ(d[1].xprts[0].sends, 0U);
  EXPECT_EQ(d[2].mount_point, "/mnt/other");
  EXPECT_TRUE(d[2].since_mount);
  EXPECT_EQ(d[2].op("WRITE")->ops, 200U);
  EXPECT_EQ(d[2].op("WRITE")->errors, std::optional<uint64_t>(3));
  EXPECT_EQ(d[2].server_read_bytes(), 50U);
}

TEST(MountstatsTest, ReadErrorsNameThePath) {
  auto missing = read_mountstats("/nonexistent/ckptscope/mountstats");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nonexistent/ckptscope/mountstats"), std::string::npos);
}

TEST(MountstatsTest, ReadsThisMachinesMountstats) {
  // Whatever this kernel mounts, its real file must parse; non-NFS mounts are skipped.
  auto mounts = read_mountstats();
  ASSERT_TRUE(mounts) << mounts.error().message;
  for (const auto& m : *mounts) EXPECT_TRUE(m.fstype == "nfs" || m.fstype == "nfs4") << m.fstype;
}

}  // namespace
}  // namespace ckpt
