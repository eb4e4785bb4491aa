// Option parsing, content pattern and checksum of ckptscope-workload.
//
// Built into workload_tests by tools/workload/CMakeLists.txt. tests/CMakeLists.txt
// globs every unit/*_test.cpp into unit_tests too, which does not link the
// workload library, so the body compiles only where CKPTSCOPE_WORKLOAD_TESTS
// is defined.
#ifdef CKPTSCOPE_WORKLOAD_TESTS

#include <gtest/gtest.h>

#include <csignal>
#include <cstddef>
#include <string>
#include <vector>

#include "tools/workload/options.h"
#include "tools/workload/pattern.h"

namespace ckpt::workload {
namespace {

// The message of a failed parse; fails the test if the parse succeeded.
template <typename T>
std::string error_of(const Expected<T>& result) {
  EXPECT_FALSE(result.has_value());
  return result.has_value() ? std::string() : result.error().message;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(WorkloadSizeTest, ParsesBinaryUnits) {
  const std::vector<std::pair<std::string, uint64_t>> cases = {
      {"0", 0},
      {"4096", 4096},
      {"4096B", 4096},
      {"64K", 64ULL << 10},
      {"64KiB", 64ULL << 10},
      {"64k", 64ULL << 10},
      {"16M", 16ULL << 20},
      {"16MiB", 16ULL << 20},
      {"1G", 1ULL << 30},
      {"1GiB", 1ULL << 30},
      {"2T", 2ULL << 40},
      {"1000001", 1000001},
      {"18446744073709551615", 18446744073709551615ULL},
  };
  for (const auto& [text, bytes] : cases) {
    const auto parsed = parse_size("--shard-size", text);
    ASSERT_TRUE(parsed.has_value()) << text << ": " << parsed.error().message;
    EXPECT_EQ(*parsed, bytes) << text;
  }
}

TEST(WorkloadSizeTest, RejectsBadSizesNamingTheFlag) {
  for (const std::string text :
       {"", "abc", "12X", "-1", "1.5G", "K", " 4096", "4096 ", "1e6", "0x10", "16Mi", "64KBs"}) {
    const std::string message = error_of(parse_size("--shard-size", text));
    EXPECT_TRUE(starts_with(message, "--shard-size: ")) << text << " -> " << message;
  }
  EXPECT_TRUE(contains(error_of(parse_size("--block-size", "12X")), "unknown unit 'X'"));
  EXPECT_TRUE(contains(error_of(parse_size("--block-size", "64KB")), "use 64K or 64KiB"));
  EXPECT_TRUE(contains(error_of(parse_size("--shard-size", "20000000000G")), "too large"));
  EXPECT_TRUE(contains(error_of(parse_size("--shard-size", "18446744073709551616")), "too large"));
}

TEST(WorkloadSizeTest, ParsesLists) {
  const auto sizes = parse_size_list("--shard-sizes", "1000001,4K,1MiB");
  ASSERT_TRUE(sizes.has_value());
  EXPECT_EQ(*sizes, (std::vector<uint64_t>{1000001, 4096, 1 << 20}));
  const std::string message = error_of(parse_size_list("--shard-sizes", "1M,,4K"));
  EXPECT_TRUE(starts_with(message, "--shard-sizes: ")) << message;
  EXPECT_TRUE(contains(message, "item 2")) << message;
  EXPECT_FALSE(parse_size_list("--shard-sizes", "").has_value());
  EXPECT_FALSE(parse_size_list("--shard-sizes", "1M,").has_value());
}

TEST(WorkloadCountTest, ChecksRange) {
  EXPECT_EQ(*parse_count("--shards", "3", 1, 10), 3u);
  EXPECT_TRUE(contains(error_of(parse_count("--shards", "0", 1, 10)), "must be at least 1"));
  EXPECT_TRUE(contains(error_of(parse_count("--shards", "11", 1, 10)), "at most 10"));
  EXPECT_TRUE(starts_with(error_of(parse_count("--gap-ms", "-5", 0, 10)), "--gap-ms: "));
  EXPECT_TRUE(starts_with(error_of(parse_count("--gap-ms", "1.5", 0, 10)), "--gap-ms: "));
  EXPECT_TRUE(contains(error_of(parse_count("--seed", "99999999999999999999", 0, UINT64_MAX)),
                       "too large"));
}

TEST(WorkloadEndpointTest, ParsesHostPort) {
  auto v4 = parse_endpoint("--tcp-sink", "127.0.0.1:9000", false);
  ASSERT_TRUE(v4.has_value());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9000);
  EXPECT_EQ(v4->to_string(), "127.0.0.1:9000");
  auto v6 = parse_endpoint("--tcp-sink", "[::1]:80", false);
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->to_string(), "[::1]:80");
  EXPECT_TRUE(parse_endpoint("--listen", "localhost:0", true).has_value());
  for (const std::string text :
       {"nohost", ":80", "h:", "h:70000", "h:0", "::1:80", "[::1]80", "h:x"}) {
    const std::string message = error_of(parse_endpoint("--tcp-sink", text, false));
    EXPECT_TRUE(starts_with(message, "--tcp-sink: ")) << text << " -> " << message;
  }
}

TEST(WorkloadSignalTest, ParsesNamesAndNumbers) {
  EXPECT_EQ(*parse_signal("--exit-signal", "TERM"), SIGTERM);
  EXPECT_EQ(*parse_signal("--exit-signal", "SIGKILL"), SIGKILL);
  EXPECT_EQ(*parse_signal("--exit-signal", "segv"), SIGSEGV);
  EXPECT_EQ(*parse_signal("--exit-signal", "11"), SIGSEGV);
  EXPECT_EQ(*parse_signal("--exit-signal", "ABRT"), SIGABRT);
  EXPECT_EQ(*parse_signal("--exit-signal", std::to_string(SIGRTMIN)), SIGRTMIN);
  EXPECT_EQ(signal_name(SIGTERM), "TERM");
  for (const std::string text :
       {"", "FOO", "0", "32", "999", "STOP", "TSTP", "CHLD", "WINCH", "-9"}) {
    const std::string message = error_of(parse_signal("--exit-signal", text));
    EXPECT_TRUE(starts_with(message, "--exit-signal: ")) << text << " -> " << message;
  }
}

RawOptions minimal() {
  RawOptions raw;
  raw.dir = "/tmp/ckpt";
  return raw;
}

TEST(WorkloadOptionsTest, AppliesDefaults) {
  const auto options = resolve_options(minimal());
  ASSERT_TRUE(options.has_value()) << options.error().message;
  EXPECT_EQ(options->shards(), kDefaultShards);
  EXPECT_EQ(options->shard_sizes, std::vector<uint64_t>(kDefaultShards, kDefaultShardSize));
  EXPECT_EQ(options->checkpoints, kDefaultCheckpoints);
  EXPECT_EQ(options->mode, Mode::Both);
  EXPECT_EQ(options->format, Format::Pt);
  EXPECT_EQ(options->block_size, 1u << 20);
  EXPECT_EQ(options->gap_ms, 1500u);
  EXPECT_EQ(options->processes, 1u);
  EXPECT_EQ(options->threads, 1u);
  EXPECT_FALSE(options->exit_code.has_value());
  EXPECT_FALSE(options->exit_signal.has_value());
}

TEST(WorkloadOptionsTest, TakesShardSizesList) {
  RawOptions raw = minimal();
  raw.shard_sizes = "1000001,4097,64K";
  raw.shards = "3";
  const auto options = resolve_options(raw);
  ASSERT_TRUE(options.has_value()) << options.error().message;
  EXPECT_EQ(options->shard_sizes, (std::vector<uint64_t>{1000001, 4097, 65536}));
}

TEST(WorkloadOptionsTest, TcpOnlyDefaultsToSave) {
  RawOptions raw;
  raw.tcp_sink = "127.0.0.1:9";
  raw.tcp_only = true;
  const auto options = resolve_options(raw);
  ASSERT_TRUE(options.has_value()) << options.error().message;
  EXPECT_EQ(options->mode, Mode::Save);
  EXPECT_TRUE(options->dir.empty());
}

// Each case: a change to the minimal options, and the start of the message.
TEST(WorkloadOptionsTest, RejectsInconsistentOptions) {
  struct Case {
    void (*change)(RawOptions&);
    std::string prefix;
  };
  const std::vector<Case> cases = {
      {[](RawOptions& r) { r.shards = "0"; }, "--shards: must be at least 1"},
      {[](RawOptions& r) { r.shards = "many"; }, "--shards: "},
      {[](RawOptions& r) { r.checkpoints = "0"; }, "--checkpoints: "},
      {[](RawOptions& r) { r.shard_size = "12X"; }, "--shard-size: "},
      {[](RawOptions& r) { r.block_size = "0"; }, "--block-size: must not be 0"},
      {[](RawOptions& r) { r.block_size = "2G"; }, "--block-size: "},
      {[](RawOptions& r) {
         r.o_direct = true;
         r.block_size = "1000";
       },
       "--block-size: 1000 is not a multiple of 4096"},
      {[](RawOptions& r) {
         r.shard_size = "1M";
         r.shard_sizes = "1M,2M";
       },
       "--shard-sizes: cannot be combined"},
      {[](RawOptions& r) {
         r.shards = "3";
         r.shard_sizes = "1M,2M";
       },
       "--shards: 3 does not match"},
      {[](RawOptions& r) {
         r.shards = "2";
         r.processes = "3";
       },
       "--processes: "},
      {[](RawOptions& r) { r.threads = "0"; }, "--threads: "},
      {[](RawOptions& r) { r.mode = "write"; }, "--mode: "},
      {[](RawOptions& r) { r.format = "ckpt"; }, "--format: "},
      {[](RawOptions& r) { r.tcp_sink = "nowhere"; }, "--tcp-sink: "},
      {[](RawOptions& r) { r.tcp_only = true; }, "--tcp-only: needs --tcp-sink"},
      {[](RawOptions& r) {
         r.tcp_only = true;
         r.tcp_sink = "127.0.0.1:9";
         r.mode = "both";
       },
       "--mode: "},
      {[](RawOptions& r) {
         r.tcp_only = true;
         r.tcp_sink = "127.0.0.1:9";
         r.fsync = true;
       },
       "--fsync: "},
      {[](RawOptions& r) { r.dir.clear(); }, "--dir: required"},
      {[](RawOptions& r) { r.exit_code = "256"; }, "--exit-code: "},
      {[](RawOptions& r) {
         r.exit_code = "3";
         r.exit_signal = "TERM";
       },
       "--exit-code: cannot be combined"},
      {[](RawOptions& r) { r.exit_signal = "STOP"; }, "--exit-signal: "},
      {[](RawOptions& r) { r.sleep_ms = "soon"; }, "--sleep-ms: "},
      {[](RawOptions& r) { r.serialize_ms = "-1"; }, "--serialize-ms: "},
      {[](RawOptions& r) { r.gap_ms = "1s"; }, "--gap-ms: "},
      {[](RawOptions& r) { r.seed = "x"; }, "--seed: "},
      {[](RawOptions& r) { r.buffered_checkpoints = "1"; },
       "--buffered-checkpoints: needs --fsync"},
      {[](RawOptions& r) {
         r.fsync = true;
         r.buffered_checkpoints = "1,9";
       },
       "--buffered-checkpoints: "},
      {[](RawOptions& r) { r.cold_checkpoints = "0"; }, "--cold-checkpoints: "},
      {[](RawOptions& r) {
         r.cold_checkpoints = "1";
         r.mode = "save";
       },
       "--cold-checkpoints: --mode save loads nothing"},
  };
  for (const auto& c : cases) {
    RawOptions raw = minimal();
    c.change(raw);
    const std::string message = error_of(resolve_options(raw));
    EXPECT_TRUE(starts_with(message, c.prefix))
        << "want '" << c.prefix << "', got '" << message << "'";
  }
}

// The demo's cases: the last save without fsync, the first load cold.
TEST(WorkloadOptionsTest, BufferedAndColdCheckpoints) {
  RawOptions raw = minimal();
  raw.checkpoints = "3";
  raw.fsync = true;
  raw.buffered_checkpoints = "3";
  raw.cold_checkpoints = "1,2";
  auto o = resolve_options(raw);
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_TRUE(o->fsyncs(1));
  EXPECT_TRUE(o->fsyncs(2));
  EXPECT_FALSE(o->fsyncs(3));
  EXPECT_EQ(o->cold_checkpoints, (std::set<uint32_t>{1, 2}));
  raw.fsync = false;
  raw.buffered_checkpoints.clear();
  o = resolve_options(raw);
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->fsyncs(1)) << "no --fsync: every save buffered";
}

