#include "stitch/errnos.h"

#include <cerrno>

#include <fmt/format.h>

#include "model/vocabulary.h"

namespace ckpt {

bool is_retry_errno(int err) {
  // ERESTARTSYS..ERESTART_RESTARTBLOCK (include/linux/errno.h) are seen at
  // sys_exit before the kernel restarts the call; EINTR and EAGAIN ask the
  // caller to retry. None of them is a storage failure.
  return (err >= 512 && err <= 516) || err == EINTR || err == EAGAIN;
}

std::string failure_kind_for_errno(int err) {
  switch (err) {
    case ENOSPC:
      return std::string(kFailureEnospc);
    case EDQUOT:
      return std::string(kFailureEdquot);
    case ESTALE:
      return std::string(kFailureEstale);
    case EIO:
      return std::string(kFailureEio);
    case EROFS:
      return std::string(kFailureErofs);
    case ETIMEDOUT:
      return std::string(kFailureEtimedout);
    default:
      return "";
  }
}

std::string errno_name(int err) {
  switch (err) {
    case ENOSPC:
      return "ENOSPC";
    case EDQUOT:
      return "EDQUOT";
    case ESTALE:
      return "ESTALE";
    case EIO:
      return "EIO";
    case EROFS:
      return "EROFS";
    case ETIMEDOUT:
      return "ETIMEDOUT";
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case ENOENT:
      return "ENOENT";
    case EBADF:
      return "EBADF";
    case EINVAL:
      return "EINVAL";
    case EFBIG:
      return "EFBIG";
    case EINTR:
      return "EINTR";
    default:
      return fmt::format("errno {}", err);
  }
}

}  // namespace ckpt
