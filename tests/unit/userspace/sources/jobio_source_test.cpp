// Decoding real jobio record layouts (bpf/jobio.h) into events.
#include "sources/jobio_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "jobio.h"
#include "sources/tcp_source.h"
#include "tcp.h"

namespace ckpt {
namespace {

struct CaptureSink : EventSink {
  void on_event(Event&& e) override { events.push_back(std::move(e)); }
  std::vector<Event> events;
};

ckpt_record_header header(uint32_t kind, uint32_t op) {
  ckpt_record_header h{};
  h.kind = kind;
  h.op = op;
  h.tgid = static_cast<uint32_t>(getpid());
  h.tid = h.tgid + 1;
  h.start_ns = 1000;
  h.end_ns = 3000;
  h.cpu_window_start_ns = 500;
  h.cpu_ns = 400;
  return h;
}

// A copy between two regular files on the kernel device `dev`, named by
// no fd (as the file layer reports it).
ckpt_copy_record regular_copy(uint32_t kind, uint64_t dev, uint64_t src_ino, uint64_t dst_ino,
                              uint32_t via) {
  ckpt_copy_record r{};
  r.hdr = header(kind, 0);
  r.src_dev = dev;
  r.src_ino = src_ino;
  r.dst_dev = dev;
  r.dst_ino = dst_ino;
  r.src_fd = -1;
  r.dst_fd = -1;
  r.src_type = CKPT_FT_REGULAR;
  r.dst_type = CKPT_FT_REGULAR;
  r.via = via;
  return r;
}

TEST(JobIoSourceTest, DecodesAnIoRecordAndConvertsTheDevice) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  resolver.remember(FileId{makedev(8, 3), 77}, "/ckpt/checkpoint-1/a.pt");
  ckpt_io_record r{};
  r.hdr = header(CKPT_REC_IO, CKPT_OP_WRITE);
  r.ret = 4096;
  r.requested = 8192;
  r.dev = (8ull << 20) | 3;  // the kernel's MKDEV(8, 3)
  r.ino = 77;
  r.fd = 5;
  r.file_type = CKPT_FT_REGULAR;
  r.calls = 1;  // one call, as the kernel fills every record since file-layer folding
  r.via = CKPT_VIA_SYSCALL;
  r.busy_ns = 2000;
  r.last_start_ns = 1000;
  src.on_record(&r, sizeof(r));
  ASSERT_EQ(sink.events.size(), 1u);
  const auto& e = std::get<IoEvent>(sink.events[0]);
  EXPECT_EQ(e.op, IoOp::Write);
  EXPECT_EQ(e.ret, 4096);
  EXPECT_EQ(e.requested, 8192u);
  EXPECT_EQ(e.file.dev, makedev(8, 3));
  EXPECT_EQ(e.file.ino, 77u);
  EXPECT_EQ(e.path, "/ckpt/checkpoint-1/a.pt");
  EXPECT_EQ(e.start_ns, 1000u);
  EXPECT_EQ(e.end_ns, 3000u);
  EXPECT_EQ(e.cpu_window_start_ns, 500u);
  EXPECT_EQ(e.cpu_ns, 400u);
  EXPECT_EQ(e.bytes_moved(), 4096u);
  EXPECT_EQ(e.storage_bytes, 0u);
}

// What the storage did inside a call, and a device's busy interval
// (bpf/jobio_storage.bpf.h).
TEST(JobIoSourceTest, DecodesWhatTheStorageDid) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  ckpt_io_record r{};
  r.hdr = header(CKPT_REC_IO, CKPT_OP_READ);
  r.ret = 1 << 20;
  r.dev = (8ull << 20) | 3;
  r.ino = 77;
  r.file_type = CKPT_FT_REGULAR;
  r.calls = 1;
  r.via = CKPT_VIA_SYSCALL;
  r.storage_bytes = 8 << 20;  // the readahead the miss started
  r.dirtied_bytes = 0;
  r.throttle_ns = 0;
  src.on_record(&r, sizeof(r));
  ckpt_storage_busy_record b{};
  b.hdr = header(CKPT_REC_STORAGE_BUSY, 0);
  b.hdr.start_ns = 1500;
  b.hdr.end_ns = 9500;
  b.dev = (8ull << 20) | 3;
  b.bytes = 8 << 20;
  b.bios = 9;
  src.on_record(&b, sizeof(b));
  ckpt_storage_busy_record backwards = b;
  backwards.hdr.end_ns = 1000;  // before its start: corrupt
  src.on_record(&backwards, sizeof(backwards));
  ASSERT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(std::get<IoEvent>(sink.events[0]).storage_bytes, 8u << 20);
  const auto& busy = std::get<StorageBusyEvent>(sink.events[1]);
  EXPECT_EQ(busy.dev, makedev(8, 3));
  EXPECT_EQ(busy.start_ns, 1500u);
  EXPECT_EQ(busy.end_ns, 9500u);
  EXPECT_EQ(busy.bytes, 8u << 20);
  EXPECT_EQ(busy.bios, 9u);
  EXPECT_EQ(src.drops()[0].cause, "malformed_record");
  EXPECT_EQ(src.drops()[0].count, 1u) << "an interval ending before it starts";
}

