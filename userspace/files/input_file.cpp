#include "files/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "files/output_file.h"

namespace ckpt {
namespace {

constexpr size_t kChunkBytes = 64 * 1024;

std::string prefix_of(std::string_view what, const std::string& name) {
  return what.empty() ? name : fmt::format("{} {}", what, name);
}

Error too_large(const std::string& prefix, const InputLimit& limit) {
  if (limit.why.empty())
    return make_error(fmt::format("{}: larger than {}", prefix, limit_text(limit.bytes)));
  return make_error(
      fmt::format("{}: larger than {}; {}", prefix, limit_text(limit.bytes), limit.why));
}

// Reads `fd` to its end into `out`, at most limit.bytes: one byte more is
// the error. Each read asks for no more than what is left of limit + 1.
Expected<std::string> read_all(int fd, const std::string& prefix, const InputLimit& limit,
                               std::string out) {
  const uint64_t most = limit.bytes;
  char buf[kChunkBytes];
  for (;;) {
    const uint64_t room = most + 1 - std::min<uint64_t>(out.size(), most + 1);
    if (room == 0) return too_large(prefix, limit);
    const ssize_t n = ::read(fd, buf, static_cast<size_t>(std::min<uint64_t>(room, sizeof buf)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (errno == EISDIR) return make_error(fmt::format("{}: is a directory, not a file", prefix));
      return make_error(fmt::format("{}: cannot read it: {}", prefix, std::strerror(errno)));
    }
    if (n == 0) break;
    if (limit.text) {
      if (const void* nul = std::memchr(buf, '\0', static_cast<size_t>(n)))
        return make_error(
            fmt::format("{}: not a text file (a NUL byte at byte {}){}", prefix,
                        out.size() + static_cast<size_t>(static_cast<const char*>(nul) - buf),
                        out.empty() ? "; is it a device such as /dev/zero?" : ""));
    }
    out.append(buf, static_cast<size_t>(n));
  }
  if (out.size() > most) return too_large(prefix, limit);
  return out;
}

}  // namespace

std::string limit_text(uint64_t bytes) {
  constexpr uint64_t kKiB = 1024;
  constexpr uint64_t kMiB = kKiB * 1024;
  constexpr uint64_t kGiB = kMiB * 1024;
  if (bytes >= kGiB && bytes % kGiB == 0) return fmt::format("{} GiB", bytes / kGiB);
  if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  if (bytes >= kKiB && bytes % kKiB == 0) return fmt::format("{} KiB", bytes / kKiB);
  return fmt::format("{} bytes", bytes);
}

Expected<std::string> read_file_bounded(const std::string& path, const InputLimit& limit,
                                        std::string_view what) {
  const std::string prefix = prefix_of(what, path);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return make_error(fmt::format("{}: cannot read it: {}", prefix, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return make_error(fmt::format("{}: cannot read it: {}", prefix, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) return make_error(fmt::format("{}: is a directory, not a file", prefix));
  std::string out;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    // Its size says it all (a /proc file says 0 and is read to its end).
    if (static_cast<uint64_t>(st.st_size) > limit.bytes) return too_large(prefix, limit);
    out.reserve(static_cast<size_t>(st.st_size) + 1);
  }
  return read_all(fd.get(), prefix, limit, std::move(out));
}

Expected<std::string> read_fd_bounded(int fd, const std::string& name, const InputLimit& limit,
                                      std::string_view what) {
  return read_all(fd, prefix_of(what, name), limit, std::string());
}

}  // namespace ckpt
