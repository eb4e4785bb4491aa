// Decoding real bpf/nfs.h record layouts into NFS I/O and RPC events.
#include "sources/nfs_source.h"

#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

#include "nfs.h"

namespace ckpt {
namespace {

struct CaptureSink : EventSink {
  void on_event(Event&& e) override { events.push_back(std::move(e)); }
  std::vector<Event> events;
};

ckpt_nfs_record io(uint32_t event, uint32_t kind, uint64_t t, uint64_t task) {
  ckpt_nfs_record r{};
  r.event = event;
  r.io_kind = kind;
  r.time_ns = t;
  r.task_id = task;
  r.dev = (0ull << 20) | 53;  // the kernel's MKDEV(0, 53): an NFS superblock
  r.ino = 4242;
  r.offset = 1 << 20;
  r.count = 131072;
  return r;
}

ckpt_nfs_record rpc(uint32_t event, uint64_t t, uint64_t task, const char* name) {
  ckpt_nfs_record r{};
  r.event = event;
  r.time_ns = t;
  r.task_id = task;
  r.client_id = 3;
  r.prog = 100003;
  r.vers = 4;
  r.proc = 38;
  r.xid = 0xdeadbeef;
  r.task_pid = 812;
  r.ntrans = 2;
  r.backlog_ns = 3000;
  r.rtt_ns = 5000;
  r.execute_ns = 9000;
  r.bytes_sent = 131072 + 220;
  r.bytes_recv = 160;
  r.wait_ns[CKPT_RPCQ_SENDING] = 2500;
  r.wait_ns[CKPT_RPCQ_PENDING] = 4900;
  r.family = 2;  // AF_INET
  r.port = 2049;
  const uint8_t addr[4] = {10, 0, 0, 9};
  std::memcpy(r.addr, addr, 4);
  std::strncpy(r.proc_name, name, sizeof(r.proc_name) - 1);
  return r;
}

TEST(NfsSourceTest, PairsAnIoWithItsRpcAndCompletion) {
  CaptureSink sink;
  NfsSource src(sink);
  auto start = io(CKPT_NFS_IO_START, CKPT_NFS_WRITE, 1000, 0xffff0001);
  src.on_record(&start, sizeof(start));
  ASSERT_EQ(sink.events.size(), 1u);
  const auto& s0 = std::get<NfsIoEvent>(sink.events[0]);
  EXPECT_TRUE(s0.started) << "initiated, not done: the bytes are still owed";
  EXPECT_EQ(s0.id, 0xffff0001u);
  EXPECT_EQ(s0.start_ns, 1000u);
  EXPECT_EQ(s0.bytes(), 0u);
  auto done_rpc = rpc(CKPT_RPC_DONE, 10000, 0xffff0001, "WRITE");
  src.on_record(&done_rpc, sizeof(done_rpc));
  auto done = io(CKPT_NFS_IO_DONE, CKPT_NFS_WRITE, 10100, 0xffff0001);
  done.result_count = 131072;
  src.on_record(&done, sizeof(done));
  ASSERT_EQ(sink.events.size(), 3u);

  const auto& r = std::get<RpcEvent>(sink.events[1]);
  EXPECT_EQ(r.kind, RpcEvent::Kind::Done);
  EXPECT_EQ(r.op, "WRITE");
  EXPECT_EQ(r.time_ns, 10000u);
  EXPECT_EQ(r.start_ns, 1000u);
  EXPECT_EQ(r.queue_ns, 3000u);
  EXPECT_EQ(r.rtt_ns, 5000u);
  EXPECT_EQ(r.server, "10.0.0.9:2049");
  EXPECT_EQ(r.xid, 0xdeadbeefu);
  EXPECT_EQ(r.ntrans, 2u);
  EXPECT_EQ(r.wait_ns[kRpcQueueSending], 2500u);
  ASSERT_TRUE(r.io);
  EXPECT_EQ(*r.io, NfsIoKind::Write);
  EXPECT_EQ(r.file, (FileId{makedev(0, 53), 4242}));
  EXPECT_EQ(r.io_count, 131072u);

  const auto& n = std::get<NfsIoEvent>(sink.events[2]);
  EXPECT_FALSE(n.started);
  EXPECT_EQ(n.id, 0xffff0001u);
  EXPECT_EQ(n.kind, NfsIoKind::Write);
  EXPECT_EQ(n.start_ns, 1000u);
  EXPECT_EQ(n.end_ns, 10100u);
  EXPECT_EQ(n.bytes(), 131072u);
  EXPECT_EQ(src.pending_io(), 0u);
}

TEST(NfsSourceTest, RpcsWithoutIoAndFailuresAndTimeouts) {
  CaptureSink sink;
  NfsSource src(sink);
  auto getattr = rpc(CKPT_RPC_DONE, 5000, 0xaaaa, "GETATTR");
  getattr.status = -ESTALE;
  src.on_record(&getattr, sizeof(getattr));
  auto timeout = rpc(CKPT_RPC_TIMEOUT, 6000, 0xbbbb, "WRITE");
  timeout.timeouts = 1;
  src.on_record(&timeout, sizeof(timeout));
  auto null_proc = rpc(CKPT_RPC_ABANDONED, 7000, 0xcccc, "");
  null_proc.proc = 0;
  null_proc.family = 0;
  src.on_record(&null_proc, sizeof(null_proc));
  ASSERT_EQ(sink.events.size(), 3u);
  const auto& a = std::get<RpcEvent>(sink.events[0]);
  EXPECT_FALSE(a.io);
  EXPECT_EQ(a.status, -ESTALE);
  EXPECT_EQ(std::get<RpcEvent>(sink.events[1]).kind, RpcEvent::Kind::Timeout);
  const auto& c = std::get<RpcEvent>(sink.events[2]);
  EXPECT_EQ(c.kind, RpcEvent::Kind::Abandoned);
  EXPECT_EQ(c.op, "NULL");
  EXPECT_EQ(c.server, "");
}

TEST(NfsSourceTest, ACompletionWithoutStartKeepsItsOwnTimeAndBadRecordsAreCounted) {
  CaptureSink sink;
  NfsSource src(sink);
  auto done = io(CKPT_NFS_IO_DONE, CKPT_NFS_READ, 777, 0x1);
  done.result_count = 4096;
  done.status = 0;
  src.on_record(&done, sizeof(done));
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(std::get<NfsIoEvent>(sink.events[0]).start_ns, 777u);

  auto bad = io(CKPT_NFS_IO_DONE, 99, 1, 1);
  src.on_record(&bad, sizeof(bad));
  auto unknown = rpc(42, 1, 1, "X");
  src.on_record(&unknown, sizeof(unknown));
  src.on_record(&done, sizeof(done) - 1);
  EXPECT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(src.drops()[0].cause, "malformed_record");
  EXPECT_EQ(src.drops()[0].count, 3u);
}

TEST(NfsSourceTest, IoThatNeverCompletesIsForgottenAndCounted) {
  CaptureSink sink;
  NfsSource src(sink);
  auto start = io(CKPT_NFS_IO_START, CKPT_NFS_COMMIT, 1000, 0x9);
  src.on_record(&start, sizeof(start));
  EXPECT_EQ(src.pending_io(), 1u);
  src.poll(1000 + 60'000'000'000ull);
  EXPECT_EQ(src.pending_io(), 1u);
  src.poll(1000 + 601'000'000'000ull);
  EXPECT_EQ(src.pending_io(), 0u);
  EXPECT_EQ(src.drops()[1].cause, "io_without_completion");
  EXPECT_EQ(src.drops()[1].count, 1u);
}

}  // namespace
}  // namespace ckpt