// Linux AIO (bpf/jobio_aio.bpf.h): a reaped request is a data call with via
// Aio; a wait with requests out is a call in flight through Aio.
TEST(JobIoSourceTest, DecodesAnAioRequestAndAnAioWait) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  resolver.remember(FileId{makedev(8, 3), 77}, "/ckpt/step_100/mp_rank_00_model_states.pt");
  ckpt_io_record wait{};
  wait.hdr = header(CKPT_REC_IO_START, CKPT_OP_WRITE);
  wait.hdr.end_ns = 0;
  wait.dev = (8ull << 20) | 3;
  wait.ino = 77;
  wait.fd = 9;
  wait.file_type = CKPT_FT_REGULAR;
  wait.calls = 1;
  wait.via = CKPT_VIA_AIO;
  src.on_record(&wait, sizeof(wait));
  ckpt_io_record done = wait;
  done.hdr = header(CKPT_REC_IO, CKPT_OP_WRITE);
  done.ret = 1 << 20;
  done.requested = 1 << 20;
  done.busy_ns = 2000;
  done.last_start_ns = 1000;
  src.on_record(&done, sizeof(done));
  ASSERT_EQ(sink.events.size(), 2u);
  const auto& start = std::get<CallStartEvent>(sink.events[0]);
  EXPECT_EQ(start.via, IoVia::Aio);
  EXPECT_EQ(start.op, IoOp::Write);
  EXPECT_EQ(start.path, "/ckpt/step_100/mp_rank_00_model_states.pt");
  const auto& e = std::get<IoEvent>(sink.events[1]);
  EXPECT_EQ(e.via, IoVia::Aio);
  EXPECT_EQ(e.bytes_moved(), 1u << 20);
  EXPECT_EQ(to_string(e.via), "aio");
  // A wait that reported nothing ends with its end record: a header only.
  ckpt_record_header end = header(CKPT_REC_CALL_END, 0);
  end.start_ns = end.end_ns = 5000;
  src.on_record(&end, sizeof(end));
  ASSERT_EQ(sink.events.size(), 3u);
  const auto& ended = std::get<CallEndEvent>(sink.events[2]);
  EXPECT_EQ(ended.time_ns, 5000u);
  EXPECT_EQ(ended.tid, end.tid);
  EXPECT_EQ(ended.tgid, end.tgid);
  EXPECT_EQ(src.drops()[0].count, 0u);  // nothing malformed
}

