#include "sources/mountstats.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <span>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "files/input_file.h"

namespace ckpt {
namespace {

constexpr std::string_view kBlanks = " \t\r";

std::string_view trim(std::string_view s) {
  const size_t first = s.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kBlanks) - first + 1);
}

std::vector<std::string_view> split_blanks(std::string_view s) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (true) {
    pos = s.find_first_not_of(kBlanks, pos);
    if (pos == std::string_view::npos) break;
    size_t end = s.find_first_of(kBlanks, pos);
    if (end == std::string_view::npos) end = s.size();
    out.push_back(s.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

std::optional<uint64_t> to_u64(std::string_view s) {
  uint64_t v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

// The kernel prints device and mount point through seq_file's mangle(), which
// writes space, tab, newline and backslash as \ooo so fields stay one token.
std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string_view digits = s.substr(i + 1, 3);
      bool octal = true;
      int value = 0;
      for (char c : digits) {
        octal = octal && c >= '0' && c <= '7';
        value = value * 8 + (c - '0');
      }
      if (octal && value < 256) {
        out.push_back(static_cast<char>(value));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

Error line_error(size_t line, std::string_view what) {
  return make_error(fmt::format("mountstats line {}: {}", line, what));
}

Expected<uint64_t> counter(std::string_view token, size_t line, std::string_view what) {
  if (auto v = to_u64(token)) return *v;
  return line_error(line, fmt::format("{}: '{}' is not an unsigned 64-bit number", what, token));
}

Expected<std::vector<uint64_t>> counters(const std::vector<std::string_view>& tokens, size_t line,
                                         std::string_view what) {
  std::vector<uint64_t> out;
  out.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    auto v = counter(tokens[i], line, fmt::format("{} field {}", what, i + 1));
    if (!v) return v.error();
    out.push_back(*v);
  }
  return out;
}

struct MountLine {
  std::string device;
  std::string mount_point;
  std::string fstype;
  std::string statvers;
};

// "device D mounted on M with fstype T[ statvers=V]", or "no device mounted
// on ..." for a mount without a source name.
Expected<MountLine> parse_mount_line(std::string_view text, size_t line) {
  const std::vector<std::string_view> t = split_blanks(text);
  MountLine m;
  size_t i = 0;
  if (t.size() >= 2 && t[0] == "device") {
    m.device = unescape(t[1]);
    i = 2;
  } else if (t.size() >= 2 && t[0] == "no" && t[1] == "device") {
    i = 2;
  }
  if (i == 0 || t.size() < i + 6 || t[i] != "mounted" || t[i + 1] != "on" || t[i + 3] != "with" ||
      t[i + 4] != "fstype") {
    return line_error(line, "not of the form 'device D mounted on M with fstype T'");
  }
  m.mount_point = unescape(t[i + 2]);
  m.fstype = std::string(t[i + 5]);
  for (size_t k = i + 6; k < t.size(); ++k) {
    if (t[k].substr(0, 9) == "statvers=") m.statvers = std::string(t[k].substr(9));
  }
  return m;
}

std::map<std::string, std::string> parse_opts(std::string_view text) {
  std::map<std::string, std::string> opts;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view opt = text.substr(pos, comma - pos);
    if (!opt.empty()) {
      const size_t eq = opt.find('=');
      if (eq == std::string_view::npos) {
        opts[std::string(opt)] = "";
      } else {
        opts[std::string(opt.substr(0, eq))] = std::string(opt.substr(eq + 1));
      }
    }
    pos = comma + 1;
  }
  return opts;
}

constexpr std::array<std::string_view, 9> kOpFields = {
    "ops",      "transmissions", "major_timeouts", "bytes_sent", "bytes_received",
    "queue_ms", "rtt_ms",        "execute_ms",     "errors"};

Expected<NfsOpStats> parse_op_line(std::string_view name, std::string_view rest,
                                   const std::string& iostats_version, size_t line) {
  const std::vector<std::string_view> t = split_blanks(rest);
  // 1.0 prints 8 counters, 1.1 adds errors; a later version may append more,
  // so past 1.1 only a minimum is required and the extras are ignored.
  const bool known = iostats_version == "1.0" || iostats_version == "1.1";
  const size_t want = iostats_version == "1.1" ? 9 : 8;
  if (known ? t.size() != want : t.size() < want) {
    return line_error(
        line, fmt::format("per-op line for {} has {} fields; RPC iostats {} prints {}{}", name,
                          t.size(), iostats_version.empty() ? "(unknown)" : iostats_version,
                          known ? "" : "at least ", want));
  }
  std::array<uint64_t, 9> v{};
  const size_t n = std::min(t.size(), v.size());
  for (size_t i = 0; i < n; ++i) {
    auto c = counter(t[i], line, fmt::format("per-op {} {}", name, kOpFields[i]));
    if (!c) return c.error();
    v[i] = *c;
  }
  NfsOpStats op{std::string(name), v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], std::nullopt};
  if (n >= 9) op.errors = v[8];
  return op;
}

struct XprtField {
  std::string_view name;
  uint64_t NfsXprtStats::*member;
};

// Field order of xs_tcp_print_stats and xs_udp_print_stats. The older kernels'
// lines are prefixes of these (tcp 10 numbers, udp 7).
constexpr std::array<XprtField, 13> kTcpFields = {{
    {"port", &NfsXprtStats::port},
    {"bind_count", &NfsXprtStats::bind_count},
    {"connect_count", &NfsXprtStats::connect_count},
    {"connect_time", &NfsXprtStats::connect_time},
    {"idle_time", &NfsXprtStats::idle_time},
    {"sends", &NfsXprtStats::sends},
    {"receives", &NfsXprtStats::receives},
    {"bad_xids", &NfsXprtStats::bad_xids},
    {"req_u", &NfsXprtStats::req_u},
    {"backlog_u", &NfsXprtStats::backlog_u},
    {"max_slots", &NfsXprtStats::max_slots},
    {"sending_u", &NfsXprtStats::sending_u},
    {"pending_u", &NfsXprtStats::pending_u},
}};
constexpr size_t kOldTcpFields = 10;
constexpr std::array<XprtField, 10> kUdpFields = {{
    {"port", &NfsXprtStats::port},
    {"bind_count", &NfsXprtStats::bind_count},
    {"sends", &NfsXprtStats::sends},
    {"receives", &NfsXprtStats::receives},
    {"bad_xids", &NfsXprtStats::bad_xids},
    {"req_u", &NfsXprtStats::req_u},
    {"backlog_u", &NfsXprtStats::backlog_u},
    {"max_slots", &NfsXprtStats::max_slots},
    {"sending_u", &NfsXprtStats::sending_u},
    {"pending_u", &NfsXprtStats::pending_u},
}};
constexpr size_t kOldUdpFields = 7;

Expected<NfsXprtStats> parse_xprt_line(std::string_view rest, size_t line) {
  const std::vector<std::string_view> t = split_blanks(rest);
  if (t.empty()) return line_error(line, "xprt line names no protocol");
  NfsXprtStats x;
  x.proto = std::string(t[0]);
  x.raw = std::string(rest);
  std::span<const XprtField> fields;
  size_t old_count = 0;
  if (x.proto == "tcp") {
    fields = kTcpFields;
    old_count = kOldTcpFields;
  } else if (x.proto == "udp") {
    fields = kUdpFields;
    old_count = kOldUdpFields;
  } else {
    return x;  // rdma, local, ...: a layout of their own, kept raw
  }
  const size_t n = t.size() - 1;
  if (n != old_count && n < fields.size()) {
    return line_error(line, fmt::format("{} xprt line has {} numbers; {} or {} expected", x.proto,
                                        n, old_count, fields.size()));
  }
  for (size_t i = 0; i < std::min(n, fields.size()); ++i) {
    const std::string_view token = t[i + 1];
    // idle_time is printed signed (%ld of a jiffies difference); a negative
    // value is a race with the last use, so it means "just used".
    if (fields[i].member == &NfsXprtStats::idle_time && token.size() > 1 && token[0] == '-' &&
        to_u64(token.substr(1))) {
      continue;
    }
    auto v = counter(token, line, fmt::format("{} xprt {}", x.proto, fields[i].name));
    if (!v) return v.error();
    x.*fields[i].member = *v;
  }
  return x;
}

enum class Section {
  kSkip,     // outside an NFS mount
  kHeader,   // opts, age, events, bytes, RPC iostats version, xprt
  kOps,      // per-op statistics
  kUnknown,  // a section this parser does not know: its lines are skipped
};

class Parser {
 public:
  Expected<std::vector<NfsMountStats>> run(std::string_view text) {
    size_t line = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      ++line;
      auto ok = on_line(text.substr(pos, end - pos), line);
      if (!ok) return ok.error();
      pos = end + 1;
    }
    return std::move(mounts_);
  }

 private:
  Expected<void> on_line(std::string_view text, size_t line) {
    if (trim(text).empty()) return {};
    // Mount lines start at column 0; a mount's own lines are indented.
    if (text.substr(0, 7) == "device " || text.substr(0, 10) == "no device ") {
      auto m = parse_mount_line(text, line);
      if (!m) return m.error();
      if (m->fstype != "nfs" && m->fstype != "nfs4") {
        section_ = Section::kSkip;
        return {};
      }
      NfsMountStats& s = mounts_.emplace_back();
      s.device = std::move(m->device);
      s.mount_point = std::move(m->mount_point);
      s.fstype = std::move(m->fstype);
      s.statvers = std::move(m->statvers);
      section_ = Section::kHeader;
      return {};
    }
    if (section_ == Section::kSkip || (text[0] != ' ' && text[0] != '\t')) return {};
    NfsMountStats& mount = mounts_.back();
    const std::string_view body = trim(text);
    const size_t colon = body.find(':');
    if (colon == std::string_view::npos) {
      // A colon-less line heads a section ("per-op statistics").
      section_ = body == "per-op statistics" ? Section::kOps : Section::kUnknown;
      return {};
    }
    const std::string_view label = trim(body.substr(0, colon));
    const std::string_view rest = trim(body.substr(colon + 1));
    if (label == "RPC iostats version") {
      const std::vector<std::string_view> t = split_blanks(rest);
      if (t.empty()) return line_error(line, "RPC iostats version line has no version");
      mount.iostats_version = std::string(t[0]);
      section_ = Section::kHeader;
      return {};
    }
    if (section_ == Section::kOps) {
      auto op = parse_op_line(label, rest, mount.iostats_version, line);
      if (!op) return op.error();
      mount.ops.push_back(std::move(*op));
      return {};
    }
    if (section_ != Section::kHeader) return {};
    if (label == "opts") {
      mount.opts = parse_opts(rest);
    } else if (label == "age") {
      auto age = counter(rest, line, "age");
      if (!age) return age.error();
      mount.age_s = *age;
    } else if (label == "events") {
      auto v = counters(split_blanks(rest), line, "events");
      if (!v) return v.error();
      mount.events = std::move(*v);
    } else if (label == "bytes") {
      const std::vector<std::string_view> t = split_blanks(rest);
      if (t.size() < 8) {
        return line_error(line, fmt::format("bytes line has {} counters; 8 expected", t.size()));
      }
      auto v = counters(t, line, "bytes");
      if (!v) return v.error();
      mount.bytes = std::move(*v);
    } else if (label == "xprt") {
      auto x = parse_xprt_line(rest, line);
      if (!x) return x.error();
      mount.xprts.push_back(std::move(*x));
    }
    // Any other label (caps, sec, nfsv4, fsc, impl_id, ...) is not needed here.
    return {};
  }

  std::vector<NfsMountStats> mounts_;
  Section section_ = Section::kSkip;
};

