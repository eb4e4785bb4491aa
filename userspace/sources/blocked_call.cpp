#include "sources/blocked_call.h"

#include <sys/syscall.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/clock.h"

namespace ckpt {
namespace {

std::optional<uint64_t> parse_number(std::string_view word, int base) {
  if (base == 16 && word.starts_with("0x")) word.remove_prefix(2);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value, base);
  if (ec != std::errc() || end != word.data() + word.size() || word.empty()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<BlockedSyscall> parse_proc_syscall(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::array<std::string_view, 9> words{};
  size_t n = 0;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    if (!word.empty()) {
      if (n == words.size()) return std::nullopt;  // more than NR, six arguments, SP and PC
      words[n++] = word;
    }
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  // In a call: the number, six arguments, the stack and instruction pointers.
  if (n != words.size()) return std::nullopt;
  const auto number = parse_number(words[0], 10);
  if (!number) return std::nullopt;
  BlockedSyscall call;
  call.number = static_cast<long>(*number);
  for (size_t i = 0; i < 6; ++i) {
    const auto arg = parse_number(words[i + 1], 16);
    if (!arg) return std::nullopt;
    call.args[i] = *arg;
  }
  return call;
}

std::optional<int> file_fd_of(const BlockedSyscall& call) {
  switch (call.number) {
    case SYS_read:
    case SYS_write:
    case SYS_pread64:
    case SYS_pwrite64:
    case SYS_readv:
    case SYS_writev:
    case SYS_preadv:
    case SYS_pwritev:
    case SYS_preadv2:
    case SYS_pwritev2:
    case SYS_fsync:
    case SYS_fdatasync:
    case SYS_sync_file_range:
    case SYS_fallocate:
    case SYS_ftruncate:
      return static_cast<int>(call.args[0]);
    case SYS_sendfile:  // (out_fd, in_fd, ...)
      return static_cast<int>(call.args[0]);
    case SYS_copy_file_range:  // (fd_in, off_in, fd_out, ...): the destination first
      return static_cast<int>(call.args[2]);
    default:
      return std::nullopt;
  }
}

std::optional<int> second_fd_of(const BlockedSyscall& call) {
  if (call.number == SYS_sendfile) return static_cast<int>(call.args[1]);
  if (call.number == SYS_copy_file_range) return static_cast<int>(call.args[0]);
  return std::nullopt;
}

ProcCallState proc_call_state(uint32_t tid, const std::string& proc_root) {
  ProcCallState state;
  const std::filesystem::path task = std::filesystem::path(proc_root) / std::to_string(tid);
  std::ifstream in(task / "syscall");
  if (!in.is_open()) {
    state.gone = true;
    return state;
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string line = text.str();
  if (line.starts_with("running")) {
    state.running = true;
    return state;
  }
  const auto call = parse_proc_syscall(line);
  if (!call) return state;
  // Only a regular file's path is one: sockets and pipes read "socket:[N]".
  auto path_of = [&](std::optional<int> fd) -> std::optional<std::string> {
    if (!fd || *fd < 0) return std::nullopt;
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(task / "fd" / std::to_string(*fd), ec);
    if (ec || !target.is_absolute()) return std::nullopt;
    return target.string();
  };
  state.path = path_of(file_fd_of(*call));
  if (!state.path) state.path = path_of(second_fd_of(*call));
  return state;
}

std::optional<CallInProgress> call_in_progress(uint32_t tid, const ProbeFeed* feed,
                                               const std::string& proc_root, uint64_t now_ns) {
  ProcCallState state = proc_call_state(tid, proc_root);
  if (state.path) return CallInProgress{std::move(*state.path), {}};
  // Blocked in some other call, or gone: a parked entry left by a call whose
  // exit was missed must not hold a checkpoint open.
  if (!state.running || feed == nullptr) return std::nullopt;
  auto parked = feed->parked_call(tid);
  if (!parked || parked->files.empty()) return std::nullopt;
  if (parked->running_since_ns != 0) {
    if (now_ns == 0) now_ns = monotonic_ns();
    if (now_ns > parked->running_since_ns &&
        now_ns - parked->running_since_ns >= kParkedRunningLimitNs)
      return std::nullopt;
  }
  return CallInProgress{"", std::move(parked->files)};
}

}  // namespace ckpt
