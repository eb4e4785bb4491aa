#include "tools/workload/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <csignal>
#include <limits>
#include <tuple>

namespace ckpt::workload {
namespace {

constexpr std::string_view kSizeHint = "expected a size such as 4096, 64K, 16MiB or 1G";

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// Decimal digits to uint64; nullopt on overflow. The caller checked all_digits.
std::optional<uint64_t> digits_to_u64(std::string_view s) {
  uint64_t value = 0;
  for (const char c : s) {
    const auto digit = static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

struct SignalName {
  int number;
  std::string_view name;
};

// Standard signals by their POSIX/Linux names; SIGIOT, SIGPOLL and friends
// are aliases and would only make signal_name ambiguous.
constexpr std::array kSignals = {
    SignalName{SIGHUP, "HUP"},       SignalName{SIGINT, "INT"},       SignalName{SIGQUIT, "QUIT"},
    SignalName{SIGILL, "ILL"},       SignalName{SIGTRAP, "TRAP"},     SignalName{SIGABRT, "ABRT"},
    SignalName{SIGBUS, "BUS"},       SignalName{SIGFPE, "FPE"},       SignalName{SIGKILL, "KILL"},
    SignalName{SIGUSR1, "USR1"},     SignalName{SIGSEGV, "SEGV"},     SignalName{SIGUSR2, "USR2"},
    SignalName{SIGPIPE, "PIPE"},     SignalName{SIGALRM, "ALRM"},     SignalName{SIGTERM, "TERM"},
    SignalName{SIGSTKFLT, "STKFLT"}, SignalName{SIGCHLD, "CHLD"},     SignalName{SIGCONT, "CONT"},
    SignalName{SIGSTOP, "STOP"},     SignalName{SIGTSTP, "TSTP"},     SignalName{SIGTTIN, "TTIN"},
    SignalName{SIGTTOU, "TTOU"},     SignalName{SIGURG, "URG"},       SignalName{SIGXCPU, "XCPU"},
    SignalName{SIGXFSZ, "XFSZ"},     SignalName{SIGVTALRM, "VTALRM"}, SignalName{SIGPROF, "PROF"},
    SignalName{SIGWINCH, "WINCH"},   SignalName{SIGIO, "IO"},         SignalName{SIGPWR, "PWR"},
    SignalName{SIGSYS, "SYS"},
};

}  // namespace

std::string_view to_string(Mode mode) {
  switch (mode) {
    case Mode::Save:
      return "save";
    case Mode::Load:
      return "load";
    case Mode::Both:
      return "both";
  }
  return "both";
}

std::string_view to_string(Format format) {
  switch (format) {
    case Format::Pt:
      return "pt";
    case Format::Safetensors:
      return "safetensors";
    case Format::Distcp:
      return "distcp";
  }
  return "pt";
}

std::string Endpoint::to_string() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

Expected<uint64_t> parse_size(std::string_view flag, std::string_view text) {
  if (text.empty()) return make_error(fmt::format("{}: empty value; {}", flag, kSizeHint));
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])) != 0) {
    ++digits;
  }
  if (digits == 0) {
    return make_error(fmt::format("{}: '{}' is not a size; {}", flag, text, kSizeHint));
  }
  const std::string suffix = lower(text.substr(digits));
  unsigned shift = 0;
  if (suffix.empty() || suffix == "b") {
    shift = 0;
  } else if (suffix == "k" || suffix == "kib") {
    shift = 10;
  } else if (suffix == "m" || suffix == "mib") {
    shift = 20;
  } else if (suffix == "g" || suffix == "gib") {
    shift = 30;
  } else if (suffix == "t" || suffix == "tib") {
    shift = 40;
  } else if (suffix == "kb" || suffix == "mb" || suffix == "gb" || suffix == "tb") {
    // Refused rather than guessed: 64KB is 64000 to some readers and 65536
    // to others, and the ground truth must be exact.
    return make_error(
        fmt::format("{}: '{}' is ambiguous; use {}{} or {}{}iB (binary units)", flag, text,
                    text.substr(0, digits), static_cast<char>(std::toupper(suffix[0])),
                    text.substr(0, digits), static_cast<char>(std::toupper(suffix[0]))));
  } else {
    return make_error(fmt::format("{}: '{}' has an unknown unit '{}'; {}", flag, text,
                                  text.substr(digits), kSizeHint));
  }
  const auto base = digits_to_u64(text.substr(0, digits));
  if (!base || *base > (std::numeric_limits<uint64_t>::max() >> shift)) {
    return make_error(fmt::format("{}: '{}' is too large", flag, text));
  }
  return *base << shift;
}