double ratio(uint64_t num, uint64_t den) {
  return den == 0 ? 0.0 : static_cast<double>(num) / static_cast<double>(den);
}

const NfsOpStats* find_op(const std::vector<NfsOpStats>& ops, std::string_view name) {
  for (const auto& op : ops) {
    if (op.op == name) return &op;
  }
  return nullptr;
}

std::vector<uint64_t> vector_delta(const std::vector<uint64_t>& before,
                                   const std::vector<uint64_t>& after) {
  std::vector<uint64_t> out(after.size());
  for (size_t i = 0; i < after.size(); ++i) {
    out[i] = counter_delta(i < before.size() ? before[i] : 0, after[i]);
  }
  return out;
}

}  // namespace

double NfsOpStats::avg_queue_ms() const { return ratio(queue_ms, ops); }
double NfsOpStats::avg_rtt_ms() const { return ratio(rtt_ms, ops); }
double NfsOpStats::avg_execute_ms() const { return ratio(execute_ms, ops); }
double NfsOpStats::bytes_per_op() const { return ratio(bytes_sent + bytes_received, ops); }

double NfsXprtStats::avg_requests_outstanding() const { return ratio(req_u, sends); }
double NfsXprtStats::avg_backlog_queue() const { return ratio(backlog_u, sends); }
double NfsXprtStats::avg_sending_queue() const { return ratio(sending_u, sends); }
double NfsXprtStats::avg_pending_queue() const { return ratio(pending_u, sends); }

