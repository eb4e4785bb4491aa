// The job's data through regular files that were not recognised as
// checkpoints, per file: what the unrecognised-I/O notice of the summary,
// table and report says (docs/stitching.md, "Unrecognised I/O"), so that a
// checkpoint layout the patterns miss is never silent.
//
// Two sources feed it: the data calls the kernel still recorded one by one
// on a file the stitcher then ruled out (before the kernel had its verdict),
// and the kernel's sums of the calls after (OtherIoEvent). Each call is in
// exactly one of them, so nothing is counted twice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/checkpoint_matcher.h"
#include "model/events.h"
#include "model/records.h"

namespace ckpt {

class UnrecognisedIo {
 public:
  // Files whose name exclude_globs rules out are never counted: the config
  // says they are no checkpoints, so there is nothing to tell. A matcher of
  // its own (its questions are uncached), so the owner can move freely.
  explicit UnrecognisedIo(const CheckpointRules& rules)
      : matcher_(rules), notice_bytes_(rules.unrecognised_notice_bytes) {}

  // What one source told of one file: bytes and calls, and the span of time
  // they fell in.
  struct Moved {
    uint64_t bytes_read = 0;
    uint64_t bytes_written = 0;
    uint64_t read_calls = 0;
    uint64_t write_calls = 0;
    uint64_t first_ns = 0;
    uint64_t last_ns = 0;
    uint32_t tgid = 0;  // the newest call's
    uint32_t tid = 0;
  };
  // Bytes read and written on `file` (named `path`, "" when not known).
  void add(const FileId& file, const std::string& path, const Moved& moved);
  // The file was renamed: it goes by its new name (and may now be excluded).
  void renamed(const FileId& file, const std::string& new_path);
  // Files counted here whose path is under the directory `old_dir`, renamed
  // to `new_dir`: their paths are rewritten, and they are returned.
  std::vector<FileId> renamed_dir(const std::string& old_dir, const std::string& new_dir);
  [[nodiscard]] std::string path_of(const FileId& file) const;
  [[nodiscard]] bool counts(const FileId& file) const { return files_.contains(file); }
  // The file turned out to be a checkpoint (renamed to a checkpoint's name):
  // what it moved is taken out (it is the checkpoint's), if it was counted
  // here and not excluded by name.
  std::optional<Moved> take(const FileId& file);

  // The totals and the largest kUnrecognisedFilesKept files, largest first.
  [[nodiscard]] UnrecognisedIoRecord record() const;
  // Written to every file here, excluded ones too, and to how many: what
  // the trace saw written outside checkpoints (the end-of-run accounting).
  [[nodiscard]] uint64_t all_bytes_written() const { return all_bytes_written_; }
  [[nodiscard]] uint64_t all_files_written() const { return all_files_written_; }

  // Distinct files kept per file; past it the smaller half is dropped (their
  // bytes stay in the totals, and in the count of files).
  static constexpr size_t kMaxFiles = 16384;

 private:
  struct Entry {
    std::string path;
    Moved moved;
    bool excluded = false;
  };
  void set_path(Entry& e, const std::string& path);
  void prune();

  CheckpointMatcher matcher_;
  uint64_t notice_bytes_;
  std::unordered_map<FileId, Entry, FileIdHash> files_;
  // Over the entries not excluded, plus the pruned ones.
  uint64_t bytes_read_ = 0;
  uint64_t bytes_written_ = 0;
  uint64_t counted_files_ = 0;
  // Over every entry, excluded and pruned ones included; less what was
  // taken into a checkpoint.
  uint64_t all_bytes_written_ = 0;
  uint64_t all_files_written_ = 0;
};

}  // namespace ckpt
