// The collector's side of libckptscope_cupti.so: messages laid out by
// cupti/gpu_copy_record.h, through a real SOCK_SEQPACKET socket and as raw
// datagrams: every field decoded, the device's PCI address attached, the
// libraries' drop counters summed across processes, a failed start reported,
// malformed input counted and skipped, never trusted.
#include "sources/gpu_copy_source.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "cupti/gpu_copy_record.h"
#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

static_assert(sizeof(ckpt_gpu_msg_header) == 16);
static_assert(sizeof(ckpt_gpu_copy_record) == 16 + 32 + 40);
static_assert(sizeof(ckpt_gpu_drops) == 16 + 40);
static_assert(sizeof(ckpt_gpu_hello) == 16 + 24 + 256);
static_assert(sizeof(ckpt_gpu_device_record) == 16 + 24 + 64 + 16);

struct Collect : EventSink {
  void on_event(Event&& e) override {
    if (auto* g = std::get_if<GpuCopyEvent>(&e)) copies.push_back(*g);
  }
  std::vector<GpuCopyEvent> copies;
};

template <typename M>
M message(uint32_t kind, uint32_t pid) {
  M m{};
  m.hdr.kind = kind;
  m.hdr.size = sizeof(M);
  m.hdr.pid = pid;
  m.hdr.version = CKPT_GPU_PROTOCOL_VERSION;
  return m;
}

ckpt_gpu_copy_record copy_record(uint32_t pid, uint64_t bytes) {
  auto r = message<ckpt_gpu_copy_record>(CKPT_GPU_MSG_COPY, pid);
  r.start_ns = 1000;
  r.end_ns = 3000;
  r.bytes = bytes;
  r.copy_count = 3;
  r.copy_kind = CKPT_GPU_COPY_DTOH;
  r.src_kind = CKPT_GPU_MEM_DEVICE;
  r.dst_kind = CKPT_GPU_MEM_PINNED;
  r.flags = CKPT_GPU_COPY_ASYNC;
  r.device_id = 1;
  r.src_device = 1;
  r.dst_device = 1;
  r.stream_id = 7;
  r.correlation_id = 99;
  return r;
}

template <typename... M>
std::string datagram(const M&... m) {
  std::string out;
  (out.append(reinterpret_cast<const char*>(&m), sizeof(m)), ...);
  return out;
}

class GpuCopySourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = GpuCopySource::listen(sink_, scratch_.path().string());
    ASSERT_TRUE(s) << s.error().message;
    source_ = std::move(*s);
  }
  void feed(const std::string& d) { source_->on_datagram(d.data(), d.size()); }
  uint64_t drop(const std::string& cause) {
    for (const auto& d : source_->drops())
      if (d.cause == cause) return d.count;
    return ~0ull;
  }
  test::ScratchDir scratch_;
  Collect sink_;
  std::unique_ptr<GpuCopySource> source_;
};

TEST_F(GpuCopySourceTest, EveryFieldOfACopyWithItsDevicesPciAddress) {
  auto dev = message<ckpt_gpu_device_record>(CKPT_GPU_MSG_DEVICE, 4242);
  dev.device_id = 1;
  dev.pci_domain = 0;
  dev.pci_bus = 0x3b;
  dev.pci_device = 0;
  std::strcpy(dev.name, "NVIDIA H200");
  feed(datagram(dev, copy_record(4242, 64 << 20)));
  ASSERT_EQ(sink_.copies.size(), 1u);
  const GpuCopyEvent& g = sink_.copies[0];
  EXPECT_EQ(g.tgid, 4242u);
  EXPECT_EQ(g.start_ns, 1000u);
  EXPECT_EQ(g.end_ns, 3000u);
  EXPECT_EQ(g.bytes, 64u << 20);
  EXPECT_EQ(g.copy_count, 3u);
  EXPECT_EQ(g.kind, GpuCopyKind::DtoH);
  EXPECT_EQ(g.src, GpuMemoryKind::Device);
  EXPECT_EQ(g.dst, GpuMemoryKind::Pinned);
  EXPECT_EQ(g.host_memory(), GpuMemoryKind::Pinned);
  EXPECT_TRUE(g.async);
  EXPECT_EQ(g.device_id, 1u);
  EXPECT_EQ(g.stream_id, 7u);
  EXPECT_EQ(g.pci_address, "0000:3b:00.0");
  EXPECT_EQ(source_->copies(), 1u);
}

