// Command-line values of ckptscope-workload, parsed and validated here so
// that unit tests can check every rule without running the program. Every
// error message starts with the flag it is about ("--shards: ...") and main
// prefixes the program name and exits 2.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace ckpt::workload {

enum class Mode { Save, Load, Both };
enum class Format { Pt, Safetensors, Distcp };

std::string_view to_string(Mode mode);
std::string_view to_string(Format format);

struct Endpoint {
  std::string host;  // as given, without IPv6 brackets
  uint16_t port = 0;

  [[nodiscard]] std::string to_string() const;  // "host:port" or "[v6]:port"
};

// "4096", "64K", "64KiB", "16M", "16MiB", "1G", "1GiB", "1T", "1TiB" (binary
// units, suffix case-insensitive, optional "B" for plain bytes).
Expected<uint64_t> parse_size(std::string_view flag, std::string_view text);
// Comma-separated sizes, at least one.
Expected<std::vector<uint64_t>> parse_size_list(std::string_view flag, std::string_view text);
// A decimal integer in [min, max].
Expected<uint64_t> parse_count(std::string_view flag, std::string_view text, uint64_t min,
                               uint64_t max);
// "host:port" or "[v6addr]:port"; port 0 only where the caller binds.
Expected<Endpoint> parse_endpoint(std::string_view flag, std::string_view text,
                                  bool allow_port_zero);
// "TERM", "SIGTERM", "term" or a number; only signals that end a process by
// default, since the point is to test how a profiler reports such a death.
Expected<int> parse_signal(std::string_view flag, std::string_view text);
Expected<Mode> parse_mode(std::string_view flag, std::string_view text);
Expected<Format> parse_format(std::string_view flag, std::string_view text);

// "TERM" for SIGTERM, the number as text for signals without a name.
std::string signal_name(int sig);

// shard-<i>.pt, shard-<i>.safetensors or __<i>_0.distcp (PyTorch DCP naming).
std::string shard_file_name(Format format, uint32_t shard);

// What the command line held, as text; an empty string means "not given".
struct RawOptions {
  std::string dir;
  std::string shards;
  std::string shard_size;
  std::string shard_sizes;
  std::string checkpoints;
  std::string mode;
  std::string block_size;
  std::string gap_ms;
  std::string serialize_ms;
  std::string processes;
  std::string threads;
  std::string tcp_sink;
  std::string format;
  std::string ground_truth;
  std::string seed;
  std::string exit_code;
  std::string exit_signal;
  std::string sleep_ms;
  std::string buffered_checkpoints;
  std::string cold_checkpoints;
  bool fsync = false;
  bool o_direct = false;
  bool rename_commit = false;
  bool tcp_only = false;
  bool quiet = false;
};

inline constexpr uint32_t kDefaultShards = 4;
inline constexpr uint64_t kDefaultShardSize = 16ULL << 20;
inline constexpr uint32_t kDefaultCheckpoints = 3;
inline constexpr uint64_t kDefaultBlockSize = 1ULL << 20;
inline constexpr uint64_t kDefaultGapMs = 1500;
inline constexpr uint64_t kDefaultSeed = 1;
inline constexpr uint64_t kMaxBlockSize = 1ULL << 30;
inline constexpr uint64_t kDirectAlign = 4096;

struct Options {
  std::string dir;                    // empty only with tcp_only
  std::vector<uint64_t> shard_sizes;  // one entry per shard
  uint32_t checkpoints = kDefaultCheckpoints;
  Mode mode = Mode::Both;
  Format format = Format::Pt;
  uint64_t block_size = kDefaultBlockSize;
  uint64_t gap_ms = kDefaultGapMs;
  uint64_t serialize_ms = 0;
  uint32_t processes = 1;
  uint32_t threads = 1;
  std::optional<Endpoint> tcp_sink;
  bool tcp_only = false;
  bool fsync = false;
  bool o_direct = false;
  bool rename_commit = false;
  bool quiet = false;
  std::string ground_truth;  // empty: none
  uint64_t seed = kDefaultSeed;
  std::optional<int> exit_code;
  std::optional<int> exit_signal;
  uint64_t sleep_ms = 0;
  // Checkpoints (1-based) saved without fsync even with --fsync, and those
  // whose shards leave the page cache (posix_fadvise DONTNEED, between two
  // quiet gaps of their own) before they are loaded.
  std::set<uint32_t> buffered_checkpoints;
  std::set<uint32_t> cold_checkpoints;

  [[nodiscard]] bool fsyncs(uint32_t checkpoint) const {
    return fsync && !buffered_checkpoints.contains(checkpoint);
  }
  [[nodiscard]] uint32_t shards() const { return static_cast<uint32_t>(shard_sizes.size()); }
  [[nodiscard]] bool saves() const { return mode != Mode::Load; }
  [[nodiscard]] bool loads() const { return mode != Mode::Save; }
};

Expected<Options> resolve_options(const RawOptions& raw);

struct RawSinkOptions {
  std::string listen;
  std::string expect_bytes;
  std::string ready_file;
};

struct SinkOptions {
  Endpoint listen;
  std::optional<uint64_t> expect_bytes;
  std::string ready_file;  // empty: none
};

Expected<SinkOptions> resolve_sink_options(const RawSinkOptions& raw);

}  // namespace ckpt::workload