TEST(JobIoSourceTest, OpenResolvesRelativePathsAndRemembersTheFile) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  ckpt_path_record r{};
  r.hdr = header(CKPT_REC_PATH, CKPT_OP_OPEN);
  r.ret = 9;
  r.dev = (253ull << 20) | 1;
  r.ino = 4242;
  r.dirfd = AT_FDCWD;
  r.file_type = CKPT_FT_REGULAR;
  std::strcpy(r.path, "ckpt/./x.pt");
  r.path_len = static_cast<uint16_t>(std::strlen(r.path) + 1);
  src.on_record(&r, sizeof(r));
  ASSERT_EQ(sink.events.size(), 1u);
  const auto& e = std::get<IoEvent>(sink.events[0]);
  std::string expect = std::filesystem::current_path().string() + "/ckpt/x.pt";
  EXPECT_EQ(e.op, IoOp::Open);
  EXPECT_EQ(e.path, expect);
  EXPECT_EQ(e.file.dev, makedev(253, 1));
  EXPECT_EQ(resolver.path_of(1, 1, FileId{makedev(253, 1), 4242}), expect);
}

// rsync's receiver: chdir into the destination, then relative names, read
// after the process has moved on (or is gone): they resolve where the
// chdir records put it, not where /proc says it is now. fchdir names only
// its fd. A chdir is no I/O: only the CPU before it is an event.
TEST(JobIoSourceTest, ChdirRecordsMoveTheWorkingDirectoryRelativeNamesResolveIn) {
  CaptureSink sink;
  PathResolver resolver("/nonexistent-proc");
  JobIoSource src(sink, resolver);
  auto path_record = [](uint32_t op, int dirfd, const char* path, int64_t ret) {
    ckpt_path_record r{};
    r.hdr = header(CKPT_REC_PATH, op);
    r.ret = ret;
    r.dirfd = dirfd;
    std::strcpy(r.path, path);
    r.path_len = path[0] ? static_cast<uint16_t>(std::strlen(path) + 1) : 0;
    return r;
  };
  auto chdir_to = path_record(CKPT_OP_CHDIR, AT_FDCWD, "/mnt/nfs/ckpt", 0);
  src.on_record(&chdir_to, sizeof(chdir_to));
  ASSERT_EQ(sink.events.size(), 1u);
  const auto& cpu = std::get<CpuEvent>(sink.events[0]);
  EXPECT_EQ(cpu.window_start_ns, 500u);
  EXPECT_EQ(cpu.end_ns, 1000u) << "the window ends where the call starts";
  EXPECT_EQ(cpu.cpu_ns, 400u);

  auto into_step = path_record(CKPT_OP_CHDIR, AT_FDCWD, "step_1/../step_2", 0);
  src.on_record(&into_step, sizeof(into_step));
  auto failed = path_record(CKPT_OP_CHDIR, AT_FDCWD, "/elsewhere", -2);
  src.on_record(&failed, sizeof(failed));
  auto open = path_record(CKPT_OP_OPEN, AT_FDCWD, ".shard-0.pt.Ab12Cd", 5);
  src.on_record(&open, sizeof(open));
  EXPECT_EQ(std::get<IoEvent>(sink.events.back()).path, "/mnt/nfs/ckpt/step_2/.shard-0.pt.Ab12Cd");

  resolver.opened(open.hdr.tgid, 7, "/mnt/nfs/other");
  auto by_fd = path_record(CKPT_OP_CHDIR, 7, "", 0);
  src.on_record(&by_fd, sizeof(by_fd));
  src.on_record(&open, sizeof(open));
  EXPECT_EQ(std::get<IoEvent>(sink.events.back()).path, "/mnt/nfs/other/.shard-0.pt.Ab12Cd");
  for (const auto& e : sink.events) {
    if (const auto* io = std::get_if<IoEvent>(&e)) {
      EXPECT_EQ(io->op, IoOp::Open);
    }
  }
  EXPECT_EQ(src.drops()[0].count, 0u) << "a chdir record is not malformed";
}

