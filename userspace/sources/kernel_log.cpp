#include "sources/kernel_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <system_error>
#include <utility>

#include <fmt/format.h>

namespace ckpt {
namespace {

// CONSOLE_EXT_LOG_MAX (include/linux/printk.h): the kernel formats a record
// into a buffer this size, so no /dev/kmsg record is longer. A shorter
// buffer would make read() fail with EINVAL and skip the record.
constexpr size_t kReadBuffer = 8192;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string_view trim(std::string_view s) {
  const size_t first = s.find_first_not_of(' ');
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(' ') - first + 1);
}

template <typename T>
std::optional<T> to_number(std::string_view s) {
  T v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// msg_add_ext_text writes every byte below ' ', from 127, and '\' as
// "\xNN", so a backslash in a record always starts an escape. One that does
// not (a hand-written fixture) is kept as it is.
std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x') {
      const int hi = hex_digit(s[i + 2]);
      const int lo = hex_digit(s[i + 3]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

// Calls on_record(raw) for each record in `text`, its lines contiguous: a
// line not starting with a space begins a record, lines starting with one
// continue it. on_orphan() is called for a continuation with no record
// before it. Blank lines end the record and are otherwise skipped. A last
// line without its newline counts as a line.
template <typename OnRecord, typename OnOrphan>
void split_records(std::string_view text, OnRecord on_record, OnOrphan on_orphan) {
  size_t record_start = std::string_view::npos;
  size_t record_end = 0;
  const auto flush = [&] {
    if (record_start != std::string_view::npos) {
      on_record(text.substr(record_start, record_end - record_start));
    }
    record_start = std::string_view::npos;
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    const std::string_view line = text.substr(pos, (nl == std::string_view::npos ? end : nl) - pos);
    if (line.empty()) {
      flush();
    } else if (line.front() == ' ') {
      if (record_start == std::string_view::npos) {
        on_orphan();
      } else {
        record_end = end;
      }
    } else {
      flush();
      record_start = pos;
      record_end = end;
    }
    pos = end;
  }
  flush();
}

// --- fault formats -----------------------------------------------------------

// NVIDIA open-gpu-kernel-modules src/nvidia/src/kernel/gpu/rc/kernel_rc.c,
// krcReportXid_IMPL (535 to current):
//   "NVRM: Xid (PCI:%04x:%02x:%02x): %d, pid=%s, name=%s, %s\n"
//   "NVRM: Xid (PCI:%04x:%02x:%02x GPU-I:%02u): %d, pid=%s, name=%s, %s\n"
//   "NVRM: Xid (PCI:%04x:%02x:%02x GPU-I:%02u GPU-CI:%02u): %d, pid=%s, name=%s, %s\n"
// with pid "'<unknown>'" and name "<unknown>" when no channel is to blame.
// Older drivers print "pid=1234, <message>" with no name, or no pid at all.
std::optional<KernelFault> match_xid(std::string_view text) {
  constexpr std::string_view kPrefix = "NVRM: Xid (";
  if (!starts_with(text, kPrefix)) return std::nullopt;
  std::string_view rest = text.substr(kPrefix.size());
  const size_t close = rest.find("): ");
  if (close == std::string_view::npos) return std::nullopt;

  KernelFault f;
  f.kind = KernelFaultKind::GpuXid;
  std::string_view inside = rest.substr(0, close);
  size_t space = inside.find(' ');
  std::string_view address = inside.substr(0, space);
  if (starts_with(address, "PCI:")) address.remove_prefix(4);
  if (address.empty() || address.find(':') == std::string_view::npos ||
      address.find_first_not_of("0123456789abcdefABCDEF:.") != std::string_view::npos) {
    return std::nullopt;
  }
  f.pci = std::string(address);
  while (space != std::string_view::npos) {
    inside.remove_prefix(space + 1);
    space = inside.find(' ');
    const std::string_view token = inside.substr(0, space);
    // Attribution tokens newer drivers may add are skipped, not fatal.
    if (starts_with(token, "GPU-I:")) f.gpu_instance = to_number<uint32_t>(token.substr(6));
    if (starts_with(token, "GPU-CI:")) f.compute_instance = to_number<uint32_t>(token.substr(7));
  }

  rest.remove_prefix(close + 3);
  const size_t digits = rest.find_first_not_of("0123456789");
  auto xid = to_number<uint32_t>(rest.substr(0, digits));
  if (!xid) return std::nullopt;
  f.xid = *xid;
  f.category = xid_category(f.xid);
  rest = digits == std::string_view::npos ? std::string_view{} : rest.substr(digits);
  if (!rest.empty()) {
    if (rest.front() != ',') return std::nullopt;
    rest = trim(rest.substr(1));
  }
  // "key=value, " fields; a name holding ", " would end early and the rest
  // would go to the description.
  const auto field = [&rest](std::string_view key) -> std::optional<std::string_view> {
    if (!starts_with(rest, key)) return std::nullopt;
    const size_t end = rest.find(", ");
    const std::string_view value = rest.substr(
        key.size(), end == std::string_view::npos ? std::string_view::npos : end - key.size());
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 2);
    return value;
  };
  if (auto pid = field("pid=")) f.pid = to_number<uint32_t>(*pid);  // '<unknown>': none
  if (auto name = field("name=")) {
    if (*name != "<unknown>") f.comm = std::string(*name);
  }
  f.description = std::string(trim(rest));
  return f;
}

// net/sunrpc/clnt.c, rpc_check_timeout and call_decode, with
// clnt->cl_program->name "nfs" for the NFS program (fs/nfs/client.c):
//   "%s: server %s not responding, timed out\n"      (soft: the RPC fails)
//   "%s: server %s not responding, still trying\n"  (hard: it retries)
//   "%s: server %s OK\n"                             (a reply after either)
std::optional<KernelFault> match_nfs(std::string_view text) {
  constexpr std::string_view kPrefix = "nfs: server ";
  if (!starts_with(text, kPrefix)) return std::nullopt;
  const std::string_view rest = text.substr(kPrefix.size());
  const size_t space = rest.find(' ');
  if (space == 0 || space == std::string_view::npos) return std::nullopt;
  const std::string_view tail = rest.substr(space + 1);
  KernelFault f;
  f.server = std::string(rest.substr(0, space));
  if (tail == "OK") {
    f.kind = KernelFaultKind::NfsServerOk;
  } else if (tail == "not responding, still trying") {
    f.kind = KernelFaultKind::NfsServerNotResponding;
  } else if (tail == "not responding, timed out") {
    f.kind = KernelFaultKind::NfsServerNotResponding;
    f.timed_out = true;
  } else {
    return std::nullopt;
  }
  return f;
}

// The digits at the start of `s` after any blanks (the summary printed
// "pid=%5d" for a while), up to a ',' or the end.
std::optional<uint32_t> padded_number(std::string_view s) {
  return to_number<uint32_t>(trim(s.substr(0, s.find(','))));
}

// mm/oom_kill.c __oom_kill_process (since 2.6.37; the "%s: " reason since 5.0):
//   "%s: Killed process %d (%s) total-vm:%lukB, anon-rss:%lukB, file-rss:%lukB,
//    shmem-rss:%lukB, UID:%u pgtables:%lukB oom_score_adj:%hd\n"
// the reason being what out_of_memory() passes to oom_kill_process():
// "Out of memory", "Memory cgroup out of memory" or "Out of memory
// (oom_kill_allocating_task)". Older kernels print fewer counters.
std::optional<KernelFault> match_oom_kill(std::string_view text) {
  constexpr std::string_view kKilled = "Killed process ";
  KernelFault f;
  f.kind = KernelFaultKind::OomKill;
  std::string_view rest;
  if (starts_with(text, kKilled)) {
    rest = text.substr(kKilled.size());
  } else {
    const size_t at = text.find(": Killed process ");
    if (at == std::string_view::npos) return std::nullopt;
    const std::string_view reason = text.substr(0, at);
    if (!starts_with(reason, "Out of memory") &&
        !starts_with(reason, "Memory cgroup out of memory")) {
      return std::nullopt;
    }
    f.description = std::string(reason);
    rest = text.substr(at + 2 + kKilled.size());
  }
  const size_t open = rest.find(" (");
  if (open == std::string_view::npos) return std::nullopt;
  f.pid = to_number<uint32_t>(rest.substr(0, open));
  // The comm is any 15 bytes, parentheses included: end at ") total-vm:".
  const size_t close = rest.find(") total-vm:", open);
  if (!f.pid || close == std::string_view::npos) return std::nullopt;
  f.comm = std::string(rest.substr(open + 2, close - open - 2));
  const size_t uid = rest.find(", UID:", close);
  if (uid != std::string_view::npos) {
    const std::string_view value = rest.substr(uid + 6);
    f.uid = to_number<uint32_t>(value.substr(0, value.find(' ')));
  }
  return f;
}

// mm/oom_kill.c dump_oom_summary (4.19 on; dump_oom_victim in later trees),
// one line built with pr_cont:
//   "oom-kill:constraint=%s,nodemask=%*pbl"
//   ",cpuset=%s,mems_allowed=%*pbl"                   kernel/cgroup/cpuset.c
//   ",oom_memcg=%s" or ",global_oom", ",task_memcg=%s" mm/memcontrol.c
//   ",task=%s,pid=%d,uid=%d"                           (pid=%5d,uid=%5d at first)
// Cgroup paths and the comm may hold commas; the fixed tail is found from the end.
std::optional<KernelFault> match_oom_summary(std::string_view text) {
  constexpr std::string_view kPrefix = "oom-kill:";
  if (!starts_with(text, kPrefix)) return std::nullopt;
  const std::string_view body = text.substr(kPrefix.size());
  const size_t pid_at = body.rfind(",pid=");
  if (pid_at == std::string_view::npos) return std::nullopt;
  const size_t task_at = body.rfind(",task=", pid_at);
  if (task_at == std::string_view::npos) return std::nullopt;
  KernelFault f;
  f.kind = KernelFaultKind::OomSummary;
  f.pid = padded_number(body.substr(pid_at + 5));
  if (!f.pid) return std::nullopt;
  f.comm = std::string(body.substr(task_at + 6, pid_at - task_at - 6));
  if (const size_t uid_at = body.find(",uid=", pid_at); uid_at != std::string_view::npos) {
    f.uid = padded_number(body.substr(uid_at + 5));
  }
  if (starts_with(body, "constraint=")) {
    f.constraint = std::string(body.substr(11, body.find(',') - 11));
  }
  const std::string_view head = body.substr(0, task_at);
  const size_t task_memcg_at = head.find(",task_memcg=");
  if (const size_t at = head.find(",oom_memcg="); at != std::string_view::npos) {
    const size_t end =
        task_memcg_at != std::string_view::npos && task_memcg_at > at ? task_memcg_at : head.size();
    f.memcg = std::string(head.substr(at + 11, end - at - 11));
  }
  if (task_memcg_at != std::string_view::npos) {
    f.task_memcg = std::string(head.substr(task_memcg_at + 12));
  }
  return f;
}

std::string read_sysctl(const char* path) {
  std::ifstream in(path);
  std::string value;
  if (!(in >> value)) return {};
  return value;
}

}  // namespace

// --- records -----------------------------------------------------------------

std::optional<KmsgRecord> parse_kmsg_record(std::string_view raw) {
  const size_t nl = raw.find('\n');
  const std::string_view first = raw.substr(0, nl);
  std::string_view rest = nl == std::string_view::npos ? std::string_view{} : raw.substr(nl + 1);
  const size_t semi = first.find(';');
  if (semi == std::string_view::npos) return std::nullopt;

  std::array<std::string_view, 4> fields;
  std::string_view header = first.substr(0, semi);
  for (size_t i = 0; i < fields.size(); ++i) {
    const size_t comma = header.find(',');
    if (comma == std::string_view::npos && i + 1 < fields.size()) return std::nullopt;
    fields[i] = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
  }
  const auto prio = to_number<uint32_t>(fields[0]);
  const auto seq = to_number<uint64_t>(fields[1]);
  const auto ts_usec = to_number<uint64_t>(fields[2]);
  if (!prio || !seq || !ts_usec || fields[3].empty()) return std::nullopt;

  KmsgRecord r;
  r.seq = *seq;
  r.mono_ns = *ts_usec * 1000;
  r.level = static_cast<uint8_t>(*prio & 7);
  r.facility = *prio >> 3;
  r.fragment = fields[3].find_first_of("c+") != std::string_view::npos;
  r.text = unescape(first.substr(semi + 1));
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    if (line.empty() || line.front() != ' ') return std::nullopt;
    // The kernel prints only KEY=value here; anything else a later kernel
    // might add is skipped.
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    r.dict[unescape(line.substr(1, eq - 1))] = unescape(line.substr(eq + 1));
  }
  return r;
}

