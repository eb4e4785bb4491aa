#include "analysis/classifier/baselines.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "analysis/classifier/rule_base.h"

namespace ckpt::classify {

namespace {

// Keywords per class, lower case, matched as substrings anywhere in the log.
// The obvious words an operator would grep for; deliberately no ordering.
struct ClassKeywords {
  std::string_view cls;
  std::array<std::string_view, 4> words;
};
constexpr std::array<ClassKeywords, 15> kKeywords = {{
    {"cuda_oom", {"out of memory", "outofmemoryerror", "cuda out of memory", ""}},
    {"nccl", {"nccl", "watchdog", "collective", ""}},
    {"cuda_runtime", {"cuda error", "device-side assert", "illegal memory access", ""}},
    {"ram_oom", {"memoryerror", "bad_alloc", "cannot allocate memory", ""}},
    {"segfault", {"segmentation fault", "sigsegv", "core dumped", ""}},
    {"file_not_found", {"filenotfounderror", "no such file", ""}},
    {"permission", {"permissionerror", "permission denied", ""}},
    {"missing_module", {"modulenotfounderror", "no module named", "importerror", ""}},
    {"div_zero", {"zerodivisionerror", "division by zero", ""}},
    {"device_mismatch", {"same device", "device", ""}},
    {"nan_loss", {"nan", "inf", ""}},
    {"oom_killer", {"killed", "oom", "out of memory", ""}},
    {"traceback", {"traceback", "error", ""}},
    {"assertion", {"assertionerror", "assert", ""}},
    {"runtime_error", {"runtimeerror", "runtime", ""}},
}};

size_t count_occurrences(std::string_view hay, std::string_view needle) {
  size_t n = 0;
  for (size_t pos = hay.find(needle); pos != std::string_view::npos;
       pos = hay.find(needle, pos + needle.size()))
    ++n;
  return n;
}

}  // namespace

std::string keyword_baseline(std::string_view log_text) {
  std::string lower(log_text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view best = kUnknownClass;
  size_t best_hits = 0;
  for (const auto& k : kKeywords) {
    size_t hits = 0;
    for (auto w : k.words)
      if (!w.empty()) hits += count_occurrences(lower, w);
    if (hits > best_hits) {  // ties: the first class listed, an arbitrary but fixed choice
      best_hits = hits;
      best = k.cls;
    }
  }
  return std::string(best);
}

std::string exit_code_baseline(std::optional<int> exit_code) {
  if (!exit_code) return std::string(kUnknownClass);
  int signal = *exit_code < 0 ? -*exit_code : (*exit_code > 128 ? *exit_code - 128 : 0);
  if (signal == 11) return "segfault";   // SIGSEGV
  if (signal == 9) return "oom_killer";  // SIGKILL: what the OOM killer sends
  return std::string(kUnknownClass);
}

}  // namespace ckpt::classify