// "1,3" -> {"1", "3"}; an empty item stays (its parser names it).
std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> items;
  size_t start = 0;
  for (size_t comma = text.find(','); comma != std::string_view::npos;
       comma = text.find(',', start)) {
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  items.push_back(text.substr(start));
  return items;
}

Expected<std::vector<uint64_t>> parse_size_list(std::string_view flag, std::string_view text) {
  if (text.empty()) {
    return make_error(fmt::format("{}: empty list; expected sizes such as 1M,4096,64K", flag));
  }
  std::vector<uint64_t> sizes;
  for (std::string_view item : split_commas(text)) {
    auto size = parse_size(flag, item);
    if (!size) {
      return make_error(
          fmt::format("{} (item {} of '{}')", size.error().message, sizes.size() + 1, text));
    }
    sizes.push_back(*size);
  }
  return sizes;
}

Expected<uint64_t> parse_count(std::string_view flag, std::string_view text, uint64_t min,
                               uint64_t max) {
  if (text.empty()) return make_error(fmt::format("{}: empty value; expected a number", flag));
  if (!all_digits(text)) {
    return make_error(fmt::format("{}: '{}' is not a non-negative integer", flag, text));
  }
  const auto value = digits_to_u64(text);
  if (!value || *value > max) {
    return make_error(fmt::format("{}: {} is too large; at most {}", flag, text, max));
  }
  if (*value < min)
    return make_error(fmt::format("{}: must be at least {}, got {}", flag, min, text));
  return *value;
}

Expected<Endpoint> parse_endpoint(std::string_view flag, std::string_view text,
                                  bool allow_port_zero) {
  const auto bad = [&](std::string_view why) {
    return make_error(
        fmt::format("{}: '{}' {}; expected HOST:PORT, e.g. 127.0.0.1:9000", flag, text, why));
  };
  Endpoint endpoint;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return bad("has no closing ']'");
    endpoint.host = std::string(text.substr(1, close - 1));
    if (close + 1 >= text.size() || text[close + 1] != ':') return bad("has no port");
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad("has no port");
    endpoint.host = std::string(text.substr(0, colon));
    if (endpoint.host.find(':') != std::string::npos) {
      return bad("is ambiguous; write IPv6 addresses as [addr]:port");
    }
    port_text = text.substr(colon + 1);
  }
  if (endpoint.host.empty()) return bad("has no host");
  if (!all_digits(port_text)) return bad("has no valid port");
  const auto port = digits_to_u64(port_text);
  if (!port || *port > 65535) return bad("has a port above 65535");
  if (*port == 0 && !allow_port_zero) return bad("has port 0");
  endpoint.port = static_cast<uint16_t>(*port);
  return endpoint;
}

std::string signal_name(int sig) {
  for (const auto& s : kSignals) {
    if (s.number == sig) return std::string(s.name);
  }
  return std::to_string(sig);
}

Expected<int> parse_signal(std::string_view flag, std::string_view text) {
  int sig = 0;
  if (all_digits(text)) {
    const auto value = digits_to_u64(text);
    if (!value || *value < 1 || *value > static_cast<uint64_t>(SIGRTMAX)) {
      return make_error(
          fmt::format("{}: {} is not a signal number (1 to {})", flag, text, SIGRTMAX));
    }
    sig = static_cast<int>(*value);
    if (sig >= 32 && sig < SIGRTMIN) {
      // glibc keeps these for thread cancellation and setxid; it will not
      // let a program install or restore their handlers.
      return make_error(fmt::format("{}: {} is reserved by the C library", flag, sig));
    }
  } else {
    std::string name = lower(text);
    if (name.rfind("sig", 0) == 0) name.erase(0, 3);
    for (const auto& s : kSignals) {
      if (lower(s.name) == name) sig = s.number;
    }
    if (sig == 0) {
      return make_error(fmt::format(
          "{}: '{}' is not a signal; use a name such as TERM, KILL, SEGV or a number", flag, text));
    }
  }
  switch (sig) {
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
      return make_error(
          fmt::format("{}: {} stops the process instead of ending it; the workload would hang",
                      flag, signal_name(sig)));
    case SIGCHLD:
    case SIGCONT:
    case SIGURG:
    case SIGWINCH:
      return make_error(fmt::format("{}: {} is ignored by default and would not end the process",
                                    flag, signal_name(sig)));
    default:
      return sig;
  }
}

Expected<Mode> parse_mode(std::string_view flag, std::string_view text) {
  if (text == "save") return Mode::Save;
  if (text == "load") return Mode::Load;
  if (text == "both") return Mode::Both;
  return make_error(fmt::format("{}: '{}' is not a mode; use save, load or both", flag, text));
}

