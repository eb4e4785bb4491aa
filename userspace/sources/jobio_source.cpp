#include "sources/jobio_source.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>

#include "jobio.h"

namespace ckpt {
namespace {

// AT_EMPTY_PATH: newfstatat(fd, "", ...) is fstat(fd).
constexpr uint32_t kAtEmptyPath = 0x1000;

std::string bounded_string(const char* s, uint16_t len_with_nul) {
  if (len_with_nul == 0) return {};
  size_t n = std::min<size_t>(len_with_nul, CKPT_PATH_MAX);
  return std::string(s, strnlen(s, n));
}

// bpf_probe_read_user_str filled the whole buffer: the name may be cut.
bool truncated(uint16_t len_with_nul) { return len_with_nul >= CKPT_PATH_MAX; }

std::optional<IoOp> io_op(uint32_t op) {
  switch (op) {
    case CKPT_OP_READ:
      return IoOp::Read;
    case CKPT_OP_WRITE:
      return IoOp::Write;
    case CKPT_OP_FSYNC:
      return IoOp::Fsync;
    case CKPT_OP_CLOSE:
      return IoOp::Close;
    case CKPT_OP_FTRUNCATE:
      return IoOp::Ftruncate;
    case CKPT_OP_OPEN:
      return IoOp::Open;
    case CKPT_OP_RENAME:
      return IoOp::Rename;
    case CKPT_OP_MKDIR:
      return IoOp::Mkdir;
    case CKPT_OP_UNLINK:
      return IoOp::Unlink;
    case CKPT_OP_STAT:
      return IoOp::Stat;
    default:
      return std::nullopt;
  }
}

std::optional<IoVia> io_via(uint32_t via) {
  switch (via) {
    case CKPT_VIA_SYSCALL:
      return IoVia::Syscall;
    case CKPT_VIA_IO_URING:
      return IoVia::IoUring;
    case CKPT_VIA_COPY_FILE_RANGE:
      return IoVia::CopyFileRange;
    case CKPT_VIA_SENDFILE:
      return IoVia::Sendfile;
    case CKPT_VIA_MMAP:
      return IoVia::Mmap;
    case CKPT_VIA_AIO:
      return IoVia::Aio;
    case CKPT_VIA_SERVER_COPY:
      return IoVia::ServerCopy;
    case CKPT_VIA_REFLINK:
      return IoVia::Reflink;
    default:
      return std::nullopt;
  }
}

// Page sizes a kernel can have: 4 KiB to 1 MiB pages (PAGE_SHIFT 12..20,
// with room on both sides); anything else is a corrupt record.
constexpr uint32_t kMinPageShift = 9;
constexpr uint32_t kMaxPageShift = 30;

void fill_header(IoEvent& ev, const ckpt_record_header& h) {
  ev.start_ns = h.start_ns;
  ev.end_ns = h.end_ns;
  ev.tgid = h.tgid;
  ev.tid = h.tid;
  ev.cpu_window_start_ns = h.cpu_window_start_ns;
  ev.cpu_ns = h.cpu_ns;
}

}  // namespace

void JobIoSource::on_io(const ckpt_io_record& r) {
  auto op = io_op(r.hdr.op);
  if (!op) {
    ++malformed_;
    return;
  }
  auto via = io_via(r.via);
  // A record stands for at least one call; an unknown interface, or mmap
  // (which has its own record), is corrupt.
  if (r.calls == 0 || !via || *via == IoVia::Mmap) {
    ++malformed_;
    return;
  }
  IoEvent ev;
  fill_header(ev, r.hdr);
  ev.op = *op;
  ev.ret = r.ret;
  ev.requested = r.requested;
  ev.calls = r.calls;
  ev.via = *via;
  ev.busy_ns = r.busy_ns;
  ev.storage_bytes = r.storage_bytes;
  ev.dirtied_bytes = r.dirtied_bytes;
  ev.throttle_ns = r.throttle_ns;
  // A folded record's CPU window ends where its last call started.
  ev.cpu_window_end_ns = r.calls > 1 && r.last_start_ns != 0 ? r.last_start_ns : r.hdr.start_ns;
  ev.file = FileId{kernel_dev_to_user(r.dev), r.ino};
  ev.is_directory = r.file_type == CKPT_FT_DIRECTORY;
  ev.path = resolver_.path_of(r.hdr.tgid, r.fd, ev.file);
  emit(std::move(ev));
}

void JobIoSource::on_copy(const ckpt_copy_record& r) {
  auto via = io_via(r.via);
  if (!via || !is_copy_via(*via)) {
    ++malformed_;
    return;
  }
  // The source half: a read of the file the bytes came from. It carries the
  // thread's CPU window; the destination half does not (no double count).
  IoEvent read;
  fill_header(read, r.hdr);
  read.op = IoOp::Read;
  read.ret = r.ret;
  read.requested = r.requested;
  read.via = *via;
  read.busy_ns = r.hdr.end_ns - r.hdr.start_ns;
  read.cpu_window_end_ns = r.hdr.start_ns;
  read.file = FileId{kernel_dev_to_user(r.src_dev), r.src_ino};
  read.is_directory = r.src_type == CKPT_FT_DIRECTORY;
  read.not_a_file = r.src_type == CKPT_FT_UNKNOWN;
  read.path = resolver_.path_of(r.hdr.tgid, r.src_fd, read.file);

  IoEvent write = read;
  write.op = IoOp::Write;
  write.cpu_ns = 0;
  write.cpu_window_start_ns = r.hdr.start_ns;
  write.file = FileId{kernel_dev_to_user(r.dst_dev), r.dst_ino};
  write.is_directory = r.dst_type == CKPT_FT_DIRECTORY;
  write.not_a_file = r.dst_type == CKPT_FT_UNKNOWN;
  write.path = resolver_.path_of(r.hdr.tgid, r.dst_fd, write.file);
  write.copy_source = read.file;
  emit(std::move(read));
  emit(std::move(write));
}

void JobIoSource::on_mmap(const ckpt_mmap_record& r) {
  const bool reads = r.hdr.op == CKPT_OP_READ;
  const bool stores = r.hdr.op == CKPT_OP_WRITE;
  if (r.faults == 0 || r.last_page < r.first_page || r.page_shift < kMinPageShift ||
      r.page_shift > kMaxPageShift || (!reads && !stores) ||
      (stores && (r.storage_pages != 0 || r.busy_ns != 0 || r.installed_pages != 0))) {
    ++malformed_;
    return;
  }
  IoEvent ev;
  fill_header(ev, r.hdr);
  ev.via = IoVia::Mmap;
  ev.calls = r.faults;
  ev.busy_ns = r.busy_ns;
  ev.cpu_window_end_ns = r.hdr.start_ns;
  ev.file = FileId{kernel_dev_to_user(r.dev), r.ino};
  // Pages mapped to be read, or folios a store dirtied (a write of the file).
  ev.op = reads ? IoOp::Mmap : IoOp::Write;
  ev.mmap = MmapPages{r.first_page,    r.last_page,  r.file_size,
                      r.storage_pages, r.page_shift, r.installed_pages};
  // The range, clipped to the file; the stitcher replaces it by the pages not
  // yet counted in the checkpoint.
  ev.ret = static_cast<int64_t>(mapped_bytes(*ev.mmap));
  // Faults name no fd: the file is known by the name it was opened under,
  // else by the mapping itself (/proc/PID/maps), for one mapped before we
  // attached.
  ev.path = resolver_.path_of(r.hdr.tgid, -1, ev.file);
  if (ev.path.empty()) ev.path = resolver_.mapped_path(r.hdr.tgid, ev.file);
  emit(std::move(ev));
}

void JobIoSource::on_other_io(const ckpt_other_io_record& r) {
  // The kernel sums only calls that moved bytes, and reports only sums with
  // some: calls without bytes (or bytes without calls) are a corrupt record.
  const bool reads = r.read_calls != 0;
  const bool writes = r.write_calls != 0;
  if ((!reads && !writes) || reads != (r.bytes_read != 0) || writes != (r.bytes_written != 0)) {
    ++malformed_;
    return;
  }
  OtherIoEvent ev;
  ev.start_ns = r.hdr.start_ns;
  ev.end_ns = r.hdr.end_ns;
  ev.tgid = r.hdr.tgid;
  ev.tid = r.hdr.tid;
  ev.file = FileId{kernel_dev_to_user(r.dev), r.ino};
  // The calls named no fd: the file is known by the name it was opened under.
  ev.path = resolver_.path_of(r.hdr.tgid, -1, ev.file);
  ev.bytes_read = r.bytes_read;
  ev.bytes_written = r.bytes_written;
  ev.read_calls = r.read_calls;
  ev.write_calls = r.write_calls;
  emit(std::move(ev));
}

void JobIoSource::on_chdir(const ckpt_path_record& r) {
  if (r.ret == 0) {
    std::string path = bounded_string(r.path, r.path_len);
    // fchdir names no path, only its fd; a cut name is no directory we know.
    std::string dir = path.empty()            ? resolver_.fd_dir(r.hdr.tgid, r.dirfd)
                      : truncated(r.path_len) ? std::string()
                                              : resolver_.resolve(r.hdr.tgid, r.dirfd, path);
    resolver_.changed_dir(r.hdr.tgid, dir);
    if (truncated(r.path_len)) ++truncated_;
  }
  // No I/O to stitch; the CPU the thread spent before the call still counts.
  if (r.hdr.cpu_ns != 0)
    emit(CpuEvent{r.hdr.cpu_window_start_ns, r.hdr.start_ns, r.hdr.tgid, r.hdr.tid, r.hdr.cpu_ns});
}

void JobIoSource::on_path(const ckpt_path_record& r) {
  if (r.hdr.op == CKPT_OP_CHDIR) return on_chdir(r);
  auto op = io_op(r.hdr.op);
  if (!op) {
    ++malformed_;
    return;
  }
  IoEvent ev;
  fill_header(ev, r.hdr);
  ev.op = *op;
  ev.ret = r.ret;
  ev.flags = r.flags;
  std::string path = bounded_string(r.path, r.path_len);
  if (ev.op == IoOp::Stat && path.empty() && (r.flags & kAtEmptyPath)) {
    ev.path = resolver_.path_of(r.hdr.tgid, r.dirfd, FileId{});  // fstat(fd)
  } else {
    ev.path = resolver_.resolve(r.hdr.tgid, r.dirfd, path);
  }
  if (ev.op == IoOp::Open) {
    ev.file = FileId{kernel_dev_to_user(r.dev), r.ino};
    ev.is_directory = r.file_type == CKPT_FT_DIRECTORY;
    if (r.ret >= 0) {
      // A relative name (resolved against a dirfd that may be gone by now)
      // or a cut one: the new fd itself names the file, when it still holds it.
      bool named = !path.empty() && path.front() == '/' && !truncated(r.path_len);
      if (!named) {
        std::string by_fd =
            resolver_.verified_fd_path(r.hdr.tgid, static_cast<int>(r.ret), ev.file);
        if (!by_fd.empty()) {
          ev.path = by_fd;
          named = true;
        }
      }
      if (truncated(r.path_len) && !named) ++truncated_;
      resolver_.remember(ev.file, ev.path);
      resolver_.opened(r.hdr.tgid, static_cast<int>(r.ret), ev.path);
    } else if (truncated(r.path_len)) {
      ++truncated_;
    }
  } else if (ev.op == IoOp::Rename) {
    ev.path2 = resolver_.resolve(r.hdr.tgid, r.dirfd2, bounded_string(r.path2, r.path2_len));
    // The file now lives under its new name: later calls on it resolve
    // there. Its identity is the one its open reported (the kernel's view);
    // only a file opened before we attached is looked up by name, in our
    // mount namespace, which may differ from the job's.
    if (r.ret == 0) {
      if (auto id = resolver_.renamed(ev.path, ev.path2)) {
        ev.file = *id;
      } else if (struct stat st{}; stat(ev.path2.c_str(), &st) == 0) {
        ev.file = FileId{st.st_dev, st.st_ino};
        resolver_.remember(ev.file, ev.path2);
      }
    }
  } else if (ev.op == IoOp::Mkdir) {
    ev.is_directory = true;
  }
  if (ev.op != IoOp::Open && (truncated(r.path_len) || truncated(r.path2_len))) ++truncated_;
  emit(std::move(ev));
}

// Calls in flight (bpf/jobio.h CKPT_REC_*_START): what they name, as the
// records of the same calls will when they return.
void JobIoSource::on_io_start(const ckpt_io_record& r) {
  auto op = io_op(r.hdr.op);
  auto via = io_via(r.via);
  if (!op || is_metadata_op(*op) || !via || *via == IoVia::Mmap) {
    ++malformed_;
    return;
  }
  CallStartEvent ev;
  ev.start_ns = r.hdr.start_ns;
  ev.tgid = r.hdr.tgid;
  ev.tid = r.hdr.tid;
  ev.op = *op;
  ev.via = *via;
  ev.file = FileId{kernel_dev_to_user(r.dev), r.ino};
  ev.path = resolver_.path_of(r.hdr.tgid, r.fd, ev.file);
  emit(std::move(ev));
}

void JobIoSource::on_copy_start(const ckpt_copy_record& r) {
  auto via = io_via(r.via);
  if (!via || !is_copy_via(*via)) {
    ++malformed_;
    return;
  }
  CallStartEvent ev;
  ev.start_ns = r.hdr.start_ns;
  ev.tgid = r.hdr.tgid;
  ev.tid = r.hdr.tid;
  ev.op = IoOp::Write;
  ev.via = *via;
  ev.file = FileId{kernel_dev_to_user(r.dst_dev), r.dst_ino};
  ev.path = resolver_.path_of(r.hdr.tgid, r.dst_fd, ev.file);
  ev.copy_source = FileId{kernel_dev_to_user(r.src_dev), r.src_ino};
  ev.copy_source_path = resolver_.path_of(r.hdr.tgid, r.src_fd, *ev.copy_source);
  emit(std::move(ev));
}

void JobIoSource::on_path_start(const ckpt_path_record& r) {
  auto op = io_op(r.hdr.op);
  if (!op || !is_metadata_op(*op) || *op == IoOp::Stat) {
    ++malformed_;
    return;
  }
  CallStartEvent ev;
  ev.start_ns = r.hdr.start_ns;
  ev.tgid = r.hdr.tgid;
  ev.tid = r.hdr.tid;
  ev.op = *op;
  ev.path = resolver_.resolve(r.hdr.tgid, r.dirfd, bounded_string(r.path, r.path_len));
  if (ev.op == IoOp::Rename)
    ev.path2 = resolver_.resolve(r.hdr.tgid, r.dirfd2, bounded_string(r.path2, r.path2_len));
  emit(std::move(ev));
}

void JobIoSource::on_record(const void* data, size_t size) {
  if (size < sizeof(ckpt_record_header)) {
    ++malformed_;
    return;
  }
  ckpt_record_header h;
  std::memcpy(&h, data, sizeof(h));
  switch (h.kind) {
    case CKPT_REC_IO:
      if (size < sizeof(ckpt_io_record)) break;
      return on_io(*static_cast<const ckpt_io_record*>(data));
    case CKPT_REC_PATH:
      if (size < sizeof(ckpt_path_record)) break;
      return on_path(*static_cast<const ckpt_path_record*>(data));
    case CKPT_REC_COPY:
      if (size < sizeof(ckpt_copy_record)) break;
      return on_copy(*static_cast<const ckpt_copy_record*>(data));
    case CKPT_REC_MMAP:
      if (size < sizeof(ckpt_mmap_record)) break;
      return on_mmap(*static_cast<const ckpt_mmap_record*>(data));
    case CKPT_REC_OTHER_IO:
      if (size < sizeof(ckpt_other_io_record)) break;
      return on_other_io(*static_cast<const ckpt_other_io_record*>(data));
    case CKPT_REC_IO_START:
      if (size < sizeof(ckpt_io_record)) break;
      return on_io_start(*static_cast<const ckpt_io_record*>(data));
    case CKPT_REC_COPY_START:
      if (size < sizeof(ckpt_copy_record)) break;
      return on_copy_start(*static_cast<const ckpt_copy_record*>(data));
    case CKPT_REC_PATH_START:
      if (size < sizeof(ckpt_path_record)) break;
      return on_path_start(*static_cast<const ckpt_path_record*>(data));
    case CKPT_REC_CPU:
      emit(CpuEvent{h.cpu_window_start_ns, h.end_ns, h.tgid, h.tid, h.cpu_ns});
      return;
    case CKPT_REC_CALL_END:
      emit(CallEndEvent{h.end_ns, h.tgid, h.tid});
      return;
    case CKPT_REC_STORAGE_BUSY: {
      if (size < sizeof(ckpt_storage_busy_record)) break;
      const auto& r = *static_cast<const ckpt_storage_busy_record*>(data);
      if (r.hdr.end_ns < r.hdr.start_ns) break;
      emit(StorageBusyEvent{h.start_ns, h.end_ns, h.tgid, h.tid, kernel_dev_to_user(r.dev), r.bytes,
                            r.bios});
      return;
    }
    case CKPT_REC_OPEN_FILE: {
      if (size < sizeof(ckpt_open_file_record)) break;
      const auto& r = *static_cast<const ckpt_open_file_record*>(data);
      auto& list = open_for_write_[h.tgid];
      if (r.fd < 0) {
        list.complete = false;
      } else {
        list.files.push_back(FileId{kernel_dev_to_user(r.dev), r.ino});
      }
      return;
    }
    case CKPT_REC_PROC: {
      if (size < sizeof(ckpt_proc_record)) break;
      // A privileged exec is the exporter's to act on (an unprivileged
      // client's trace loses the process); to the stitcher nothing changes.
      if (h.op == CKPT_PROC_EXEC_PRIVILEGED) return;
      const auto& r = *static_cast<const ckpt_proc_record*>(data);
      ProcEvent ev;
      ev.kind = h.op == CKPT_PROC_FORK   ? ProcEvent::Kind::Fork
                : h.op == CKPT_PROC_EXIT ? ProcEvent::Kind::Exit
                                         : ProcEvent::Kind::ThreadExit;
      ev.time_ns = h.start_ns;
      ev.tgid = h.tgid;
      ev.tid = h.tid;
      ev.child_tgid = r.child_tgid;
      ev.exit_code = r.exit_code;
      ev.comm = std::string(r.comm, strnlen(r.comm, sizeof(r.comm)));
      if (ev.kind != ProcEvent::Kind::Fork && r.io_accounting)
        ev.thread_io =
            ProcEvent::ThreadIo{r.io_read_bytes, r.io_write_bytes, r.io_cancelled_write_bytes};
      if (ev.kind == ProcEvent::Kind::Fork) resolver_.forked(ev.tgid, ev.child_tgid);
      if (ev.kind == ProcEvent::Kind::Exit && (ev.exit_code & 0x7f) != 0) {
        // The kernel listed the files still open for writing just before.
        auto it = open_for_write_.find(ev.tgid);
        if (it == open_for_write_.end()) {
          ev.open_for_write.emplace();
        } else {
          if (it->second.complete) ev.open_for_write = std::move(it->second.files);
          open_for_write_.erase(it);
        }
      }
      emit(std::move(ev));
      return;
    }
    default:
      break;
  }
  ++malformed_;
}

}  // namespace ckpt
