// How `run` puts libckptscope_cupti.so into the job: CUDA_INJECTION64_PATH
// (the CUDA driver loads the library at cuInit and calls its
// InitializeInjection) and CKPTSCOPE_CUPTI_SOCKET (where it sends copies).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "apps/collector/collector.h"

namespace ckpt::cli {

// The library: $CKPTSCOPE_CUPTI_LIB, else next to the binary
// (<bin>/../lib/libckptscope_cupti.so, the build tree and `make install`
// layout); nullopt when this build has none (no CUDA toolkit at build time).
std::optional<std::string> find_cupti_library(const std::string& self_exe = "/proc/self/exe");

// The environment additions for the job ("NAME=value"), or none, with the
// reason said on stderr and in the trace when the stage cannot run.
std::vector<std::string> gpu_injection_env(Collector& collector, bool quiet);

}  // namespace ckpt::cli