// A thread's exit carries its own I/O counters (task->ioac) when the kernel
// keeps them; a fork never does.
TEST(JobIoSourceTest, AThreadsExitCarriesItsIoCounters) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  ckpt_proc_record r{};
  r.hdr = header(CKPT_REC_PROC, CKPT_PROC_THREAD_EXIT);
  r.io_accounting = 1;
  r.io_read_bytes = 4096;
  r.io_write_bytes = 64 << 20;
  r.io_cancelled_write_bytes = 8192;
  src.on_record(&r, sizeof(r));
  r.io_accounting = 0;  // a kernel without the counters
  src.on_record(&r, sizeof(r));
  ASSERT_EQ(sink.events.size(), 2u);
  const auto& counted = std::get<ProcEvent>(sink.events[0]);
  EXPECT_EQ(counted.kind, ProcEvent::Kind::ThreadExit);
  ASSERT_TRUE(counted.thread_io);
  EXPECT_EQ(counted.thread_io->read_bytes, 4096u);
  EXPECT_EQ(counted.thread_io->write_bytes, 64u << 20);
  EXPECT_EQ(counted.thread_io->cancelled_write_bytes, 8192u);
  EXPECT_FALSE(std::get<ProcEvent>(sink.events[1]).thread_io);
}

// Copies the storage made (bpf/jobio_storage_copies.bpf.h): a copy record
// with via CKPT_VIA_SERVER_COPY or CKPT_VIA_REFLINK is a read of its source
// and a write of its destination under that via, as any copy.
TEST(JobIoSourceTest, CopiesTheStorageMadeKeepTheirVia) {
  for (auto [kernel_via, via] : {std::pair{CKPT_VIA_SERVER_COPY, IoVia::ServerCopy},
                                 std::pair{CKPT_VIA_REFLINK, IoVia::Reflink}}) {
    CaptureSink sink;
    PathResolver resolver;
    JobIoSource src(sink, resolver);
    ckpt_copy_record r = regular_copy(CKPT_REC_COPY, (253ull << 20) | 1, 11, 12, kernel_via);
    r.ret = 8 << 20;
    r.requested = 8 << 20;
    src.on_record(&r, sizeof(r));
    ASSERT_EQ(sink.events.size(), 2u) << to_string(via);
    const auto& read = std::get<IoEvent>(sink.events[0]);
    const auto& write = std::get<IoEvent>(sink.events[1]);
    EXPECT_EQ(read.op, IoOp::Read);
    EXPECT_EQ(read.via, via);
    EXPECT_EQ(write.via, via);
    EXPECT_EQ(write.ret, 8 << 20);
    ASSERT_TRUE(write.copy_source);
    EXPECT_EQ(write.copy_source->ino, 11u);
    EXPECT_TRUE(storage_copied(via));
    EXPECT_EQ(src.drops()[0].count, 0u);
  }
}

