#include "sources/call_return.h"

#include <sys/syscall.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include "files/input_file.h"
#include "jobio.h"
#include "probes/jobio_programs.h"

namespace ckpt {
namespace {

std::optional<uint64_t> parse_number(std::string_view word, int base) {
  if (base == 16 && word.starts_with("0x")) word.remove_prefix(2);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value, base);
  if (ec != std::errc() || end != word.data() + word.size() || word.empty()) return std::nullopt;
  return value;
}

bool one_of(long number, std::initializer_list<long> calls) {
  return std::find(calls.begin(), calls.end(), number) != calls.end();
}

// The system calls that can run `op` through `via` (the file layer's
// functions: vfs_read and vfs_readv, vfs_write and vfs_writev,
// vfs_copy_file_range, vfs_clone_file_range, do_splice_direct, filp_flush or filp_close,
// vfs_fsync_range, do_sys_ftruncate, do_sys_openat2, do_renameat2,
// do_mkdirat, do_unlinkat, do_rmdir; Linux AIO: io_submit_one, do_io_getevents).
bool may_run(long number, IoOp op, IoVia via) {
  if (number == SYS_io_uring_enter) return true;
  if (via == IoVia::CopyFileRange || via == IoVia::ServerCopy) return number == SYS_copy_file_range;
  if (via == IoVia::Reflink) return number == SYS_ioctl;
  if (via == IoVia::Sendfile) return one_of(number, {SYS_sendfile, SYS_splice});
  // A Linux AIO announcement is a submission or a wait with requests out
  // (bpf/jobio_aio.bpf.h).
  if (via == IoVia::Aio)
    return one_of(number, {SYS_io_submit, SYS_io_getevents, SYS_io_pgetevents});
  switch (op) {
    case IoOp::Read:
      return one_of(number, {SYS_read, SYS_pread64, SYS_readv, SYS_preadv, SYS_preadv2});
    case IoOp::Write:
      return one_of(number, {SYS_write, SYS_pwrite64, SYS_writev, SYS_pwritev, SYS_pwritev2});
    case IoOp::Close:
      // Every fd closed: by close, by dup2/dup3 onto it, at exec (close on
      // exec) and at exit.
      if (one_of(number, {SYS_close, SYS_close_range, SYS_dup3, SYS_exit, SYS_exit_group,
                          SYS_execve, SYS_execveat}))
        return true;
#ifdef SYS_dup2
      if (number == SYS_dup2) return true;
#endif
      return false;
    case IoOp::Fsync:
      return one_of(number, {SYS_fsync, SYS_fdatasync, SYS_msync, SYS_sync_file_range});
    case IoOp::Ftruncate:
      return number == SYS_ftruncate;
    case IoOp::Open:
#ifdef SYS_open
      if (one_of(number, {SYS_open, SYS_creat})) return true;
#endif
      return one_of(number, {SYS_openat, SYS_openat2});
    case IoOp::Rename:
#ifdef SYS_rename
      if (number == SYS_rename) return true;
#endif
      return one_of(number, {SYS_renameat, SYS_renameat2});
    case IoOp::Mkdir:
#ifdef SYS_mkdir
      if (number == SYS_mkdir) return true;
#endif
      return number == SYS_mkdirat;
    case IoOp::Unlink:
#ifdef SYS_unlink
      if (one_of(number, {SYS_unlink, SYS_rmdir})) return true;
#endif
      return number == SYS_unlinkat;
    default:
      return true;  // never announced: not known
  }
}

// /proc/PID/task/TID/syscall and stat: a line of under 1 KiB.
std::optional<std::string> read_text(const std::string& path) {
  constexpr InputLimit kProcLineLimit{1u << 20, "a /proc task file is a line"};
  auto text = read_file_bounded(path, kProcLineLimit, "");
  if (!text) return std::nullopt;
  return std::move(*text);
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

std::optional<uint64_t> parse_proc_stat_utime(std::string_view text) {
  // "PID (COMM) STATE PPID ...": utime is the 14th field, the 12th after
  // the command's closing parenthesis (proc(5)).
  const size_t paren = text.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  text.remove_prefix(paren + 1);
  constexpr int kUtimeAfterComm = 12;
  int field = 0;
  while (!text.empty()) {
    const size_t start = text.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    text.remove_prefix(start);
    const size_t end = std::min(text.find(' '), text.size());
    if (++field == kUtimeAfterComm) {
      std::string_view word = text.substr(0, end);
      while (!word.empty() && word.back() == '\n') word.remove_suffix(1);
      return parse_number(word, 10);
    }
    text.remove_prefix(end);
  }
  return std::nullopt;
}

bool call_returned(const BlockedSyscall& call, IoOp op, IoVia via) {
  return !may_run(call.number, op, via);
}

bool UnseenReturnCheck::operator()(const CallStartEvent& call) {
  const std::string task = proc_root_ + "/" + std::to_string(call.tid);
  const auto line = read_text(task + "/syscall");
  if (!line) {
    last_utime_.erase(call.tid);
    return false;  // gone: its exit record ends the call
  }
  if (line->starts_with("running")) {
    const auto stat = read_text(task + "/stat");
    const auto utime = stat ? parse_proc_stat_utime(*stat) : std::nullopt;
    if (!utime) return false;
    auto [it, fresh] = last_utime_.try_emplace(call.tid, UserTime{call.start_ns, *utime});
    if (fresh || it->second.call_start_ns != call.start_ns) {
      it->second = UserTime{call.start_ns, *utime};
      return false;
    }
    const bool ran_in_user_space = *utime > it->second.utime;
    it->second.utime = *utime;
    if (ran_in_user_space) last_utime_.erase(it);
    return ran_in_user_space;
  }
  last_utime_.erase(call.tid);
  const std::optional<BlockedSyscall> in_call = parse_proc_syscall(*line);
  if (!in_call) {
    // Outside any system call: every call but a close runs inside one.
    return line->starts_with("-") && call.op != IoOp::Close;
  }
  return call_returned(*in_call, call.op, call.via);
}

std::function<bool(const CallStartEvent&)> call_returned_query(std::string_view probe_mode) {
  if (probe_mode != probe_mode_name(CKPT_MODE_FILE_LAYER)) return {};
  return UnseenReturnCheck();
}

}  // namespace ckpt
