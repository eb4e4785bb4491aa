// Activity buffers (cupti/buffers.h): aligned, bounded, reused, and the
// environment's settings validated.
#include "buffers.h"

#include <gtest/gtest.h>

#include <cupti.h>

#include <set>
#include <vector>

namespace ckpt::cupti {
namespace {

TEST(BufferPool, DefaultsAreSixteenBuffersOfFourMiB) {
  const BufferConfig c;
  EXPECT_EQ(c.buffer_bytes, size_t{4} << 20);
  EXPECT_EQ(c.max_buffers, 16u);
}

TEST(BufferPool, BuffersAreAlignedAsCuptiRequires) {
  BufferPool pool(BufferConfig{});
  std::set<uint8_t*> seen;
  for (int i = 0; i < 16; ++i) {
    const auto b = pool.acquire();
    ASSERT_NE(b.data, nullptr);
    EXPECT_EQ(b.size, size_t{4} << 20);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data) % ACTIVITY_RECORD_ALIGNMENT, 0u);
    EXPECT_TRUE(seen.insert(b.data).second) << "each outstanding buffer is distinct";
  }
  for (uint8_t* b : seen) pool.release(b);
}

TEST(BufferPool, PastTheCapCuptiGetsNoBufferCounted) {
  BufferConfig c;
  c.max_buffers = 3;
  c.buffer_bytes = 1 << 20;
  BufferPool pool(c);
  std::vector<uint8_t*> held;
  held.reserve(3);
  for (int i = 0; i < 3; ++i) held.push_back(pool.acquire().data);
  const auto refused = pool.acquire();
  EXPECT_EQ(refused.data, nullptr);
  EXPECT_EQ(refused.size, 0u);
  EXPECT_EQ(pool.refused(), 1u);
  EXPECT_EQ(pool.acquire().data, nullptr);
  EXPECT_EQ(pool.refused(), 2u);
  EXPECT_EQ(pool.outstanding(), 3u);
  // One comes back: it is handed out again, and no new one is allocated.
  pool.release(held[1]);
  EXPECT_EQ(pool.outstanding(), 2u);
  const auto again = pool.acquire();
  EXPECT_EQ(again.data, held[1]);
  EXPECT_EQ(pool.allocated(), 3u);
  EXPECT_EQ(pool.refused(), 2u);
  for (uint8_t* b : held) pool.release(b);
  EXPECT_EQ(pool.outstanding(), 0u);
}

TEST(BufferPool, SequentialUseNeedsOneBuffer) {
  BufferPool pool(BufferConfig{});
  for (int i = 0; i < 100; ++i) {
    const auto b = pool.acquire();
    ASSERT_NE(b.data, nullptr);
    pool.release(b.data);
  }
  EXPECT_EQ(pool.allocated(), 1u);
  EXPECT_EQ(pool.refused(), 0u);
}

TEST(BufferPool, ForeignAndDoubleReleasesAreIgnored) {
  BufferPool pool(BufferConfig{});
  alignas(8) static uint8_t not_ours[64];
  pool.release(not_ours);
  const auto b = pool.acquire();
  pool.release(b.data);
  pool.release(b.data);
  pool.release(nullptr);  // a completion for a refused request
  EXPECT_EQ(pool.foreign(), 2u);
  EXPECT_EQ(pool.outstanding(), 0u);
}

TEST(BufferConfig, EnvironmentValues) {
  auto r = parse_buffer_config(nullptr, nullptr);
  EXPECT_TRUE(r.error.empty());
  EXPECT_EQ(r.config.max_buffers, 16u);
  EXPECT_EQ(r.config.buffer_bytes, size_t{4} << 20);

  r = parse_buffer_config("64", "8");
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.config.max_buffers, 64u);
  EXPECT_EQ(r.config.buffer_bytes, size_t{8} << 20);

  r = parse_buffer_config("1", "1");
  EXPECT_TRUE(r.error.empty());
  EXPECT_EQ(r.config.max_buffers, 1u);
  EXPECT_EQ(r.config.buffer_bytes, size_t{1} << 20);
}

TEST(BufferConfig, RefusedValuesNamedDefaultsKept) {
  for (const char* bad :
       {"0", "-1", "abc", "3x", "", " 4", "4 ", "+4", "0x10", "1025", "99999999999999999999999"}) {
    const auto r = parse_buffer_config(bad, "2");
    EXPECT_NE(r.error.find("CKPTSCOPE_CUPTI_BUFFERS=\"" + std::string(bad) + "\""),
              std::string::npos)
        << bad << ": " << r.error;
    EXPECT_EQ(r.config.max_buffers, 16u) << bad;
    EXPECT_EQ(r.config.buffer_bytes, size_t{2} << 20) << "the valid one is kept";
  }
  for (const char* bad : {"0", "257", "1.5", "4MiB"}) {
    const auto r = parse_buffer_config(nullptr, bad);
    EXPECT_NE(r.error.find("CKPTSCOPE_CUPTI_BUFFER_MIB"), std::string::npos) << bad;
    EXPECT_EQ(r.config.buffer_bytes, size_t{4} << 20) << bad;
  }
  // Each in range, together too much: both fall back.
  const auto r = parse_buffer_config("1024", "256");
  EXPECT_NE(r.error.find("more than 1024 MiB"), std::string::npos) << r.error;
  EXPECT_EQ(r.config.max_buffers, 16u);
  EXPECT_EQ(r.config.buffer_bytes, size_t{4} << 20);
}

}  // namespace
}  // namespace ckpt::cupti
