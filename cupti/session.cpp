#include "session.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

namespace ckpt::cupti {
namespace {

std::atomic<Session*> g_active{nullptr};

// CUPTI requires a callback for a subscriber; no callback domain is ever
// enabled, so it is never called.
void CUPTIAPI no_callbacks(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

const char* kind_name(CUpti_ActivityKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return "CUPTI_ACTIVITY_KIND_MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return "CUPTI_ACTIVITY_KIND_MEMCPY2";
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return "CUPTI_ACTIVITY_KIND_DEVICE";
    default:
      return "an activity kind";
  }
}

uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::kNoSocket:
      return "no_socket";
    case Outcome::kNoCollector:
      return "no_collector";
    case Outcome::kNoGpu:
      return "no_gpu";
    case Outcome::kSubscriberTaken:
      return "subscriber_taken";
    case Outcome::kCuptiError:
      return "cupti_error";
    case Outcome::kTracing:
      return "tracing";
  }
  return "?";
}

bool means_no_gpu(CUptiResult r) {
  // What CUPTI answers when libcuda.so.1 is missing or finds no device: on a
  // machine without a driver cuptiSubscribe_v2, cuptiActivityEnable and
  // cuptiActivityRegisterTimestampCallback all return CUPTI_ERROR_UNKNOWN
  // (tests/unit/cupti/session_test.cpp runs them).
  return r == CUPTI_ERROR_UNKNOWN || r == CUPTI_ERROR_NOT_INITIALIZED ||
         r == CUPTI_ERROR_INVALID_DEVICE;
}

uint64_t CUPTIAPI monotonic_timestamp() { return monotonic_ns(); }

Connection connect_collector(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return {-1, "the socket path is too long"};
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  // Non-blocking from the start: neither connect nor any send may ever hold
  // up the job.
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return {-1, std::strerror(errno)};
  // Room for bursts while the collector is busy (capped by wmem_max).
  const int sndbuf = 1 << 20;
  (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
  for (int attempt = 0;; ++attempt) {
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) return {fd, ""};
    const int err = errno;
    if (err == EINTR) continue;
    // A Unix socket answers EAGAIN when the listener's backlog is full: the
    // collector accepts every poll, so a short wait (at most 100 ms, once,
    // inside cuInit) normally gets in.
    if (err == EAGAIN && attempt < 20) {
      ::usleep(5000);
      continue;
    }
    ::close(fd);
    return {-1, std::strerror(err)};
  }
}

std::optional<int64_t> measure_clock_offset(const CuptiApi& api) {
  uint64_t best_width = std::numeric_limits<uint64_t>::max();
  int64_t offset = 0;
  for (int i = 0; i < 9; ++i) {
    uint64_t cupti_ns = 0;
    const uint64_t before = monotonic_ns();
    if (CUPTI_CALL(api.cuptiGetTimestamp(&cupti_ns)) != CUPTI_SUCCESS) return std::nullopt;
    const uint64_t after = monotonic_ns();
    if (after - before < best_width) {
      best_width = after - before;
      offset = static_cast<int64_t>(before + (after - before) / 2) - static_cast<int64_t>(cupti_ns);
    }
  }
  return offset;
}

Session::Session(const CuptiApi& api) : api_(api) {}

Session::~Session() {
  shutdown();
  if (flusher_.joinable()) flusher_.detach();  // a forked child: its thread is not here
  Session* self = this;
  g_active.compare_exchange_strong(self, nullptr);
}

Session* Session::active() { return g_active.load(std::memory_order_acquire); }

Outcome Session::start_from_env(const std::function<const char*(const char*)>& getenv) {
  const char* path = getenv("CKPTSCOPE_CUPTI_SOCKET");
  if (!path || !*path) {
    log_line(
        "CKPTSCOPE_CUPTI_SOCKET is not set: GPU copies are not traced (`ckptscope run` sets it "
        "along with CUDA_INJECTION64_PATH)");
    return Outcome::kNoSocket;
  }
  const BufferConfigResult buffers =
      parse_buffer_config(getenv("CKPTSCOPE_CUPTI_BUFFERS"), getenv("CKPTSCOPE_CUPTI_BUFFER_MIB"));
  if (!buffers.error.empty()) log_line(buffers.error);
  const Connection c = connect_collector(path);
  if (c.fd < 0) {
    log_line("cannot connect to the collector at " + std::string(path) + ": " + c.error +
             "; GPU copies are not traced");
    return Outcome::kNoCollector;
  }
  SessionOptions options;
  options.buffers = buffers.config;
  return start(c.fd, options);
}