// Calls in flight (bpf/jobio.h CKPT_REC_*_START), as the kernel lays them
// out: a call on one file, a copy, a path call; each one CallStartEvent
// naming what the call's own record will name.
TEST(JobIoSourceTest, DecodesTheStartRecordsOfCallsInFlight) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  resolver.remember(FileId{makedev(8, 3), 77}, "/ckpt/checkpoint-1/a.pt");
  resolver.remember(FileId{makedev(8, 3), 78}, "/local/step_100/b.pt");

  ckpt_io_record read{};
  read.hdr = header(CKPT_REC_IO_START, CKPT_OP_READ);
  read.hdr.end_ns = 0;
  read.dev = (8ull << 20) | 3;
  read.ino = 77;
  read.fd = -1;
  read.file_type = CKPT_FT_REGULAR;
  read.calls = 1;
  read.requested = 1 << 20;
  read.via = CKPT_VIA_SYSCALL;
  src.on_record(&read, sizeof(read));

  ckpt_copy_record copy =
      regular_copy(CKPT_REC_COPY_START, (8ull << 20) | 3, 78, 77, CKPT_VIA_COPY_FILE_RANGE);
  copy.hdr.end_ns = 0;
  src.on_record(&copy, sizeof(copy));

  ckpt_path_record ren{};
  ren.hdr = header(CKPT_REC_PATH_START, CKPT_OP_RENAME);
  ren.hdr.end_ns = 0;
  ren.dirfd = AT_FDCWD;
  ren.dirfd2 = AT_FDCWD;
  std::strcpy(ren.path, "/ckpt/checkpoint-2/model.safetensors.tmp");
  ren.path_len = static_cast<uint16_t>(std::strlen(ren.path) + 1);
  std::strcpy(ren.path2, "/ckpt/checkpoint-2/model.safetensors");
  ren.path2_len = static_cast<uint16_t>(std::strlen(ren.path2) + 1);
  src.on_record(&ren, sizeof(ren));

  ASSERT_EQ(sink.events.size(), 3u);
  const auto& r = std::get<CallStartEvent>(sink.events[0]);
  EXPECT_EQ(r.op, IoOp::Read);
  EXPECT_EQ(r.via, IoVia::Syscall);
  EXPECT_EQ(r.start_ns, 1000u);
  EXPECT_EQ(r.tgid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(r.tid, r.tgid + 1);
  EXPECT_EQ(r.file, (FileId{makedev(8, 3), 77}));
  EXPECT_EQ(r.path, "/ckpt/checkpoint-1/a.pt");
  EXPECT_FALSE(r.copy_source);

  const auto& c = std::get<CallStartEvent>(sink.events[1]);
  EXPECT_EQ(c.op, IoOp::Write) << "a copy is a write of its destination";
  EXPECT_EQ(c.via, IoVia::CopyFileRange);
  EXPECT_EQ(c.file, (FileId{makedev(8, 3), 77}));
  EXPECT_EQ(c.path, "/ckpt/checkpoint-1/a.pt");
  EXPECT_EQ(c.copy_source, (FileId{makedev(8, 3), 78}));
  EXPECT_EQ(c.copy_source_path, "/local/step_100/b.pt");

  const auto& p = std::get<CallStartEvent>(sink.events[2]);
  EXPECT_EQ(p.op, IoOp::Rename);
  EXPECT_FALSE(p.file.known());
  EXPECT_EQ(p.path, "/ckpt/checkpoint-2/model.safetensors.tmp");
  EXPECT_EQ(p.path2, "/ckpt/checkpoint-2/model.safetensors");
  for (const auto& d : src.drops()) EXPECT_EQ(d.count, 0u) << d.cause;
}

// A start record that no call of its kind could send is corrupt: counted, not
// decoded (an mmap "call", a data op as a path call, a stat, a copy via
// syscall, one cut short).
TEST(JobIoSourceTest, StartRecordsThatCannotBeAreMalformed) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  ckpt_io_record io{};
  io.hdr = header(CKPT_REC_IO_START, CKPT_OP_WRITE);
  io.calls = 1;
  io.via = CKPT_VIA_MMAP;
  src.on_record(&io, sizeof(io));
  io.hdr.op = CKPT_OP_OPEN;
  io.via = CKPT_VIA_SYSCALL;
  src.on_record(&io, sizeof(io));
  ckpt_path_record path{};
  path.hdr = header(CKPT_REC_PATH_START, CKPT_OP_STAT);
  src.on_record(&path, sizeof(path));
  path.hdr.op = CKPT_OP_WRITE;
  src.on_record(&path, sizeof(path));
  ckpt_copy_record copy{};
  copy.hdr = header(CKPT_REC_COPY_START, 0);
  copy.via = CKPT_VIA_SYSCALL;
  src.on_record(&copy, sizeof(copy));
  copy.via = CKPT_VIA_SENDFILE;
  src.on_record(&copy, sizeof(copy) - 1);
  EXPECT_TRUE(sink.events.empty());
  uint64_t malformed = 0;
  for (const auto& d : src.drops())
    if (d.cause == "malformed_record") malformed = d.count;
  EXPECT_EQ(malformed, 6u);
}

TEST(JobIoSourceTest, CpuAndProcRecords) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  ckpt_cpu_record c{};
  c.hdr = header(CKPT_REC_CPU, 0);
  src.on_record(&c, sizeof(c));
  ckpt_proc_record p{};
  p.hdr = header(CKPT_REC_PROC, CKPT_PROC_FORK);
  p.child_tgid = 4321;
  std::strcpy(p.comm, "python3");
  src.on_record(&p, sizeof(p));
  ASSERT_EQ(sink.events.size(), 2u);
  const auto& cpu = std::get<CpuEvent>(sink.events[0]);
  EXPECT_EQ(cpu.window_start_ns, 500u);
  EXPECT_EQ(cpu.end_ns, 3000u);
  EXPECT_EQ(cpu.cpu_ns, 400u);
  const auto& proc = std::get<ProcEvent>(sink.events[1]);
  EXPECT_EQ(proc.kind, ProcEvent::Kind::Fork);
  EXPECT_EQ(proc.child_tgid, 4321u);
  EXPECT_EQ(proc.comm, "python3");
}

