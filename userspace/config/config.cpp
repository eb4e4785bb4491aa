#include "config/config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "files/input_file.h"
#include "json/json_io.h"
#include "notify/notify.h"

namespace ckpt {
namespace {

using nlohmann::json;

constexpr uint64_t kNsPerMs = 1'000'000;
constexpr uint64_t kMaxInteger = 86'400'000;  // a day in ms: every field's ceiling

// The defaults come from what the frameworks write (docs/frameworks.md).
// Names that say checkpoint, counted anywhere: nanoGPT's `out/ckpt.pt`,
// DCP's `.distcp`, Lightning's `.ckpt`, NeMo 1's `.nemo`, Keras' `.keras` and
// `.weights.h5`, DeepSpeed's shards under a user's own tag, Megatron's shards
// under `release/`, the PyTorch ImageNet example's `model_best.pth.tar`.
const std::vector<std::string> kDefaultNameGlobs = {"*ckpt*",
                                                    "*checkpoint*",
                                                    "*.distcp",
                                                    "*.safetensors",
                                                    "*.ckpt",
                                                    "*.nemo",
                                                    "*.keras",
                                                    "*.weights.h5",
                                                    "*_model_states.pt",
                                                    "*_optim_states.pt",
                                                    "model_optim_rng.pt",
                                                    "distrib_optim.pt",
                                                    "*.pth.tar"};
// Generic names, counted under a checkpoint directory: PyTorch (torch.save,
// DCP's `.metadata`), Megatron/DeepSpeed and HF shards, ImageNet's
// `.pth.tar`, Keras' `.h5`, Accelerate's `.pkl`, numpy, Flax msgpack, Orbax's
// manifest and TensorStore's `.__lock` temporaries. "*.tmp" catches the
// write-then-rename commit pattern. Not text: `train.log`, `config.json`
// beside the shards are no checkpoint data.
const std::vector<std::string> kDefaultFileGlobs = {
    "*.pt",  "*.pth", "*.safetensors", "*.distcp",  "*.bin",  "*.ckpt",
    "*.npy", "*.tmp", ".metadata",     "*.pth.tar", "*.tar",  "*.h5",
    "*.pkl", "*.npz", "*.msgpack",     "*.__lock",  "*.ocdbt"};
// Directory names that say checkpoint, anywhere in the name (HF's staging
// `tmp-checkpoint-500`, Orbax's `100.orbax-checkpoint-tmp`), and the step and
// epoch directories the frameworks make. A step-number directory (Orbax
// `<root>/100/`) counts under one of these, as every directory below one does.
const std::vector<std::string> kDefaultDirGlobs = {
    "*checkpoint*", "*ckpt*",  "global_step*", "iter_*",          "step_*",
    "step-*",       "epoch_*", "epoch=*",      "ocdbt.process_*", "recipe_state"};
// Temporary names the write-then-rename commit uses (docs/frameworks.md):
// `NAME.tmp` (safetensors, DCP's `.metadata.tmp`, most hand-written atomic
// saves), `NAME.tmp.<pid>` and `NAME.<pid>.tmp`, `NAME.part(ial)`, rsync's and
// mkstemp's `.NAME.XXXXXX`, TensorFlow's `_temp_<uuid>` and `.tempstate<N>`,
// Python's tempfile names (`tmpXXXXXXXX`: Lightning's fsspec transaction),
// Hugging Face's `tmp-checkpoint-*` and Orbax's `*.orbax-checkpoint-tmp-*`
// directories (those two also say checkpoint: their files count directly).
const std::vector<std::string> kDefaultTemporaryGlobs = {
    "*.tmp",    "*.tmp.*", "*.temp",       "*.part", "*.partial", ".*.??????", "*_temp",
    "*_temp_*", "*-tmp-*", "*.tempstate*", "tmp-*",  "tmp_*",     "*.tmp-*",   "tmp????????"};
// Never checkpoints, whatever their names say: Python sources and bytecode
// (`torch/utils/checkpoint.py`), shared objects, logs, installed packages,
// Jupyter's notebook autosaves (`.ipynb_checkpoints/x-checkpoint.ipynb`),
// and the Hugging Face hub cache (`models--org--name/blobs/<sha256>`: a
// downloaded pretrained model every job shares, not this job's checkpoint).
const std::vector<std::string> kDefaultExcludeGlobs = {
    "*.py",          "*.pyc",       "*.so",
    "*.so.*",        "*.log",       "site-packages",
    "dist-packages", "__pycache__", ".ipynb_checkpoints",
    "models--*",     "datasets--*", "spaces--*"};

// Reads one section, rejecting keys it does not know (a typo must not be
// silently ignored in a profiler's configuration).
class Section {
 public:
  Section(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  Expected<void> check_keys(const std::set<std::string>& known) const {
    if (!j_.is_object()) return make_error(fmt::format("{}: must be an object", path_));
    for (const auto& [key, value] : j_.items()) {
      if (!known.contains(key)) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        return make_error(fmt::format("{}: unknown key '{}' (known: {})", field(key), key, list));
      }
    }
    return {};
  }
  [[nodiscard]] bool has(const std::string& key) const { return j_.contains(key); }
  [[nodiscard]] const json& at(const std::string& key) const { return j_.at(key); }
  [[nodiscard]] std::string field(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  // Bounded so that converting to nanoseconds cannot overflow.
  Expected<uint64_t> positive_integer(const std::string& key, uint64_t max = kMaxInteger) const {
    const json& v = j_.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<uint64_t>() > max)
      return make_error(fmt::format("{}: must be a positive integer up to {} (got {})", field(key),
                                    max, dump_json(v)));
    return v.get<uint64_t>();
  }
  Expected<std::vector<std::string>> string_list(const std::string& key, bool allow_empty) const {
    const json& v = j_.at(key);
    if (!v.is_array())
      return make_error(
          fmt::format("{}: must be a list of strings (got {})", field(key), dump_json(v)));
    std::vector<std::string> out;
    for (const auto& item : v) {
      if (!item.is_string() || item.get<std::string>().empty())
        return make_error(fmt::format("{}: every entry must be a non-empty string (got {})",
                                      field(key), dump_json(item)));
      out.push_back(item.get<std::string>());
    }
    if (out.empty() && !allow_empty)
      return make_error(fmt::format("{}: must not be empty", field(key)));
    return out;
  }
  Expected<bool> boolean(const std::string& key) const {
    const json& v = j_.at(key);
    if (!v.is_boolean())
      return make_error(
          fmt::format("{}: must be true or false (got {})", field(key), dump_json(v)));
    return v.get<bool>();
  }
  // Globs matched against one name (a file's or a directory's): one with a
  // '/' could never match, so it is rejected rather than silently useless.
  Expected<std::vector<std::string>> name_glob_list(const std::string& key,
                                                    const std::string& hint) const {
    auto list = string_list(key, true);
    if (!list) return list;
    for (const auto& glob : *list)
      if (glob.find('/') != std::string::npos)
        return make_error(
            fmt::format("{}: '{}' has a '/': it is matched against one name, never a path{}",
                        field(key), glob, hint));
    return list;
  }
  Expected<double> bandwidth(const std::string& key) const {
    const json& v = j_.at(key);
    Expected<double> bw = v.is_string()   ? parse_bandwidth(v.get<std::string>())
                          : v.is_number() ? bandwidth_in_range(v.get<double>(), dump_json(v))
                                          : Expected<double>(make_error("not a number or string"));
    if (!bw)
      return make_error(fmt::format(
          "{}: must be a bandwidth from 1 B/s to 1 PB/s such as \"250GB/s\", \"100Gbit/s\" or "
          "2.5e11 (got {}: {})",
          field(key), dump_json(v), bw.error().message));
    return bw;
  }
  Section child(const std::string& key) const { return Section(j_.at(key), field(key)); }

