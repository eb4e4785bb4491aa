// The decoding of CUPTI activity records (cupti/activity.h): the pure
// translations field by field, and the completion handler's walk of real
// buffers with CUPTI's own cuptiActivityGetNextRecord (no GPU needed).
#include "activity.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cupti_test_support.h"

namespace ckpt::cupti {
namespace {

// The layouts the decoder reads, as the CUDA 13 headers define them.
static_assert(sizeof(CUpti_ActivityMemcpy6) == 96);
static_assert(offsetof(CUpti_ActivityMemcpy6, bytes) == 8);
static_assert(offsetof(CUpti_ActivityMemcpy6, copyCount) == 88);
static_assert(sizeof(CUpti_ActivityMemcpyPtoP4) == 96);
static_assert(sizeof(CUpti_ActivityDevice5) == 184);
static_assert(sizeof(CUpti_ActivityKernel10) == 216);
static_assert(alignof(CUpti_ActivityMemcpy6) == ACTIVITY_RECORD_ALIGNMENT);

CUpti_ActivityMemcpy6 memcpy_record(uint32_t correlation, uint64_t bytes,
                                    uint8_t copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
                                    uint8_t src = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                                    uint8_t dst = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE) {
  CUpti_ActivityMemcpy6 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  r.copyKind = copy_kind;
  r.srcKind = src;
  r.dstKind = dst;
  r.bytes = bytes;
  r.start = 1'000'000 + correlation * 10ULL;
  r.end = r.start + 5;
  r.deviceId = 0;
  r.contextId = 1;
  r.streamId = 7;
  r.correlationId = correlation;
  r.copyCount = 1;
  return r;
}

// Collects what the decoder emits.
struct VectorSink : RecordSink {
  std::vector<ckpt_gpu_copy_record> copies;
  std::vector<ckpt_gpu_device_record> devices;
  void on_copy(const ckpt_gpu_copy_record& r) override { copies.push_back(r); }
  void on_device(const ckpt_gpu_device_record& r) override { devices.push_back(r); }
};

TEST(TranslateMemcpy, EveryField) {
  CUpti_ActivityMemcpy6 a{};
  a.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  a.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  a.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  a.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  a.bytes = 1ULL << 33;  // 8 GiB: more than 32 bits
  a.start = 123'456'789'012ULL;
  a.end = 123'999'999'999ULL;
  a.deviceId = 3;
  a.contextId = 11;
  a.streamId = 13;
  a.correlationId = 4242;
  a.runtimeCorrelationId = 99;
  a.graphNodeId = 5;
  a.copyCount = 1;
  const ckpt_gpu_copy_record r = translate_memcpy(a, ClockConversion{});
  EXPECT_EQ(r.bytes, 1ULL << 33);
  EXPECT_EQ(r.start_ns, 123'456'789'012ULL);
  EXPECT_EQ(r.end_ns, 123'999'999'999ULL);
  EXPECT_EQ(r.copy_count, 1u);
  EXPECT_EQ(r.copy_kind, uint32_t{CKPT_GPU_COPY_DTOH});
  EXPECT_EQ(r.src_kind, uint32_t{CKPT_GPU_MEM_DEVICE});
  EXPECT_EQ(r.dst_kind, uint32_t{CKPT_GPU_MEM_PINNED});
  EXPECT_EQ(r.flags, uint32_t{CKPT_GPU_COPY_ASYNC});
  EXPECT_EQ(r.device_id, 3u);
  EXPECT_EQ(r.src_device, 3u);
  EXPECT_EQ(r.dst_device, 3u);
  EXPECT_EQ(r.context_id, 11u);
  EXPECT_EQ(r.stream_id, 13u);
  EXPECT_EQ(r.correlation_id, 4242u);
  EXPECT_EQ(r.hdr.kind, 0u);  // the channel fills the header

  a.flags = 0;
  EXPECT_EQ(translate_memcpy(a, ClockConversion{}).flags, 0u) << "a synchronous copy";
}

TEST(TranslateMemcpy, CopyKinds) {
  const std::pair<uint8_t, uint32_t> cases[] = {
      {CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, CKPT_GPU_COPY_UNKNOWN},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CKPT_GPU_COPY_HTOD},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CKPT_GPU_COPY_DTOH},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, CKPT_GPU_COPY_OTHER},
      {CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, CKPT_GPU_COPY_OTHER},
      {CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, CKPT_GPU_COPY_OTHER},
      {CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, CKPT_GPU_COPY_OTHER},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOA, CKPT_GPU_COPY_OTHER},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CKPT_GPU_COPY_DTOD},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, CKPT_GPU_COPY_HTOH},
      {CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, CKPT_GPU_COPY_PTOP},
      {200, CKPT_GPU_COPY_UNKNOWN},  // a kind a later CUPTI may add
  };
  for (const auto& [cupti, ours] : cases) {
    EXPECT_EQ(translate_copy_kind(cupti), ours) << "CUPTI copy kind " << int(cupti);
    CUpti_ActivityMemcpy6 a = memcpy_record(1, 8, cupti);
    EXPECT_EQ(translate_memcpy(a, ClockConversion{}).copy_kind, ours);
  }
}

