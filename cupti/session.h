// One process's GPU-copy tracing: the socket to the collector, CUPTI's
// subscriber, activity buffers, the decoder and the flush thread.
//
// InitializeInjection (injection.cpp) is start_from_env() on real CUPTI and
// nothing else; the unit tests run the same code on a socketpair.
//
// The init path, in CUPTI's required order:
//   1. CKPTSCOPE_CUPTI_SOCKET, else nothing at all is done (CUPTI untouched).
//   2. Connect (non-blocking); failing that, nothing more is done.
//   3. cuptiSubscribe_v2: CUPTI allows one subscriber per process. Another
//      tool holding it (Nsight Systems, the PyTorch profiler's Kineto) means
//      HELLO CKPT_GPU_SUBSCRIBER_TAKEN, and nothing is enabled.
//   4. cuptiActivityRegisterTimestampCallback (CLOCK_MONOTONIC), which the
//      header says must come "before any of the CUPTI activity kinds are
//      enabled"; failing that, the offset between cuptiGetTimestamp() and
//      CLOCK_MONOTONIC is measured and added to every timestamp.
//   5. cuptiActivityRegisterCallbacks (buffers), then enable MEMCPY, MEMCPY2
//      (peer copies) and DEVICE. An enable failing with CUPTI_ERROR_UNKNOWN,
//      NOT_INITIALIZED or INVALID_DEVICE means no driver or GPU here: HELLO
//      CKPT_GPU_NO_GPU, everything undone, the job left alone.
//   6. HELLO CKPT_GPU_OK, then a thread calls cuptiActivityFlushAll(0) every
//      flush period and sends the cumulative DROPS.
// shutdown() (atexit): cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
// the last drops, close.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "activity.h"
#include "buffers.h"
#include "channel.h"
#include "cupti_api.h"

namespace ckpt::cupti {

enum class Outcome {
  kNoSocket,         // CKPTSCOPE_CUPTI_SOCKET unset: CUPTI never called
  kNoCollector,      // could not connect: CUPTI never called
  kNoGpu,            // HELLO CKPT_GPU_NO_GPU
  kSubscriberTaken,  // HELLO CKPT_GPU_SUBSCRIBER_TAKEN
  kCuptiError,       // HELLO CKPT_GPU_CUPTI_ERROR
  kTracing,          // HELLO CKPT_GPU_OK: copies are being sent
};
std::string_view to_string(Outcome o);

struct SessionOptions {
  BufferConfig buffers;
  std::chrono::milliseconds flush_period{500};
  // At exit, how long the last records may wait for a busy collector.
  std::chrono::milliseconds exit_drain{200};
  size_t spool_bytes = Channel::kDefaultSpoolBytes;
};

// A connected, non-blocking, close-on-exec SOCK_SEQPACKET socket to `path`,
// or -1 with the reason.
struct Connection {
  int fd = -1;
  std::string error;
};
Connection connect_collector(const std::string& path);

// CUPTI's clock minus CLOCK_MONOTONIC, negated: what to add to a CUPTI
// timestamp. Measured over a few samples, keeping the tightest bracket.
std::optional<int64_t> measure_clock_offset(const CuptiApi& api);

// CLOCK_MONOTONIC in ns: the timestamp callback given to CUPTI.
uint64_t CUPTIAPI monotonic_timestamp();

// cuptiActivityEnable/cuptiSubscribe results that mean "no driver or GPU".
bool means_no_gpu(CUptiResult r);

class Session final : private RecordSink {
 public:
  explicit Session(const CuptiApi& api);
  // shutdown(). The library never destroys its session (CUPTI may call back
  // until the process ends); tests do.
  ~Session() override;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // InitializeInjection's work. `getenv` is std::getenv outside tests.
  Outcome start_from_env(const std::function<const char*(const char*)>& getenv);
  // From step 3 on, over a connected socket (owned from here on).
  Outcome start(int fd, const SessionOptions& options);
  // Idempotent; does nothing in a process forked from the one that started.
  void shutdown();

  [[nodiscard]] const ckpt_gpu_hello& hello() const { return hello_; }
  [[nodiscard]] bool tracing() const { return tracing_; }
  [[nodiscard]] Channel* channel() { return channel_.get(); }
  [[nodiscard]] BufferPool* pool() { return pool_.get(); }
  [[nodiscard]] ActivityDecoder* decoder() { return decoder_.get(); }
  // The kinds enabled now (tests: nothing is left enabled after a failure).
  [[nodiscard]] std::vector<CUpti_ActivityKind> enabled_kinds() const { return enabled_; }

  // The buffer callbacks registered with CUPTI. Static, as CUPTI wants
  // plain functions; they act on the one active session (CUPTI's callbacks
  // are process-wide).
  static void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                        size_t size, size_t valid_size);
  static Session* active();

 private:
  void on_copy(const ckpt_gpu_copy_record& r) override;
  void on_device(const ckpt_gpu_device_record& r) override;
  Outcome give_up(Outcome outcome, uint32_t status, const std::string& message);
  void send_drops();
  void flush_loop();

  const CuptiApi& api_;
  SessionOptions options_;
  uint32_t pid_ = 0;
  std::unique_ptr<Channel> channel_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<ActivityDecoder> decoder_;
  ckpt_gpu_hello hello_{};
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::vector<CUpti_ActivityKind> enabled_;
  bool tracing_ = false;
  std::atomic<bool> shut_{false};

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread flusher_;
};

}  // namespace ckpt::cupti
