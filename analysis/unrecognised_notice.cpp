#include "analysis/unrecognised_notice.h"

#include <fmt/format.h>
#include <sys/sysmacros.h>

#include <vector>

#include "analysis/format.h"
#include "analysis/json_values.h"

namespace ckpt {

std::string unrecognised_hint() {
  return "If these are checkpoints, include them: run or attach with --checkpoint-glob GLOB "
         "(a file name, as each file's checkpoint_glob) or --checkpoint-dir DIR (a directory of "
         "generic names such as *.pt or *.bin, as its checkpoint_dir), or add them to "
         "checkpoint.name_globs or checkpoint.dir_globs in the config. If they are not, "
         "checkpoint.exclude_globs or a larger checkpoint.unrecognised_notice_mib quiets this.";
}

std::string dev_text(uint64_t dev) {
  return fmt::format("{}:{}", major(static_cast<dev_t>(dev)), minor(static_cast<dev_t>(dev)));
}

std::string unrecognised_file_name(const UnrecognisedFileRecord& f) {
  if (!f.path.empty()) return f.path;
  return fmt::format("dev {} inode {}", dev_text(f.dev), f.ino);
}

std::string include_flags(const UnrecognisedFileRecord& f) {
  if (f.checkpoint_glob.empty()) return "";
  std::string out = "--checkpoint-glob " + shell_join({f.checkpoint_glob});
  if (!f.checkpoint_dir.empty()) out += " or --checkpoint-dir " + shell_join({f.checkpoint_dir});
  return out;
}

std::string unrecognised_headline(const UnrecognisedIoRecord& io) {
  return fmt::format(
      "{} (written {}, read {}) through {} file{} that no checkpoint pattern "
      "recognised",
      format_bytes(io.bytes()), format_bytes(io.bytes_written), format_bytes(io.bytes_read),
      io.files, io.files == 1 ? "" : "s");
}

nlohmann::json unrecognised_io_json(const std::optional<UnrecognisedIoRecord>& io) {
  using nlohmann::json;
  auto text = [](std::string_view s) { return json_text(s); };
  if (!io || !io->notice()) return nullptr;
  json files = json::array();
  for (const UnrecognisedFileRecord& f : io->largest) {
    files.push_back({
        {"path", f.path.empty() ? json(nullptr) : text(f.path)},
        {"dev", dev_text(f.dev)},
        {"ino", f.ino},
        {"bytes_read", f.bytes_read},
        {"bytes_written", f.bytes_written},
        {"checkpoint_glob", f.checkpoint_glob.empty() ? json(nullptr) : text(f.checkpoint_glob)},
        {"checkpoint_dir", f.checkpoint_dir.empty() ? json(nullptr) : text(f.checkpoint_dir)},
    });
  }
  return {
      {"total_bytes", io->bytes()},         {"bytes_read", io->bytes_read},
      {"bytes_written", io->bytes_written}, {"file_count", io->files},
      {"notice_bytes", io->notice_bytes},   {"files", std::move(files)},
      {"hint", unrecognised_hint()},
  };
}

}  // namespace ckpt
