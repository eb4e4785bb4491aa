// The init path, the buffer callbacks and shutdown (cupti/session.h), the
// code InitializeInjection runs, over a real socketpair.
//
// On this machine (no driver) the real CUPTI answers CUPTI_ERROR_UNKNOWN to
// every call that needs the driver; the tests that use it show what the
// library does then. The others replace the driver-bound entries of the
// CUPTI table (subscribe, enable, flush...) to reach the branches a GPU
// machine takes, and keep the real cuptiActivityGetNextRecord, so buffers
// are still walked by CUPTI itself. The buffer callbacks are called exactly
// as CUPTI calls them: through the pointers the library registered.
#include "session.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/un.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cupti_test_support.h"

namespace ckpt::cupti {
namespace {

using test::only;
using test::receive_all;
using test::SocketPair;

// ---- A CUPTI whose answers a test chooses -------------------------------

struct Fake {
  // The flush thread calls in too: the log and counters are thread-safe.
  static inline std::mutex mu;
  static inline std::vector<std::string> calls;
  static void called(std::string what) {
    std::lock_guard lock(mu);
    calls.push_back(std::move(what));
  }
  static inline CUptiResult subscribe = CUPTI_SUCCESS;
  static inline std::string holder;  // written to oldSubscriberName
  static inline CUptiResult register_timestamp = CUPTI_SUCCESS;
  static inline CUpti_TimestampCallbackFunc timestamp_callback = nullptr;
  static inline int64_t cupti_clock_ahead_ns = 0;  // cuptiGetTimestamp = monotonic + this
  static inline CUptiResult register_buffers = CUPTI_SUCCESS;
  static inline CUpti_BuffersCallbackRequestFunc requested = nullptr;
  static inline CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  static inline std::map<CUpti_ActivityKind, CUptiResult> enable;
  static inline std::vector<CUpti_ActivityKind> enabled;
  static inline std::atomic<int> flushes{0};
  static inline std::atomic<int> forced_flushes{0};
  static inline size_t dropped_answer = 0;
  // Records the forced flush hands back (as CUPTI does at exit).
  static inline std::vector<CUpti_ActivityMemcpy6> pending;

  static void reset() {
    {
      std::lock_guard lock(mu);
      calls.clear();
    }
    subscribe = CUPTI_SUCCESS;
    holder.clear();
    register_timestamp = CUPTI_SUCCESS;
    timestamp_callback = nullptr;
    cupti_clock_ahead_ns = 0;
    register_buffers = CUPTI_SUCCESS;
    requested = nullptr;
    completed = nullptr;
    enable.clear();
    enabled.clear();
    flushes = 0;
    forced_flushes = 0;
    dropped_answer = 0;
    pending.clear();
  }

