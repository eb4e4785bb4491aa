// The stitcher's late decisions (docs/stitching.md, "Decided late"): files
// whose bytes moved before anyone knew they were a checkpoint's. The
// write-then-rename commit (Orbax, TensorFlow, DCP's metadata, safetensors,
// rsync) writes under a name no rule matches, then renames the file, or its
// whole directory, into one that does. What such a file moved counts in the
// checkpoint of the rename, whole and once:
//   - under a temporary name (CheckpointRules::temporary_globs) its calls
//     were recorded one by one and held (pending_files.h): they join with
//     their own times;
//   - under any other name the kernel summed its calls (ckpt_other_io_record)
//     and they were counted as unrecognised I/O: their bytes and count move
//     into the checkpoint, with the span the sums were taken over as their
//     time (via "summed").
// Whatever no rename claims stays, or becomes, unrecognised I/O.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "stitch/stitcher.h"

namespace ckpt {

void Stitcher::on_other_io(const OtherIoEvent& ev) {
  if (!count_unrecognised_) return;
  UnrecognisedIo::Moved moved;
  moved.bytes_read = ev.bytes_read;
  moved.bytes_written = ev.bytes_written;
  moved.read_calls = ev.read_calls;
  moved.write_calls = ev.write_calls;
  moved.first_ns = ev.start_ns;
  moved.last_ns = ev.end_ns;
  moved.tgid = ev.tgid;
  moved.tid = ev.tid;
  // Sums the kernel kept while the file was ruled out, reported after a
  // rename made it a checkpoint's (a writer that had not closed it yet):
  // the checkpoint's.
  auto it = file_is_checkpoint_.find(ev.file);
  if (it != file_is_checkpoint_.end() && it->second) {
    admit_summed(ev.file, ev.path, moved);
    return;
  }
  unrecognised_.add(ev.file, ev.path, moved);
}

void Stitcher::note_unrecognised(const IoEvent& ev) {
  if (!count_unrecognised_) return;
  // What the kernel sums for a file ruled out (bpf/jobio.h
  // ckpt_other_io_record), from the calls it recorded before it knew:
  // successful reads and writes of regular files, not page faults. A
  // copy's other end (a sendfile's socket) is no file at all.
  if ((ev.op == IoOp::Read || ev.op == IoOp::Write) && !ev.is_directory && !ev.not_a_file) {
    const uint64_t bytes = ev.bytes_moved();
    UnrecognisedIo::Moved moved;
    const bool read = ev.op == IoOp::Read;
    moved.bytes_read = read ? bytes : 0;
    moved.bytes_written = read ? 0 : bytes;
    moved.read_calls = read ? ev.calls : 0;
    moved.write_calls = read ? 0 : ev.calls;
    moved.first_ns = ev.start_ns;
    moved.last_ns = ev.end_ns;
    moved.tgid = ev.tgid;
    moved.tid = ev.tid;
    unrecognised_.add(ev.file, ev.path, moved);
  } else if (ev.op == IoOp::Rename && ev.ret == 0 && ev.file.known()) {
    unrecognised_.renamed(ev.file, ev.path2);
  }
}

void Stitcher::settle_rename(const IoEvent& ev) {
  if (!count_unrecognised_) return;
  // The files the rename moved, with their new names: the file itself, or
  // every file below the directory it renamed.
  std::vector<std::pair<FileId, std::string>> moved;
  if (ev.file.known() && !ev.path2.empty()) moved.emplace_back(ev.file, ev.path2);
  // A rename of a file the stitcher knows as one (held, counted, or a
  // checkpoint file) renames no directory: the scans below are for the rest
  // (the rename's record does not say whether it named a directory), and
  // the unrecognised files' table is up to 16384 long.
  const auto verdict = file_is_checkpoint_.find(ev.file);
  const bool known_file =
      ev.file.known() && (pending_.holds(ev.file) || unrecognised_.counts(ev.file) ||
                          (verdict != file_is_checkpoint_.end() && verdict->second));
  if (!known_file) {
    for (const FileId& f : pending_.renamed_dir(ev.path, ev.path2))
      moved.emplace_back(f, pending_.path_of(f));
    for (const FileId& f : unrecognised_.renamed_dir(ev.path, ev.path2))
      moved.emplace_back(f, unrecognised_.path_of(f));
  }
  for (const auto& [file, path] : moved) {
    const bool held = pending_.holds(file);
    if (!held && !unrecognised_.counts(file)) continue;  // neither: nothing to settle
    if (matcher_.is_checkpoint_file(path)) {
      promote(file, path);
    } else if (held) {
      if (matcher_.is_temporary(path)) {
        pending_.renamed(file, path);
      } else {
        pending_.renamed(file, path);
        release_pending(file);
      }
    }
  }
}

void Stitcher::settle_unlink(const IoEvent& ev) {
  // A temporary file removed (a save abandoned, or a stale one cleaned up):
  // no rename will ever make it a checkpoint's.
  if (ev.path.empty()) return;
  for (const FileId& f : pending_.older_than(UINT64_MAX))
    if (pending_.path_of(f) == ev.path) release_pending(f);
}

void Stitcher::promote(const FileId& file, const std::string& path) {
  std::vector<IoEvent> calls = pending_.take(file);
  std::optional<UnrecognisedIo::Moved> summed = unrecognised_.take(file);
  // From now on the kernel records the file's calls, and they are the
  // checkpoint's.
  decide(file, true, true);
  // The file is known by its name as a checkpoint's: the calls made under
  // the temporary one are told under it too (io_calls, the file's row).
  for (IoEvent& c : calls) c.path = path;
  if (summed) admit_summed(file, path, *summed);
  std::stable_sort(calls.begin(), calls.end(),
                   [](const IoEvent& a, const IoEvent& b) { return a.start_ns < b.start_ns; });
  for (IoEvent& c : calls) admit(std::move(c));
}

void Stitcher::release_pending(const FileId& file) {
  const std::string path = pending_.path_of(file);
  std::vector<IoEvent> calls = pending_.take(file);
  // From now on the kernel sums the file's calls, as any file ruled out.
  decide(file, false, true);
  for (IoEvent& c : calls) {
    if (!path.empty()) c.path = path;
    note_unrecognised(c);
    if (auto f = job_failure(c)) out_failures_.push_back(std::move(*f));
  }
}

void Stitcher::release_stale_pending(uint64_t horizon_ns) {
  for (const FileId& f : pending_.older_than(horizon_ns)) release_pending(f);
}

void Stitcher::admit_summed(const FileId& file, const std::string& path,
                            const UnrecognisedIo::Moved& moved) {
  // One event per direction: the bytes and calls exact, the time the span
  // the kernel's sums covered (the calls' own time is not kept for files
  // ruled out: bpf/jobio.h ckpt_other_io_record), an upper bound.
  auto summed = [&](IoOp op, uint64_t bytes, uint64_t calls) {
    IoEvent ev;
    ev.op = op;
    ev.file = file;
    ev.path = path;
    ev.tgid = moved.tgid;
    ev.tid = moved.tid;
    ev.start_ns = moved.first_ns;
    ev.end_ns = std::max(moved.last_ns, moved.first_ns);
    ev.cpu_window_start_ns = ev.start_ns;
    ev.ret = static_cast<int64_t>(bytes);
    ev.requested = bytes;
    ev.calls = static_cast<uint32_t>(std::clamp<uint64_t>(calls, 1, UINT32_MAX));
    ev.busy_ns = ev.end_ns - ev.start_ns;
    ev.via = IoVia::Summed;
    return ev;
  };
  if (moved.bytes_written > 0) admit(summed(IoOp::Write, moved.bytes_written, moved.write_calls));
  if (moved.bytes_read > 0) admit(summed(IoOp::Read, moved.bytes_read, moved.read_calls));
}

}  // namespace ckpt
