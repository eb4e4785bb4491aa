#include "files/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

namespace ckpt {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Where the temporaries of `path` go: its own directory, so the rename
// stays on one file system.
std::string temp_template(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + "." + name + ".tmp-XXXXXX";
}

// A new, empty file beside `path`, created exclusively under a random name.
Expected<std::pair<UniqueFd, std::string>> create_temp(const std::string& path,
                                                       std::string_view what) {
  std::string name = temp_template(path);
  std::vector<char> buf(name.begin(), name.end());
  buf.push_back('\0');
  // mkostemp creates with O_CREAT|O_EXCL (never through a planted link) and
  // mode 0600; the output gets 0644 like any other.
  UniqueFd fd(mkostemp(buf.data(), O_CLOEXEC));
  if (!fd.valid())
    return make_error(fmt::format("{} {}: cannot write: {} (creating a temporary file beside it)",
                                  what, path, errno_text(errno)));
  name.assign(buf.data());
  if (fchmod(fd.get(), 0644) != 0) {
    const int err = errno;
    unlink(name.c_str());
    return make_error(fmt::format("{} {}: {}", what, name, errno_text(err)));
  }
  return std::pair<UniqueFd, std::string>{std::move(fd), std::move(name)};
}

// Renames `temp` over `path` if `path` is absent or a regular file.
Expected<void> rename_over(const std::string& temp, const std::string& path,
                           std::string_view what) {
  if (auto ok = check_output_path(path, what); !ok) return ok.error();
  if (rename(temp.c_str(), path.c_str()) != 0)
    return make_error(fmt::format("{} {}: {}", what, path, errno_text(errno)));
  return {};
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close(fd_);
}

std::string_view file_kind_name(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFIFO:
      return "a FIFO";
    case S_IFSOCK:
      return "a socket";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "not a regular file";
  }
}

Expected<bool> check_output_path(const std::string& path, std::string_view what) {
  if (path.empty()) return make_error(fmt::format("{}: an empty path", what));
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    return make_error(fmt::format("{} {}: {}", what, path, errno_text(errno)));
  }
  if (S_ISREG(st.st_mode)) return true;
  return make_error(fmt::format(
      "{} {}: {}, not a regular file; ckptscope writes only regular files{}", what, path,
      file_kind_name(st.st_mode),
      S_ISLNK(st.st_mode) ? " and never through a symbolic link (give the file it points to)"
                          : ""));
}

Expected<UniqueFd> open_output_file(const std::string& path, std::string_view what,
                                    OutputMode mode) {
  if (path.empty()) return make_error(fmt::format("{}: an empty path", what));
  int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  if (mode == OutputMode::kAppend) flags |= O_APPEND;
  if (mode == OutputMode::kCreateNew) flags |= O_EXCL;
  UniqueFd fd(open(path.c_str(), flags, 0644));
  if (!fd.valid()) {
    const int err = errno;
    // ELOOP: the last component is a symbolic link (O_NOFOLLOW). ENXIO: a
    // FIFO with no reader, opened non-blocking. Name what is there.
    if (err == ELOOP || err == ENXIO || err == EISDIR) {
      if (auto kind = check_output_path(path, what); !kind) return kind.error();
    }
    if (err == EEXIST && mode == OutputMode::kCreateNew)
      return make_error(
          fmt::format("{} {}: already exists (it is created new, never reused)", what, path));
    return make_error(fmt::format("{} {}: {}", what, path, errno_text(err)));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0)
    return make_error(fmt::format("{} {}: {}", what, path, errno_text(errno)));
  if (!S_ISREG(st.st_mode))
    return make_error(
        fmt::format("{} {}: {}, not a regular file; ckptscope writes only regular "
                    "files",
                    what, path, file_kind_name(st.st_mode)));
  if (mode == OutputMode::kTruncate && ftruncate(fd.get(), 0) != 0)
    return make_error(fmt::format("{} {}: {}", what, path, errno_text(errno)));
  const int fl = fcntl(fd.get(), F_GETFL);
  if (fl >= 0) fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK);
  return fd;
}

Expected<void> write_all(int fd, std::string_view text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return make_error(fmt::format("{}: write: {}", path, errno_text(n < 0 ? errno : EIO)));
    done += static_cast<size_t>(n);
  }
  return {};
}

Expected<void> replace_file_contents(const std::string& path, std::string_view text,
                                     std::string_view what) {
  if (auto ok = check_output_path(path, what); !ok) return ok.error();
  auto temp = create_temp(path, what);
  if (!temp) return temp.error();
  auto& [fd, name] = *temp;
  auto written = write_all(fd.get(), text, name);
  if (written && fsync(fd.get()) != 0)
    written = make_error(fmt::format("{}: fsync: {}", name, errno_text(errno)));
  if (written) written = rename_over(name, path, what);
  if (!written) unlink(name.c_str());
  return written;
}

Expected<ReplacementFile> ReplacementFile::create(const std::string& path, std::string_view what) {
  if (auto ok = check_output_path(path, what); !ok) return ok.error();
  auto temp = create_temp(path, what);
  if (!temp) return temp.error();
  return ReplacementFile(path, std::string(what), std::move(temp->second));
}

ReplacementFile::ReplacementFile(ReplacementFile&& other) noexcept
    : path_(std::move(other.path_)), what_(std::move(other.what_)), temp_(std::move(other.temp_)) {
  other.temp_.clear();
}

ReplacementFile::~ReplacementFile() {
  if (!temp_.empty()) unlink(temp_.c_str());
}

Expected<void> ReplacementFile::commit() {
  if (temp_.empty()) return make_error(fmt::format("{} {}: already committed", what_, path_));
  auto renamed = rename_over(temp_, path_, what_);
  if (renamed) temp_.clear();
  return renamed;
}

}  // namespace ckpt