TEST_F(GpuCopySourceTest, ThroughARealSocketFromTwoProcessesLibraries) {
  std::vector<int> fds;
  for (int i = 0; i < 2; ++i) {
    int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, source_->socket_path().c_str(), sizeof(a.sun_path) - 1);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0) << std::strerror(errno);
    fds.push_back(fd);
  }
  auto hello = message<ckpt_gpu_hello>(CKPT_GPU_MSG_HELLO, 10);
  hello.status = CKPT_GPU_OK;
  std::vector<GpuCopySource::ProcessStatus> said;
  source_->on_status([&](const GpuCopySource::ProcessStatus& st) { said.push_back(st); });
  auto taken = message<ckpt_gpu_hello>(CKPT_GPU_MSG_HELLO, 11);
  taken.status = CKPT_GPU_SUBSCRIBER_TAKEN;
  std::strcpy(taken.message, "another CUPTI subscriber (Nsight Systems?) holds it");
  const std::string a = datagram(hello, copy_record(10, 100), copy_record(10, 200));
  const std::string b = datagram(taken);
  ASSERT_EQ(send(fds[0], a.data(), a.size(), 0), static_cast<ssize_t>(a.size()));
  ASSERT_EQ(send(fds[1], b.data(), b.size(), 0), static_cast<ssize_t>(b.size()));
  auto drops10 = message<ckpt_gpu_drops>(CKPT_GPU_MSG_DROPS, 10);
  drops10.cupti_dropped = 5;
  drops10.send_dropped = 2;
  auto drops11 = message<ckpt_gpu_drops>(CKPT_GPU_MSG_DROPS, 11);
  drops11.cupti_dropped = 1;
  const std::string d10 = datagram(drops10), d11 = datagram(drops11);
  send(fds[0], d10.data(), d10.size(), 0);
  send(fds[1], d11.data(), d11.size(), 0);
  close(fds[0]);
  source_->poll(0);
  ASSERT_EQ(sink_.copies.size(), 2u);
  EXPECT_EQ(sink_.copies[0].bytes + sink_.copies[1].bytes, 300u);
  ASSERT_EQ(said.size(), 2u);
  EXPECT_TRUE(said[0].ok);
  EXPECT_FALSE(said[1].ok);
  EXPECT_EQ(said[1].pid, 11u);
  EXPECT_EQ(said[1].message, "another CUPTI subscriber (Nsight Systems?) holds it");
  // Cumulative per process, summed over processes; a later report replaces.
  EXPECT_EQ(drop("activity_dropped"), 6u);
  EXPECT_EQ(drop("send_dropped"), 2u);
  drops10.cupti_dropped = 7;
  const std::string again = datagram(drops10);
  send(fds[1], again.data(), again.size(), 0);  // any connection may carry any pid's
  source_->poll(0);
  EXPECT_EQ(drop("activity_dropped"), 8u);
  close(fds[1]);
  source_->poll(0);
}

TEST_F(GpuCopySourceTest, AnUnknownPciAddressAndAnUntimedCopyAreNotInvented) {
  auto dev = message<ckpt_gpu_device_record>(CKPT_GPU_MSG_DEVICE, 1);
  dev.device_id = 1;
  dev.pci_domain = dev.pci_bus = dev.pci_device = 0xffffffff;  // the library could not tell
  auto untimed = copy_record(1, 10);
  untimed.start_ns = untimed.end_ns = 0;
  feed(datagram(dev, untimed, copy_record(1, 20)));
  ASSERT_EQ(sink_.copies.size(), 1u);
  EXPECT_EQ(sink_.copies[0].bytes, 20u);
  EXPECT_EQ(sink_.copies[0].pci_address, "");  // "device 1" downstream, never ffffffff:...
  EXPECT_EQ(drop("untimed_copy"), 1u);
}

TEST_F(GpuCopySourceTest, MalformedInputIsCountedAndSkipped) {
  auto wrong_version = copy_record(1, 10);
  wrong_version.hdr.version = 99;
  auto wrong_size = copy_record(1, 10);
  wrong_size.hdr.size = sizeof(ckpt_gpu_copy_record) - 8;  // frames, but not a copy's size
  auto unknown_kind = copy_record(1, 10);
  unknown_kind.hdr.kind = 77;
  auto backwards = copy_record(1, 10);
  backwards.end_ns = 10;  // ends before it starts
  feed(datagram(wrong_version));
  feed(datagram(wrong_size).substr(0, sizeof(ckpt_gpu_copy_record) - 8));
  feed(datagram(unknown_kind));
  feed(datagram(backwards));
  feed(std::string("\x01\x02\x03", 3));  // shorter than a header
  auto overlong = copy_record(1, 10);
  overlong.hdr.size = 100000;  // says more than the datagram holds: the rest is skipped
  feed(datagram(overlong, copy_record(1, 10)));
  EXPECT_TRUE(sink_.copies.empty());
  EXPECT_EQ(drop("malformed_message"), 6u);
  // A good message after all that still decodes.
  feed(datagram(copy_record(1, 10)));
  EXPECT_EQ(sink_.copies.size(), 1u);
}

TEST_F(GpuCopySourceTest, TheSocketIsPrivateAndRemovedWithTheSource) {
  const std::string path = source_->socket_path();
  const auto dir = std::filesystem::path(path).parent_path();
  EXPECT_EQ(std::filesystem::status(dir).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
  source_.reset();
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace ckpt