KmsgStream parse_kmsg_stream(std::string_view text) {
  KmsgStream out;
  split_records(
      text,
      [&out](std::string_view raw) {
        if (auto r = parse_kmsg_record(raw)) {
          out.records.push_back(std::move(*r));
        } else {
          ++out.malformed;
        }
      },
      [&out] { ++out.malformed; });
  return out;
}

// --- faults ------------------------------------------------------------------

std::string_view to_string(KernelFaultKind kind) {
  switch (kind) {
    case KernelFaultKind::GpuXid:
      return "gpu_xid";
    case KernelFaultKind::NfsServerNotResponding:
      return "nfs_server_not_responding";
    case KernelFaultKind::NfsServerOk:
      return "nfs_server_ok";
    case KernelFaultKind::OomKill:
      return "oom_kill";
    case KernelFaultKind::OomSummary:
      return "oom_summary";
  }
  return "unknown";
}

std::optional<KernelFault> match_kernel_fault(std::string_view text) {
  if (auto f = match_xid(text)) return f;
  if (auto f = match_nfs(text)) return f;
  if (auto f = match_oom_kill(text)) return f;
  return match_oom_summary(text);
}

// --- opening -----------------------------------------------------------------

KmsgAccess read_kmsg_access() {
  KmsgAccess a;
  const std::string dmesg_restrict = read_sysctl("/proc/sys/kernel/dmesg_restrict");
  if (dmesg_restrict == "0" || dmesg_restrict == "1") a.dmesg_restrict = dmesg_restrict == "1";
  a.printk_devkmsg = read_sysctl("/proc/sys/kernel/printk_devkmsg");
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    // "CapEff:\t000001ffffffffff"
    if (!starts_with(line, "CapEff:")) continue;
    const size_t start = line.find_first_not_of(" \t", 7);
    if (start == std::string::npos) break;
    uint64_t caps = 0;
    std::from_chars(line.data() + start, line.data() + line.size(), caps, 16);
    a.cap_sys_admin = (caps >> 21) & 1;  // CAP_SYS_ADMIN
    a.cap_syslog = (caps >> 34) & 1;     // CAP_SYSLOG
  }
  return a;
}

