#include "apps/cli/gpu_injection.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "apps/cli/session.h"

namespace ckpt::cli {

std::optional<std::string> find_cupti_library(const std::string& self_exe) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (const char* env = std::getenv("CKPTSCOPE_CUPTI_LIB"); env && *env) {
    if (fs::is_regular_file(env, ec)) return std::string(env);
    return std::nullopt;
  }
  const fs::path exe = fs::read_symlink(self_exe, ec);
  if (ec) return std::nullopt;
  for (const char* rel :
       {"../lib/libckptscope_cupti.so", "../lib/ckptscope/libckptscope_cupti.so"}) {
    const fs::path candidate = (exe.parent_path() / rel).lexically_normal();
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  }
  return std::nullopt;
}

std::vector<std::string> gpu_injection_env(Collector& collector, bool quiet) {
  const auto lib = find_cupti_library();
  if (!lib) return {};  // built without CUPTI: gpu_copy is absent, as documented
  if (const char* other = std::getenv("CUDA_INJECTION64_PATH"); other && *other) {
    // Another tool's injection (Nsight Systems sets it): CUDA loads one only.
    const std::string why =
        std::string("gpu_copy not traced: CUDA_INJECTION64_PATH is already set (to ") + other +
        "), and CUDA loads one injection library only";
    collector.warn_in_trace(why);
    if (!quiet) warn("note: " + why);
    return {};
  }
  const char* tmp = std::getenv("TMPDIR");
  auto socket = collector.listen_for_gpu_copies(tmp && *tmp ? tmp : "/tmp");
  if (!socket) {
    const std::string why = "gpu_copy not traced: " + socket.error().message;
    collector.warn_in_trace(why);
    if (!quiet) warn("note: " + why);
    return {};
  }
  return {"CUDA_INJECTION64_PATH=" + *lib, "CKPTSCOPE_CUPTI_SOCKET=" + *socket};
}

}  // namespace ckpt::cli
