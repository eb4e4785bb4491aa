// How the stitcher reads an errno: a failure kind, a retry, or a name for
// evidence. The call failures and the NFS RPC failures share the rules.
#pragma once

#include <string>

namespace ckpt {

// Failure kind for an errno from a call, one of kErrnoFailureKinds
// (model/vocabulary.h), or "" when the errno is not a failure by itself
// (ENOENT on a probe).
std::string failure_kind_for_errno(int err);
// Restart codes, EINTR and EAGAIN: the call is retried, nothing failed.
bool is_retry_errno(int err);
// The errno's symbol ("ENOSPC"), or "errno N" for one without a name here.
std::string errno_name(int err);

}  // namespace ckpt
