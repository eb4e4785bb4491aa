#include "cupti_api.h"

#include <unistd.h>

#include <cerrno>

namespace ckpt::cupti {

const CuptiApi& real_cupti() {
  static const CuptiApi api = [] {
    CuptiApi a;
    a.cuptiGetVersion = ::cuptiGetVersion;
    a.cuptiSubscribe_v2 = ::cuptiSubscribe_v2;
    a.cuptiUnsubscribe = ::cuptiUnsubscribe;
    a.cuptiActivityRegisterTimestampCallback = ::cuptiActivityRegisterTimestampCallback;
    a.cuptiGetTimestamp = ::cuptiGetTimestamp;
    a.cuptiActivityRegisterCallbacks = ::cuptiActivityRegisterCallbacks;
    a.cuptiActivityEnable = ::cuptiActivityEnable;
    a.cuptiActivityDisable = ::cuptiActivityDisable;
    a.cuptiActivityFlushAll = ::cuptiActivityFlushAll;
    a.cuptiActivityGetNextRecord = ::cuptiActivityGetNextRecord;
    a.cuptiActivityGetNumDroppedRecords = ::cuptiActivityGetNumDroppedRecords;
    return a;
  }();
  return api;
}

std::string result_name(CUptiResult result) {
  // cuptiGetResultString is a table lookup: it needs no driver (it answers
  // on a machine without one) and never calls back into CUDA.
  const char* name = nullptr;
  if (::cuptiGetResultString(result, &name) == CUPTI_SUCCESS && name) return name;
  return "CUPTI result " + std::to_string(static_cast<int>(result));
}

void log_line(std::string_view text) {
  std::string line = "ckptscope-cupti: ";
  line.append(text);
  line.push_back('\n');
  const int saved = errno;  // callers look at errno after logging
  size_t at = 0;
  while (at < line.size()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + at, line.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // stderr closed or full: the job matters more than the line
    at += static_cast<size_t>(n);
  }
  errno = saved;
}

void log_cupti_failure(CUptiResult result, const char* call, std::atomic<bool>& logged) {
  if (logged.exchange(true)) return;
  // The call's text names the table ("api_.cuptiActivityEnable(...)"): the
  // CUPTI function is what a reader looks up.
  std::string_view text = call;
  if (const size_t at = text.find("cupti"); at != std::string_view::npos) text.remove_prefix(at);
  log_line(std::string(text) + " failed: " + result_name(result) +
           " (logged once; the job continues)");
}

}  // namespace ckpt::cupti
