// A synthetic healthy node log for the tests: independent subsystems (NIC
// driver, GPU peer-memory registrations, systemd sessions, container network
// links, AppArmor, NFS, sshd, ACPI noise at err) each with its own order of
// events, interleaved at random, as a real node's kernel log and journal are;
// benign novelty in its second half as a healthy node prints it (a new
// systemd unit started again and again, new devices, log rotation); and
// faults planted there (the known node faults: Xid 79 and 74, a machine
// check, an NFS server not responding, an uncorrectable memory error, a NIC
// health failure, disk I/O errors, an EXT4 error, an InfiniBand port going
// down, an uncorrectable PCIe error), in a random order. Every seed gives
// another log: the detector is not tuned to one. render() writes a line as a
// syslog file, `dmesg -T` or `journalctl -o json` would hold it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/logwatch/evaluation.h"
#include "analysis/logwatch/line_format.h"

namespace ckpt::logwatch::testing {

struct SyntheticLog {
  std::vector<LabelledLine> lines;            // anomaly: a planted fault's line
  std::size_t faults = 0;                     // planted faults (one may span several lines)
  std::vector<std::size_t> fault_first_line;  // 0-based index of each fault's first line
  std::vector<std::string> fault_kinds;       // each planted fault's known-fault kind, in order
  std::size_t benign_novel_lines = 0;         // lines of benign novelty in the second half
};

// The formats render() writes: what the line formats of line_format.h read.
enum class NodeLogFormat { kSyslog, kDmesgT, kJournalJson };
inline const char* to_string(NodeLogFormat f) {
  switch (f) {
    case NodeLogFormat::kSyslog:
      return "syslog";
    case NodeLogFormat::kDmesgT:
      return "dmesg -T";
    case NodeLogFormat::kJournalJson:
      return "journald JSON";
  }
  return "?";
}
// The line format that reads `f` back (dmesg -T is read as syslog: its
// bracketed time is stripped the same way).
inline LineFormat line_format_of(NodeLogFormat f) {
  return f == NodeLogFormat::kJournalJson ? LineFormat::kJournal : LineFormat::kSyslog;
}

// How `line` (a message as the kernel or a daemon printed it, `IDENT[PID]:`
// for a daemon's) is written at second `t` of the log: a syslog file
// (`Mon dd hh:mm:ss host IDENT: ...`, no level: a file written by rsyslog's
// default template has none), `dmesg -T` (`[Day Mon dd hh:mm:ss yyyy] ...`,
// no level) or `journalctl -o json` (PRIORITY, SYSLOG_IDENTIFIER,
// SYSLOG_PID, MESSAGE).
inline std::string render(const LabelledLine& line, NodeLogFormat format, std::uint64_t t) {
  const unsigned hh = static_cast<unsigned>((t / 3600) % 24);
  const unsigned mm = static_cast<unsigned>((t / 60) % 60);
  const unsigned ss = static_cast<unsigned>(t % 60);
  const unsigned day = 1 + static_cast<unsigned>(t / 86400) % 28;
  // A daemon's line is `IDENT[PID]: text`; anything else is the kernel's.
  std::string ident = "kernel";
  std::string pid;
  std::string text = line.message;
  if (const auto colon = text.find("]: "); colon != std::string::npos) {
    const auto open = text.find('[');
    if (open != std::string::npos && open < colon && text.find(' ') > open) {
      ident = text.substr(0, open);
      pid = text.substr(open + 1, colon - open - 1);
      text = text.substr(colon + 3);
    }
  }
  switch (format) {
    case NodeLogFormat::kSyslog:
      return fmt::format("Dec {:2} {:02}:{:02}:{:02} gpu-node17 {}{}: {}", day, hh, mm, ss, ident,
                         pid.empty() ? "" : "[" + pid + "]", text);
    case NodeLogFormat::kDmesgT:
      return fmt::format("[Fri Dec {:2} {:02}:{:02}:{:02} 2026] {}", day, hh, mm, ss, line.message);
    case NodeLogFormat::kJournalJson: {
      nlohmann::json j = {
          {"__REALTIME_TIMESTAMP", std::to_string(1764892800000000ULL + t * 1000000)},
          {"PRIORITY", std::to_string(line.severity.value_or(6))},
          {"SYSLOG_IDENTIFIER", ident},
          {"MESSAGE", text}};
      if (!pid.empty()) j["SYSLOG_PID"] = pid;
      return j.dump();
    }
  }
  return line.message;
}

class SyntheticNodeLog {
 public:
  explicit SyntheticNodeLog(std::uint64_t seed) : rng_(seed) {}