TEST(WorkloadOptionsTest, SinkOptions) {
  RawSinkOptions raw;
  EXPECT_TRUE(starts_with(error_of(resolve_sink_options(raw)), "--listen: required"));
  raw.listen = "127.0.0.1:0";
  raw.expect_bytes = "3M";
  const auto options = resolve_sink_options(raw);
  ASSERT_TRUE(options.has_value()) << options.error().message;
  EXPECT_EQ(options->listen.port, 0);
  EXPECT_EQ(options->expect_bytes, 3u << 20);
  raw.expect_bytes = "lots";
  EXPECT_TRUE(starts_with(error_of(resolve_sink_options(raw)), "--expect-bytes: "));
}

TEST(WorkloadOptionsTest, ShardFileNames) {
  EXPECT_EQ(shard_file_name(Format::Pt, 3), "shard-3.pt");
  EXPECT_EQ(shard_file_name(Format::Safetensors, 0), "shard-0.safetensors");
  EXPECT_EQ(shard_file_name(Format::Distcp, 7), "__7_0.distcp");
}

std::vector<std::byte> pattern(uint64_t key, uint64_t offset, size_t n) {
  std::vector<std::byte> out(n);
  fill_pattern(key, offset, out);
  return out;
}

TEST(WorkloadPatternTest, AnyOffsetGivesTheSameStream) {
  const uint64_t key = shard_key(1, 2, 3);
  const auto whole = pattern(key, 0, 1000);
  // Odd pieces, as an odd block size or a short write would produce.
  for (const size_t piece : {1, 3, 7, 8, 13, 999}) {
    std::vector<std::byte> stitched;
    for (size_t offset = 0; offset < whole.size(); offset += piece) {
      const auto part = pattern(key, offset, std::min(piece, whole.size() - offset));
      stitched.insert(stitched.end(), part.begin(), part.end());
    }
    EXPECT_EQ(stitched, whole) << "piece " << piece;
  }
}