TEST(TranslateMemcpy, MemoryKinds) {
  const std::pair<uint8_t, uint32_t> cases[] = {
      {CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN, CKPT_GPU_MEM_UNKNOWN},
      {CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, CKPT_GPU_MEM_PAGEABLE},
      {CUPTI_ACTIVITY_MEMORY_KIND_PINNED, CKPT_GPU_MEM_PINNED},
      {CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CKPT_GPU_MEM_DEVICE},
      {CUPTI_ACTIVITY_MEMORY_KIND_ARRAY, CKPT_GPU_MEM_ARRAY},
      {CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, CKPT_GPU_MEM_MANAGED},
      {CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC, CKPT_GPU_MEM_DEVICE},
      {CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC, CKPT_GPU_MEM_MANAGED},
      {77, CKPT_GPU_MEM_UNKNOWN},
  };
  for (const auto& [cupti, ours] : cases) {
    EXPECT_EQ(translate_memory_kind(cupti), ours) << "CUPTI memory kind " << int(cupti);
    // Source and destination are read from their own fields.
    CUpti_ActivityMemcpy6 a = memcpy_record(1, 8, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, cupti,
                                            CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    EXPECT_EQ(translate_memcpy(a, ClockConversion{}).src_kind, ours);
    EXPECT_EQ(translate_memcpy(a, ClockConversion{}).dst_kind, uint32_t{CKPT_GPU_MEM_DEVICE});
    a = memcpy_record(1, 8, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                      cupti);
    EXPECT_EQ(translate_memcpy(a, ClockConversion{}).dst_kind, ours);
  }
}

TEST(TranslateMemcpy, BatchedCopyCount) {
  CUpti_ActivityMemcpy6 a = memcpy_record(5, 64 << 20);
  a.copyCount = 128;  // one record for a cudaMemcpyBatchAsync of 128 copies
  EXPECT_EQ(translate_memcpy(a, ClockConversion{}).copy_count, 128u);
  EXPECT_EQ(translate_memcpy(a, ClockConversion{}).bytes, uint64_t{64} << 20);
  a.copyCount = 0;  // left unset by a driver: one copy
  EXPECT_EQ(translate_memcpy(a, ClockConversion{}).copy_count, 1u);
}

TEST(ClockConversion, CallbackModeLeavesTimestampsAlone) {
  ClockConversion c;
  c.mode = CKPT_GPU_CLOCK_CALLBACK;
  c.offset_ns = -5'000;  // ignored in this mode
  CUpti_ActivityMemcpy6 a = memcpy_record(1, 8);
  a.start = 1'000'000;
  a.end = 2'000'000;
  const auto r = translate_memcpy(a, c);
  EXPECT_EQ(r.start_ns, 1'000'000u);
  EXPECT_EQ(r.end_ns, 2'000'000u);
}

TEST(ClockConversion, OffsetModeShiftsBothEnds) {
  ClockConversion c;
  c.mode = CKPT_GPU_CLOCK_OFFSET;
  // CUPTI's default clock is CLOCK_REALTIME: ~1.8e18 ns, far above CLOCK_MONOTONIC.
  c.offset_ns = -1'700'000'000'000'000'000LL;
  CUpti_ActivityMemcpy6 a = memcpy_record(1, 8);
  a.start = 1'700'000'123'000'000'000ULL;
  a.end = 1'700'000'123'000'500'000ULL;
  auto r = translate_memcpy(a, c);
  EXPECT_EQ(r.start_ns, 123'000'000'000u);
  EXPECT_EQ(r.end_ns, 123'000'500'000u);
  c.offset_ns = 250;  // a positive offset too
  r = translate_memcpy(a, c);
  EXPECT_EQ(r.start_ns, 1'700'000'123'000'000'250ULL);
  // "A value of 0 for both the start and end timestamps indicates that
  // timestamp information could not be collected": it stays 0.
  a.start = 0;
  a.end = 0;
  r = translate_memcpy(a, c);
  EXPECT_EQ(r.start_ns, 0u);
  EXPECT_EQ(r.end_ns, 0u);
}

TEST(TranslatePeerCopy, SourceAndDestinationDevices) {
  CUpti_ActivityMemcpyPtoP4 a{};
  a.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  a.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  a.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  a.bytes = 1 << 30;
  a.start = 10;
  a.end = 20;
  a.deviceId = 1;
  a.contextId = 2;
  a.streamId = 3;
  a.srcDeviceId = 1;
  a.dstDeviceId = 6;
  a.correlationId = 77;
  const auto r = translate_peer_copy(a, ClockConversion{});
  EXPECT_EQ(r.copy_kind, uint32_t{CKPT_GPU_COPY_PTOP});
  EXPECT_EQ(r.bytes, 1u << 30);
  EXPECT_EQ(r.copy_count, 1u);
  EXPECT_EQ(r.src_kind, uint32_t{CKPT_GPU_MEM_DEVICE});
  EXPECT_EQ(r.dst_kind, uint32_t{CKPT_GPU_MEM_DEVICE});
  EXPECT_EQ(r.flags, uint32_t{CKPT_GPU_COPY_ASYNC});
  EXPECT_EQ(r.device_id, 1u);
  EXPECT_EQ(r.src_device, 1u);
  EXPECT_EQ(r.dst_device, 6u);
  EXPECT_EQ(r.context_id, 2u);
  EXPECT_EQ(r.stream_id, 3u);
  EXPECT_EQ(r.correlation_id, 77u);
  EXPECT_EQ(r.start_ns, 10u);
  EXPECT_EQ(r.end_ns, 20u);
}

CUpti_ActivityDevice5 device_record(uint32_t id, const char* name) {
  CUpti_ActivityDevice5 d{};
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = id;
  d.globalMemorySize = 141ULL << 30;
  for (int i = 0; i < 16; ++i) d.uuid.bytes[i] = static_cast<char>(0xa0 + i + id);
  d.name = name;
  return d;
}

TEST(TranslateDevice, FieldsAndPci) {
  const CUpti_ActivityDevice5 d = device_record(2, "NVIDIA H200");
  auto r = translate_device(d, PciAddress{0, 0x3b, 0});
  EXPECT_EQ(r.device_id, 2u);
  EXPECT_EQ(r.pci_domain, 0u);
  EXPECT_EQ(r.pci_bus, 0x3bu);
  EXPECT_EQ(r.pci_device, 0u);
  EXPECT_EQ(r.global_memory_bytes, 141ULL << 30);
  EXPECT_STREQ(r.name, "NVIDIA H200");
  EXPECT_EQ(std::memcmp(r.uuid, d.uuid.bytes, 16), 0);

  r = translate_device(d, std::nullopt);
  EXPECT_EQ(r.pci_domain, kPciUnknown);
  EXPECT_EQ(r.pci_bus, kPciUnknown);
  EXPECT_EQ(r.pci_device, kPciUnknown);

  const std::string long_name(100, 'x');
  r = translate_device(device_record(0, long_name.c_str()), std::nullopt);
  EXPECT_EQ(std::string(r.name), std::string(63, 'x')) << "cut, NUL-terminated";
  r = translate_device(device_record(0, nullptr), std::nullopt);
  EXPECT_STREQ(r.name, "");
}

TEST(GpuUuid, FormattedAsTheDriverWritesIt) {
  uint8_t u[16];
  for (int i = 0; i < 16; ++i) u[i] = static_cast<uint8_t>(i * 17);
  EXPECT_EQ(format_gpu_uuid(u), "GPU-00112233-4455-6677-8899-aabbccddeeff");
}

// A stand-in for /proc/driver/nvidia/gpus with two GPUs.
class ProcfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        std::filesystem::temp_directory_path() / ("ckpt-cupti-gpus-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    write("0000:18:00.0", "GPU-00112233-4455-6677-8899-aabbccddeeff", "0000:18:00.0");
    write("0000:9a:00.0", "GPU-FFEEDDCC-BBAA-9988-7766-554433221100", "0000:9a:00.0");
    write("0001:c3:00.0", "GPU-10101010-1010-1010-1010-101010101010", "");  // no Bus Location line
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void write(const std::string& dir, const std::string& uuid, const std::string& bus) {
    std::filesystem::create_directories(root_ / dir);
    std::ofstream f(root_ / dir / "information");
    // The driver's layout: "Key: \t value" lines.
    f << "Model: \t\t NVIDIA H200\nIRQ:   \t\t 123\nGPU UUID: \t " << uuid
      << "\nVideo BIOS: \t 96.00.af.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\n";
    if (!bus.empty()) f << "Bus Location: \t " << bus << "\n";
    f << "Device Minor: \t 0\nGPU Excluded:\t No\n";
  }
  std::filesystem::path root_;
};

TEST_F(ProcfsTest, FindsTheGpuByUuid) {
  uint8_t a[16], b[16], c[16], none[16];
  for (int i = 0; i < 16; ++i) {
    a[i] = static_cast<uint8_t>(i * 17);
    b[i] = static_cast<uint8_t>(0xff - i * 17);
    c[i] = 0x10;
    none[i] = 0x42;
  }
  auto p = pci_from_procfs(a, root_.string());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->domain, 0u);
  EXPECT_EQ(p->bus, 0x18u);
  EXPECT_EQ(p->device, 0u);
  p = pci_from_procfs(b, root_.string());  // upper-case UUID in the file
  ASSERT_TRUE(p);
  EXPECT_EQ(p->bus, 0x9au);
  p = pci_from_procfs(c, root_.string());  // the directory's name when the line is missing
  ASSERT_TRUE(p);
  EXPECT_EQ(p->domain, 1u);
  EXPECT_EQ(p->bus, 0xc3u);
  EXPECT_FALSE(pci_from_procfs(none, root_.string()));
  EXPECT_FALSE(pci_from_procfs(a, (root_ / "missing").string()));
}

TEST(PciFromDriver, NeverLoadsADriver) {
  // No libcuda.so.1 is mapped in this test process; the lookup must not map one.
  EXPECT_FALSE(pci_from_driver(0));
  EXPECT_EQ(::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD), nullptr);
}

// The completion handler on buffers walked by the real cuptiActivityGetNextRecord.
class DecoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    buffer_ = static_cast<uint8_t*>(std::aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, kSize));
    std::memset(buffer_, 0, kSize);
  }
  void TearDown() override { std::free(buffer_); }
  static constexpr size_t kSize = 1 << 20;
  uint8_t* buffer_ = nullptr;
  VectorSink sink_;
};