  static CUptiResult get_version(uint32_t* v) {
    called("cuptiGetVersion");
    *v = 130001;
    return CUPTI_SUCCESS;
  }
  static CUptiResult subscribe_v2(CUpti_SubscriberHandle* s, CUpti_CallbackFunc, void*,
                                  CUpti_SubscriberParams* p) {
    called("cuptiSubscribe_v2");
    EXPECT_NE(p, nullptr);
    EXPECT_EQ(p->structSize, CUpti_SubscriberParams_STRUCT_SIZE);
    if (subscribe == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && p->oldSubscriberName)
      std::strncpy(p->oldSubscriberName, holder.c_str(), p->oldSubscriberSize - 1);
    static int handle;  // any non-null handle: it is only handed back to unsubscribe
    if (subscribe == CUPTI_SUCCESS) *s = reinterpret_cast<CUpti_SubscriberHandle>(&handle);
    return subscribe;
  }
  static CUptiResult unsubscribe(CUpti_SubscriberHandle) {
    called("cuptiUnsubscribe");
    return CUPTI_SUCCESS;
  }
  static CUptiResult register_timestamp_callback(CUpti_TimestampCallbackFunc f) {
    called("cuptiActivityRegisterTimestampCallback");
    if (register_timestamp == CUPTI_SUCCESS) timestamp_callback = f;
    return register_timestamp;
  }
  static CUptiResult get_timestamp(uint64_t* t) {
    called("cuptiGetTimestamp");
    *t = static_cast<uint64_t>(static_cast<int64_t>(test::mono_now()) + cupti_clock_ahead_ns);
    return CUPTI_SUCCESS;
  }
  static CUptiResult register_callbacks(CUpti_BuffersCallbackRequestFunc r,
                                        CUpti_BuffersCallbackCompleteFunc c) {
    called("cuptiActivityRegisterCallbacks");
    if (register_buffers != CUPTI_SUCCESS) return register_buffers;
    requested = r;
    completed = c;
    return CUPTI_SUCCESS;
  }
  static CUptiResult activity_enable(CUpti_ActivityKind k) {
    called("cuptiActivityEnable(" + std::to_string(k) + ")");
    const CUptiResult r = enable.count(k) ? enable[k] : CUPTI_SUCCESS;
    if (r == CUPTI_SUCCESS) enabled.push_back(k);
    return r;
  }
  static CUptiResult activity_disable(CUpti_ActivityKind k) {
    called("cuptiActivityDisable(" + std::to_string(k) + ")");
    enabled.erase(std::remove(enabled.begin(), enabled.end(), k), enabled.end());
    return CUPTI_SUCCESS;
  }
  static CUptiResult flush_all(uint32_t flag);
  static CUptiResult num_dropped(CUcontext, uint32_t, size_t* d) {
    *d = dropped_answer;
    return CUPTI_SUCCESS;
  }

  // The real CUPTI for everything not listed; the real record walk always.
  static CuptiApi api() {
    CuptiApi a = real_cupti();
    a.cuptiGetVersion = get_version;
    a.cuptiSubscribe_v2 = subscribe_v2;
    a.cuptiUnsubscribe = unsubscribe;
    a.cuptiActivityRegisterTimestampCallback = register_timestamp_callback;
    a.cuptiGetTimestamp = get_timestamp;
    a.cuptiActivityRegisterCallbacks = register_callbacks;
    a.cuptiActivityEnable = activity_enable;
    a.cuptiActivityDisable = activity_disable;
    a.cuptiActivityFlushAll = flush_all;
    a.cuptiActivityGetNumDroppedRecords = num_dropped;
    return a;
  }
};

CUpti_ActivityMemcpy6 memcpy_record(uint32_t correlation, uint64_t bytes, uint64_t start) {
  CUpti_ActivityMemcpy6 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  r.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  r.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  r.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  r.bytes = bytes;
  r.start = start;
  r.end = start + 1000;
  r.deviceId = 0;
  r.contextId = 1;
  r.streamId = 7;
  r.correlationId = correlation;
  r.copyCount = 1;
  return r;
}

// As CUPTI delivers: ask the registered callback for a buffer, fill it, hand
// it back through the registered completion callback.
template <typename Fill>
size_t deliver(Fill&& fill) {
  uint8_t* buffer = nullptr;
  size_t size = 0;
  size_t max_records = 99;
  EXPECT_NE(Fake::requested, nullptr);
  Fake::requested(&buffer, &size, &max_records);
  if (!buffer) return 0;
  EXPECT_EQ(max_records, 0u) << "as many records as fit";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer) % ACTIVITY_RECORD_ALIGNMENT, 0u);
  test::BufferWriter w(buffer, size);
  fill(w);
  Fake::completed(nullptr, 0, buffer, size, w.used());
  return w.used();
}

CUptiResult Fake::flush_all(uint32_t flag) {
  called(flag ? "cuptiActivityFlushAll(FORCED)" : "cuptiActivityFlushAll(0)");
  if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) {
    ++forced_flushes;
    if (!pending.empty() && requested) {
      std::vector<CUpti_ActivityMemcpy6> records;
      records.swap(pending);
      deliver([&](test::BufferWriter& w) {
        for (const auto& r : records) w.add(r);
      });
    }
  } else {
    ++flushes;
  }
  return CUPTI_SUCCESS;
}

