#include "stitch/io_accounting.h"

namespace ckpt {
namespace {

uint64_t since(uint64_t now, uint64_t then) { return now > then ? now - then : 0; }

}  // namespace

void IoAccounting::on_exit(const ProcEvent& ev) {
  if (ev.kind == ProcEvent::Kind::Fork) return;
  if (!ev.thread_io) {
    ++without_;
    return;
  }
  ProcEvent::ThreadIo io = *ev.thread_io;
  if (auto it = baselines_.find(ev.tid); it != baselines_.end()) {
    io.read_bytes = since(io.read_bytes, it->second.read_bytes);
    io.write_bytes = since(io.write_bytes, it->second.write_bytes);
    io.cancelled_write_bytes = since(io.cancelled_write_bytes, it->second.cancelled_write_bytes);
    baselines_.erase(it);
  }
  ++threads_;
  read_bytes_ += io.read_bytes;
  // Dirty bytes a truncate or unlink dropped were counted when dirtied and
  // never written: the thread wrote what is left.
  written_bytes_ += since(io.write_bytes, io.cancelled_write_bytes);
}

IoAccountingRecord IoAccounting::record(const std::vector<CheckpointRecord>& checkpoints,
                                        const OutsideCheckpoints& outside,
                                        uint64_t processes_running, uint64_t page_bytes) const {
  IoAccountingRecord r;
  r.threads = threads_;
  r.processes_running = processes_running;
  r.kernel_read_bytes = read_bytes_;
  r.kernel_written_bytes = written_bytes_;
  r.page_bytes = page_bytes;
  for (const CheckpointRecord& c : checkpoints) {
    for (const FileIoRecord& f : c.file_io) {
      r.traced_written_bytes += f.bytes_written;
      if (f.bytes_written > 0) ++r.files_written;
    }
  }
  r.traced_written_bytes += outside.bytes_written;
  r.files_written += outside.files_written;
  r.notice_bytes = outside.notice_bytes;
  return r;
}

}  // namespace ckpt
