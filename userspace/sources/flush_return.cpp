#include "sources/flush_return.h"

#include <sys/syscall.h>

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include "jobio.h"
#include "probes/jobio_programs.h"

namespace ckpt {
namespace {

bool one_of(long number, std::initializer_list<long> calls) {
  return std::find(calls.begin(), calls.end(), number) != calls.end();
}

// The system calls that can run a flush of `op` (the file layer's
// filp_flush or filp_close, vfs_fsync_range, do_sys_ftruncate).
bool may_run(long number, IoOp op) {
  if (number == SYS_io_uring_enter) return true;
  switch (op) {
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
    default:
      return true;
  }
}

}  // namespace

bool flush_returned(const BlockedSyscall& call, IoOp op) {
  if (op != IoOp::Close && op != IoOp::Fsync && op != IoOp::Ftruncate) return false;
  return !may_run(call.number, op);
}

bool flush_returned_unseen(uint32_t tid, IoOp op, const std::string& proc_root) {
  std::ifstream in(proc_root + "/" + std::to_string(tid) + "/syscall");
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  const std::optional<BlockedSyscall> call = parse_proc_syscall(text.str());
  return call && flush_returned(*call, op);
}

std::function<bool(uint32_t, IoOp)> flush_returned_query(std::string_view probe_mode) {
  if (probe_mode != probe_mode_name(CKPT_MODE_FILE_LAYER)) return {};
  return [](uint32_t tid, IoOp op) { return flush_returned_unseen(tid, op); };
}

}  // namespace ckpt