TEST(JobIoSourceTest, MalformedRecordsAreCountedNotDecoded) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  char tiny[4] = {};
  src.on_record(tiny, sizeof(tiny));
  ckpt_io_record r{};
  r.hdr = header(CKPT_REC_IO, 99);  // unknown op
  src.on_record(&r, sizeof(r));
  r.hdr = header(CKPT_REC_PATH, CKPT_OP_OPEN);  // truncated path record
  src.on_record(&r, sizeof(r));
  r.hdr = header(42, 0);
  src.on_record(&r, sizeof(r));
  EXPECT_TRUE(sink.events.empty());
  ASSERT_EQ(src.drops().size(), 2u);
  EXPECT_EQ(src.drops()[0].count, 4u);
  EXPECT_EQ(src.drops()[0].cause, "malformed_record");
  EXPECT_EQ(src.drops()[1].cause, "path_truncated");
  EXPECT_EQ(src.drops()[1].count, 0u);
}

// The kernel's sums of calls on a file ruled out: one OtherIoEvent, the file
// named as it was opened, the device converted.
TEST(JobIoSourceTest, DecodesTheSumsOfAFileRuledOut) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  resolver.remember(FileId{makedev(8, 3), 91}, "/job/out/model_state.dat");
  ckpt_other_io_record r{};
  r.hdr = header(CKPT_REC_OTHER_IO, 0);
  r.hdr.cpu_ns = 0;
  r.dev = (8ull << 20) | 3;
  r.ino = 91;
  r.bytes_read = 5;
  r.bytes_written = (20ull << 20) + 7;
  r.read_calls = 1;
  r.write_calls = 5121;
  src.on_record(&r, sizeof(r));
  ASSERT_EQ(sink.events.size(), 1u);
  const auto& e = std::get<OtherIoEvent>(sink.events[0]);
  EXPECT_EQ(e.file.dev, makedev(8, 3));
  EXPECT_EQ(e.file.ino, 91u);
  EXPECT_EQ(e.path, "/job/out/model_state.dat");
  EXPECT_EQ(e.bytes_read, 5u);
  EXPECT_EQ(e.bytes_written, (20ull << 20) + 7);
  EXPECT_EQ(e.read_calls, 1u);
  EXPECT_EQ(e.write_calls, 5121u);
  EXPECT_EQ(e.tgid, r.hdr.tgid);
  EXPECT_EQ(e.tid, r.hdr.tid);
  EXPECT_EQ(e.start_ns, 1000u);
  EXPECT_EQ(e.end_ns, 3000u);
  EXPECT_EQ(event_time_ns(sink.events[0]), 3000u);
  EXPECT_EQ(src.drops()[0].count, 0u);
}

TEST(JobIoSourceTest, SumsThatCannotBeAreMalformed) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  ckpt_other_io_record good{};
  good.hdr = header(CKPT_REC_OTHER_IO, 0);
  good.bytes_written = 4096;
  good.write_calls = 1;
  auto bad = [&](auto change) {
    ckpt_other_io_record r = good;
    change(r);
    src.on_record(&r, sizeof(r));
  };
  bad([](ckpt_other_io_record& r) { r.write_calls = 0; });    // bytes without calls
  bad([](ckpt_other_io_record& r) { r.bytes_written = 0; });  // calls without bytes
  bad([](ckpt_other_io_record& r) { r.read_calls = 3; });     // reads without bytes
  src.on_record(&good, sizeof(good) - 1);                     // cut short
  EXPECT_TRUE(sink.events.empty());
  EXPECT_EQ(src.drops()[0].count, 4u);
  src.on_record(&good, sizeof(good));
  EXPECT_EQ(sink.events.size(), 1u);
}