// devkmsg_open (kernel/printk/printk.c) refuses a reader with EPERM when
// printk_devkmsg=off, and through check_syslog_permissions when
// dmesg_restrict=1 and the caller has neither CAP_SYSLOG nor CAP_SYS_ADMIN;
// a security module (security_syslog) or a container's device cgroup can
// refuse it too.
std::string kmsg_open_error(std::string_view path, int error_number, const KmsgAccess& access) {
  std::string message =
      fmt::format("kernel log: cannot read {}: {}", path,
                  std::error_code(error_number, std::generic_category()).message());
  if (path != kKmsgPath) return message;
  std::string_view hint;
  if (error_number == EPERM || error_number == EACCES) {
    if (access.printk_devkmsg == "off") {
      hint = "kernel.printk_devkmsg=off turns /dev/kmsg off";
    } else if (access.dmesg_restrict.value_or(true) && !access.cap_syslog &&
               !access.cap_sys_admin) {
      hint = "kernel.dmesg_restrict=1 needs CAP_SYSLOG";
    } else {
      hint = "refused by a security module or the container's device policy";
    }
  } else if (error_number == ENOENT) {
    hint = "containers often have no /dev/kmsg: bind-mount the host's";
  }
  if (!hint.empty()) message += fmt::format(" ({})", hint);
  return message;
}

