// Files under a temporary name (CheckpointRules::temporary_globs) that are no
// checkpoint's by the rules, yet: the write-then-rename commit of Orbax,
// TensorFlow, DCP's metadata, safetensors and rsync writes a checkpoint under
// a name no rule matches, then renames it (or its directory) into one that
// does. The kernel records such a file's calls one by one (it is told the
// file may be a checkpoint's); they are held here, outside any checkpoint,
// until a rename decides (docs/stitching.md, "Decided late"):
//   - into a checkpoint's name: the stitcher takes them, and they join that
//     checkpoint whole, with their own times;
//   - into another temporary name: held on;
//   - anywhere else, an unlink, or no rename within the holding time: they
//     are unrecognised I/O, as any file's the rules rule out.
// Bounded: past kMaxHeldCalls calls in all, the file whose call does not fit
// is released (its calls become unrecognised I/O; its later calls the
// kernel's sums), never dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/events.h"

namespace ckpt {

class PendingFiles {
 public:
  static constexpr size_t kMaxHeldCalls = 200'000;
  explicit PendingFiles(size_t max_held_calls = kMaxHeldCalls) : max_held_calls_(max_held_calls) {}

  // `file` (known) is under the temporary name `path` at `now_ns`: its calls
  // are held. A file already held keeps what it holds (a reopen).
  void track(const FileId& file, const std::string& path, uint64_t now_ns);
  [[nodiscard]] bool holds(const FileId& file) const { return files_.contains(file); }
  // No call fits any more (the caller releases the file whose call it is).
  [[nodiscard]] bool full() const { return held_calls_ >= max_held_calls_; }
  // Holds a call of a tracked file that fits (not full()); false, and `ev`
  // untouched, when the file is not tracked or nothing fits.
  bool hold(IoEvent&& ev);
  // The file's calls, oldest first, and it is no longer held.
  std::vector<IoEvent> take(const FileId& file);
  // A tracked file renamed to `new_path` (held on).
  void renamed(const FileId& file, const std::string& new_path);
  // Tracked files whose path is under the directory `old_dir`, which was
  // renamed to `new_dir`: their paths are rewritten; the files are returned.
  std::vector<FileId> renamed_dir(const std::string& old_dir, const std::string& new_dir);
  [[nodiscard]] std::string path_of(const FileId& file) const;
  // Files whose last call ended before `horizon_ns` (kept too long without a
  // rename), and every file when `horizon_ns` is UINT64_MAX.
  [[nodiscard]] std::vector<FileId> older_than(uint64_t horizon_ns) const;

  [[nodiscard]] size_t held_calls() const { return held_calls_; }
  [[nodiscard]] size_t files() const { return files_.size(); }

 private:
  struct File {
    std::string path;
    std::vector<IoEvent> calls;
    uint64_t last_ns = 0;  // the newest call's end, or when it was tracked
  };
  std::unordered_map<FileId, File, FileIdHash> files_;
  size_t max_held_calls_;
  size_t held_calls_ = 0;
};

}  // namespace ckpt