// openat(dirfd, "x.pt") read after the dirfd is closed, or a name cut at
// 255 bytes: the new fd names the file, once it is checked to be that file.
TEST(JobIoSourceTest, OpenNamesComeFromTheFdWhenTheGivenNameCannot) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  char tmpl[] = "/tmp/ckpt-open-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  struct stat st {};
  ASSERT_EQ(fstat(fd, &st), 0);
  ckpt_path_record r{};
  r.hdr = header(CKPT_REC_PATH, CKPT_OP_OPEN);
  r.ret = fd;
  r.dev = (static_cast<uint64_t>(major(st.st_dev)) << 20) | minor(st.st_dev);
  r.ino = st.st_ino;
  r.dirfd = 987;  // long closed
  r.file_type = CKPT_FT_REGULAR;
  std::strcpy(r.path, "x.pt");
  r.path_len = 5;
  src.on_record(&r, sizeof(r));
  // A cut name whose fd is gone: counted, not silently wrong.
  r.ret = 1000;
  std::memset(r.path, 'a', sizeof(r.path) - 1);
  r.path[sizeof(r.path) - 1] = '\0';
  r.path_len = CKPT_PATH_MAX;
  r.ino = 1;
  src.on_record(&r, sizeof(r));
  close(fd);
  unlink(tmpl);
  ASSERT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(std::get<IoEvent>(sink.events[0]).path, tmpl);
  EXPECT_EQ(src.drops()[1].count, 1u);
}

TEST(TcpSourceTest, DecodesAddressesAndCounters) {
  CaptureSink sink;
  TcpSource src(sink);
  ckpt_tcp_record r{};
  r.event = CKPT_TCP_SAMPLE;
  r.family = 2;  // AF_INET
  r.lport = 40000;
  r.rport = 2049;
  const uint8_t l[4] = {10, 0, 0, 2};
  const uint8_t rem[4] = {10, 0, 0, 9};
  std::memcpy(r.laddr, l, 4);
  std::memcpy(r.raddr, rem, 4);
  r.time_ns = 5;
  r.sock_cookie = 99;
  r.bytes_acked = 1 << 30;
  r.snd_nxt = 2000;
  r.snd_una = 1500;
  src.on_record(&r, sizeof(r));
  r.event = CKPT_TCP_RESET_RECV;
  r.family = 10;  // AF_INET6 ::1
  std::memset(r.raddr, 0, 16);
  r.raddr[15] = 1;
  src.on_record(&r, sizeof(r));
  ASSERT_EQ(sink.events.size(), 2u);
  const auto& a = std::get<TcpEvent>(sink.events[0]);
  EXPECT_EQ(a.local, "10.0.0.2:40000");
  EXPECT_EQ(a.remote, "10.0.0.9:2049");
  EXPECT_EQ(a.bytes_acked, 1u << 30);
  EXPECT_EQ(a.snd_nxt - a.snd_una, 500u);
  const auto& b = std::get<TcpEvent>(sink.events[1]);
  EXPECT_EQ(b.kind, TcpEvent::Kind::ResetReceived);
  EXPECT_EQ(b.remote, "[::1]:2049");
}

TEST(JobIoSourceTest, RenameKeepsTheIdentityTheOpenReported) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  ckpt_path_record open{};
  open.hdr = header(CKPT_REC_PATH, CKPT_OP_OPEN);
  open.ret = 100000;  // no such fd here: the given absolute name is used
  open.dev = (7ull << 20) | 1;
  open.ino = 55;
  open.file_type = CKPT_FT_REGULAR;
  std::strcpy(open.path, "/ckpt/checkpoint-1/a.pt.tmp");
  open.path_len = static_cast<uint16_t>(std::strlen(open.path) + 1);
  src.on_record(&open, sizeof(open));
  ckpt_path_record ren{};
  ren.hdr = header(CKPT_REC_PATH, CKPT_OP_RENAME);
  std::strcpy(ren.path, "/ckpt/checkpoint-1/a.pt.tmp");
  ren.path_len = static_cast<uint16_t>(std::strlen(ren.path) + 1);
  std::strcpy(ren.path2, "/ckpt/checkpoint-1/a.pt");
  ren.path2_len = static_cast<uint16_t>(std::strlen(ren.path2) + 1);
  src.on_record(&ren, sizeof(ren));
  ASSERT_EQ(sink.events.size(), 2u);
  const auto& e = std::get<IoEvent>(sink.events[1]);
  EXPECT_EQ(e.file, (FileId{makedev(7, 1), 55}));
  EXPECT_EQ(e.path2, "/ckpt/checkpoint-1/a.pt");
  EXPECT_EQ(resolver.path_of(1, 1, e.file), "/ckpt/checkpoint-1/a.pt");
}