size_t index_of(const std::string& call) {
  std::lock_guard lock(Fake::mu);
  const auto it = std::find(Fake::calls.begin(), Fake::calls.end(), call);
  return it == Fake::calls.end() ? SIZE_MAX : static_cast<size_t>(it - Fake::calls.begin());
}
bool called_prefix(const std::string& prefix) {
  std::lock_guard lock(Fake::mu);
  return std::any_of(Fake::calls.begin(), Fake::calls.end(),
                     [&](const std::string& c) { return c.rfind(prefix, 0) == 0; });
}

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Fake::reset();
    api_ = Fake::api();
  }
  void TearDown() override { EXPECT_EQ(Session::active(), nullptr) << "a session left active"; }
  static SessionOptions options() {
    SessionOptions o;
    o.flush_period = std::chrono::milliseconds(50);
    o.exit_drain = std::chrono::milliseconds(100);
    return o;
  }
  CuptiApi api_;
  SocketPair sp_;
};

// ---- The environment ------------------------------------------------------

// A table whose every entry records that it was called.
std::vector<std::string> g_touched;
CuptiApi touch_recording_api() {
  CuptiApi a;
  a.cuptiGetVersion = [](uint32_t*) { return g_touched.push_back("v"), CUPTI_SUCCESS; };
  a.cuptiSubscribe_v2 = [](CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*,
                           CUpti_SubscriberParams*) {
    return g_touched.push_back("s"), CUPTI_SUCCESS;
  };
  a.cuptiUnsubscribe = [](CUpti_SubscriberHandle) {
    return g_touched.push_back("u"), CUPTI_SUCCESS;
  };
  a.cuptiActivityRegisterTimestampCallback = [](CUpti_TimestampCallbackFunc) {
    return g_touched.push_back("t"), CUPTI_SUCCESS;
  };
  a.cuptiGetTimestamp = [](uint64_t*) { return g_touched.push_back("g"), CUPTI_SUCCESS; };
  a.cuptiActivityRegisterCallbacks = [](CUpti_BuffersCallbackRequestFunc,
                                        CUpti_BuffersCallbackCompleteFunc) {
    return g_touched.push_back("r"), CUPTI_SUCCESS;
  };
  a.cuptiActivityEnable = [](CUpti_ActivityKind) {
    return g_touched.push_back("e"), CUPTI_SUCCESS;
  };
  a.cuptiActivityDisable = [](CUpti_ActivityKind) {
    return g_touched.push_back("d"), CUPTI_SUCCESS;
  };
  a.cuptiActivityFlushAll = [](uint32_t) { return g_touched.push_back("f"), CUPTI_SUCCESS; };
  a.cuptiActivityGetNextRecord = [](uint8_t*, size_t, CUpti_Activity**) {
    return g_touched.push_back("n"), CUPTI_ERROR_MAX_LIMIT_REACHED;
  };
  a.cuptiActivityGetNumDroppedRecords = [](CUcontext, uint32_t, size_t*) {
    return g_touched.push_back("x"), CUPTI_SUCCESS;
  };
  return a;
}

TEST(SessionEnv, NoSocketVariableMeansCuptiIsNeverCalled) {
  g_touched.clear();
  const CuptiApi api = touch_recording_api();
  Session s(api);
  ::testing::internal::CaptureStderr();
  const Outcome o = s.start_from_env([](const char*) -> const char* { return nullptr; });
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(o, Outcome::kNoSocket);
  EXPECT_TRUE(g_touched.empty()) << "CUPTI was called";
  EXPECT_NE(err.find("ckptscope-cupti: CKPTSCOPE_CUPTI_SOCKET is not set"), std::string::npos)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "one line";
  // Empty counts as unset.
  EXPECT_EQ(s.start_from_env([](const char*) -> const char* { return ""; }), Outcome::kNoSocket);
  EXPECT_TRUE(g_touched.empty());
}