Outcome Session::start(int fd, const SessionOptions& options) {
  options_ = options;
  pid_ = static_cast<uint32_t>(::getpid());
  channel_ = std::make_unique<Channel>(fd, pid_, options_.spool_bytes);
  pool_ = std::make_unique<BufferPool>(options_.buffers);
  RecordSink& sink = *this;  // a private base: converted here, inside the class
  decoder_ = std::make_unique<ActivityDecoder>(api_, sink);

  uint32_t version = 0;
  if (CUPTI_CALL(api_.cuptiGetVersion(&version)) == CUPTI_SUCCESS) hello_.cupti_version = version;

  // One subscriber per process (cupti_callbacks.h): claiming it first is
  // how CUPTI clients keep out of each other's way. _v2 names the holder.
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "ckptscope";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof(holder);
  CUpti_SubscriberHandle subscriber = nullptr;
  const CUptiResult sub =
      CUPTI_CALL_ALLOW(api_.cuptiSubscribe_v2(&subscriber, no_callbacks, nullptr, &params),
                       CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  if (sub == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    holder[sizeof(holder) - 1] = '\0';
    const std::string who = holder[0] ? " (CUPTI names it \"" + std::string(holder) + "\")" : "";
    return give_up(Outcome::kSubscriberTaken, CKPT_GPU_SUBSCRIBER_TAKEN,
                   "another CUPTI tool holds this process's one CUPTI subscriber" + who +
                       ": most likely Nsight Systems or Nsight Compute, or the PyTorch profiler "
                       "(Kineto); gpu_copy is not traced and the job runs untouched");
  }
  if (sub != CUPTI_SUCCESS) {
    if (means_no_gpu(sub))
      return give_up(Outcome::kNoGpu, CKPT_GPU_NO_GPU,
                     "cuptiSubscribe_v2 returned " + result_name(sub) +
                         ": no CUDA driver or GPU in this process; gpu_copy is not traced");
    return give_up(Outcome::kCuptiError, CKPT_GPU_CUPTI_ERROR,
                   "cuptiSubscribe_v2 returned " + result_name(sub) + "; gpu_copy is not traced");
  }
  subscriber_ = subscriber;

  // Before any kind is enabled, or records made before would keep CUPTI's
  // own clock (cupti_activity.h, cuptiActivityRegisterTimestampCallback).
  ClockConversion clock;
  if (CUPTI_CALL(api_.cuptiActivityRegisterTimestampCallback(monotonic_timestamp)) ==
      CUPTI_SUCCESS) {
    clock.mode = CKPT_GPU_CLOCK_CALLBACK;
  } else {
    // CUPTI's default clock on Linux is CLOCK_REALTIME (same header): a
    // fixed offset from CLOCK_MONOTONIC until the wall clock is stepped.
    const std::optional<int64_t> offset = measure_clock_offset(api_);
    if (!offset)
      return give_up(Outcome::kCuptiError, CKPT_GPU_CUPTI_ERROR,
                     "neither cuptiActivityRegisterTimestampCallback nor cuptiGetTimestamp "
                     "works: copies cannot be put on CLOCK_MONOTONIC; gpu_copy is not traced");
    clock.mode = CKPT_GPU_CLOCK_OFFSET;
    clock.offset_ns = *offset;
  }
  decoder_->set_clock(clock);
  hello_.clock = clock.mode;
  hello_.clock_offset_ns = clock.mode == CKPT_GPU_CLOCK_OFFSET ? clock.offset_ns : 0;

  // CUPTI may ask for a buffer as soon as a kind is enabled.
  Session* expected = nullptr;
  if (!g_active.compare_exchange_strong(expected, this) && expected != this)
    return give_up(Outcome::kCuptiError, CKPT_GPU_CUPTI_ERROR,
                   "another tracing session is active in this process");
  if (CUPTI_CALL(api_.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)) !=
      CUPTI_SUCCESS)
    return give_up(Outcome::kCuptiError, CKPT_GPU_CUPTI_ERROR,
                   "cuptiActivityRegisterCallbacks failed; gpu_copy is not traced");

  for (const CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_DEVICE}) {
    const CUptiResult r = CUPTI_CALL_ALLOW(api_.cuptiActivityEnable(kind),
                                           CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    if (r == CUPTI_SUCCESS) {
      enabled_.push_back(kind);
      continue;
    }
    const std::string call =
        std::string("cuptiActivityEnable(") + kind_name(kind) + ") returned " + result_name(r);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
      return give_up(Outcome::kSubscriberTaken, CKPT_GPU_SUBSCRIBER_TAKEN,
                     call +
                         ": another CUPTI tool (Nsight Systems or Compute, the PyTorch profiler / "
                         "Kineto) is recording activity; gpu_copy is not traced");
    if (means_no_gpu(r))
      return give_up(Outcome::kNoGpu, CKPT_GPU_NO_GPU,
                     call + ": no CUDA driver or GPU in this process; gpu_copy is not traced");
    // Peer copies and device records are extras: the stage stands on MEMCPY.
    if (kind == CUPTI_ACTIVITY_KIND_MEMCPY)
      return give_up(Outcome::kCuptiError, CKPT_GPU_CUPTI_ERROR, call + "; gpu_copy is not traced");
  }

  hello_.status = CKPT_GPU_OK;
  channel_->hello(hello_);
  tracing_ = true;
  try {
    flusher_ = std::thread([this] { flush_loop(); });
  } catch (const std::exception& e) {
    // Records still arrive when CUPTI's buffers fill and at exit.
    log_line(std::string("no flush thread (") + e.what() + "): records are sent as buffers fill");
  }
  return Outcome::kTracing;
}

