#include "runner/job_log.h"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "files/output_file.h"

namespace ckpt {

namespace {
constexpr std::string_view kNotePrefix = "# ckptscope: ";
}

Expected<JobLog> JobLog::create(const std::string& path, const std::vector<std::string>& header,
                                JobLogName name) {
  std::filesystem::path p(path);
  if (p.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec)
      return make_error(fmt::format("job log {}: cannot create its directory {}: {}", path,
                                    p.parent_path().string(), ec.message()));
  }
  // Never through a symbolic link, never anything but a regular file; a name
  // we picked (in a directory others may write) is created new, never reused.
  auto opened = open_output_file(
      path, "job log",
      name == JobLogName::kPicked ? OutputMode::kCreateNew : OutputMode::kTruncate);
  if (!opened) return opened.error();
  const int fd = opened->release();
  // Appended: our notes and the teed output never overwrite each other.
  if (const int fl = fcntl(fd, F_GETFL); fl >= 0) fcntl(fd, F_SETFL, fl | O_APPEND);
  JobLog log(path, fd);
  for (const auto& line : header) log.note(line);
  return log;
}

JobLog::JobLog(JobLog&& o) noexcept
    : path_(std::move(o.path_)),
      fd_(o.fd_),
      write_errors_(o.write_errors_),
      bytes_lost_(o.bytes_lost_),
      first_error_(std::move(o.first_error_)),
      unlogged_(std::move(o.unlogged_)),
      unlogged_dropped_(o.unlogged_dropped_) {
  o.fd_ = -1;
}

JobLog::~JobLog() {
  if (fd_ >= 0) ::close(fd_);
}

std::string_view JobLog::write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t w = ::write(fd_, bytes.data(), bytes.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      // A full disk must not stop the tee: the job's output still reaches
      // the console; the loss is counted and reported at the end. The next
      // write tries again (space may have been freed).
      if (write_errors_++ == 0) first_error_ = std::strerror(w < 0 ? errno : EIO);
      bytes_lost_ += bytes.size();
      return bytes;
    }
    bytes.remove_prefix(static_cast<size_t>(w));
  }
  return bytes;
}

void JobLog::keep_unlogged(std::string_view bytes) {
  if (bytes.size() >= kUnloggedWindowBytes) {
    unlogged_dropped_ += unlogged_.size() + (bytes.size() - kUnloggedWindowBytes);
    unlogged_.assign(bytes.substr(bytes.size() - kUnloggedWindowBytes));
    return;
  }
  size_t over = unlogged_.size() + bytes.size();
  if (over > kUnloggedWindowBytes) {
    size_t drop = over - kUnloggedWindowBytes;
    unlogged_.erase(0, drop);
    unlogged_dropped_ += drop;
  }
  unlogged_.append(bytes);
}

void JobLog::append(std::string_view bytes) {
  std::lock_guard lock(mu_);
  keep_unlogged(write_all(bytes));
}

void JobLog::note(std::string_view line) {
  // One line per note, whatever it quotes (a command with newlines in an
  // argument): every line of ours carries the prefix the classifier skips.
  std::string text(kNotePrefix);
  for (char c : line) {
    if (c == '\n')
      text += "\\n";
    else if (c == '\r')
      text += "\\r";
    else
      text += c;
  }
  text += '\n';
  std::lock_guard lock(mu_);
  write_all(text);
}

uint64_t JobLog::write_errors() const {
  std::lock_guard lock(mu_);
  return write_errors_;
}

std::string JobLog::first_error() const {
  std::lock_guard lock(mu_);
  return first_error_;
}

uint64_t JobLog::bytes_lost() const {
  std::lock_guard lock(mu_);
  return bytes_lost_;
}

std::string JobLog::unlogged_output() const {
  std::lock_guard lock(mu_);
  return unlogged_;
}

uint64_t JobLog::unlogged_dropped() const {
  std::lock_guard lock(mu_);
  return unlogged_dropped_;
}

std::string JobLog::incomplete_reason() const {
  std::lock_guard lock(mu_);
  if (write_errors_ == 0) return {};
  return fmt::format("the job log {} is incomplete: {} write{} failed ({}), {} bytes are not in it",
                     path_, write_errors_, write_errors_ == 1 ? "" : "s", first_error_,
                     bytes_lost_);
}

std::string log_file_stem(const std::string& job_name) {
  std::string out;
  for (char c : job_name)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  if (out.find_first_not_of("._") == std::string::npos) return "job";
  return out.substr(0, 100);
}

std::string default_log_path(const std::string& dir, const std::string& job_name,
                             uint64_t start_wall_ns, int pid) {
  std::time_t secs = static_cast<std::time_t>(start_wall_ns / 1'000'000'000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  std::string name = fmt::format("{}-{}-{}.log", job_name, stamp, pid);
  return dir.empty() ? name : (std::filesystem::path(dir) / name).string();
}

Expected<std::string> state_log_dir(const LogStateInputs& in) {
  if (in.root) return std::string("/var/log/ckptscope");
  if (!in.xdg_state_home.empty() && in.xdg_state_home.front() == '/')
    return (std::filesystem::path(in.xdg_state_home) / "ckptscope/logs").string();
  if (!in.home.empty())
    return (std::filesystem::path(in.home) / ".local/state/ckptscope/logs").string();
  return make_error(
      "no state directory for the job log: XDG_STATE_HOME and HOME are unset and the user has "
      "no home directory");
}

LogStateInputs log_state_inputs() {
  LogStateInputs in;
  in.root = geteuid() == 0;
  if (const char* xdg = std::getenv("XDG_STATE_HOME")) in.xdg_state_home = xdg;
  if (const char* home = std::getenv("HOME"); home && *home) {
    in.home = home;
  } else {
    // getpwuid_r: a library must not hand out getpwuid's static buffer.
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* found = nullptr;
    if (getpwuid_r(geteuid(), &pw, buf.data(), buf.size(), &found) == 0 && found && found->pw_dir)
      in.home = found->pw_dir;
  }
  return in;
}

}  // namespace ckpt