Expected<KmsgWatcher> KmsgWatcher::open(const std::string& path, bool from_end) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return make_error(kmsg_open_error(path, err, read_kmsg_access()));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 ||
      !(S_ISCHR(st.st_mode) || S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
    ::close(fd);
    return make_error(fmt::format("kernel log: {} is not /dev/kmsg, a file or a FIFO", path));
  }
  KmsgWatcher w(fd, path, S_ISCHR(st.st_mode));
  // A FIFO holds only what is written after we opened it: nothing to skip.
  if (from_end && !S_ISFIFO(st.st_mode) && lseek(fd, 0, SEEK_END) < 0) {
    return make_error(fmt::format("kernel log: cannot seek to the end of {}: {}", path,
                                  std::error_code(errno, std::generic_category()).message()));
  }
  return w;
}

KmsgWatcher::KmsgWatcher(KmsgWatcher&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      record_per_read_(other.record_per_read_),
      pending_(std::move(other.pending_)),
      next_seq_(other.next_seq_),
      lost_(other.lost_),
      records_read_(other.records_read_),
      malformed_(other.malformed_),
      error_(std::move(other.error_)) {}

KmsgWatcher& KmsgWatcher::operator=(KmsgWatcher&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    record_per_read_ = other.record_per_read_;
    pending_ = std::move(other.pending_);
    next_seq_ = other.next_seq_;
    lost_ = other.lost_;
    records_read_ = other.records_read_;
    malformed_ = other.malformed_;
    error_ = std::move(other.error_);
  }
  return *this;
}

