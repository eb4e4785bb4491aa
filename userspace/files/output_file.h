// Files ckptscope writes, safe to write as root on a shared node: a trace,
// a job log, a report, an export, --bpf-stats, the maxima file, a logwatch
// model, a calibration's scratch files. ckptscope runs as root (`run`,
// `attach`, the exporter), and the paths it is given, or picks (a default log
// name beside a trace in /tmp), may lie in directories other users can write.
// So, for every output:
//   - the last component of the path is never followed as a symbolic link
//     (O_NOFOLLOW; rename never follows one either): a link planted there
//     would make root truncate and write the file it points to;
//   - only a regular file, or a new name, is written or replaced: a device
//     node (/dev/null, /dev/full), a directory, a FIFO or a socket at the
//     path is refused, with an error naming the path and what is there;
//   - a whole-file replacement goes through a temporary created exclusively
//     beside the target under a name no one can guess (mkostemp), so no
//     planted file or link is ever written through.
// The directories above the last component are the caller's to trust (as
// for every program that takes a path): a symbolic link there is followed.
// `what` names the output in errors ("--trace", "--log", "report -o").
#pragma once

#include <string>
#include <string_view>

#include "common/expected.h"

namespace ckpt {

// A file descriptor, closed when it goes.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// "a directory", "a character device", "a symbolic link", ... for st_mode.
std::string_view file_kind_name(unsigned mode);

// What is at `path` now, not following a final symbolic link: false when
// nothing is, true for a regular file, else an error naming the path and
// what is there ("--trace /dev/null: a character device, not a regular
// file; ckptscope writes only regular files").
Expected<bool> check_output_path(const std::string& path, std::string_view what);

enum class OutputMode {
  kTruncate,   // the file as new: created, or emptied (a regular file only)
  kAppend,     // written after what it holds; created if absent
  kCreateNew,  // created, never opened if anything is there (O_EXCL)
};

// Opens `path` for writing, mode 0644 when created, close-on-exec. Refuses a
// final symbolic link and anything but a regular file, without side effects
// on it: opened non-blocking (a FIFO does not wait for a reader), checked
// (fstat), and only then emptied (kTruncate) and made blocking again.
Expected<UniqueFd> open_output_file(const std::string& path, std::string_view what,
                                    OutputMode mode);

// Writes all of `text` to `fd` (EINTR and short writes retried).
Expected<void> write_all(int fd, std::string_view text, const std::string& path);

// Writes `text` to `path` whole or not at all: into a temporary created
// exclusively beside it, fsync'd, then renamed over `path`, which must be
// absent or a regular file (checked just before the rename).
Expected<void> replace_file_contents(const std::string& path, std::string_view text,
                                     std::string_view what);

// A new file that will replace `path` when committed, for writers that write
// it themselves by name (SQLite): created empty and exclusively beside
// `path` under an unguessable name. Removed unless committed.
class ReplacementFile {
 public:
  static Expected<ReplacementFile> create(const std::string& path, std::string_view what);
  ReplacementFile(ReplacementFile&& other) noexcept;
  ReplacementFile& operator=(ReplacementFile&&) = delete;
  ReplacementFile(const ReplacementFile&) = delete;
  ReplacementFile& operator=(const ReplacementFile&) = delete;
  ~ReplacementFile();

  [[nodiscard]] const std::string& temp_path() const { return temp_; }
  // Renames the temporary over the path: absent, or a regular file.
  Expected<void> commit();

 private:
  ReplacementFile(std::string path, std::string what, std::string temp)
      : path_(std::move(path)), what_(std::move(what)), temp_(std::move(temp)) {}
  std::string path_;
  std::string what_;
  std::string temp_;  // "" once committed or moved from
};

}  // namespace ckpt
