// TEMPORARY (folded into vocabulary.h before the branch is done).
#pragma once
#include <string_view>
namespace ckpt {
inline constexpr std::string_view kFailureNodeGpuXid = "node_gpu_xid";
inline constexpr std::string_view kFailureJobLogIncomplete = "job_log_incomplete";
}  // namespace ckpt
