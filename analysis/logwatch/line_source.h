// Where `logwatch` reads lines from, each with a fixed-size buffer: a line
// longer than kMaxLineBytes is cut there (the rest is skipped and counted),
// so no input can grow memory.
//   FdLineSource   a file, stdin or a pipe; `follow` waits for a file to grow
//   KmsgSource     /dev/kmsg through ckpt::KmsgWatcher (sources/kernel_log.h):
//                  records overwritten before we read them (EPIPE, sequence
//                  gaps) are counted as drops, never silent; each line's
//                  severity is the record's level
//   a child's stdout: `journalctl -f -o json` (format `journal`)
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
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

class FdLineSource : public LineSource {
 public:
  // Takes `fd` (closed on destruction when `owned`).
  FdLineSource(int fd, bool owned, bool follow, const std::atomic<bool>* stop, pid_t child = -1);
  ~FdLineSource() override;
  FdLineSource(const FdLineSource&) = delete;
  FdLineSource& operator=(const FdLineSource&) = delete;
  Expected<bool> next(std::string& line) override;

 private:
  int fd_;
  bool owned_;
  bool follow_;
  const std::atomic<bool>* stop_;
  pid_t child_;
  std::vector<char> buf_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  bool skipping_ = false;  // inside the remainder of a cut line
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

// Opens a source: "-" (stdin), "kmsg", "journal" or a file path.
Expected<std::unique_ptr<LineSource>> open_source(const std::string& source, bool follow,
                                                  bool from_start, const std::atomic<bool>* stop);

}  // namespace ckpt::logwatch