Outcome Session::give_up(Outcome outcome, uint32_t status, const std::string& message) {
  for (auto it = enabled_.rbegin(); it != enabled_.rend(); ++it)
    CUPTI_CALL(api_.cuptiActivityDisable(*it));
  enabled_.clear();
  if (subscriber_) {
    CUPTI_CALL(api_.cuptiUnsubscribe(subscriber_));
    subscriber_ = nullptr;
  }
  // Nothing of ours may be called back any more, unless CUPTI still holds a
  // buffer it took before the failure (then it will hand it back to us).
  Session* self = this;
  if (pool_->outstanding() == 0) g_active.compare_exchange_strong(self, nullptr);

  hello_.status = status;
  std::strncpy(hello_.message, message.c_str(), sizeof(hello_.message) - 1);
  log_line(message);
  channel_->hello(hello_);
  channel_->drain(options_.exit_drain);
  channel_->close();
  return outcome;
}

void Session::on_copy(const ckpt_gpu_copy_record& r) { channel_->copy(r); }
void Session::on_device(const ckpt_gpu_device_record& r) { channel_->device(r); }

void Session::send_drops() {
  ckpt_gpu_drops d{};
  d.cupti_dropped = decoder_->cupti_dropped();
  d.buffers_refused = pool_->refused();
  d.unknown_records = decoder_->unknown_records();
  channel_->drops(d);  // send_dropped and records_sent are the channel's
}

void Session::flush_loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, options_.flush_period, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    // cupti_activity.h: a default flush (flag 0) returns the buffers whose
    // records are all complete, issues no CUDA synchronization, and "can be
    // done at a regular interval in a separate thread".
    CUPTI_CALL(api_.cuptiActivityFlushAll(0));
    send_drops();
    channel_->flush();
    lock.lock();
  }
}

void Session::shutdown() {
  if (!tracing_ || shut_.exchange(true)) return;
  // A child forked from the job has our memory but not CUPTI's threads or
  // the right to the parent's socket: it leaves everything to the parent.
  if (static_cast<uint32_t>(::getpid()) != pid_) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  // The forced flush hands back every buffer, incomplete records included;
  // the header suggests it "in the at-exit handler".
  CUPTI_CALL(api_.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  decoder_->collect_dropped(nullptr, 0);
  channel_->drain(options_.exit_drain / 2);
  send_drops();
  channel_->drain(options_.exit_drain / 2);
  channel_->close();
}

void CUPTIAPI Session::buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;  // 0: as many records as fit
  Session* s = active();
  if (!s) return;
  try {
    const BufferPool::Buffer b = s->pool_->acquire();
    *buffer = b.data;
    *size = b.size;
  } catch (...) {
    // Never let an exception into CUPTI: no buffer, CUPTI drops and counts.
  }
}

void CUPTIAPI Session::buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                        size_t /*size*/, size_t valid_size) {
  Session* s = active();
  if (!s) return;
  try {
    s->decoder_->on_buffer(context, stream_id, buffer, valid_size);
    s->pool_->release(buffer);
    s->channel_->flush();
  } catch (...) {
    s->pool_->release(buffer);
  }
}

}  // namespace ckpt::cupti
