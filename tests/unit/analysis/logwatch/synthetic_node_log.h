// A synthetic healthy node log for the tests: independent subsystems (NIC
// driver, GPU peer-memory registrations, systemd sessions, container network
// links, AppArmor, NFS, sshd, ACPI noise at err) each with its own order of
// events, interleaved at random, as a real node's kernel log and journal are;
// and faults planted in its second half (GPU Xid, machine check, NFS server
// not responding, uncorrectable memory error, NIC health failure, disk I/O
// errors). Every seed gives another log: the detector is not tuned to one.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/logwatch/evaluation.h"

namespace ckpt::logwatch::testing {

struct SyntheticLog {
  std::vector<LabelledLine> lines;            // anomaly: a planted fault's line
  std::size_t faults = 0;                     // planted faults (one may span several lines)
  std::vector<std::size_t> fault_first_line;  // 0-based index of each fault's first line
};

class SyntheticNodeLog {
 public:
  explicit SyntheticNodeLog(std::uint64_t seed) : rng_(seed) {}

  // `lines` healthy lines with `faults` faults planted in the second half, each
  // at a random place in a stretch of its own (faults are rare: a node with
  // several at once is failing, and the alert budget, alarm_grouper.h, then
  // holds back the less severe ones).
  SyntheticLog generate(std::size_t lines, std::size_t faults) {
    SyntheticLog log;
    std::vector<std::size_t> at;
    const std::size_t stretch = (lines / 2) / faults;
    for (std::size_t f = 0; f < faults; ++f)
      at.push_back(lines / 2 + f * stretch + 20 + pick(stretch - 40));
    std::size_t next_fault = 0;
    std::vector<std::size_t> kinds = {0, 1, 2, 3, 4, 5};
    std::shuffle(kinds.begin(), kinds.end(), rng_);
    while (log.lines.size() < lines) {
      if (next_fault < at.size() && log.lines.size() >= at[next_fault]) {
        log.fault_first_line.push_back(log.lines.size());
        plant(kinds[next_fault % kinds.size()], log.lines);
        ++next_fault;
        continue;
      }
      healthy(log.lines);
    }
    log.faults = next_fault;
    return log;
  }

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
      add(out,
          fmt::format("mlx5_core 0000:{}:00.{}: mlx5e_update_carrier: Link {}",
                      pick(2) ? "3b" : "af", pick(2), pick(4) ? "up" : "down"),
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

  // One fault: its lines are labelled anomalous; the log's own levels.
  void plant(std::size_t kind, std::vector<LabelledLine>& out) {
    switch (kind) {
      case 0:  // the GPU fell off the bus: Xid 79, printed at err, repeated
        for (std::size_t i = 0, n = 1 + pick(3); i < n; ++i)
          add(out,
              fmt::format("NVRM: Xid (PCI:0000:{}:00): 79, pid={}, GPU has fallen off the bus.",
                          pick(2) ? "3b" : "af", pick(60000)),
              3, true);
        break;
      case 1:  // a machine check: crit
        add(out,
            fmt::format("mce: [Hardware Error]: CPU {}: Machine Check: 0 Bank 5: be{}", pick(64),
                        hex(14)),
            2, true);
        break;
      case 2:  // the NFS server stops answering: notice, a burst
        for (std::size_t i = 0, n = 2 + pick(4); i < n; ++i)
          add(out, "nfs: server fs01 not responding, still trying", 5, true);
        break;
      case 3:  // uncorrectable memory error: emerg
        add(out,
            fmt::format("EDAC MC{}: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#{}_DIMM#0 "
                        "(channel:{} slot:0 page:0x{} offset:0x0 grain:32)",
                        pick(2), pick(4), pick(4), hex(6)),
            0, true);
        break;
      case 4:  // the NIC's firmware health check fails: err
        add(out,
            fmt::format("mlx5_core 0000:3b:00.{}: mlx5_health_check:{}: device's health "
                        "compromised - reached miss count",
                        pick(2), 700 + pick(50)),
            3, true);
        break;
      default:  // a disk fails writes: err, a burst
        for (std::size_t i = 0, n = 2 + pick(3); i < n; ++i)
          add(out,
              fmt::format("blk_update_request: I/O error, dev nvme0n1, sector {} op 0x1:(WRITE) "
                          "flags 0x800 phys_seg 1 prio class 0",
                          pick(100000000)),
              3, true);
        break;
    }
  }

  std::mt19937_64 rng_;
};

}  // namespace ckpt::logwatch::testing