KmsgWatcher::~KmsgWatcher() {
  if (fd_ >= 0) ::close(fd_);
}

// --- reading -----------------------------------------------------------------

std::vector<KernelFaultRecord> KmsgWatcher::read_available() {
  std::vector<KernelFaultRecord> out;
  if (fd_ < 0 || error_) return out;
  if (record_per_read_) {
    read_records(out);
  } else {
    read_stream(out);
  }
  return out;
}

void KmsgWatcher::read_records(std::vector<KernelFaultRecord>& out) {
  std::array<char, kReadBuffer> buf;
  while (true) {
    const ssize_t n = ::read(fd_, buf.data(), buf.size());
    if (n > 0) {
      take_record(std::string_view(buf.data(), static_cast<size_t>(n)), out);
      continue;
    }
    if (n == 0) return;  // not done by /dev/kmsg, but another character device may
    switch (errno) {
      case EINTR:
        continue;
      case EAGAIN:
        return;  // caught up
      case EPIPE:
        // Records were overwritten before we read them; the kernel moved us
        // to the oldest one left. The next record's sequence number tells
        // how many went; with none read before, all we know is one did.
        if (!next_seq_) ++lost_;
        continue;
      case EINVAL:
        // Longer than our buffer (not possible at CONSOLE_EXT_LOG_MAX): the
        // kernel has already stepped past it, so count it here and keep the
        // gap arithmetic from counting it again.
        ++lost_;
        if (next_seq_) ++*next_seq_;
        continue;
      default:
        error_ = make_error(fmt::format("kernel log: reading {} failed: {}", path_,
                                        std::error_code(errno, std::generic_category()).message()));
        return;
    }
  }
}

void KmsgWatcher::read_stream(std::vector<KernelFaultRecord>& out) {
  std::array<char, kReadBuffer> buf;
  while (true) {
    const ssize_t n = ::read(fd_, buf.data(), buf.size());
    if (n > 0) {
      pending_.append(buf.data(), static_cast<size_t>(n));
      continue;
    }
    if (n == 0 || errno == EAGAIN) break;
    if (errno == EINTR) continue;
    error_ = make_error(fmt::format("kernel log: reading {} failed: {}", path_,
                                    std::error_code(errno, std::generic_category()).message()));
    break;
  }
  // Whole lines only: the rest may be a line still being written.
  const size_t cut = pending_.rfind('\n');
  if (cut == std::string::npos) return;
  split_records(
      std::string_view(pending_).substr(0, cut + 1),
      [this, &out](std::string_view raw) { take_record(raw, out); },
      [this] {
        ++records_read_;
        ++malformed_;
      });
  pending_.erase(0, cut + 1);
}

void KmsgWatcher::take_record(std::string_view raw, std::vector<KernelFaultRecord>& out) {
  ++records_read_;
  auto record = parse_kmsg_record(raw);
  if (!record) {
    ++malformed_;
    return;
  }
  take(std::move(*record), out);
}

void KmsgWatcher::take(KmsgRecord record, std::vector<KernelFaultRecord>& out) {
  if (next_seq_ && record.seq > *next_seq_) lost_ += record.seq - *next_seq_;
  next_seq_ = record.seq + 1;
  if (observer_) observer_(record);
  if (auto fault = match_kernel_fault(record.text)) {
    out.push_back(KernelFaultRecord{std::move(record), std::move(*fault)});
  }
}

}  // namespace ckpt
