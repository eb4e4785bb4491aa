#include "config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

#include <nlohmann/json.hpp>

namespace ckpt {
namespace {

using ::testing::HasSubstr;

TEST(ConfigTest, DefaultsWatchNfsAndCheckpointDirs) {
  Config c = Config::defaults();
  ASSERT_EQ(c.storage_endpoints.size(), 1u);
  EXPECT_EQ(c.storage_endpoints[0], (StorageEndpoint{"", 2049}));
  EXPECT_EQ(c.checkpoint.quiet_gap_ns, 1'000'000'000u);
  EXPECT_EQ(c.checkpoint.unrecognised_notice_bytes, 16ull << 20);
  EXPECT_THAT(c.checkpoint.file_globs, ::testing::Contains("*.safetensors"));
  EXPECT_THAT(c.checkpoint.dir_globs, ::testing::Contains("global_step*"));
}

TEST(ConfigTest, ParsesEveryField) {
  auto c = parse_config(R"({
    "checkpoint": {"file_globs": ["*.pt"], "dir_globs": [], "quiet_gap_ms": 250, "stall_s": 30,
                   "unrecognised_notice_mib": 64},
    "storage": {"endpoints": ["10.0.0.5:2049", "[fd00::1]:20049"],
                "read_bandwidth": "700GB/s", "write_bandwidth": 2.5e11},
    "maxima": {"serialize_bandwidth": "2 GiB/s", "transport_bandwidth": "100Gbit/s",
               "gpu_d2h_bandwidth": "52GB/s", "gpu_h2d_bandwidth": "55 GB/s"},
    "failures": {"retransmit_storm_per_s": 20, "zero_window_ms": 5},
    "tcp": {"sample_interval_ms": 5},
    "bpf": {"ringbuf_mib": 32}
  })",
                        "test");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->checkpoint.file_globs, std::vector<std::string>{"*.pt"});
  EXPECT_TRUE(c->checkpoint.dir_globs.empty());
  EXPECT_EQ(c->checkpoint.quiet_gap_ns, 250'000'000u);
  EXPECT_EQ(c->checkpoint.stall_ns, 30'000'000'000u);
  EXPECT_EQ(c->checkpoint.unrecognised_notice_bytes, 64ull << 20);
  EXPECT_EQ(c->to_json()["checkpoint"]["unrecognised_notice_mib"], 64);
  ASSERT_EQ(c->storage_endpoints.size(), 2u);
  EXPECT_EQ(c->storage_endpoints[1], (StorageEndpoint{"fd00::1", 20049}));
  EXPECT_DOUBLE_EQ(*c->maxima.storage_read_Bps, 700e9);
  EXPECT_DOUBLE_EQ(*c->maxima.storage_write_Bps, 250e9);
  EXPECT_DOUBLE_EQ(*c->maxima.serialize_Bps, 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*c->maxima.transport_Bps, 12.5e9);
  EXPECT_DOUBLE_EQ(*c->maxima.gpu_d2h_Bps, 52e9);
  EXPECT_DOUBLE_EQ(*c->maxima.gpu_h2d_Bps, 55e9);
  EXPECT_EQ(c->failures.retransmit_storm_per_s, 20u);
  EXPECT_EQ(c->failures.zero_window_ns, 5'000'000u);
  EXPECT_EQ(c->tcp_sample_interval_ns, 5'000'000u);
  EXPECT_EQ(c->ringbuf_bytes, 32u << 20);
}

TEST(ConfigTest, DefaultsHaveBothKindsOfNames) {
  CheckpointRules r = Config::defaults().checkpoint;
  EXPECT_THAT(r.name_globs,
              ::testing::IsSupersetOf({"*ckpt*", "*checkpoint*", "*.distcp", "*.safetensors",
                                       "*.ckpt", "*.nemo", "*.keras", "*.weights.h5",
                                       "*_model_states.pt", "*_optim_states.pt"}));
  EXPECT_THAT(r.file_globs, ::testing::IsSupersetOf({"*.pt", "*.bin", "*.pth.tar", "*.tar", "*.h5",
                                                     "*.pkl", "*.npz", "*.msgpack", "*.__lock"}));
  EXPECT_THAT(r.dir_globs, ::testing::IsSupersetOf({"*checkpoint*", "*ckpt*", "epoch_*", "epoch=*",
                                                    "ocdbt.process_*", "recipe_state"}));
  EXPECT_THAT(r.exclude_globs, ::testing::IsSupersetOf({"*.py", "*.pyc", "*.so", "site-packages",
                                                        "dist-packages", "models--*"}));
  EXPECT_TRUE(r.extensionless_files);
  for (const char* text : {"*.log", "*.txt", "*.json", "*.yaml"})
    EXPECT_THAT(r.file_globs, ::testing::Not(::testing::Contains(text)));
}

TEST(ConfigTest, ParsesTheCheckpointNameRules) {
  auto c = parse_config(R"({"checkpoint": {
    "name_globs": ["*.orbax", "model_final*"], "dir_globs": ["runs", "/mnt/ckpt"],
    "exclude_globs": ["*.py"], "extensionless_files": false}})",
                        "test");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->checkpoint.name_globs, (std::vector<std::string>{"*.orbax", "model_final*"}));
  EXPECT_EQ(c->checkpoint.dir_globs, (std::vector<std::string>{"runs", "/mnt/ckpt"}));
  EXPECT_EQ(c->checkpoint.exclude_globs, std::vector<std::string>{"*.py"});
  EXPECT_FALSE(c->checkpoint.extensionless_files);
  // Untouched keys keep their defaults.
  EXPECT_EQ(c->checkpoint.file_globs, Config::defaults().checkpoint.file_globs);
}