  // `lines` healthy lines with `faults` faults planted in the second half, each
  // at a random place in a stretch of its own (faults are rare: a node with
  // several at once is failing, and the alert budget, alarm_grouper.h, then
  // holds back the less severe ones).
  // With `benign_novelty`, the second half also holds what a healthy node
  // prints new: a systemd unit it never ran before, started 45 times at
  // random; new USB and NVMe devices; a log rotation.
  SyntheticLog generate(std::size_t lines, std::size_t faults, bool benign_novelty = false) {
    SyntheticLog log;
    std::vector<std::size_t> at;
    const std::size_t stretch = (lines / 2) / faults;
    for (std::size_t f = 0; f < faults; ++f)
      at.push_back(lines / 2 + f * stretch + 20 + pick(stretch - 40));
    std::vector<std::size_t> novel_at;
    if (benign_novelty) {
      for (int i = 0; i < 45; ++i) novel_at.push_back(lines / 2 + pick(lines / 2));
      std::sort(novel_at.begin(), novel_at.end());
    }
    const std::string unit = kNewUnits[pick(std::size(kNewUnits))];
    std::size_t next_fault = 0;
    std::size_t next_novel = 0;
    std::vector<std::size_t> kinds(kFaultKinds);
    for (std::size_t k = 0; k < kFaultKinds; ++k) kinds[k] = k;
    std::shuffle(kinds.begin(), kinds.end(), rng_);
    while (log.lines.size() < lines) {
      if (next_fault < at.size() && log.lines.size() >= at[next_fault]) {
        log.fault_first_line.push_back(log.lines.size());
        log.fault_kinds.push_back(plant(kinds[next_fault % kinds.size()], log.lines));
        ++next_fault;
        continue;
      }
      if (next_novel < novel_at.size() && log.lines.size() >= novel_at[next_novel]) {
        const std::size_t before = log.lines.size();
        benign_new(unit, next_novel, log.lines);
        log.benign_novel_lines += log.lines.size() - before;
        ++next_novel;
        continue;
      }
      healthy(log.lines);
    }
    log.faults = next_fault;
    return log;
  }

  static constexpr std::size_t kFaultKinds = 10;

 private:
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }
  std::string hex(int digits) {
    std::string s;
    for (int i = 0; i < digits; ++i) s += "0123456789abcdef"[pick(16)];
    return s;
  }
  void add(std::vector<LabelledLine>& out, std::string text, Severity level, bool fault = false) {
    out.push_back({std::move(text), fault, {}, level});
  }

  // Units a node may start for the first time in the scored half: a new
  // timer or service its configuration management installed.
  static constexpr const char* kNewUnits[] = {
      "Nightly scrub of the scratch pool", "DCGM health check timer",
      "Refresh of the fabric manager topology", "Weekly fstrim of local NVMe"};
  // One occurrence of benign novelty: the new unit's start (with its
  // finish), a new device now and then, a log rotation once.
  void benign_new(const std::string& unit, std::size_t n, std::vector<LabelledLine>& out) {
    add(out, fmt::format("systemd[1]: Starting {}...", unit), 6);
    add(out, fmt::format("systemd[1]: Started {}.", unit), 6);
    if (n % 15 == 3)
      add(out,
          fmt::format("usb 3-{}: new SuperSpeed USB device number {} using xhci_hcd", 1 + pick(4),
                      2 + pick(20)),
          6);
    if (n % 15 == 7)
      add(out,
          fmt::format("nvme nvme{}: pci function 0000:{}:00.0", 4 + pick(4), pick(2) ? "c1" : "e2"),
          6);
    if (n == 11) {
      add(out, "systemd[1]: Starting Rotate log files...", 6);
      add(out,
          fmt::format("rsyslogd[{}]: [origin software=\"rsyslogd\" swVersion=\"8.2302.0\" "
                      "x-pid=\"{}\" x-info=\"https://www.rsyslog.com\"] rsyslogd was HUPed",
                      812, 812),
          6);
      add(out, "systemd[1]: logrotate.service: Deactivated successfully.", 6);
    }
  }

