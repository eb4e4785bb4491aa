// Which files go with the message. The budget is spent in the caller's
// priority order, and every candidate that does not go is listed with why: a
// report that silently lacks the log is worse than one that says it is missing.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "notify/notify.h"
#include "notify/notify_internal.h"

namespace ckpt::notify {
namespace {

constexpr uint64_t kTailReadBytes = 1ull << 20;  // read_log_tail looks this far back

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

std::string errno_text(int err) {
  return std::strerror(err);  // NOLINT(concurrency-mt-unsafe): messages only
}

// Up to `length` bytes from `offset`; fewer when the file is shorter.
Expected<std::string> read_range(int fd, uint64_t offset, uint64_t length) {
  std::string out(length, '\0');
  uint64_t got = 0;
  while (got < length) {
    ssize_t n = pread(fd, out.data() + got, length - got, static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(errno_text(errno));
    }
    if (n == 0) break;
    got += static_cast<uint64_t>(n);
  }
  out.resize(got);
  return out;
}

// The file name as it appears in the message: ASCII, no path, no quotes, so
// that no mail client mangles or misplaces it.
std::string attachment_name(const std::string& path, const std::string& suffix,
                            std::set<std::string>& taken) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  for (char& c : base)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) c = '_';
  if (base.empty() || base == "." || base == "..") base = "file";
  base += suffix;
  std::string name = base;
  for (int i = 2; taken.contains(name); ++i) {
    size_t dot = base.find('.', 1);
    name = dot == std::string::npos
               ? fmt::format("{}-{}", base, i)
               : fmt::format("{}-{}{}", base.substr(0, dot), i, base.substr(dot));
  }
  taken.insert(name);
  return name;
}

// The bytes after the first line break of `data`, unless `data` already starts
// a line: a tail must not begin halfway through a line.
std::string from_line_start(std::string data, bool starts_line) {
  if (starts_line) return data;
  size_t nl = data.find('\n');
  if (nl == std::string::npos) return {};
  return data.substr(nl + 1);
}

}  // namespace

ArtifactPlan plan_attachments(const std::vector<Candidate>& candidates, uint64_t budget) {
  ArtifactPlan plan;
  plan.budget = budget;
  std::set<std::string> seen_paths;
  std::set<std::string> names;
  for (const auto& c : candidates) {
    // An empty path is "no such artifact" (a run without a log file), and the
    // same file offered twice is one file: neither is a left-out candidate.
    if (c.path.empty() || !seen_paths.insert(c.path).second) continue;
    try {
      struct stat st {};
      if (stat(c.path.c_str(), &st) != 0) {
        int err = errno;
        plan.left_out.push_back(
            {c.path, std::nullopt, err == ENOENT ? "missing" : "cannot stat: " + errno_text(err)});
        continue;
      }
      if (!S_ISREG(st.st_mode)) {
        plan.left_out.push_back(
            {c.path, std::nullopt,
             S_ISDIR(st.st_mode) ? "not a regular file (a directory)" : "not a regular file"});
        continue;
      }
      // O_NONBLOCK: a FIFO swapped in after stat() must not block us.
      Fd fd(open(c.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
      if (fd.get() < 0) {
        plan.left_out.push_back(
            {c.path, static_cast<uint64_t>(st.st_size), "unreadable: " + errno_text(errno)});
        continue;
      }
      const auto size = static_cast<uint64_t>(st.st_size);
      const uint64_t left = plan.budget - plan.used;
      if (size <= left) {
        auto data = read_range(fd.get(), 0, size);
        if (!data) {
          plan.left_out.push_back({c.path, size, "unreadable: " + data.error().message});
          continue;
        }
        plan.used += data->size();
        plan.attached.push_back(
            {c.path, attachment_name(c.path, "", names), std::move(*data), size, false});
        continue;
      }
      std::string reason =
          fmt::format("over budget: {} > {} left", format_size(size), format_size(left));
      if (c.is_log && left > 0) {
        const uint64_t offset = size - left;
        bool starts_line = false;
        if (auto before = read_range(fd.get(), offset - 1, 1); before && *before == "\n")
          starts_line = true;
        auto data = read_range(fd.get(), offset, left);
        std::string tail = data ? from_line_start(std::move(*data), starts_line) : std::string();
        if (!tail.empty()) {
          std::string name = attachment_name(c.path, ".tail", names);
          reason += fmt::format("; its last {} attached as {}", format_size(tail.size()), name);
          plan.used += tail.size();
          plan.attached.push_back({c.path, std::move(name), std::move(tail), size, true});
        } else if (!data) {
          reason += "; its tail is unreadable: " + data.error().message;
        } else {
          reason += "; no whole line of its end fits";
        }
      }
      plan.left_out.push_back({c.path, size, std::move(reason)});
    } catch (const std::exception& e) {  // std::bad_alloc for a file near the budget
      plan.left_out.push_back({c.path, std::nullopt, fmt::format("unreadable: {}", e.what())});
    }
  }
  return plan;
}

Expected<std::vector<std::string>> read_log_tail(const std::string& path, size_t lines) {
  try {
    Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) return make_error(fmt::format("{}: {}", path, errno_text(errno)));
    struct stat st {};
    if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
      return make_error(fmt::format("{}: not a regular file", path));
    const auto size = static_cast<uint64_t>(st.st_size);
    const uint64_t offset = size > kTailReadBytes ? size - kTailReadBytes : 0;
    auto data = read_range(fd.get(), offset, size - offset);
    if (!data) return make_error(fmt::format("{}: {}", path, data.error().message));
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos < data->size()) {
      size_t nl = data->find('\n', pos);
      size_t end = nl == std::string::npos ? data->size() : nl;
      std::string line = data->substr(pos, end - pos);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      out.push_back(std::move(line));
      pos = end + 1;
    }
    // The first line read from the middle of the file is a fragment.
    if (offset > 0 && !out.empty()) out.erase(out.begin());
    if (out.size() > lines) out.erase(out.begin(), out.end() - static_cast<ptrdiff_t>(lines));
    return out;
  } catch (const std::exception& e) {
    return make_error(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace ckpt::notify