 private:
  const json& j_;
  std::string path_;
};

// `var` names the declared variable, so it cannot be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define CKPT_TRY(var, expr)                       \
  auto var##_result = (expr);                     \
  if (!var##_result) return var##_result.error(); \
  auto var = std::move(*var##_result)
// NOLINTEND(bugprone-macro-parentheses)

#define CKPT_TRY_VOID(expr)     \
  do {                          \
    auto r_ = (expr);           \
    if (!r_) return r_.error(); \
  } while (0)

Expected<void> parse_checkpoint(const Section& s, CheckpointRules& out) {
  CKPT_TRY_VOID(s.check_keys({"name_globs", "file_globs", "dir_globs", "exclude_globs",
                              "temporary_globs", "extensionless_files", "quiet_gap_ms", "stall_s",
                              "in_flight_limit_s", "unrecognised_notice_mib"}));
  if (s.has("name_globs")) {
    CKPT_TRY(v, s.name_glob_list("name_globs", "; directories go in checkpoint.dir_globs"));
    out.name_globs = v;
  }
  if (s.has("file_globs")) {
    CKPT_TRY(v, s.string_list("file_globs", false));
    out.file_globs = v;
  }
  if (s.has("dir_globs")) {
    CKPT_TRY(v, s.string_list("dir_globs", true));
    for (const auto& entry : v)
      if (entry.find('/') != std::string::npos && entry.front() != '/')
        return make_error(fmt::format(
            "{}: '{}' is a relative path; a path prefix must be absolute (a name without '/' "
            "matches every directory of that name)",
            s.field("dir_globs"), entry));
    out.dir_globs = v;
  }
  if (s.has("exclude_globs")) {
    CKPT_TRY(v, s.name_glob_list("exclude_globs", " (a file's or one directory's)"));
    out.exclude_globs = v;
  }
  if (s.has("temporary_globs")) {
    CKPT_TRY(v, s.name_glob_list("temporary_globs", " (a file's or one directory's)"));
    out.temporary_globs = v;
  }
  if (s.has("extensionless_files")) {
    CKPT_TRY(v, s.boolean("extensionless_files"));
    out.extensionless_files = v;
  }
  if (s.has("quiet_gap_ms")) {
    CKPT_TRY(v, s.positive_integer("quiet_gap_ms"));
    out.quiet_gap_ns = v * kNsPerMs;
  }
  if (s.has("stall_s")) {
    CKPT_TRY(v, s.positive_integer("stall_s"));
    out.stall_ns = v * 1000 * kNsPerMs;
  }
  // A call must be able to stall before it stops holding its checkpoint:
  // the limit is at least the stall time (raised to it when not given).
  if (s.has("in_flight_limit_s")) {
    CKPT_TRY(v, s.positive_integer("in_flight_limit_s"));
    out.in_flight_limit_ns = v * 1000 * kNsPerMs;
    if (out.in_flight_limit_ns < out.stall_ns)
      return make_error(fmt::format("{}: {} s is less than {} ({} s); it must be at least that",
                                    s.field("in_flight_limit_s"), v, s.field("stall_s"),
                                    out.stall_ns / (1000 * kNsPerMs)));
  }
  out.in_flight_limit_ns = std::max(out.in_flight_limit_ns, out.stall_ns);
  if (s.has("unrecognised_notice_mib")) {
    CKPT_TRY(v, s.positive_integer("unrecognised_notice_mib"));
    out.unrecognised_notice_bytes = v << 20;
  }
  return {};
}

Expected<void> parse_storage(const Section& s, Config& out) {
  CKPT_TRY_VOID(s.check_keys({"endpoints", "read_bandwidth", "write_bandwidth"}));
  if (s.has("endpoints")) {
    CKPT_TRY(list, s.string_list("endpoints", true));
    out.storage_endpoints.clear();
    for (const auto& text : list) {
      auto ep = parse_endpoint(text);
      if (!ep) return make_error(fmt::format("{}: {}", s.field("endpoints"), ep.error().message));
      out.storage_endpoints.push_back(*ep);
    }
  }
  if (s.has("read_bandwidth")) {
    CKPT_TRY(v, s.bandwidth("read_bandwidth"));
    out.maxima.storage_read_Bps = v;
  }
  if (s.has("write_bandwidth")) {
    CKPT_TRY(v, s.bandwidth("write_bandwidth"));
    out.maxima.storage_write_Bps = v;
  }
  return {};
}

Expected<void> parse_maxima(const Section& s, ConfiguredMaxima& out) {
  CKPT_TRY_VOID(s.check_keys(
      {"serialize_bandwidth", "transport_bandwidth", "gpu_d2h_bandwidth", "gpu_h2d_bandwidth"}));
  if (s.has("gpu_d2h_bandwidth")) {
    CKPT_TRY(v, s.bandwidth("gpu_d2h_bandwidth"));
    out.gpu_d2h_Bps = v;
  }
  if (s.has("gpu_h2d_bandwidth")) {
    CKPT_TRY(v, s.bandwidth("gpu_h2d_bandwidth"));
    out.gpu_h2d_Bps = v;
  }
  if (s.has("serialize_bandwidth")) {
    CKPT_TRY(v, s.bandwidth("serialize_bandwidth"));
    out.serialize_Bps = v;
  }
  if (s.has("transport_bandwidth")) {
    CKPT_TRY(v, s.bandwidth("transport_bandwidth"));
    out.transport_Bps = v;
  }
  return {};
}

Expected<void> parse_failures(const Section& s, FailureThresholds& out) {
  CKPT_TRY_VOID(s.check_keys({"retransmit_storm_per_s", "zero_window_ms"}));
  if (s.has("retransmit_storm_per_s")) {
    CKPT_TRY(v, s.positive_integer("retransmit_storm_per_s"));
    out.retransmit_storm_per_s = v;
  }
  if (s.has("zero_window_ms")) {
    CKPT_TRY(v, s.positive_integer("zero_window_ms"));
    out.zero_window_ns = v * kNsPerMs;
  }
  return {};
}

Expected<void> parse_root(const json& root, Config& cfg) {
  Section top(root, "");
  CKPT_TRY_VOID(top.check_keys(
      {"checkpoint", "storage", "maxima", "failures", "tcp", "bpf", "log_dir", "notify"}));
  if (top.has("log_dir")) {
    if (!root["log_dir"].is_string() || root["log_dir"].get<std::string>().empty())
      return make_error("log_dir: must be a non-empty string (a directory)");
    cfg.log_dir = root["log_dir"].get<std::string>();
  }
  if (top.has("notify")) {
    if (!root["notify"].is_object()) return make_error("notify: must be an object");
    cfg.notify_json = dump_json(root["notify"]);
  }
  if (top.has("checkpoint"))
    CKPT_TRY_VOID(parse_checkpoint(top.child("checkpoint"), cfg.checkpoint));
  if (top.has("storage")) CKPT_TRY_VOID(parse_storage(top.child("storage"), cfg));
  if (top.has("maxima")) CKPT_TRY_VOID(parse_maxima(top.child("maxima"), cfg.maxima));
  if (top.has("failures")) CKPT_TRY_VOID(parse_failures(top.child("failures"), cfg.failures));
  if (top.has("tcp")) {
    Section tcp = top.child("tcp");
    CKPT_TRY_VOID(tcp.check_keys({"sample_interval_ms"}));
    if (tcp.has("sample_interval_ms")) {
      CKPT_TRY(v, tcp.positive_integer("sample_interval_ms"));
      cfg.tcp_sample_interval_ns = v * kNsPerMs;
    }
  }
  if (top.has("bpf")) {
    Section bpf = top.child("bpf");
    CKPT_TRY_VOID(bpf.check_keys({"ringbuf_mib"}));
    if (bpf.has("ringbuf_mib")) {
      CKPT_TRY(v, bpf.positive_integer("ringbuf_mib"));
      // The ring buffer size must be a power of two pages (kernel/bpf/ringbuf.c).
      if (v > 1024 || (v & (v - 1)) != 0)
        return make_error(
            fmt::format("bpf.ringbuf_mib: must be a power of two up to 1024 (got {})", v));
      cfg.ringbuf_bytes = static_cast<uint32_t>(v << 20);
    }
  }
  return {};
}

std::string endpoint_to_string(const StorageEndpoint& ep) {
  if (ep.host.empty()) return fmt::format("*:{}", ep.port);
  if (ep.host.find(':') != std::string::npos) return fmt::format("[{}]:{}", ep.host, ep.port);
  return fmt::format("{}:{}", ep.host, ep.port);
}

}  // namespace

Config Config::defaults() {
  Config c;
  c.checkpoint.name_globs = kDefaultNameGlobs;
  c.checkpoint.file_globs = kDefaultFileGlobs;
  c.checkpoint.dir_globs = kDefaultDirGlobs;
  c.checkpoint.exclude_globs = kDefaultExcludeGlobs;
  c.checkpoint.temporary_globs = kDefaultTemporaryGlobs;
  c.checkpoint.extensionless_files = true;
  c.checkpoint.quiet_gap_ns = 1000 * kNsPerMs;
  c.checkpoint.stall_ns = 60'000 * kNsPerMs;
  c.checkpoint.in_flight_limit_ns = 600'000 * kNsPerMs;
  c.storage_endpoints = {StorageEndpoint{"", 2049}};
  return c;
}

nlohmann::json Config::to_json() const {
  json j;
  j["checkpoint"] = {{"name_globs", checkpoint.name_globs},
                     {"file_globs", checkpoint.file_globs},
                     {"dir_globs", checkpoint.dir_globs},
                     {"exclude_globs", checkpoint.exclude_globs},
                     {"temporary_globs", checkpoint.temporary_globs},
                     {"extensionless_files", checkpoint.extensionless_files},
                     {"quiet_gap_ms", checkpoint.quiet_gap_ns / kNsPerMs},
                     {"stall_s", checkpoint.stall_ns / (1000 * kNsPerMs)},
                     {"in_flight_limit_s", checkpoint.in_flight_limit_ns / (1000 * kNsPerMs)},
                     {"unrecognised_notice_mib", checkpoint.unrecognised_notice_bytes >> 20}};
  json endpoints = json::array();
  for (const auto& ep : storage_endpoints) endpoints.push_back(endpoint_to_string(ep));
  j["storage"] = {{"endpoints", endpoints}};
  if (maxima.storage_read_Bps) j["storage"]["read_bandwidth"] = *maxima.storage_read_Bps;
  if (maxima.storage_write_Bps) j["storage"]["write_bandwidth"] = *maxima.storage_write_Bps;
  j["maxima"] = json::object();
  if (maxima.serialize_Bps) j["maxima"]["serialize_bandwidth"] = *maxima.serialize_Bps;
  if (maxima.transport_Bps) j["maxima"]["transport_bandwidth"] = *maxima.transport_Bps;
  if (maxima.gpu_d2h_Bps) j["maxima"]["gpu_d2h_bandwidth"] = *maxima.gpu_d2h_Bps;
  if (maxima.gpu_h2d_Bps) j["maxima"]["gpu_h2d_bandwidth"] = *maxima.gpu_h2d_Bps;
  j["failures"] = {{"retransmit_storm_per_s", failures.retransmit_storm_per_s},
                   {"zero_window_ms", failures.zero_window_ns / kNsPerMs}};
  j["tcp"] = {{"sample_interval_ms", tcp_sample_interval_ns / kNsPerMs}};
  j["bpf"] = {{"ringbuf_mib", ringbuf_bytes >> 20}};
  if (!log_dir.empty()) j["log_dir"] = log_dir;
  if (!notify_json.empty()) {
    // The trace stores this config: never a secret in it.
    // notify_json came from dump_json, so it parses; a broken one is left out
    // rather than thrown.
    if (auto section = parse_json(notify_json, "notify"))
      j["notify"] = notify::redact_secrets(*section);
  }
  return j;
}

Expected<Config> parse_config(const std::string& text, const std::string& origin) {
  const std::string name = "config " + origin;
  // A number no double holds (1e400) is a parse error here, not an abort.
  auto root = parse_json(text, name);
  if (!root) return root.error();
  Config cfg = Config::defaults();
  cfg.source = origin;
  // Every check below names its field; read_json catches what slips past
  // them (a get<> on a value of the wrong type) with the JSON pointer.
  auto parsed = read_json(name, [&]() -> Expected<void> {
    if (auto ok = parse_root(*root, cfg); !ok)
      return make_error(fmt::format("{}: {}", name, ok.error().message));
    return {};
  });
  if (!parsed) return parsed.error();
  return cfg;
}

Expected<Config> load_config(const std::string& path) {
  auto text = read_file_bounded(path, kConfigFileLimit, "config");
  if (!text) return text.error();
  return parse_config(*text, path);
}

Expected<double> parse_bandwidth(const std::string& text) {
  size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    return make_error(fmt::format("'{}' is not a bandwidth", text));
  }
  std::string unit;
  for (char c : text.substr(pos))
    if (!std::isspace(static_cast<unsigned char>(c))) unit += c;
  if (unit.size() >= 2 && unit.ends_with("/s")) unit.resize(unit.size() - 2);
  static const std::pair<const char*, double> kUnits[] = {{"", 1},
                                                          {"B", 1},
                                                          {"KB", 1e3},
                                                          {"MB", 1e6},
                                                          {"GB", 1e9},
                                                          {"TB", 1e12},
                                                          {"PB", 1e15},
                                                          {"KiB", 1024.0},
                                                          {"MiB", 1048576.0},
                                                          {"GiB", 1073741824.0},
                                                          {"TiB", 1099511627776.0},
                                                          {"PiB", 1125899906842624.0},
                                                          {"bit", 1 / 8.0},
                                                          {"Kbit", 1e3 / 8},
                                                          {"Mbit", 1e6 / 8},
                                                          {"Gbit", 1e9 / 8},
                                                          {"Tbit", 1e12 / 8},
                                                          {"Pbit", 1e15 / 8},
                                                          {"Gbps", 1e9 / 8},
                                                          {"Mbps", 1e6 / 8}};
  for (const auto& [name, scale] : kUnits)
    if (unit == name) return bandwidth_in_range(value * scale, text);
  return make_error(fmt::format("'{}': unknown unit '{}'", text, unit));
}

Expected<double> bandwidth_in_range(double value, const std::string& text) {
  if (!std::isfinite(value))
    return make_error(
        fmt::format("'{}' is not a finite bandwidth (must be from 1 B/s to 1 PB/s)", text));
  if (value < kMinBandwidthBps || value > kMaxBandwidthBps)
    return make_error(fmt::format(
        "'{}' is out of range: a bandwidth must be from 1 B/s to 1 PB/s ({} B/s){}", text, value,
        value > kMaxBandwidthBps ? "; no storage or link is that fast: a unit off?" : ""));
  return value;
}

Expected<StorageEndpoint> parse_endpoint(const std::string& text) {
  StorageEndpoint ep;
  std::string port_text = text;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return make_error(fmt::format("'{}': expected [IPv6]:PORT", text));
    ep.host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else if (auto colon = text.rfind(':'); colon != std::string::npos) {
    ep.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (ep.host == "*") ep.host.clear();
  if (!ep.host.empty()) {
    unsigned char buf[16];
    if (inet_pton(AF_INET, ep.host.c_str(), buf) != 1 &&
        inet_pton(AF_INET6, ep.host.c_str(), buf) != 1)
      return make_error(fmt::format("'{}': '{}' is not an IPv4 or IPv6 address", text, ep.host));
  }
  char* end = nullptr;
  long port = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port <= 0 || port > 65535)
    return make_error(fmt::format("'{}': port must be 1-65535", text));
  ep.port = static_cast<uint16_t>(port);
  return ep;
}

}  // namespace ckpt