uint64_t nfs_bytes(const std::vector<uint64_t>& bytes, NfsBytes which) {
  const auto i = static_cast<size_t>(which);
  return i < bytes.size() ? bytes[i] : 0;
}

const NfsOpStats* NfsMountStats::op(std::string_view name) const { return find_op(ops, name); }
const NfsOpStats* NfsMountDelta::op(std::string_view name) const { return find_op(ops, name); }

Expected<std::vector<NfsMountStats>> parse_mountstats(std::string_view text) {
  return Parser().run(text);
}

Expected<std::vector<NfsMountStats>> read_mountstats(const std::string& path) {
  // A few KiB per mount (its options, events, transport and per-op lines):
  // 256 MiB is tens of thousands of NFS mounts, more than any node has.
  constexpr InputLimit kMountstatsLimit{256u << 20, "mountstats is a few KiB per mount", true};
  auto text = read_file_bounded(path, kMountstatsLimit, "");
  if (!text) return text.error();
  auto mounts = parse_mountstats(*text);
  if (!mounts) return make_error(fmt::format("{}: {}", path, mounts.error().message));
  return mounts;
}

uint64_t counter_delta(uint64_t before, uint64_t after) {
  // Unsigned subtraction is defined modulo 2^64: exactly the wrap we need.
  return after - before;
}

