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
#include <string>
#include <unordered_map>

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

  // Bytes read and written on `file` (named `path`, "" when not known).
  void add(const FileId& file, const std::string& path, uint64_t bytes_read,
           uint64_t bytes_written);
  // The file was renamed: it goes by its new name (and may now be excluded).
  void renamed(const FileId& file, const std::string& new_path);
  // The file turned out to be a checkpoint (renamed to a checkpoint's name):
  // it was recognised after all, and its bytes no longer count.
  void recognised(const FileId& file);

  // The totals and the largest kUnrecognisedFilesKept files, largest first.
  [[nodiscard]] UnrecognisedIoRecord record() const;

  // Distinct files kept per file; past it the smaller half is dropped (their
  // bytes stay in the totals, and in the count of files).
  static constexpr size_t kMaxFiles = 16384;

 private:
  struct Entry {
    std::string path;
    uint64_t bytes_read = 0;
    uint64_t bytes_written = 0;
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
};

}  // namespace ckpt
