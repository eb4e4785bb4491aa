#include "config/checkpoint_matcher.h"

#include <fnmatch.h>

namespace ckpt {
namespace {

bool matches_any(const std::vector<std::string>& globs, const std::string& name) {
  for (const auto& g : globs)
    if (fnmatch(g.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

// Orbax/TensorStore data files (`d/3f9a...`) and DeepSpeed's `latest` carry
// no extension; `train.log`, `config.json` and `.metadata` do.
bool has_no_extension(const std::string& name) { return name.find('.') == std::string::npos; }

// Our own files say "ckpt" too: the binaries (`ckptscope-workload`, which a
// traced job maps, and `ckptscope` itself, extensionless), the traces and the
// logs. By name only: a directory of ours (`ckptscope-demo-XXXXXX`, a clone
// named `ckptscope`) may hold real checkpoints.
bool is_ckptscope_file(const std::string& name) { return name.starts_with("ckptscope"); }

// Python's imports stat thousands of paths, and every stat of a file that is
// not a checkpoint asks about its directories too: each answer is kept.
template <typename Decide>
bool remembered(std::unordered_map<std::string, bool>& cache, const std::string& path,
                Decide decide) {
  if (auto it = cache.find(path); it != cache.end()) return it->second;
  const bool yes = decide();
  // Bounded: a job that stats millions of distinct paths must not grow us forever.
  if (cache.size() > 200'000) cache.clear();
  cache.emplace(path, yes);
  return yes;
}

}  // namespace

CheckpointMatcher::CheckpointMatcher(CheckpointRules rules) : rules_(std::move(rules)) {
  for (const auto& entry : rules_.dir_globs) {
    if (entry.find('/') == std::string::npos) {
      dir_name_globs_.push_back(entry);
      continue;
    }
    // fnmatch without FNM_PATHNAME: "*" crosses '/', so "PREFIX/*" is
    // everything below PREFIX. "/" itself strips to "" (the root's files).
    std::string prefix = entry;
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    dir_prefix_globs_.push_back(prefix);
    dir_prefix_globs_.push_back(prefix + "/*");
  }
}

CheckpointMatcher::DirVerdict CheckpointMatcher::judge_dirs(std::string_view dirs) const {
  DirVerdict v;
  if (!dir_prefix_globs_.empty() && matches_any(dir_prefix_globs_, std::string(dirs)))
    v.checkpoint = true;
  size_t pos = 0;
  while (pos < dirs.size()) {
    size_t slash = dirs.find('/', pos);
    if (slash == std::string_view::npos) slash = dirs.size();
    if (slash > pos) {
      const std::string component(dirs.substr(pos, slash - pos));
      if (matches_any(rules_.exclude_globs, component)) {
        v.excluded = true;
        return v;  // nothing under it counts: no need to look further
      }
      if (!v.checkpoint && matches_any(dir_name_globs_, component)) v.checkpoint = true;
    }
    pos = slash + 1;
  }
  return v;
}

bool CheckpointMatcher::decide_file(const std::string& path) const {
  const size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || is_ckptscope_file(name) || matches_any(rules_.exclude_globs, name))
    return false;
  const bool says_checkpoint = matches_any(rules_.name_globs, name);
  const bool generic_name = matches_any(rules_.file_globs, name);
  const bool extensionless = rules_.extensionless_files && has_no_extension(name);
  if (!says_checkpoint && !generic_name && !extensionless) return false;
  const std::string_view dirs =
      slash == std::string::npos ? std::string_view() : std::string_view(path).substr(0, slash);
  const DirVerdict d = judge_dirs(dirs);
  if (d.excluded) return false;
  if (says_checkpoint || d.checkpoint) return true;
  // An empty dir_globs means "generic names anywhere" (the rule before names
  // that say checkpoint existed); an extensionless file anywhere would be
  // /etc/hosts, so those still need a checkpoint directory.
  return generic_name && rules_.dir_globs.empty();
}

bool CheckpointMatcher::is_excluded(const std::string& path) const {
  const size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (is_ckptscope_file(name) || matches_any(rules_.exclude_globs, name)) return true;
  return slash != std::string::npos && judge_dirs(std::string_view(path).substr(0, slash)).excluded;
}

bool CheckpointMatcher::is_temporary(const std::string& path) const {
  if (rules_.temporary_globs.empty() || is_excluded(path)) return false;
  size_t pos = 0;
  while (pos < path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    if (slash > pos && matches_any(rules_.temporary_globs, path.substr(pos, slash - pos)))
      return true;
    pos = slash + 1;
  }
  return false;
}

bool CheckpointMatcher::is_generic_name(const std::string& name) const {
  return matches_any(rules_.file_globs, name) ||
         (rules_.extensionless_files && has_no_extension(name));
}

bool CheckpointMatcher::is_checkpoint_file(const std::string& path) {
  return remembered(file_cache_, path, [&] { return decide_file(path); });
}

bool CheckpointMatcher::is_checkpoint_dir(const std::string& path) {
  if (rules_.dir_globs.empty()) return false;
  return remembered(dir_cache_, path, [&] {
    const DirVerdict d = judge_dirs(path);
    return d.checkpoint && !d.excluded;
  });
}

}  // namespace ckpt
