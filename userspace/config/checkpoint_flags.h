// `run`/`attach --checkpoint-glob GLOB --checkpoint-dir DIR`: the one-off
// additions to the config's checkpoint rules (the config is for the
// permanent ones). Here, not in apps/cli, so the unit tests reach it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "config/config.h"

namespace ckpt {

// Each GLOB joins name_globs: a file whose own name matches counts anywhere.
// Each DIR joins dir_globs: a name without '/' (`out`, `run-*`) matches every
// directory of that name; one with a '/' is a path prefix, a relative one
// taken from `cwd` (the working directory `run` starts the job in). Errors
// name the flag and the value.
Expected<void> add_checkpoint_flags(CheckpointRules& rules, const std::vector<std::string>& globs,
                                    const std::vector<std::string>& dirs, const std::string& cwd);

// What a relative --checkpoint-dir is taken from: the traced job's working
// directory (`run`: the CLI's own, which the job inherits; `attach --pid`:
// the process's), or, where the traced processes have no one (`attach
// --cgroup`, the exporter), why not: the flag is then refused, naming it.
struct RelativeBase {
  std::optional<std::string> dir;
  std::string why_none;
};
Expected<void> add_checkpoint_flags(CheckpointRules& rules, const std::vector<std::string>& globs,
                                    const std::vector<std::string>& dirs, const RelativeBase& base);

}  // namespace ckpt
