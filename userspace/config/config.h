// The collector's configuration: which files are checkpoints, how bursts are
// closed, which TCP peers are storage servers, and the stages' maxima.
// Loaded from a JSON file; every bad value is rejected with its field named.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/expected.h"
#include "files/input_file.h"

namespace ckpt {

struct CheckpointRules {
  // Two kinds of names (docs/frameworks.md has the layouts they come from):
  // a file whose own name says checkpoint (name_globs: `ckpt.pt`,
  // `*.safetensors`) is one anywhere; a generic name (file_globs: `*.pt`,
  // `*.bin`, and extensionless files when extensionless_files is set) is one
  // only under a checkpoint directory: a directory of the path matching one of
  // dir_globs. A dir_globs entry with a '/' is an absolute path prefix (which
  // may hold globs) instead of a directory name. An empty dir_globs lets
  // file_globs match anywhere (extensionless files still need a directory).
  // A path whose name or any directory matches exclude_globs (source,
  // bytecode, installed packages, the Hugging Face hub cache) is never one.
  std::vector<std::string> name_globs;
  std::vector<std::string> file_globs;
  std::vector<std::string> dir_globs;
  std::vector<std::string> exclude_globs;
  // Temporary names (`model.safetensors.tmp`, rsync's `.shard.pt.Ab3xYz`, a
  // `tmp-*` directory): a file whose name or one of whose directories
  // matches, and that is no checkpoint file by the rules above, may become one
  // by a rename (the write-then-rename commit of Orbax, TensorFlow, DCP's
  // metadata, safetensors' and rsync's saves). Its calls are recorded and held
  // until a rename decides: into a checkpoint's name, they join that
  // checkpoint whole; otherwise they are unrecognised I/O (docs/stitching.md,
  // "Decided late").
  std::vector<std::string> temporary_globs;
  bool extensionless_files = false;  // Orbax `d/<hex>`, DeepSpeed `latest`
  uint64_t quiet_gap_ns = 0;         // a burst ends after this long without checkpoint I/O
  uint64_t stall_ns = 0;             // a checkpoint with no progress this long is flagged
  // A call in flight holds its checkpoint open at most this long after it
  // started (at least stall_ns): then the checkpoint ends without it, its
  // stall said, and its record, if it ever comes, starts no checkpoint.
  uint64_t in_flight_limit_ns = 0;
  // The summary, table and report name the largest unrecognised files when
  // the job moved more than this through files no pattern recognised.
  uint64_t unrecognised_notice_bytes = 16ull << 20;
};

struct StorageEndpoint {
  std::string host;  // "" = any address
  uint16_t port = 0;
  friend bool operator==(const StorageEndpoint&, const StorageEndpoint&) = default;
};

// Stage maxima in bytes per second; absent = discover or leave unknown.
struct ConfiguredMaxima {
  std::optional<double> storage_read_Bps;
  std::optional<double> storage_write_Bps;
  std::optional<double> serialize_Bps;
  std::optional<double> transport_Bps;
  // The gpu_copy stage's maxima, device to host (saves) and host to device
  // (loads), as `ckptscope calibrate` measures them.
  std::optional<double> gpu_d2h_Bps;
  std::optional<double> gpu_h2d_Bps;
};

struct FailureThresholds {
  uint64_t retransmit_storm_per_s = 50;   // retransmits per second on one connection
  uint64_t zero_window_ns = 100'000'000;  // zero-window time inside a checkpoint
};

struct Config {
  CheckpointRules checkpoint;
  std::vector<StorageEndpoint> storage_endpoints;
  ConfiguredMaxima maxima;
  FailureThresholds failures;
  uint64_t tcp_sample_interval_ns = 10'000'000;
  uint32_t ringbuf_bytes = 16u << 20;
  // `run`'s durable job logs go here (created if missing); "" = the current directory.
  std::string log_dir;
  // The "notify" section as JSON text ("" = absent); `run --notify` validates
  // it (userspace/notify/notify.h, docs/notify.md).
  std::string notify_json;
  std::string source = "built-in defaults";  // where it came from, for messages

  static Config defaults();
  [[nodiscard]] nlohmann::json to_json() const;
};

// A config file is a few KiB (the largest shipped is under 2 KiB); 16 MiB is
// thousands of times that, and far less than a mistaken input would be.
inline constexpr InputLimit kConfigFileLimit{16u << 20, "a config file is a few KiB", true};

// `origin` names the input in error messages (a file path, "--config").
Expected<Config> parse_config(const std::string& text, const std::string& origin);
// At most kConfigFileLimit of it (files/input_file.h).
Expected<Config> load_config(const std::string& path);

// Every bandwidth ckptscope is given (a flag, the config) lies in
// [kMinBandwidthBps, kMaxBandwidthBps]. The fastest parallel file systems
// serve a few TB/s in all and a node's links move hundreds of GB/s: a
// maximum above 1 PB/s, or below 1 B/s, is a typo (a unit off by 1e9), and
// would make every fraction of the maximum 0 or every forecast endless.
inline constexpr double kMinBandwidthBps = 1;
inline constexpr double kMaxBandwidthBps = 1e15;

// "700GB/s", "250 GiB/s", "100Gbit/s", "1.5e9" -> bytes per second, finite
// and in [kMinBandwidthBps, kMaxBandwidthBps]; the error says why not.
Expected<double> parse_bandwidth(const std::string& text);
// `value` (bytes per second, written `text` by the user) if finite and in range.
Expected<double> bandwidth_in_range(double value, const std::string& text);
// "[::1]:2049", "10.0.0.5:2049", "*:2049", "2049" -> endpoint.
Expected<StorageEndpoint> parse_endpoint(const std::string& text);

}  // namespace ckpt
