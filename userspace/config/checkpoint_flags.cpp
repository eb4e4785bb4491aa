#include "config/checkpoint_flags.h"

#include <filesystem>

#include <fmt/format.h>

namespace ckpt {
namespace {

Expected<std::string> checkpoint_dir_entry(const std::string& dir, const RelativeBase& base) {
  if (dir.empty()) return make_error("--checkpoint-dir: must not be empty");
  if (dir.find('/') == std::string::npos) return dir;  // a directory name, matched anywhere
  std::filesystem::path p(dir);
  // Traced paths are absolute (resolved against the job's working directory),
  // so a relative prefix is made absolute the same way.
  if (p.is_relative()) {
    if (!base.dir)
      return make_error(
          fmt::format("--checkpoint-dir {}: a relative path, and {}; give it as an absolute path",
                      dir, base.why_none));
    p = std::filesystem::path(*base.dir) / p;
  }
  std::string prefix = p.lexically_normal().string();
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  return prefix;
}

}  // namespace

Expected<void> add_checkpoint_flags(CheckpointRules& rules, const std::vector<std::string>& globs,
                                    const std::vector<std::string>& dirs, const std::string& cwd) {
  return add_checkpoint_flags(rules, globs, dirs, RelativeBase{cwd, {}});
}

Expected<void> add_checkpoint_flags(CheckpointRules& rules, const std::vector<std::string>& globs,
                                    const std::vector<std::string>& dirs,
                                    const RelativeBase& base) {
  for (const auto& glob : globs) {
    if (glob.empty()) return make_error("--checkpoint-glob: must not be empty");
    if (glob.find('/') != std::string::npos)
      return make_error(fmt::format(
          "--checkpoint-glob {}: has a '/': it is matched against a file's own name, never a "
          "path; give directories with --checkpoint-dir",
          glob));
    rules.name_globs.push_back(glob);
  }
  if (!dirs.empty() && rules.dir_globs.empty())
    return make_error(fmt::format(
        "--checkpoint-dir {}: the config's checkpoint.dir_globs is empty, so generic names count "
        "in every directory already; remove one or the other",
        dirs.front()));
  for (const auto& dir : dirs) {
    auto entry = checkpoint_dir_entry(dir, base);
    if (!entry) return entry.error();
    rules.dir_globs.push_back(*entry);
  }
  return {};
}

}  // namespace ckpt
