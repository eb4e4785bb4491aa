// A rename of a directory moves every name below it: `path`'s new name when
// the directory `old_dir` became `new_dir`, or nothing when `path` is not
// below `old_dir` (a name that only begins the same, `/out/tmp_save2` for
// `/out/tmp_save`, is not). Shared by what keeps names across renames: the
// path resolver, the held temporary files, the unrecognised files' table.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ckpt {

inline std::optional<std::string> renamed_below(std::string_view path, std::string_view old_dir,
                                                std::string_view new_dir) {
  while (!old_dir.empty() && old_dir.back() == '/') old_dir.remove_suffix(1);
  while (!new_dir.empty() && new_dir.back() == '/') new_dir.remove_suffix(1);
  if (old_dir.empty() || new_dir.empty() || path.size() <= old_dir.size() + 1 ||
      !path.starts_with(old_dir) || path[old_dir.size()] != '/')
    return std::nullopt;
  std::string moved(new_dir);
  moved.append(path.substr(old_dir.size()));
  return moved;
}

}  // namespace ckpt