  void healthy(std::vector<LabelledLine>& out) {
    // Weights: chatty subsystems more often; each writes its own sequence.
    if (pick(1500) == 0) return rare(out);
    const std::size_t r = pick(100);
    if (r < 18) {
      session(out);
    } else if (r < 34) {
      veth(out);
    } else if (r < 50) {
      peermem(out);
    } else if (r < 60) {
      // (A healthy node's links come up; one going down is a fault, below.)
      add(out,
          fmt::format("mlx5_core 0000:{}:00.{} ens{}f{}np{}: Link up", pick(2) ? "3b" : "af",
                      pick(2), pick(2) ? 1 : 2, pick(2), pick(2)),
          6);
    } else if (r < 68) {
      add(out,
          fmt::format("audit: type=1400 audit({}.{}:{}): apparmor=\"DENIED\" operation=\"open\" "
                      "profile=\"cri-containerd.apparmor.d\" name=\"/proc/{}/mounts\" pid={}",
                      1700000000 + pick(100000), pick(1000), pick(100000), pick(60000),
                      pick(60000)),
          5);
    } else if (r < 76) {
      sshd(out);
    } else if (r < 82) {
      add(out, fmt::format("NFS: nfs4_reclaim_open_state: unhandled error {}", 10000 + pick(20)),
          4);
    } else if (r < 88) {
      add(out, fmt::format("ACPI Error: AE_NOT_FOUND, Evaluating _PSS (20210730/psparse-{})", 529),
          3);
    } else if (r < 94) {
      add(out,
          fmt::format("perf: interrupt took too long ({} > {}), lowering "
                      "kernel.perf_event_max_sample_rate to {}",
                      2500 + pick(500), 2500, 79000 + pick(1000)),
          4);
    } else {
      add(out,
          fmt::format("systemd[1]: Started {}.", pick(2) ? "Daily apt upgrade and clean activities"
                                                         : "Cleanup of Temporary Directories"),
          6);
    }
  }
  // Routine events seen once in thousands of lines, at info: a rule that
  // flags every new template flags them; a healthy node prints them.
  void rare(std::vector<LabelledLine>& out) {
    switch (pick(5)) {
      case 0:
        add(out, "systemd[1]: Starting Rotate log files...", 6);
        break;
      case 1:
        add(out,
            fmt::format("usb 1-{}: new high-speed USB device number {} using xhci_hcd", 1 + pick(4),
                        2 + pick(10)),
            6);
        break;
      case 2:
        add(out, "EXT4-fs (nvme0n1p2): re-mounted. Opts: errors=remount-ro", 6);
        break;
      case 3:
        add(out,
            fmt::format("nvidia-persistenced[{}]: device 0000:{}:00.0 - persistence mode enabled.",
                        1000 + pick(500), pick(2) ? "3b" : "af"),
            6);
        break;
      default:
        add(out,
            fmt::format("containerd[{}]: time=\"2026-01-01T00:00:00Z\" level=info msg=\"shim "
                        "disconnected\" id={}",
                        700 + pick(100), hex(16)),
            6);
        break;
    }
  }
  void session(std::vector<LabelledLine>& out) {
    const auto id = 100 + pick(9000);
    const auto pid = 800 + pick(100);
    add(out, fmt::format("systemd-logind[{}]: New session {} of user root.", pid, id), 6);
    add(out, fmt::format("systemd[1]: Started Session {} of User root.", id), 6);
    if (pick(2))
      add(out,
          fmt::format("systemd-logind[{}]: Session {} logged out. Waiting for processes to exit.",
                      pid, id),
          6);
    add(out, fmt::format("systemd-logind[{}]: Removed session {}.", pid, id), 6);
  }
  void veth(std::vector<LabelledLine>& out) {
    const std::string dev = "veth" + hex(7);
    const auto port = 1 + pick(30);
    if (pick(2)) {
      add(out, fmt::format("cni0: port {}({}) entered blocking state", port, dev), 6);
      add(out, fmt::format("device {} entered promiscuous mode", dev), 6);
      add(out, fmt::format("IPv6: ADDRCONF(NETDEV_CHANGE): {}: link becomes ready", dev), 6);
      add(out, fmt::format("cni0: port {}({}) entered forwarding state", port, dev), 6);
    } else {
      add(out, fmt::format("cni0: port {}({}) entered disabled state", port, dev), 6);
      add(out, fmt::format("device {} left promiscuous mode", dev), 6);
    }
  }
  void peermem(std::vector<LabelledLine>& out) {
    const std::string addr = "0x7f" + hex(10);
    add(out,
        fmt::format("nvidia-peermem nv_mem_get_pages: pid={} addr={} size={}", pick(60000), addr,
                    2097152 * (1 + pick(8))),
        7);
    if (pick(3)) add(out, fmt::format("nvidia-peermem nv_mem_put_pages: addr={}", addr), 7);
  }
  void sshd(std::vector<LabelledLine>& out) {
    const auto pid = 2000 + pick(60000);
    add(out,
        fmt::format("sshd[{}]: Accepted publickey for root from 10.0.{}.{} port {} ssh2: "
                    "ED25519 SHA256:{}",
                    pid, pick(255), pick(255), 30000 + pick(30000), hex(12)),
        6);
    add(out,
        fmt::format("sshd[{}]: pam_unix(sshd:session): session opened for user root(uid=0) "
                    "by (uid=0)",
                    pid),
        6);
  }

