// Turns what a call named (a relative path, a directory fd, or only a file
// descriptor) into an absolute path, through /proc while the process lives
// and a per-process cache of its working directory after it is gone.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "model/events.h"

namespace ckpt {

class PathResolver {
 public:
  explicit PathResolver(std::string proc_root = "/proc") : proc_(std::move(proc_root)) {}

  // A path given to openat/mkdirat/... relative to dirfd (AT_FDCWD = cwd).
  std::string resolve(uint32_t tgid, int dirfd, const std::string& path);
  // The path of an open file: the name it was opened under, else /proc/PID/fd/FD
  // when that fd still holds this very file (an fd may have been reused).
  std::string path_of(uint32_t tgid, int fd, const FileId& file);
  // /proc/PID/fd/FD's target, only if the fd still refers to `file`.
  std::string verified_fd_path(uint32_t tgid, int fd, const FileId& file) const;
  // The path of a file the process has mapped, from /proc/PID/maps (its
  // device, inode and path columns): a mapping made before we attached has
  // no open we saw. Remembered when found; "" when no mapping names it.
  std::string mapped_path(uint32_t tgid, const FileId& file);
  void remember(const FileId& file, const std::string& path);
  // A rename of a file we saw opened: its identity, now under the new name.
  // A rename of a directory renames what we know below it too (files and
  // the directories open fds name): a file still open under a staging
  // directory renamed into a checkpoint's (Orbax, Hugging Face) is told
  // under its new path from then on.
  std::optional<FileId> renamed(const std::string& old_path, const std::string& new_path);
  // A successful open returned `fd` for `path` (absolute): a later call
  // naming the fd as its dirfd resolves against it even when the process is
  // gone before we read /proc (cp -r opens each destination directory, then
  // every file relative to it, and exits within milliseconds).
  void opened(uint32_t tgid, int fd, const std::string& path);
  // A traced chdir/fchdir made `dir` the process' working directory: from
  // now on its relative names resolve there, not where /proc says it is
  // when the record is read (the process may have moved on, or be gone).
  // An unknown `dir` ("" or relative) forgets what was known.
  void changed_dir(uint32_t tgid, const std::string& dir);
  // The directory a process' fd names: as the traced open that returned it
  // named it, else (an fd opened before we looked) /proc.
  std::string fd_dir(uint32_t tgid, int fd) const;
  void forked(uint32_t parent, uint32_t child);
  void exited(uint32_t tgid) {
    cwd_.erase(tgid);
    fds_.erase(tgid);
  }

 private:
  std::string cwd_of(uint32_t tgid);

  std::string proc_;
  // A process' working directory: `traced` when a chdir record (or a
  // parent's, through fork) set it, which /proc cannot overrule; else the
  // last /proc reading, kept for when the process is gone.
  struct Cwd {
    std::string path;
    bool traced = false;
  };
  std::unordered_map<uint32_t, Cwd> cwd_;
  // Per process, the paths its traced opens returned fds for (the newest
  // open of an fd number wins), for dirfds /proc no longer shows.
  std::unordered_map<uint32_t, std::unordered_map<int, std::string>> fds_;
  void rename_below(const std::string& old_dir, const std::string& new_dir);

  std::unordered_map<FileId, std::string, FileIdHash> files_;
  // The reverse of files_, ordered: the names below a directory are one
  // range (a rename of a file costs one lookup, not a scan).
  std::map<std::string, FileId> ids_;
};

// Lexically normalises an absolute path: "//", "/./" and "/x/../" removed.
std::string normalize_path(const std::string& path);

}  // namespace ckpt
