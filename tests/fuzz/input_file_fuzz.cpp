// The bounded reader every whole-file input goes through (files/input_file.h,
// issue 36), with a limit the input picks so its edge is reached: the first
// two bytes are the limit (0 to 65535), the third whether NUL is refused,
// the rest the content. It is read from a regular file (read_file_bounded,
// which refuses by size before reading) and from a pipe (read_fd_bounded,
// which can only count), and each answer is checked against what it must
// be: the content itself when it fits and holds no refused NUL, else the
// error naming the first NUL's offset or the limit. A wrong answer is a
// crash, as an abort would be.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "files/input_file.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

// One scratch file for the whole run, rewritten per input.
const std::string& scratch_path() {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string p =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/ckptscope-fuzz-input-XXXXXX";
    const int fd = mkstemp(p.data());
    if (fd < 0) std::abort();
    ::close(fd);
    return p;
  }();
  return path;
}

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// What the reader must answer for `content` under `limit`.
void expect(const ckpt::Expected<std::string>& got, std::string_view content,
            const ckpt::InputLimit& limit, bool sized) {
  const size_t nul = limit.text ? content.find('\0') : std::string_view::npos;
  const size_t readable = static_cast<size_t>(limit.bytes) + 1;
  // A regular file larger than the limit is refused from its size, before
  // a NUL in it is seen; a pipe is read until the first NUL or limit + 1.
  if (sized && content.size() > limit.bytes) {
    check(!got && got.error().message.find("larger than") != std::string::npos);
    return;
  }
  if (nul != std::string_view::npos && nul < readable) {
    check(!got && got.error().message.find("a NUL byte at byte " + std::to_string(nul)) !=
                      std::string::npos);
    return;
  }
  if (content.size() > limit.bytes) {
    check(!got && got.error().message.find("larger than") != std::string::npos);
    return;
  }
  check(got && *got == content);
}

}  // namespace

CKPT_FUZZ_TARGET {
  if (size < 3) return 0;
  ckpt::InputLimit limit;
  limit.bytes = static_cast<uint64_t>(data[0]) << 8 | data[1];
  limit.why = "fuzz";
  limit.text = (data[2] & 1) != 0;
  const std::string_view content = ckpt::fuzz::as_text(data + 3, size - 3);

  const std::string& path = scratch_path();
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) std::abort();
    if (!content.empty() &&
        ::write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size()))
      std::abort();
    ::close(fd);
  }
  expect(ckpt::read_file_bounded(path, limit, "--fuzz"), content, limit, true);

  // A pipe: what fits in its buffer is written first, then the end.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) std::abort();
  const int capacity = ::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
  if (capacity >= 0 && content.size() <= static_cast<size_t>(capacity)) {
    if (!content.empty() &&
        ::write(fds[1], content.data(), content.size()) != static_cast<ssize_t>(content.size()))
      std::abort();
    ::close(fds[1]);
    expect(ckpt::read_fd_bounded(fds[0], "-", limit, "--fuzz"), content, limit, false);
  } else {
    ::close(fds[1]);
  }
  ::close(fds[0]);
  return 0;
}