  // One fault: its lines are labelled anomalous; the log's own levels. Its
  // known-fault kind (model/vocabulary.h) is returned.
  std::string plant(std::size_t kind, std::vector<LabelledLine>& out) {
    switch (kind) {
      case 0:  // the GPU fell off the bus: Xid 79, printed at err, repeated
        for (std::size_t i = 0, n = 1 + pick(3); i < n; ++i)
          add(out,
              fmt::format("NVRM: Xid (PCI:0000:{}:00): 79, pid={}, name=python3, GPU has fallen "
                          "off the bus.",
                          pick(2) ? "3b" : "af", pick(60000)),
              3, true);
        return "gpu_xid";
      case 1:  // the machine check handler: events logged
        add(out, "mce: [Hardware Error]: Machine check events logged", 2, true);
        return "machine_check";
      case 2:  // the NFS server stops answering: notice, a burst
        for (std::size_t i = 0, n = 2 + pick(4); i < n; ++i)
          add(out, "nfs: server fs01 not responding, still trying", 5, true);
        return "kernel_nfs_not_responding";
      case 3:  // uncorrectable memory error: emerg
        add(out,
            fmt::format("EDAC MC{}: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#{}_DIMM#0 "
                        "(channel:{} slot:0 page:0x{} offset:0x0 grain:32)",
                        pick(2), pick(4), pick(4), hex(6)),
            0, true);
        return "memory_ecc_uncorrectable";
      case 4:  // the NIC's firmware health check fails: err
        add(out,
            fmt::format("mlx5_core 0000:3b:00.{}: poll_health:{}:(pid 0): device's health "
                        "compromised - reached miss count",
                        pick(2), 700 + pick(50)),
            3, true);
        return "nic_health";
      case 5:  // a disk fails writes: err, a burst
        for (std::size_t i = 0, n = 2 + pick(3); i < n; ++i)
          add(out,
              fmt::format("I/O error, dev nvme0n1, sector {} op 0x1:(WRITE) flags 0x800 "
                          "phys_seg 1 prio class 0",
                          pick(100000000)),
              3, true);
        return "disk_io_error";
      case 6:  // NVLink: Xid 74
        add(out,
            fmt::format("NVRM: Xid (PCI:0000:{}:00): 74, pid={}, name=python3, NVLink: fatal "
                        "error detected on link {}(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
                        pick(2) ? "cb" : "db", pick(60000), pick(18)),
            3, true);
        return "gpu_xid";
      case 7:  // the local file system: an EXT4 error
        add(out,
            fmt::format("EXT4-fs error (device nvme0n1p2): ext4_find_entry:1455: inode #{}: comm "
                        "python3: reading directory lblock 0",
                        2 + pick(100000)),
            3, true);
        return "filesystem_error";
      case 8:  // an InfiniBand port's link goes down (its IPoIB netdev)
        add(out,
            fmt::format("mlx5_core 0000:{}:00.0 ibp{}s0: Link down", pick(2) ? "ca" : "da",
                        202 + pick(20)),
            6, true);
        return "nic_link_down";
      default:  // an uncorrectable PCIe error
        add(out,
            fmt::format("pcieport 0000:{}:01.0: AER: Uncorrectable (Non-Fatal) error message "
                        "received from 0000:{}:00.0",
                        pick(2) ? "00" : "80", pick(2) ? "3b" : "af"),
            3, true);
        return "pcie_aer_uncorrectable";
    }
  }

  std::mt19937_64 rng_;
};

}  // namespace ckpt::logwatch::testing
