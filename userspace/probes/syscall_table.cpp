#include "probes/syscall_table.h"

#include <sys/syscall.h>

#include "jobio.h"

namespace ckpt {

const std::vector<TracedSyscall>& traced_syscalls() {
  static const std::vector<TracedSyscall> table = {
#define CKPT_SYSCALL(name, kind) {#name, SYS_##name, kind},
      CKPT_SYSCALL(read, CKPT_SC_READ)                        // read(2)
      CKPT_SYSCALL(pread64, CKPT_SC_READ)                     // pread(2)
      CKPT_SYSCALL(readv, CKPT_SC_READV)                      // readv(2)
      CKPT_SYSCALL(preadv, CKPT_SC_READV)                     // preadv(2)
      CKPT_SYSCALL(preadv2, CKPT_SC_READV)                    // preadv2(2)
      CKPT_SYSCALL(write, CKPT_SC_WRITE)                      // write(2)
      CKPT_SYSCALL(pwrite64, CKPT_SC_WRITE)                   // pwrite(2)
      CKPT_SYSCALL(writev, CKPT_SC_WRITEV)                    // writev(2)
      CKPT_SYSCALL(pwritev, CKPT_SC_WRITEV)                   // pwritev(2)
      CKPT_SYSCALL(pwritev2, CKPT_SC_WRITEV)                  // pwritev2(2)
      CKPT_SYSCALL(fsync, CKPT_SC_FSYNC)                      // fsync(2)
      CKPT_SYSCALL(fdatasync, CKPT_SC_FSYNC)                  // fdatasync(2)
      CKPT_SYSCALL(close, CKPT_SC_CLOSE)                      // close(2)
      CKPT_SYSCALL(ftruncate, CKPT_SC_FTRUNCATE)              // ftruncate(2)
      CKPT_SYSCALL(openat, CKPT_SC_OPENAT)                    // openat(2)
      CKPT_SYSCALL(openat2, CKPT_SC_OPENAT2)                  // openat2(2)
      CKPT_SYSCALL(renameat2, CKPT_SC_RENAMEAT)               // renameat2(2)
      CKPT_SYSCALL(mkdirat, CKPT_SC_MKDIRAT)                  // mkdirat(2)
      CKPT_SYSCALL(unlinkat, CKPT_SC_UNLINKAT)                // unlinkat(2)
      CKPT_SYSCALL(statx, CKPT_SC_STATX)                      // statx(2)
      CKPT_SYSCALL(copy_file_range, CKPT_SC_COPY_FILE_RANGE)  // copy_file_range(2)
      CKPT_SYSCALL(sendfile, CKPT_SC_SENDFILE)                // sendfile(2)
      CKPT_SYSCALL(splice, CKPT_SC_SPLICE)                    // splice(2)
      CKPT_SYSCALL(io_submit, CKPT_SC_IO_SUBMIT)              // io_submit(2)
      CKPT_SYSCALL(io_getevents, CKPT_SC_IO_GETEVENTS)        // io_getevents(2)
      CKPT_SYSCALL(io_pgetevents, CKPT_SC_IO_GETEVENTS)       // io_pgetevents
      CKPT_SYSCALL(chdir, CKPT_SC_CHDIR)                      // chdir(2)
      CKPT_SYSCALL(fchdir, CKPT_SC_FCHDIR)                    // fchdir(2)
      CKPT_SYSCALL(ioctl, CKPT_SC_IOCTL)                      // ioctl(2): FICLONE, FICLONERANGE
#ifdef SYS_newfstatat
      CKPT_SYSCALL(newfstatat, CKPT_SC_FSTATAT)  // fstatat(2), fstat(2) via AT_EMPTY_PATH
#endif
#ifdef SYS_sendfile64
      CKPT_SYSCALL(sendfile64, CKPT_SC_SENDFILE)  // 32-bit: sendfile(2) with a 64-bit offset
#endif
#ifdef SYS_fstatat64
      CKPT_SYSCALL(fstatat64, CKPT_SC_FSTATAT)
#endif
#ifdef SYS_renameat
          CKPT_SYSCALL(renameat, CKPT_SC_RENAMEAT)
#endif
#ifdef SYS_open
              CKPT_SYSCALL(open, CKPT_SC_OPEN)
#endif
#ifdef SYS_creat
                  CKPT_SYSCALL(creat, CKPT_SC_CREAT)
#endif
#ifdef SYS_rename
                      CKPT_SYSCALL(rename, CKPT_SC_RENAME)
#endif
#ifdef SYS_mkdir
                          CKPT_SYSCALL(mkdir, CKPT_SC_MKDIR)
#endif
#ifdef SYS_unlink
                              CKPT_SYSCALL(unlink, CKPT_SC_UNLINK)
#endif
#ifdef SYS_rmdir
                                  CKPT_SYSCALL(rmdir, CKPT_SC_UNLINK)
#endif
#ifdef SYS_stat
                                      CKPT_SYSCALL(stat, CKPT_SC_STAT)
#endif
#ifdef SYS_lstat
                                          CKPT_SYSCALL(lstat, CKPT_SC_LSTAT)
#endif
#undef CKPT_SYSCALL
  };
  return table;
}

}  // namespace ckpt