TEST(SessionEnv, NoCollectorMeansCuptiIsNeverCalled) {
  g_touched.clear();
  const CuptiApi api = touch_recording_api();
  Session s(api);
  ::testing::internal::CaptureStderr();
  const Outcome o = s.start_from_env([](const char* name) -> const char* {
    return std::string(name) == "CKPTSCOPE_CUPTI_SOCKET" ? "/nonexistent/ckptscope/cupti.sock"
                                                         : nullptr;
  });
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(o, Outcome::kNoCollector);
  EXPECT_TRUE(g_touched.empty());
  EXPECT_NE(err.find("cannot connect to the collector at /nonexistent/ckptscope/cupti.sock"),
            std::string::npos)
      << err;
}

TEST(SessionEnv, ConnectsToAListeningCollector) {
  const std::string path =
      std::filesystem::temp_directory_path() / ("ckpt-cupti-" + std::to_string(::getpid()));
  const int listener = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ::unlink(path.c_str());
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  const Connection c = connect_collector(path);
  ASSERT_GE(c.fd, 0) << c.error;
  EXPECT_TRUE(::fcntl(c.fd, F_GETFL) & O_NONBLOCK);
  EXPECT_TRUE(::fcntl(c.fd, F_GETFD) & FD_CLOEXEC);
  ::close(c.fd);
  ::close(listener);
  ::unlink(path.c_str());
  EXPECT_LT(connect_collector(std::string(200, 'x')).fd, 0) << "longer than sun_path";
}

// ---- The real CUPTI, no driver ----------------------------------------------

TEST_F(SessionTest, RealCuptiWithoutADriverSaysNoGpu) {
  Session s(real_cupti());
  ::testing::internal::CaptureStderr();
  const Outcome o = s.start(sp_.lib, options());
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(o, Outcome::kNoGpu);
  EXPECT_FALSE(s.tracing());
  EXPECT_TRUE(s.enabled_kinds().empty());
  const auto got = receive_all(sp_.peer);
  ASSERT_EQ(got.messages.size(), 1u);
  const auto& h = std::get<ckpt_gpu_hello>(got.messages[0]);
  EXPECT_EQ(h.status, uint32_t{CKPT_GPU_NO_GPU});
  EXPECT_EQ(h.cupti_version, uint32_t{CUPTI_API_VERSION}) << "cuptiGetVersion works without one";
  EXPECT_NE(std::string(h.message).find("CUPTI_ERROR_UNKNOWN"), std::string::npos) << h.message;
  EXPECT_TRUE(got.eof) << "the library hung up: nothing more will come";
}

TEST_F(SessionTest, RealCuptiActivityEnableFailingUnknownMeansNoGpu) {
  // Subscribing needs the driver too, so only that is answered here; the
  // timestamp callback, buffer callbacks and cuptiActivityEnable are real.
  CuptiApi api = real_cupti();
  api.cuptiGetVersion = Fake::get_version;
  api.cuptiSubscribe_v2 = Fake::subscribe_v2;
  api.cuptiUnsubscribe = Fake::unsubscribe;
  Session s(api);
  ::testing::internal::CaptureStderr();
  const Outcome o = s.start(sp_.lib, options());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(o, Outcome::kNoGpu);
  EXPECT_TRUE(s.enabled_kinds().empty()) << "nothing enabled";
  EXPECT_NE(index_of("cuptiUnsubscribe"), SIZE_MAX) << "the subscriber is given back";
  const auto got = receive_all(sp_.peer);
  ASSERT_EQ(got.messages.size(), 1u);
  const auto& h = std::get<ckpt_gpu_hello>(got.messages[0]);
  EXPECT_EQ(h.status, uint32_t{CKPT_GPU_NO_GPU});
  // The real cuptiActivityRegisterTimestampCallback failed here too, so the
  // offset to CUPTI's clock was measured with the real cuptiGetTimestamp.
  EXPECT_EQ(h.clock, uint32_t{CKPT_GPU_CLOCK_OFFSET});
  EXPECT_NE(err.find("ckptscope-cupti: cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY)"),
            std::string::npos)
      << err;
  EXPECT_NE(std::string(h.message).find(
                "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) returned CUPTI_ERROR_UNKNOWN"),
            std::string::npos)
      << h.message;
  EXPECT_TRUE(got.eof);
}