Expected<Format> parse_format(std::string_view flag, std::string_view text) {
  if (text == "pt") return Format::Pt;
  if (text == "safetensors") return Format::Safetensors;
  if (text == "distcp") return Format::Distcp;
  return make_error(
      fmt::format("{}: '{}' is not a format; use pt, safetensors or distcp", flag, text));
}

std::string shard_file_name(Format format, uint32_t shard) {
  switch (format) {
    case Format::Pt:
      return fmt::format("shard-{}.pt", shard);
    case Format::Safetensors:
      return fmt::format("shard-{}.safetensors", shard);
    case Format::Distcp:
      return fmt::format("__{}_0.distcp", shard);
  }
  return fmt::format("shard-{}.pt", shard);
}

Expected<Options> resolve_options(const RawOptions& raw) {
  Options o;
  o.fsync = raw.fsync;
  o.o_direct = raw.o_direct;
  o.rename_commit = raw.rename_commit;
  o.tcp_only = raw.tcp_only;
  o.quiet = raw.quiet;
  o.ground_truth = raw.ground_truth;

  // Limits are generous but finite, so a typo (an extra zero or two) fails
  // fast instead of filling a disk or forking thousands of processes.
  constexpr uint64_t kMaxCount = 1'000'000;
  constexpr uint64_t kMaxWorkers = 1024;
  constexpr uint64_t kMaxMs = 24ULL * 3600 * 1000;

  if (!raw.shard_sizes.empty()) {
    if (!raw.shard_size.empty()) {
      return make_error("--shard-sizes: cannot be combined with --shard-size");
    }
    auto sizes = parse_size_list("--shard-sizes", raw.shard_sizes);
    if (!sizes) return sizes.error();
    if (sizes->size() > kMaxCount) {
      return make_error(fmt::format("--shard-sizes: {} shards is too many; at most {}",
                                    sizes->size(), kMaxCount));
    }
    if (!raw.shards.empty()) {
      auto shards = parse_count("--shards", raw.shards, 1, kMaxCount);
      if (!shards) return shards.error();
      if (*shards != sizes->size()) {
        return make_error(fmt::format("--shards: {} does not match the {} sizes in --shard-sizes",
                                      *shards, sizes->size()));
      }
    }
    o.shard_sizes = std::move(*sizes);
  } else {
    uint64_t shards = kDefaultShards;
    if (!raw.shards.empty()) {
      auto parsed = parse_count("--shards", raw.shards, 1, kMaxCount);
      if (!parsed) return parsed.error();
      shards = *parsed;
    }
    uint64_t size = kDefaultShardSize;
    if (!raw.shard_size.empty()) {
      auto parsed = parse_size("--shard-size", raw.shard_size);
      if (!parsed) return parsed.error();
      size = *parsed;
    }
    o.shard_sizes.assign(shards, size);
  }

  if (!raw.checkpoints.empty()) {
    auto k = parse_count("--checkpoints", raw.checkpoints, 1, kMaxCount);
    if (!k) return k.error();
    o.checkpoints = static_cast<uint32_t>(*k);
  }

  // Every byte count in the ground truth is a uint64; make sure the largest
  // one (all shards of all checkpoints) cannot wrap.
  uint64_t per_checkpoint = 0;
  for (const uint64_t size : o.shard_sizes) {
    if (size > std::numeric_limits<uint64_t>::max() / 4 - per_checkpoint) {
      return make_error("--shard-size: the shards add up to more bytes than can be counted");
    }
    per_checkpoint += size;
  }
  if (per_checkpoint > std::numeric_limits<uint64_t>::max() / 4 / o.checkpoints) {
    return make_error("--checkpoints: all checkpoints add up to more bytes than can be counted");
  }

  if (!raw.mode.empty()) {
    auto mode = parse_mode("--mode", raw.mode);
    if (!mode) return mode.error();
    o.mode = *mode;
  }
  if (!raw.format.empty()) {
    auto format = parse_format("--format", raw.format);
    if (!format) return format.error();
    o.format = *format;
  }
  if (!raw.block_size.empty()) {
    auto block = parse_size("--block-size", raw.block_size);
    if (!block) return block.error();
    if (*block == 0) return make_error("--block-size: must not be 0");
    if (*block > kMaxBlockSize) {
      return make_error(fmt::format("--block-size: {} is too large; at most 1GiB", raw.block_size));
    }
    o.block_size = *block;
  }
  if (o.o_direct && o.block_size % kDirectAlign != 0) {
    return make_error(fmt::format(
        "--block-size: {} is not a multiple of 4096, which --o-direct needs", o.block_size));
  }
  if (!raw.gap_ms.empty()) {
    auto gap = parse_count("--gap-ms", raw.gap_ms, 0, kMaxMs);
    if (!gap) return gap.error();
    o.gap_ms = *gap;
  }
  if (!raw.serialize_ms.empty()) {
    auto ms = parse_count("--serialize-ms", raw.serialize_ms, 0, kMaxMs);
    if (!ms) return ms.error();
    o.serialize_ms = *ms;
  }
  if (!raw.processes.empty()) {
    auto p = parse_count("--processes", raw.processes, 1, kMaxWorkers);
    if (!p) return p.error();
    o.processes = static_cast<uint32_t>(*p);
  }
  if (o.processes > o.shards()) {
    return make_error(
        fmt::format("--processes: {} processes for {} shards would leave processes without work",
                    o.processes, o.shards()));
  }
  if (!raw.threads.empty()) {
    auto t = parse_count("--threads", raw.threads, 1, kMaxWorkers);
    if (!t) return t.error();
    o.threads = static_cast<uint32_t>(*t);
  }
  if (!raw.seed.empty()) {
    auto seed = parse_count("--seed", raw.seed, 0, std::numeric_limits<uint64_t>::max());
    if (!seed) return seed.error();
    o.seed = *seed;
  }
  for (auto [flag, text, out] :
       {std::tuple{"--buffered-checkpoints", &raw.buffered_checkpoints, &o.buffered_checkpoints},
        {"--cold-checkpoints", &raw.cold_checkpoints, &o.cold_checkpoints}}) {
    if (text->empty()) continue;
    for (std::string_view item : split_commas(*text)) {
      auto k = parse_count(flag, item, 1, o.checkpoints);
      if (!k) return k.error();
      out->insert(static_cast<uint32_t>(*k));
    }
  }
  if (!o.buffered_checkpoints.empty() && !o.fsync)
    return make_error("--buffered-checkpoints: needs --fsync (without it every save is buffered)");
  if (!o.cold_checkpoints.empty() && o.mode == Mode::Save)
    return make_error("--cold-checkpoints: --mode save loads nothing");
  if (!raw.tcp_sink.empty()) {
    auto sink = parse_endpoint("--tcp-sink", raw.tcp_sink, false);
    if (!sink) return sink.error();
    o.tcp_sink = *sink;
  }
  if (o.tcp_only) {
    if (!o.tcp_sink) return make_error("--tcp-only: needs --tcp-sink HOST:PORT");
    if (o.fsync) return make_error("--fsync: there are no files to sync with --tcp-only");
    if (o.o_direct) return make_error("--o-direct: there are no files to open with --tcp-only");
    if (o.rename_commit) {
      return make_error("--rename-commit: there are no files to rename with --tcp-only");
    }
    // Without files there is nothing to load back; an explicit load or both
    // is a contradiction, the default simply becomes save.
    if (!raw.mode.empty() && o.mode != Mode::Save) {
      return make_error(fmt::format(
          "--mode: {} needs files to load, which --tcp-only does not write; use --mode save",
          raw.mode));
    }
    o.mode = Mode::Save;
  } else {
    if (raw.dir.empty()) return make_error("--dir: required (where checkpoints are written)");
  }
  o.dir = raw.dir;

  if (!raw.exit_code.empty() && !raw.exit_signal.empty()) {
    return make_error("--exit-code: cannot be combined with --exit-signal");
  }
  if (!raw.exit_code.empty()) {
    auto code = parse_count("--exit-code", raw.exit_code, 0, 255);
    if (!code) return code.error();
    o.exit_code = static_cast<int>(*code);
  }
  if (!raw.exit_signal.empty()) {
    auto sig = parse_signal("--exit-signal", raw.exit_signal);
    if (!sig) return sig.error();
    o.exit_signal = *sig;
  }
  if (!raw.sleep_ms.empty()) {
    auto ms = parse_count("--sleep-ms", raw.sleep_ms, 0, kMaxMs);
    if (!ms) return ms.error();
    o.sleep_ms = *ms;
  }
  return o;
}

Expected<SinkOptions> resolve_sink_options(const RawSinkOptions& raw) {
  SinkOptions o;
  if (raw.listen.empty()) return make_error("--listen: required (HOST:PORT, port 0 picks one)");
  auto listen = parse_endpoint("--listen", raw.listen, true);
  if (!listen) return listen.error();
  o.listen = *listen;
  if (!raw.expect_bytes.empty()) {
    auto bytes = parse_size("--expect-bytes", raw.expect_bytes);
    if (!bytes) return bytes.error();
    o.expect_bytes = *bytes;
  }
  o.ready_file = raw.ready_file;
  return o;
}

}  // namespace ckpt::workload