TEST(TcpSourceTest, NewestKernelCountersBecomeASampleWhenNewer) {
  CaptureSink sink;
  TcpSource src(sink);
  std::vector<TcpLatest> latest;
  src.set_latest_reader([&latest] { return latest; });
  // Unknown socket: no endpoints to name it with, nothing emitted.
  latest = {TcpLatest{50, 7, 900, 0, 900, 0, 0}};
  src.poll(60);
  EXPECT_TRUE(sink.events.empty());
  ckpt_tcp_record r{};
  r.event = CKPT_TCP_SAMPLE;
  r.family = 2;
  r.rport = 2049;
  r.time_ns = 100;
  r.sock_cookie = 7;
  r.bytes_acked = 1000;
  r.snd_cwnd = 10;
  src.on_record(&r, sizeof(r));
  latest = {TcpLatest{90, 7, 1100, 0, 1100, 0, 0}};  // older than the record: ignored
  src.poll(200);
  EXPECT_EQ(sink.events.size(), 1u);
  latest = {TcpLatest{150, 7, 5000, 3, 5000, 42, 1}};
  src.poll(200);
  src.poll(300);  // the same counters again: not repeated
  ASSERT_EQ(sink.events.size(), 2u);
  const auto& e = std::get<TcpEvent>(sink.events[1]);
  EXPECT_EQ(e.time_ns, 150u);
  EXPECT_EQ(e.bytes_acked, 5000u);
  EXPECT_EQ(e.bytes_received, 3u);
  EXPECT_EQ(e.zero_window_ns, 42u);
  EXPECT_EQ(e.total_retrans, 1u);
  EXPECT_EQ(e.snd_cwnd, 10u) << "what the kernel did not refresh comes from the last record";
  EXPECT_EQ(e.remote, "0.0.0.0:2049");
}

TEST(JobIoSourceTest, ASignalledExitCarriesTheFilesStillOpenForWriting) {
  CaptureSink sink;
  PathResolver resolver;
  JobIoSource src(sink, resolver);
  auto open_file = [&](int32_t fd, uint64_t ino) {
    ckpt_open_file_record r{};
    r.hdr = header(CKPT_REC_OPEN_FILE, 0);
    r.dev = (8ull << 20) | 3;
    r.ino = ino;
    r.fd = fd;
    src.on_record(&r, sizeof(r));
  };
  auto exit_with = [&](int32_t code) {
    ckpt_proc_record p{};
    p.hdr = header(CKPT_REC_PROC, CKPT_PROC_EXIT);
    p.exit_code = code;
    src.on_record(&p, sizeof(p));
    return std::get<ProcEvent>(sink.events.back());
  };
  open_file(3, 77);
  open_file(5, 78);
  ProcEvent killed = exit_with(9);
  ASSERT_TRUE(killed.open_for_write);
  EXPECT_EQ(*killed.open_for_write,
            (std::vector<FileId>{{makedev(8, 3), 77}, {makedev(8, 3), 78}}));
  ProcEvent none = exit_with(15);
  ASSERT_TRUE(none.open_for_write) << "listed, and nothing was open";
  EXPECT_TRUE(none.open_for_write->empty());
  open_file(-1, 0);  // more fds than the kernel scanned
  EXPECT_FALSE(exit_with(9).open_for_write) << "an incomplete list is no list";
  EXPECT_FALSE(exit_with(1 << 8).open_for_write) << "exit(1) is not a signal";
}

}  // namespace
}  // namespace ckpt