// ---- Branches a GPU machine takes -------------------------------------------

TEST_F(SessionTest, SubscriberTakenLeavesTheJobUntouched) {
  Fake::subscribe = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  Fake::holder = "CUPTI for Nsight Systems";
  Session s(api_);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(s.start(sp_.lib, options()), Outcome::kSubscriberTaken);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(called_prefix("cuptiActivityEnable"));
  EXPECT_FALSE(called_prefix("cuptiActivityRegister"));
  EXPECT_FALSE(called_prefix("cuptiUnsubscribe")) << "it never was ours";
  const auto got = receive_all(sp_.peer);
  ASSERT_EQ(got.messages.size(), 1u);
  const auto& h = std::get<ckpt_gpu_hello>(got.messages[0]);
  EXPECT_EQ(h.status, uint32_t{CKPT_GPU_SUBSCRIBER_TAKEN});
  const std::string m = h.message;
  EXPECT_NE(m.find("CUPTI for Nsight Systems"), std::string::npos) << m;
  EXPECT_NE(m.find("Kineto"), std::string::npos) << m;
  EXPECT_NE(err.find("ckptscope-cupti: another CUPTI tool"), std::string::npos) << err;
  EXPECT_TRUE(got.eof);
}

TEST_F(SessionTest, EnableRefusedForAnotherToolUndoesEverything) {
  Fake::enable[CUPTI_ACTIVITY_KIND_MEMCPY2] = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  Session s(api_);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(s.start(sp_.lib, options()), Outcome::kSubscriberTaken);
  ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(Fake::enabled.empty()) << "MEMCPY, enabled first, was disabled again";
  EXPECT_NE(index_of("cuptiActivityDisable(" + std::to_string(CUPTI_ACTIVITY_KIND_MEMCPY) + ")"),
            SIZE_MAX);
  EXPECT_NE(index_of("cuptiUnsubscribe"), SIZE_MAX);
  const auto h = std::get<ckpt_gpu_hello>(receive_all(sp_.peer).messages.at(0));
  EXPECT_EQ(h.status, uint32_t{CKPT_GPU_SUBSCRIBER_TAKEN});
}

TEST_F(SessionTest, OtherCuptiFailuresAreCuptiErrors) {
  Fake::enable[CUPTI_ACTIVITY_KIND_MEMCPY] = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  Session s(api_);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(s.start(sp_.lib, options()), Outcome::kCuptiError);
  ::testing::internal::GetCapturedStderr();
  const auto h = std::get<ckpt_gpu_hello>(receive_all(sp_.peer).messages.at(0));
  EXPECT_EQ(h.status, uint32_t{CKPT_GPU_CUPTI_ERROR});
  EXPECT_NE(std::string(h.message).find("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"), std::string::npos);
  EXPECT_TRUE(Fake::enabled.empty());
}

TEST_F(SessionTest, PeerCopiesAndDevicesAreOptional) {
  Fake::enable[CUPTI_ACTIVITY_KIND_MEMCPY2] = CUPTI_ERROR_NOT_SUPPORTED;
  Session s(api_);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(s.start(sp_.lib, options()), Outcome::kTracing);
  s.shutdown();
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(s.enabled_kinds(), (std::vector<CUpti_ActivityKind>{CUPTI_ACTIVITY_KIND_MEMCPY,
                                                                CUPTI_ACTIVITY_KIND_DEVICE}));
}

