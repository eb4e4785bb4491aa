// The entry point the CUDA driver calls: it loads the library named by
// CUDA_INJECTION64_PATH during cuInit and calls InitializeInjection once
// (the CUPTI injection samples do the same). The only symbol this library
// exports; everything else is built with -fvisibility=hidden and made local
// by exports.map.
#include <cstdlib>
#include <exception>
#include <memory>

#include "session.h"

namespace {

std::atomic<ckpt::cupti::Session*> g_session{nullptr};

void flush_at_exit() {
  if (ckpt::cupti::Session* s = g_session.load()) {
    try {
      s->shutdown();
    } catch (...) {
      // Exit goes on.
    }
  }
}

// The guard for a process that ends without running atexit handlers in
// the usual order (the library unloaded, or a destructor-driven exit):
// shutdown() is idempotent, so whichever runs first does the work.
__attribute__((destructor)) void flush_at_unload() { flush_at_exit(); }

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::atomic<bool> called{false};
  if (called.exchange(true)) return 1;
  try {
    auto session = std::make_unique<ckpt::cupti::Session>(ckpt::cupti::real_cupti());
    const ckpt::cupti::Outcome outcome =
        session->start_from_env([](const char* name) { return std::getenv(name); });
    if (outcome == ckpt::cupti::Outcome::kTracing) {
      // Never deleted: CUPTI may call back into it until the process ends.
      g_session.store(session.release());
      if (std::atexit(flush_at_exit) != 0)
        ckpt::cupti::log_line("atexit failed: the last records are sent at unload only");
    } else if (ckpt::cupti::Session::active() == session.get()) {
      // Not tracing, but CUPTI still holds a buffer it will hand back to it.
      (void)session.release();
    }
  } catch (const std::exception& e) {
    ckpt::cupti::log_line(std::string("not tracing GPU copies: ") + e.what());
  } catch (...) {
    ckpt::cupti::log_line("not tracing GPU copies: an unexpected error");
  }
  // The CUPTI samples return 1; the job must run whatever happened here.
  return 1;
}