TEST(WorkloadPatternTest, StreamsDifferBySeedCheckpointAndShard) {
  const auto base = pattern(shard_key(1, 1, 0), 0, 64);
  EXPECT_NE(pattern(shard_key(2, 1, 0), 0, 64), base);
  EXPECT_NE(pattern(shard_key(1, 2, 0), 0, 64), base);
  EXPECT_NE(pattern(shard_key(1, 1, 1), 0, 64), base);
  EXPECT_EQ(pattern(shard_key(1, 1, 0), 0, 64), base);
}

TEST(WorkloadChecksumTest, IndependentOfHowBytesAreSplit) {
  const auto data = pattern(shard_key(7, 1, 1), 0, 100003);
  Checksum whole;
  whole.update(data);
  for (const size_t piece : {1, 5, 8, 4096, 65536}) {
    Checksum split;
    for (size_t offset = 0; offset < data.size(); offset += piece) {
      split.update(std::span(data).subspan(offset, std::min(piece, data.size() - offset)));
    }
    EXPECT_EQ(split.digest(), whole.digest()) << "piece " << piece;
  }
}

TEST(WorkloadChecksumTest, SeesChangesAndLength) {
  auto data = pattern(shard_key(7, 1, 1), 0, 4097);
  Checksum a;
  a.update(data);
  data[4000] ^= std::byte{1};
  Checksum b;
  b.update(data);
  EXPECT_NE(a.digest(), b.digest());
  data.push_back(std::byte{0});
  Checksum c;
  c.update(data);
  EXPECT_NE(b.digest(), c.digest());
  EXPECT_NE(Checksum().digest(), c.digest());
}

TEST(WorkloadPatternTest, BurnsThreadCpuTime) {
  std::vector<std::byte> scratch(65536);
  EXPECT_EQ(burn_cpu(0, 1, scratch), 0u);
  EXPECT_GE(burn_cpu(20, 1, scratch), 20'000'000u);
}

}  // namespace
}  // namespace ckpt::workload

#endif  // CKPTSCOPE_WORKLOAD_TESTS
