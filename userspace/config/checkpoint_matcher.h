// Decides which paths are checkpoint files, with fnmatch(3) globs from the
// config (CheckpointRules, docs/frameworks.md), and caches the answer per path
// (a job touches the same files often).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.h"

namespace ckpt {

class CheckpointMatcher {
 public:
  explicit CheckpointMatcher(CheckpointRules rules);

  // An absolute or relative path: not excluded, and either its name says
  // checkpoint (name_globs) or it has a generic name (file_globs, or no
  // extension) under a checkpoint directory (anywhere, for file_globs, when
  // dir_globs is empty).
  bool is_checkpoint_file(const std::string& path);
  // A directory that is, or is inside, a checkpoint directory (mkdir, fsync).
  bool is_checkpoint_dir(const std::string& path);
  // A file ruled out by name whatever the other globs say: its name or one of
  // its directories matches exclude_globs, or it is one of ckptscope's own.
  // Not cached (asked once per file, by the unrecognised-I/O accounting).
  [[nodiscard]] bool is_excluded(const std::string& path) const;
  // A temporary name (temporary_globs: its name or one of its directories),
  // not excluded: a file that a rename may make a checkpoint file. Not cached.
  [[nodiscard]] bool is_temporary(const std::string& path) const;
  // A generic name (file_globs, or no extension with extensionless_files):
  // under a checkpoint directory, the file would be a checkpoint file.
  [[nodiscard]] bool is_generic_name(const std::string& name) const;

 private:
  struct DirVerdict {
    bool checkpoint = false;  // a directory matches dir_globs or is under a prefix
    bool excluded = false;    // a directory matches exclude_globs
  };
  [[nodiscard]] DirVerdict judge_dirs(std::string_view dirs) const;
  [[nodiscard]] bool decide_file(const std::string& path) const;

  CheckpointRules rules_;
  // dir_globs split by kind: names matched against each directory, and
  // absolute prefixes as the two patterns "PREFIX" and "PREFIX/*".
  std::vector<std::string> dir_name_globs_;
  std::vector<std::string> dir_prefix_globs_;
  std::unordered_map<std::string, bool> file_cache_;
  std::unordered_map<std::string, bool> dir_cache_;
};

}  // namespace ckpt
