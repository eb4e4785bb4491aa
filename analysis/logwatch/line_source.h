// Where `logwatch` reads lines from, each with a fixed-size buffer: a line
// longer than kMaxLineBytes is cut there (the rest is skipped and counted),
// so no input can grow memory.
//   FdLineSource        a file read once, stdin or a pipe
//   FollowedFileSource  a file followed by name as `tail -F` follows it
//                       (--follow): truncation, rotation by rename or delete
//                       and recreate, a file that appears later
//   KmsgSource          /dev/kmsg through ckpt::KmsgWatcher
//                       (sources/kernel_log.h): records overwritten before we
//                       read them (EPIPE, sequence gaps) are counted as drops,
//                       never silent; each line's severity is the record's level
//   a child's stdout:   `journalctl -f -o json` (format `journal`)
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "analysis/logwatch/severity.h"
#include "common/expected.h"
#include "sources/kernel_log.h"

namespace ckpt::logwatch {

inline constexpr std::size_t kMaxLineBytes = 8192;
// How often a followed file is checked for growth, truncation and a new file
// at its path, and so how soon a stop request is seen while it is idle.
inline constexpr auto kFollowPoll = std::chrono::milliseconds(200);

class LineSource {
 public:
  virtual ~LineSource() = default;
  // The next line (without its newline) in `line`; false at the end of the
  // input or when `stop` was set.
  virtual Expected<bool> next(std::string& line) = 0;
  [[nodiscard]] virtual std::uint64_t drops() const { return 0; }
  // The last line's severity when the source itself carries one (kmsg).
  [[nodiscard]] virtual std::optional<Severity> severity() const { return std::nullopt; }
  [[nodiscard]] std::uint64_t truncated() const { return truncated_; }

 protected:
  std::uint64_t truncated_ = 0;
};

// Bytes in, lines out, in a buffer of fixed size: lines longer than
// kMaxLineBytes are cut there and counted in `cut`.
class LineBuffer {
 public:
  explicit LineBuffer(std::uint64_t& cut);
  // A complete (or cut) line, when the buffer holds one.
  bool take_line(std::string& line);
  // What is left after the last newline, at the end of an input: its last
  // line, unterminated. Empties the buffer.
  bool take_rest(std::string& line);
  // Where the next read() may write, after moving what is left to the front.
  char* space();
  [[nodiscard]] std::size_t space_size() const { return buf_.size() - end_; }
  void filled(std::size_t n) { end_ += n; }

 private:
  std::uint64_t& cut_;
  std::vector<char> buf_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool skipping_ = false;  // inside the remainder of a cut line
};

class FdLineSource : public LineSource {
 public:
  // Reads `fd` to its end (closed on destruction when `owned`).
  FdLineSource(int fd, bool owned, const std::atomic<bool>* stop, pid_t child = -1);
  ~FdLineSource() override;
  FdLineSource(const FdLineSource&) = delete;
  FdLineSource& operator=(const FdLineSource&) = delete;
  Expected<bool> next(std::string& line) override;

 private:
  int fd_;
  bool owned_;
  const std::atomic<bool>* stop_;
  pid_t child_;
  LineBuffer buffer_;
  bool eof_ = false;
};

// Said once per event while following (the CLI prints it on stderr).
using FollowNotice = std::function<void(const std::string&)>;

// `tail -F` (--follow=name --retry), polling every `poll`:
//   - the file does not exist (yet, or any more): waited for, and read from
//     its start once it appears;
//   - truncated (its size is below what was read: `> file`, logrotate's
//     copytruncate): read again from its start;
//   - another file at the path (inode or device changed: rename and create,
//     delete and create): the old file is read to its end, then the new one
//     from its start. While the path names no file the old one is still read.
// Each of these is said once through `notice`. Never ends by itself; next()
// returns false once `stop` is set (within `poll`). Limits, as tail's: a file
// truncated and grown past the offset read between two polls is not seen as
// truncated; lines written between the last poll and a copytruncate are in
// the rotated copy only.
class FollowedFileSource : public LineSource {
 public:
  // An error only for a path that exists and cannot be opened.
  static Expected<std::unique_ptr<FollowedFileSource>> open(
      const std::string& path, const std::atomic<bool>* stop, FollowNotice notice = {},
      std::chrono::milliseconds poll = kFollowPoll);
  ~FollowedFileSource() override;
  FollowedFileSource(const FollowedFileSource&) = delete;
  FollowedFileSource& operator=(const FollowedFileSource&) = delete;
  Expected<bool> next(std::string& line) override;

  [[nodiscard]] std::uint64_t truncations() const { return truncations_; }
  // Files opened after the first: rotations and files that appeared.
  [[nodiscard]] std::uint64_t reopens() const { return reopens_; }

 private:
  FollowedFileSource(std::string path, const std::atomic<bool>* stop, FollowNotice notice,
                     std::chrono::milliseconds poll);
  enum class PathIs { kSameFile, kAnotherFile, kNoFile };
  // Opens the file at the path: 0, or the errno (said once per reason; at
  // the start only ENOENT is said, the caller reports the rest).
  int try_open(bool at_start);
  int try_open_failed(int err, bool at_start);
  [[nodiscard]] PathIs check_path();
  [[nodiscard]] bool was_truncated() const;
  void say(const std::string& message);
  // Says `what` for `err` unless it was the last thing said about the path.
  void say_path_error(int err, const std::string& what);
  void close_file();

  std::string path_;
  const std::atomic<bool>* stop_;
  FollowNotice notice_;
  std::chrono::milliseconds poll_;
  LineBuffer buffer_;
  int fd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  off_t offset_ = 0;       // bytes read from the open file
  bool replaced_ = false;  // the path names another file: finish this one first
  bool opened_once_ = false;
  int path_error_ = 0;  // the errno last said about the path, 0 when none
  std::uint64_t truncations_ = 0;
  std::uint64_t reopens_ = 0;
};

class KmsgSource : public LineSource {
 public:
  // `path`: /dev/kmsg, or a file or FIFO of records as `cat /dev/kmsg` writes
  // them (read to its end, for tests and replays).
  static Expected<std::unique_ptr<KmsgSource>> open(const std::string& path, bool from_start,
                                                    const std::atomic<bool>* stop);
  KmsgSource(const KmsgSource&) = delete;
  KmsgSource& operator=(const KmsgSource&) = delete;
  Expected<bool> next(std::string& line) override;
  [[nodiscard]] std::uint64_t drops() const override { return watcher_.lost(); }
  [[nodiscard]] std::optional<Severity> severity() const override { return severity_; }

 private:
  KmsgSource(KmsgWatcher watcher, bool ends, const std::atomic<bool>* stop);
  KmsgWatcher watcher_;
  bool ends_;  // a regular file: its end is the end of the input
  const std::atomic<bool>* stop_;
  // Records read but not yet returned: one read_available() drains what the
  // kernel holds, at most its ring buffer (log_buf_len).
  std::deque<KmsgRecord> pending_;
  std::optional<Severity> severity_;
};

// Opens a source: "-" (stdin), "kmsg", "journal" or a file path. `follow`
// (a file path only) follows it by name (FollowedFileSource), saying what
// happens to it through `notice`.
Expected<std::unique_ptr<LineSource>> open_source(const std::string& source, bool follow,
                                                  bool from_start, const std::atomic<bool>* stop,
                                                  FollowNotice notice = {});

}  // namespace ckpt::logwatch
