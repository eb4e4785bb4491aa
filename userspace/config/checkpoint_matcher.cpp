#include "config/checkpoint_matcher.h"

#include <fnmatch.h>

namespace ckpt {
namespace {

bool matches_any(const std::vector<std::string>& globs, const std::string& name) {
  for (const auto& g : globs)
    if (fnmatch(g.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

}  // namespace

bool CheckpointMatcher::dirs_match(std::string_view dirs) const {
  if (rules_.dir_globs.empty()) return true;
  size_t pos = 0;
  while (pos < dirs.size()) {
    size_t slash = dirs.find('/', pos);
    if (slash == std::string_view::npos) slash = dirs.size();
    if (slash > pos && matches_any(rules_.dir_globs, std::string(dirs.substr(pos, slash - pos))))
      return true;
    pos = slash + 1;
  }
  return false;
}

bool CheckpointMatcher::is_checkpoint_file(const std::string& path) {
  if (auto it = file_cache_.find(path); it != file_cache_.end()) return it->second;
  const size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string_view dirs =
      slash == std::string::npos ? std::string_view() : std::string_view(path).substr(0, slash);
  const bool yes = !name.empty() && matches_any(rules_.file_globs, name) && dirs_match(dirs);
  // Bounded: a job that stats millions of distinct paths must not grow us forever.
  if (file_cache_.size() > 200'000) file_cache_.clear();
  file_cache_.emplace(path, yes);
  return yes;
}

bool CheckpointMatcher::is_checkpoint_dir(const std::string& path) {
  if (rules_.dir_globs.empty()) return false;
  return dirs_match(path);
}

}  // namespace ckpt