TEST_F(DecoderTest, MixedBufferDecodedInOrderUnknownKindsSkipped) {
  test::BufferWriter w(buffer_, kSize);
  ASSERT_TRUE(w.add(memcpy_record(1, 1000)));
  CUpti_ActivityKernel10 kernel{};
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  ASSERT_TRUE(w.add(kernel));
  CUpti_ActivityMemcpyPtoP4 peer{};
  peer.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  peer.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  peer.bytes = 2000;
  peer.srcDeviceId = 0;
  peer.dstDeviceId = 1;
  peer.correlationId = 2;
  ASSERT_TRUE(w.add(peer));
  const CUpti_ActivityDevice5 dev = device_record(0, "GPU zero");
  ASSERT_TRUE(w.add(dev));
  kernel.kind = CUPTI_ACTIVITY_KIND_KERNEL;
  ASSERT_TRUE(w.add(kernel));
  ASSERT_TRUE(
      w.add(memcpy_record(3, 3000, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
                          CUPTI_ACTIVITY_MEMORY_KIND_PINNED, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)));

  ActivityDecoder d(real_cupti(), sink_);
  d.set_pci_resolver([](const CUpti_ActivityDevice5&) { return PciAddress{0, 0x18, 0}; });
  d.on_buffer(nullptr, 0, buffer_, w.used());

  ASSERT_EQ(sink_.copies.size(), 3u);
  EXPECT_EQ(sink_.copies[0].bytes, 1000u);
  EXPECT_EQ(sink_.copies[0].copy_kind, uint32_t{CKPT_GPU_COPY_DTOH});
  EXPECT_EQ(sink_.copies[1].bytes, 2000u);
  EXPECT_EQ(sink_.copies[1].copy_kind, uint32_t{CKPT_GPU_COPY_PTOP});
  EXPECT_EQ(sink_.copies[1].dst_device, 1u);
  EXPECT_EQ(sink_.copies[2].bytes, 3000u);
  EXPECT_EQ(sink_.copies[2].copy_kind, uint32_t{CKPT_GPU_COPY_HTOD});
  EXPECT_EQ(sink_.copies[2].src_kind, uint32_t{CKPT_GPU_MEM_PINNED});
  ASSERT_EQ(sink_.devices.size(), 1u);
  EXPECT_STREQ(sink_.devices[0].name, "GPU zero");
  EXPECT_EQ(sink_.devices[0].pci_bus, 0x18u);
  EXPECT_EQ(d.copies(), 3u);
  EXPECT_EQ(d.devices(), 1u);
  EXPECT_EQ(d.unknown_records(), 2u) << "the two kernel records";
  EXPECT_EQ(d.truncated_buffers(), 0u);
  EXPECT_EQ(d.cupti_dropped(), 0u) << "CUPTI dropped nothing here";
}