TEST(ConfigTest, TemporaryNamesHaveDefaultsAndCanBeReplacedOrTurnedOff) {
  const CheckpointRules& r = Config::defaults().checkpoint;
  EXPECT_THAT(r.temporary_globs, ::testing::IsSupersetOf({"*.tmp", "*.partial", ".*.??????",
                                                          "*_temp_*", "tmp_*", "tmp????????"}));
  auto c = parse_config(R"({"checkpoint": {"temporary_globs": ["*.staging"]}})", "test");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->checkpoint.temporary_globs, std::vector<std::string>{"*.staging"});
  auto off = parse_config(R"({"checkpoint": {"temporary_globs": []}})", "test");
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_TRUE(off->checkpoint.temporary_globs.empty());
  EXPECT_EQ(off->to_json()["checkpoint"]["temporary_globs"].size(), 0u);
}

TEST(ConfigTest, EmptyNameAndExcludeListsTurnThoseRulesOff) {
  auto c = parse_config(R"({"checkpoint": {"name_globs": [], "exclude_globs": []}})", "test");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->checkpoint.name_globs.empty());
  EXPECT_TRUE(c->checkpoint.exclude_globs.empty());
}

// A config written before name_globs existed still loads and means what its
// keys said; the names that say checkpoint come on top.
TEST(ConfigTest, OldCheckpointSectionStillLoads) {
  auto c = parse_config(
      R"({"checkpoint": {"file_globs": ["*.pt"], "dir_globs": ["global_step*"], "quiet_gap_ms": 2000}})",
      "old.json");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->checkpoint.file_globs, std::vector<std::string>{"*.pt"});
  EXPECT_EQ(c->checkpoint.dir_globs, std::vector<std::string>{"global_step*"});
  EXPECT_EQ(c->checkpoint.name_globs, Config::defaults().checkpoint.name_globs);
}

TEST(ConfigTest, RoundTripsThroughItsJson) {
  Config c = Config::defaults();
  c.maxima.storage_write_Bps = 250e9;
  c.maxima.gpu_d2h_Bps = 52e9;
  c.maxima.gpu_h2d_Bps = 55e9;
  auto again = parse_config(c.to_json().dump(), "round trip");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->to_json(), c.to_json());
}

struct BadConfig {
  const char* text;
  const char* message;
};

class BadConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(BadConfigTest, RejectedNamingTheField) {
  auto c = parse_config(GetParam().text, "bad.json");
  ASSERT_FALSE(c);
  EXPECT_THAT(c.error().message, HasSubstr("bad.json"));
  EXPECT_THAT(c.error().message, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Fields, BadConfigTest,
    ::testing::Values(
        BadConfig{"{", "not valid JSON"}, BadConfig{"[]", "must be an object"},
        BadConfig{R"({"checkpoint": {"quiet_gap_ms": -5}})",
                  "checkpoint.quiet_gap_ms: must be a positive integer"},
        BadConfig{R"({"checkpoint": {"quiet_gap_ms": "1s"}})", "checkpoint.quiet_gap_ms"},
        BadConfig{R"({"checkpoint": {"quite_gap_ms": 5}})", "unknown key 'quite_gap_ms'"},
        BadConfig{R"({"checkpoint": {"file_globs": []}})",
                  "checkpoint.file_globs: must not be empty"},
        BadConfig{R"({"checkpoint": {"file_globs": [3]}})", "checkpoint.file_globs: every entry"},
        BadConfig{R"({"checkpoint": {"name_globs": "*ckpt*"}})",
                  "checkpoint.name_globs: must be a list of strings"},
        BadConfig{R"({"checkpoint": {"name_globs": [""]}})",
                  "checkpoint.name_globs: every entry must be a non-empty string"},
        BadConfig{R"({"checkpoint": {"name_globs": [7]}})", "checkpoint.name_globs: every entry"},
        BadConfig{R"({"checkpoint": {"name_globs": ["out/ckpt.pt"]}})",
                  "checkpoint.name_globs: 'out/ckpt.pt' has a '/'"},
        BadConfig{R"({"checkpoint": {"exclude_globs": {"a": 1}}})",
                  "checkpoint.exclude_globs: must be a list of strings"},
        BadConfig{R"({"checkpoint": {"exclude_globs": ["lib/site-packages"]}})",
                  "checkpoint.exclude_globs: 'lib/site-packages' has a '/'"},
        BadConfig{R"({"checkpoint": {"temporary_globs": "*.tmp"}})",
                  "checkpoint.temporary_globs: must be a list of strings"},
        BadConfig{R"({"checkpoint": {"temporary_globs": ["out/*.tmp"]}})",
                  "checkpoint.temporary_globs: 'out/*.tmp' has a '/'"},
        BadConfig{R"({"checkpoint": {"extensionless_files": "yes"}})",
                  "checkpoint.extensionless_files: must be true or false (got \"yes\")"},
        BadConfig{R"({"checkpoint": {"extensionless_files": 1}})",
                  "checkpoint.extensionless_files: must be true or false"},
        BadConfig{R"({"checkpoint": {"dir_globs": ["out/ckpt"]}})",
                  "checkpoint.dir_globs: 'out/ckpt' is a relative path"},
        BadConfig{R"({"checkpoint": {"dir_globs": "checkpoints"}})",
                  "checkpoint.dir_globs: must be a list of strings"},
        BadConfig{R"({"checkpoint": {"name_glob": ["*.pt"]}})", "unknown key 'name_glob'"},
        BadConfig{R"({"storage": {"endpoints": ["nfs-server:2049"]}})", "storage.endpoints"},
        BadConfig{R"({"storage": {"endpoints": ["10.0.0.1:99999"]}})", "port must be 1-65535"},
        BadConfig{R"({"storage": {"write_bandwidth": "fast"}})",
                  "storage.write_bandwidth: must be a bandwidth from 1 B/s to 1 PB/s"},
        BadConfig{R"({"storage": {"read_bandwidth": 0}})", "storage.read_bandwidth"},
        BadConfig{R"({"bpf": {"ringbuf_mib": 3}})", "bpf.ringbuf_mib: must be a power of two"},
        BadConfig{R"({"tcp": {"sample_interval_ms": 0}})", "tcp.sample_interval_ms"},
        BadConfig{R"({"exporter": {}})", "unknown key 'exporter'"},
        BadConfig{R"({"log_dir": ""})", "log_dir: must be a non-empty string"},
        BadConfig{R"({"log_dir": 5})", "log_dir: must be a non-empty string"},
        BadConfig{R"({"notify": "ops@example.com"})", "notify: must be an object"},
        // Issue 22: a number no double holds aborted the parser's caller.
        BadConfig{R"({"checkpoint":{"quiet_gap_ms":1e400}})", "not valid JSON: number overflow"},
        BadConfig{R"({"storage":{"read_bandwidth":-1e400}})", "not valid JSON: number overflow"},
        BadConfig{R"({"checkpoint":{"unrecognised_notice_mib":0}})",
                  "checkpoint.unrecognised_notice_mib: must be a positive integer"},
        BadConfig{R"({"checkpoint":{"unrecognised_notice_mib":"16MiB"}})",
                  "checkpoint.unrecognised_notice_mib: must be a positive integer"},
        BadConfig{R"({"checkpoint":{"stall_s":1e300}})",
                  "checkpoint.stall_s: must be a positive integer up to 86400000 (got 1e+300)"},
        BadConfig{"{\"log_dir\": \"/x\xff\"}", "not valid JSON"}));

TEST(ConfigTest, LogDirAndNotifyWithSecretsKeptOutOfTheTrace) {
  auto c = parse_config(
      R"({"log_dir": "/var/log/ckpt",
          "notify": {"smtp_url": "smtps://relay:465", "user": "ops", "password": "hunter2"}})",
      "c.json");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->log_dir, "/var/log/ckpt");
  EXPECT_THAT(c->notify_json, HasSubstr("hunter2"));  // kept for sending
  std::string stored = c->to_json().dump();           // what the trace stores
  EXPECT_THAT(stored, HasSubstr("\"smtp_url\":\"smtps://relay:465\""));
  EXPECT_THAT(stored, ::testing::Not(HasSubstr("hunter2")));
  EXPECT_THAT(stored, HasSubstr("/var/log/ckpt"));
}

TEST(ConfigTest, MissingFileNamed) {
  auto c = load_config("/nonexistent/ckptscope.json");
  ASSERT_FALSE(c);
  EXPECT_THAT(c.error().message, HasSubstr("/nonexistent/ckptscope.json"));
}

TEST(BandwidthTest, Units) {
  EXPECT_DOUBLE_EQ(*parse_bandwidth("250GB/s"), 250e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("250 GB/s"), 250e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("1 GiB/s"), 1073741824.0);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("400Gbit/s"), 50e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("1e6"), 1e6);
  EXPECT_FALSE(parse_bandwidth("12 furlongs"));
  EXPECT_FALSE(parse_bandwidth("GB/s"));
}

// Issue 36: a bandwidth is finite, at least 1 B/s and at most 1 PB/s.
TEST(BandwidthTest, OutOfRangeRefusedSayingTheRange) {
  for (const char* text :
       {"-5GB/s", "0", "0.5B/s", "1e308GB/s", "2PB", "1.1e15", "nan", "inf", "-inf", "NaN GB/s"}) {
    SCOPED_TRACE(text);
    auto v = parse_bandwidth(text);
    ASSERT_FALSE(v);
    EXPECT_THAT(v.error().message, HasSubstr(std::string("'") + text + "'"));
    EXPECT_THAT(v.error().message, HasSubstr("from 1 B/s to 1 PB/s"));
  }
  EXPECT_DOUBLE_EQ(*parse_bandwidth("1"), kMinBandwidthBps);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("1000TB/s"), kMaxBandwidthBps);
  EXPECT_THAT(parse_bandwidth("1e308GB/s").error().message, HasSubstr("not a finite bandwidth"));
  EXPECT_THAT(parse_bandwidth("5e15").error().message, HasSubstr("a unit off?"));
  for (const char* doc :
       {R"({"storage": {"write_bandwidth": -5e9}})", R"({"storage": {"read_bandwidth": 1e300}})",
        R"({"maxima": {"transport_bandwidth": "-100Gbit/s"}})"}) {
    SCOPED_TRACE(doc);
    auto c = parse_config(doc, "c.json");
    ASSERT_FALSE(c);
    EXPECT_THAT(c.error().message, HasSubstr("must be a bandwidth from 1 B/s to 1 PB/s"));
  }
}

// Issue 36: the config is read through the bounded reader.
TEST(ConfigTest, AnUnboundedInputIsRefusedNamingTheLimit) {
  auto zero = load_config("/dev/zero");
  ASSERT_FALSE(zero);
  EXPECT_THAT(zero.error().message, HasSubstr("config /dev/zero: not a text file"));
  const std::string big = ::testing::TempDir() + "/big-config.json";
  {
    std::FILE* f = std::fopen(big.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::string spaces(kConfigFileLimit.bytes + 1, ' ');
    spaces.front() = '{';
    spaces.back() = '}';
    std::fwrite(spaces.data(), 1, spaces.size(), f);
    std::fclose(f);
  }
  auto large = load_config(big);
  std::remove(big.c_str());
  ASSERT_FALSE(large);
  EXPECT_THAT(large.error().message,
              HasSubstr("config " + big + ": larger than 16 MiB; a config file is a few KiB"));
}

TEST(EndpointTest, Forms) {
  EXPECT_EQ(*parse_endpoint("*:2049"), (StorageEndpoint{"", 2049}));
  EXPECT_EQ(*parse_endpoint("2049"), (StorageEndpoint{"", 2049}));
  EXPECT_EQ(*parse_endpoint("127.0.0.1:9000"), (StorageEndpoint{"127.0.0.1", 9000}));
  EXPECT_EQ(*parse_endpoint("[::1]:2049"), (StorageEndpoint{"::1", 2049}));
  EXPECT_FALSE(parse_endpoint("[::1]2049"));
  EXPECT_FALSE(parse_endpoint("host:0"));
}

}  // namespace
}  // namespace ckpt