TEST_F(SessionTest, TracingOrderAndMonotonicTimestampCallback) {
  Session s(api_);
  ASSERT_EQ(s.start(sp_.lib, options()), Outcome::kTracing);
  EXPECT_EQ(Session::active(), &s);
  // The header: register the timestamp callback before enabling any kind.
  const size_t ts = index_of("cuptiActivityRegisterTimestampCallback");
  const size_t cb = index_of("cuptiActivityRegisterCallbacks");
  const size_t first_enable =
      index_of("cuptiActivityEnable(" + std::to_string(CUPTI_ACTIVITY_KIND_MEMCPY) + ")");
  EXPECT_LT(index_of("cuptiSubscribe_v2"), ts);
  EXPECT_LT(ts, first_enable);
  EXPECT_LT(cb, first_enable);
  EXPECT_EQ(Fake::enabled, (std::vector<CUpti_ActivityKind>{CUPTI_ACTIVITY_KIND_MEMCPY,
                                                            CUPTI_ACTIVITY_KIND_MEMCPY2,
                                                            CUPTI_ACTIVITY_KIND_DEVICE}));
  // What CUPTI will stamp records with is CLOCK_MONOTONIC.
  ASSERT_NE(Fake::timestamp_callback, nullptr);
  const uint64_t before = test::mono_now();
  const uint64_t t = Fake::timestamp_callback();
  const uint64_t after = test::mono_now();
  EXPECT_GE(t, before);
  EXPECT_LE(t, after);

  const auto got = receive_all(sp_.peer);
  ASSERT_GE(got.messages.size(), 1u);
  const auto& h = std::get<ckpt_gpu_hello>(got.messages[0]);
  EXPECT_EQ(h.status, uint32_t{CKPT_GPU_OK});
  EXPECT_EQ(h.clock, uint32_t{CKPT_GPU_CLOCK_CALLBACK});
  EXPECT_EQ(h.clock_offset_ns, 0);
  EXPECT_EQ(h.cupti_version, 130001u);
  EXPECT_STREQ(h.message, "");
  s.shutdown();
  EXPECT_EQ(Fake::forced_flushes, 1);
}

TEST_F(SessionTest, OffsetModeWhenTheTimestampCallbackIsRefused) {
  Fake::register_timestamp = CUPTI_ERROR_NOT_SUPPORTED;
  // CUPTI's own clock ~ CLOCK_REALTIME: far ahead of CLOCK_MONOTONIC.
  Fake::cupti_clock_ahead_ns = 1'700'000'000'000'000'000LL;
  Session s(api_);
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(s.start(sp_.lib, options()), Outcome::kTracing);
  ::testing::internal::GetCapturedStderr();
  const auto hello = std::get<ckpt_gpu_hello>(receive_all(sp_.peer).messages.at(0));
  EXPECT_EQ(hello.clock, uint32_t{CKPT_GPU_CLOCK_OFFSET});
  EXPECT_NEAR(static_cast<double>(hello.clock_offset_ns), -1.7e18, 1e6) << "within a millisecond";

  // A copy CUPTI stamped on its clock arrives on CLOCK_MONOTONIC.
  const uint64_t mono = test::mono_now();
  deliver([&](test::BufferWriter& w) {
    w.add(memcpy_record(1, 4096, mono + 1'700'000'000'000'000'000ULL));
  });
  const auto copies = only<ckpt_gpu_copy_record>(receive_all(sp_.peer).messages);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_NEAR(static_cast<double>(copies[0].start_ns), static_cast<double>(mono), 1e6);
  EXPECT_EQ(copies[0].end_ns - copies[0].start_ns, 1000u);
  s.shutdown();
}

TEST_F(SessionTest, CallbackModeLeavesRecordTimestampsAlone) {
  Session s(api_);
  ASSERT_EQ(s.start(sp_.lib, options()), Outcome::kTracing);
  deliver([&](test::BufferWriter& w) { w.add(memcpy_record(1, 4096, 123'456'789)); });
  const auto copies = only<ckpt_gpu_copy_record>(receive_all(sp_.peer).messages);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].start_ns, 123'456'789u);
  EXPECT_EQ(copies[0].end_ns, 123'457'789u);
  s.shutdown();
}