TEST_F(DecoderTest, EmptyAndPartialBuffers) {
  ActivityDecoder d(real_cupti(), sink_);
  d.on_buffer(nullptr, 0, buffer_, 0);  // a flush with nothing in it
  d.on_buffer(nullptr, 0, nullptr, 0);
  EXPECT_TRUE(sink_.copies.empty());
  // Only the bytes CUPTI called valid are read.
  test::BufferWriter w(buffer_, kSize);
  for (uint32_t i = 1; i <= 5; ++i) ASSERT_TRUE(w.add(memcpy_record(i, i)));
  d.on_buffer(nullptr, 0, buffer_, 3 * sizeof(CUpti_ActivityMemcpy6));
  EXPECT_EQ(sink_.copies.size(), 3u);
}

TEST_F(DecoderTest, InvalidRecordStopsTheWalkCounted) {
  test::BufferWriter w(buffer_, kSize);
  ASSERT_TRUE(w.add(memcpy_record(1, 10)));
  CUpti_ActivityMemcpy6 invalid = memcpy_record(2, 20);
  invalid.kind = CUPTI_ACTIVITY_KIND_INVALID;
  ASSERT_TRUE(w.add(invalid));
  ASSERT_TRUE(w.add(memcpy_record(3, 30)));
  ActivityDecoder d(real_cupti(), sink_);
  d.on_buffer(nullptr, 0, buffer_, w.used());
  ASSERT_EQ(sink_.copies.size(), 1u);
  EXPECT_EQ(d.truncated_buffers(), 1u);
}

