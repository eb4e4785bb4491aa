// Decides which paths are checkpoint files, with fnmatch(3) globs from the
// config, and caches the answer per path (a job touches the same files often).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "config/config.h"

namespace ckpt {

class CheckpointMatcher {
 public:
  explicit CheckpointMatcher(CheckpointRules rules) : rules_(std::move(rules)) {}

  // An absolute or relative path; a file whose name matches file_globs under
  // a directory matching dir_globs (or anywhere, when dir_globs is empty).
  bool is_checkpoint_file(const std::string& path);
  // A directory that is, or is inside, a checkpoint directory (mkdir, fsync).
  bool is_checkpoint_dir(const std::string& path);

 private:
  bool dirs_match(std::string_view dirs) const;

  CheckpointRules rules_;
  std::unordered_map<std::string, bool> file_cache_;
};

}  // namespace ckpt