TEST_F(SessionTest, TenThousandCopiesAcrossBuffersArriveExactly) {
  SessionOptions o = options();
  o.buffers.buffer_bytes = 1 << 20;  // 10,922 records a buffer at most
  o.buffers.max_buffers = 4;
  Session s(api_);
  ASSERT_EQ(s.start(sp_.lib, o), Outcome::kTracing);
  test::Received got;
  uint32_t next = 1;
  uint64_t want_bytes = 0;
  int buffers = 0;
  while (next <= 10'000) {
    deliver([&](test::BufferWriter& w) {
      // Uneven buffers, with the odd record of another kind among them.
      const uint32_t in_this = 1 + (next * 7919) % 3000;
      for (uint32_t i = 0; i < in_this && next <= 10'000; ++i, ++next) {
        w.add(memcpy_record(next, next * 3ULL, 1'000'000ULL + next));
        want_bytes += next * 3ULL;
        if (next % 1000 == 0) {
          CUpti_ActivityKernel10 k{};
          k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
          w.add(k);
        }
      }
    });
    ++buffers;
    got = receive_all(sp_.peer, std::move(got));
  }
  EXPECT_GE(buffers, 4);
  EXPECT_EQ(s.pool()->outstanding(), 0u) << "every buffer came back";
  EXPECT_EQ(s.pool()->allocated(), 1u) << "and was reused";
  s.shutdown();
  got = receive_all(sp_.peer, std::move(got));
  EXPECT_TRUE(got.eof);
  EXPECT_LE(got.largest, size_t{CKPT_GPU_MAX_DATAGRAM});
  const auto copies = only<ckpt_gpu_copy_record>(got.messages);
  ASSERT_EQ(copies.size(), 10'000u);
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < copies.size(); ++i) {
    ASSERT_EQ(copies[i].correlation_id, i + 1);
    bytes += copies[i].bytes;
  }
  EXPECT_EQ(bytes, want_bytes);
  const auto drops = only<ckpt_gpu_drops>(got.messages);
  ASSERT_FALSE(drops.empty());
  const auto& last = drops.back();
  EXPECT_EQ(last.records_sent, 10'000u);
  EXPECT_EQ(last.unknown_records, 10u) << "one kernel record per thousand copies";
  EXPECT_EQ(last.send_dropped, 0u);
  EXPECT_EQ(last.buffers_refused, 0u);
  EXPECT_EQ(last.cupti_dropped, 0u);
}

TEST_F(SessionTest, RefusedBuffersAndCuptiDropsAreReported) {
  SessionOptions o = options();
  o.buffers.max_buffers = 2;
  o.buffers.buffer_bytes = 1 << 20;
  Fake::dropped_answer = 3;  // what CUPTI says it dropped, at each ask
  Session s(api_);
  ASSERT_EQ(s.start(sp_.lib, o), Outcome::kTracing);
  // CUPTI asks for three buffers while holding two: the third is refused.
  uint8_t* held[3];
  size_t size = 0, max_records = 0;
  for (auto& b : held) Fake::requested(&b, &size, &max_records);
  EXPECT_NE(held[0], nullptr);
  EXPECT_NE(held[1], nullptr);
  EXPECT_EQ(held[2], nullptr);
  EXPECT_EQ(size, 0u);
  Fake::completed(nullptr, 0, held[0], 1 << 20, 0);
  Fake::completed(nullptr, 0, held[1], 1 << 20, 0);
  s.shutdown();  // asks once more
  const auto drops = only<ckpt_gpu_drops>(receive_all(sp_.peer).messages);
  ASSERT_FALSE(drops.empty());
  EXPECT_EQ(drops.back().buffers_refused, 1u);
  EXPECT_EQ(drops.back().cupti_dropped, 9u) << "3 at each of two completions and at exit";
}

TEST_F(SessionTest, FlushThreadFlushesAndReportsPeriodically) {
  Session s(api_);
  ASSERT_EQ(s.start(sp_.lib, options()), Outcome::kTracing);  // every 50 ms
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const int flushes = Fake::flushes;
  EXPECT_GE(flushes, 3);
  EXPECT_EQ(Fake::forced_flushes, 0);
  const auto drops = only<ckpt_gpu_drops>(receive_all(sp_.peer).messages);
  EXPECT_GE(drops.size(), 3u) << "a cumulative DROPS at each flush";
  s.shutdown();
  EXPECT_EQ(Fake::forced_flushes, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  EXPECT_EQ(Fake::flushes, flushes) << "the thread stopped";
  s.shutdown();  // idempotent
  EXPECT_EQ(Fake::forced_flushes, 1);
}

TEST_F(SessionTest, ShutdownSendsWhatTheForcedFlushHandsBack) {
  Session s(api_);
  ASSERT_EQ(s.start(sp_.lib, options()), Outcome::kTracing);
  deliver([&](test::BufferWriter& w) {
    for (uint32_t i = 1; i <= 3; ++i) w.add(memcpy_record(i, 100, 1000 + i));
  });
  // Records still in CUPTI's buffers at exit.
  for (uint32_t i = 4; i <= 8; ++i) Fake::pending.push_back(memcpy_record(i, 100, 1000 + i));
  s.shutdown();
  const auto got = receive_all(sp_.peer);
  EXPECT_TRUE(got.eof) << "closed after the last DROPS";
  const auto copies = only<ckpt_gpu_copy_record>(got.messages);
  ASSERT_EQ(copies.size(), 8u);
  EXPECT_EQ(copies.back().correlation_id, 8u);
  ASSERT_TRUE(std::holds_alternative<ckpt_gpu_drops>(got.messages.back())) << "DROPS is last";
  EXPECT_EQ(std::get<ckpt_gpu_drops>(got.messages.back()).records_sent, 8u);
}

TEST_F(SessionTest, CollectorGoneMidRunCountsSendDrops) {
  Session s(api_);
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(s.start(sp_.lib, options()), Outcome::kTracing);
  receive_all(sp_.peer);
  sp_.close_peer();
  deliver([&](test::BufferWriter& w) {
    for (uint32_t i = 1; i <= 500; ++i) w.add(memcpy_record(i, 100, 1000 + i));
  });
  s.shutdown();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(s.channel()->send_dropped(), 500u);
  EXPECT_EQ(s.decoder()->copies(), 500u);
  EXPECT_NE(err.find("the collector is gone"), std::string::npos) << err;
}

TEST_F(SessionTest, DeviceRecordsCarryThePciAddressOrUnknown) {
  Session s(api_);
  ASSERT_EQ(s.start(sp_.lib, options()), Outcome::kTracing);
  s.decoder()->set_pci_resolver([](const CUpti_ActivityDevice5& d) -> std::optional<PciAddress> {
    if (d.id == 0) return PciAddress{0, 0x18, 0};
    return std::nullopt;
  });
  deliver([&](test::BufferWriter& w) {
    for (uint32_t id = 0; id < 2; ++id) {
      CUpti_ActivityDevice5 d{};
      d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
      d.id = id;
      d.name = "NVIDIA H200";
      d.globalMemorySize = 141ULL << 30;
      w.add(d);
    }
  });
  s.shutdown();
  const auto devices = only<ckpt_gpu_device_record>(receive_all(sp_.peer).messages);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].pci_bus, 0x18u);
  EXPECT_EQ(devices[1].pci_domain, kPciUnknown);
  EXPECT_EQ(devices[1].pci_bus, kPciUnknown);
  EXPECT_STREQ(devices[1].name, "NVIDIA H200");
}

}  // namespace
}  // namespace ckpt::cupti