// cuptiActivityGetNumDroppedRecords reports what CUPTI could not record;
// on this machine it is always 0, so this table answers 7 and names the
// context and stream it was asked about.
size_t g_dropped_answer = 0;
std::vector<std::pair<CUcontext, uint32_t>> g_dropped_asked;
CUptiResult fake_dropped(CUcontext ctx, uint32_t stream, size_t* dropped) {
  g_dropped_asked.emplace_back(ctx, stream);
  *dropped = g_dropped_answer;
  return CUPTI_SUCCESS;
}

TEST_F(DecoderTest, CuptiDroppedCountsAddUpPerContextAndStream) {
  CuptiApi api = real_cupti();
  api.cuptiActivityGetNumDroppedRecords = fake_dropped;
  g_dropped_answer = 7;
  g_dropped_asked.clear();
  ActivityDecoder d(api, sink_);
  auto* ctx = reinterpret_cast<CUcontext>(0x1234);
  d.on_buffer(ctx, 5, buffer_, 0);
  d.on_buffer(nullptr, 0, buffer_, 0);
  EXPECT_EQ(d.cupti_dropped(), 14u);
  ASSERT_EQ(g_dropped_asked.size(), 2u);
  EXPECT_EQ(g_dropped_asked[0].first, ctx);
  EXPECT_EQ(g_dropped_asked[0].second, 5u);
  // And the real call answers on this machine (no driver needed).
  size_t real = 99;
  EXPECT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &real), CUPTI_SUCCESS);
  EXPECT_EQ(real, 0u);
}

}  // namespace
}  // namespace ckpt::cupti