NfsOpStats delta(const NfsOpStats& before, const NfsOpStats& after) {
  NfsOpStats d;
  d.op = after.op;
  d.ops = counter_delta(before.ops, after.ops);
  d.transmissions = counter_delta(before.transmissions, after.transmissions);
  d.major_timeouts = counter_delta(before.major_timeouts, after.major_timeouts);
  d.bytes_sent = counter_delta(before.bytes_sent, after.bytes_sent);
  d.bytes_received = counter_delta(before.bytes_received, after.bytes_received);
  d.queue_ms = counter_delta(before.queue_ms, after.queue_ms);
  d.rtt_ms = counter_delta(before.rtt_ms, after.rtt_ms);
  d.execute_ms = counter_delta(before.execute_ms, after.execute_ms);
  if (before.errors && after.errors) d.errors = counter_delta(*before.errors, *after.errors);
  return d;
}

NfsXprtStats delta(const NfsXprtStats& before, const NfsXprtStats& after) {
  NfsXprtStats d = after;
  d.bind_count = counter_delta(before.bind_count, after.bind_count);
  d.connect_count = counter_delta(before.connect_count, after.connect_count);
  d.connect_time = counter_delta(before.connect_time, after.connect_time);
  d.sends = counter_delta(before.sends, after.sends);
  d.receives = counter_delta(before.receives, after.receives);
  d.bad_xids = counter_delta(before.bad_xids, after.bad_xids);
  d.req_u = counter_delta(before.req_u, after.req_u);
  d.backlog_u = counter_delta(before.backlog_u, after.backlog_u);
  d.sending_u = counter_delta(before.sending_u, after.sending_u);
  d.pending_u = counter_delta(before.pending_u, after.pending_u);
  return d;
}

NfsMountDelta delta(const NfsMountStats& before, const NfsMountStats& after) {
  if (after.age_s < before.age_s) {
    // Mounted again since `before`: its counters restarted from 0.
    NfsMountDelta d = delta(NfsMountStats{}, after);
    d.since_mount = true;
    return d;
  }
  NfsMountDelta d;
  d.device = after.device;
  d.mount_point = after.mount_point;
  d.fstype = after.fstype;
  d.interval_s = after.age_s - before.age_s;
  d.events = vector_delta(before.events, after.events);
  d.bytes = vector_delta(before.bytes, after.bytes);
  for (size_t i = 0; i < after.xprts.size(); ++i) {
    const bool paired = i < before.xprts.size() && before.xprts[i].proto == after.xprts[i].proto;
    d.xprts.push_back(delta(paired ? before.xprts[i] : NfsXprtStats{}, after.xprts[i]));
  }
  for (const auto& op : after.ops) {
    if (const NfsOpStats* b = find_op(before.ops, op.op)) {
      d.ops.push_back(delta(*b, op));
    } else {
      NfsOpStats zero;
      if (op.errors) zero.errors = 0;
      d.ops.push_back(delta(zero, op));
    }
  }
  return d;
}

std::vector<NfsMountDelta> delta(const std::vector<NfsMountStats>& before,
                                 const std::vector<NfsMountStats>& after) {
  std::vector<NfsMountDelta> out;
  std::vector<bool> used(before.size(), false);
  for (const auto& a : after) {
    const NfsMountStats* match = nullptr;
    for (size_t i = 0; i < before.size() && match == nullptr; ++i) {
      if (!used[i] && before[i].device == a.device && before[i].mount_point == a.mount_point) {
        used[i] = true;
        match = &before[i];
      }
    }
    if (match != nullptr) {
      out.push_back(delta(*match, a));
    } else {
      NfsMountDelta d = delta(NfsMountStats{}, a);
      d.since_mount = true;
      out.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace ckpt
