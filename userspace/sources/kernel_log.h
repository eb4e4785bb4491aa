// The kernel log (/dev/kmsg) while a job runs: the faults the kernel reported
// that explain a stalled or dead checkpoint (a GPU that fell off the bus, an
// NFS server that stopped answering, an OOM kill), to attach to the job's
// evidence and trace.
//
// Record layout (Documentation/ABI/testing/dev-kmsg; kernel/printk/printk.c
// info_print_ext_header, msg_print_ext_body): each read() returns one record,
//
//   <prio>,<seq>,<ts_usec>,<flags>[,more];<message>\n
//    SUBSYSTEM=pci\n                      (optional dictionary lines, each
//    DEVICE=+pci:0000:3b:00.0\n            starting with a space)
//
// prio is facility << 3 | level; the message and dictionary escape bytes
// below 0x20, from 0x7f, and '\' itself as \xNN (msg_add_ext_text).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "model/xid_catalogue.h"

namespace ckpt {

inline constexpr std::string_view kKmsgPath = "/dev/kmsg";

struct KmsgRecord {
  uint64_t seq = 0;  // the kernel's record sequence number; +1 per record, gaps are lost records
  // ts_usec * 1000: the printk timestamp, local_clock() when the line was
  // logged (printk.c vprintk_store), standing in for CLOCK_MONOTONIC but not
  // it. local_clock runs on the raw sched_clock while CLOCK_MONOTONIC is
  // slewed by NTP, so the two drift apart by the frequency correction (tens
  // of ppm: up to seconds a day of uptime); and whether sched_clock counts
  // time in suspend depends on the architecture, so they can also differ by
  // the time spent suspended. Good to place a fault within a job, not to
  // order it against eBPF events to the millisecond.
  uint64_t mono_ns = 0;
  uint8_t level = 0;      // prio & 7: 0 emerg ... 3 err, 4 warning ... 7 debug
  uint32_t facility = 0;  // prio >> 3: 0 is the kernel (LOG_KERN)
  // flags 'c' (first piece) or '+' (later piece, kernels before 5.10): the
  // record is a fragment of a printk line continued in the next record. Not
  // reassembled here: none of the fault lines below spans records except the
  // OOM summary, and only when the kernel could not merge it.
  bool fragment = false;
  std::string text;                         // the message, \xNN unescaped
  std::map<std::string, std::string> dict;  // "SUBSYSTEM" -> "pci", "DEVICE" -> "+pci:0000:3b:00.0"

  // A write to /dev/kmsg cannot use facility 0 (devkmsg_write makes it
  // LOG_USER), so facility 0 proves the kernel wrote the line; root can
  // inject any other text, which the consumer may want to tell apart.
  [[nodiscard]] bool from_kernel() const { return facility == 0; }
};

// One record as read() returned it; nullopt when the header is not
// "<number>,<number>,<number>,<flags>[,...];" or a line after the first
// does not start with a space. Unknown header fields after the flags (the
// ABI reserves them; CONFIG_PRINTK_CALLER adds "caller=T123") are ignored.
std::optional<KmsgRecord> parse_kmsg_record(std::string_view raw);

// Records as a file holds them: what `cat /dev/kmsg` writes, each record's
// lines one after the other. A line that starts with a space continues the
// record before it; one that cannot start a record, or a continuation with
// no record before it, counts in `malformed` and is skipped. A last line
// without its newline is taken as it is.
struct KmsgStream {
  std::vector<KmsgRecord> records;
  uint64_t malformed = 0;
};
KmsgStream parse_kmsg_stream(std::string_view text);

enum class KernelFaultKind : uint8_t {
  GpuXid,                  // NVRM: Xid (PCI:...): N, ...
  NfsServerNotResponding,  // nfs: server S not responding, still trying | timed out
  NfsServerOk,             // nfs: server S OK (the recovery; pair it with the above by server)
  OomKill,                 // [<reason>: ]Killed process P (comm) total-vm:...
  OomSummary,              // oom-kill:constraint=...,task=comm,pid=P,uid=U
};
std::string_view to_string(KernelFaultKind kind);  // "gpu_xid", "nfs_server_not_responding", ...

// What an Xid means for the job: XidCategory, xid_category() and
// to_string(XidCategory) are model/xid_catalogue.h's, the list the
// classifier's rule base shares.

// A fault matched in one message. The fields a kind does not have stay empty.
struct KernelFault {
  KernelFaultKind kind = KernelFaultKind::GpuXid;

  // GpuXid.
  uint32_t xid = 0;
  XidCategory category = XidCategory::GpuXid;
  std::string pci;  // "0000:3b:00": domain:bus:device as the driver prints it
  // MIG attribution, "GPU-I:NN" and "GPU-CI:NN" after the address.
  std::optional<uint32_t> gpu_instance;
  std::optional<uint32_t> compute_instance;

  // GpuXid, OomKill, OomSummary: the process. The driver prints pid='<unknown>'
  // and name=<unknown> when no channel is to blame: pid stays empty, comm "".
  std::optional<uint32_t> pid;
  std::string comm;
  // GpuXid: the driver's text after pid/name ("GPU has fallen off the bus.").
  // OomKill: the reason before "Killed process" ("Memory cgroup out of
  // memory"), empty on kernels that printed none.
  std::string description;

  // NfsServerNotResponding, NfsServerOk.
  std::string server;  // as the mount named it: host name or address
  // NfsServerNotResponding: "timed out" (a soft mount gave up; the RPC failed
  // and the application saw an error) rather than "still trying" (a hard
  // mount keeps the caller waiting).
  bool timed_out = false;

  // OomKill ("UID:", when the kernel prints it), OomSummary ("uid=").
  std::optional<uint32_t> uid;
  // OomSummary: "CONSTRAINT_MEMCG", "CONSTRAINT_NONE", ...; the cgroup whose
  // limit was hit ("" for a global OOM, printed "global_oom"); the victim's cgroup.
  std::string constraint;
  std::string memcg;
  std::string task_memcg;
};

// The fault in a message, nullopt for any other message. The formats are
// anchored at the start of the text, as the kernel and the NVIDIA driver
// print them, so a line that merely quotes one (a daemon's log line
// forwarded to the kernel log, "job[12]: NVRM: Xid ...") is not a fault.
//
// One OOM kill prints both an OomSummary and an OomKill line for the same pid
// (mm/oom_kill.c): count kills by OomKill, which is always printed; the
// summary is rate-limited with the rest of the OOM report and adds the memcg.
std::optional<KernelFault> match_kernel_fault(std::string_view text);

struct KernelFaultRecord {
  KmsgRecord record;
  KernelFault fault;
};

// What decides whether /dev/kmsg may be read, for the open error's hint.
struct KmsgAccess {
  std::optional<bool> dmesg_restrict;  // kernel.dmesg_restrict; nullopt when unreadable
  std::string printk_devkmsg;          // "on", "off", "ratelimit"; "" when unreadable
  bool cap_syslog = false;             // in the effective set
  bool cap_sys_admin = false;          // in the effective set (the kernel still accepts it)
};
KmsgAccess read_kmsg_access();
// "kernel log: cannot read PATH: STRERROR (HINT)"; the hint, for /dev/kmsg
// only, names the setting or capability that explains `error_number`.
std::string kmsg_open_error(std::string_view path, int error_number, const KmsgAccess& access);

// Reads the kernel log as it grows and keeps the records that match a fault.
//
// On /dev/kmsg (a character device) each read() returns one record. On a
// regular file or a FIFO the bytes are split into records as
// parse_kmsg_stream() does, whole lines at a time, so a capture of /dev/kmsg
// can be replayed; a writer must append whole records (dictionary lines
// written after their record was read count as malformed).
class KmsgWatcher {
 public:
  // from_end: only records written after open() (lseek SEEK_END, the end of
  // the ring buffer on /dev/kmsg); otherwise every record still held.
  static Expected<KmsgWatcher> open(const std::string& path = std::string(kKmsgPath),
                                    bool from_end = true);
  KmsgWatcher(KmsgWatcher&& other) noexcept;
  KmsgWatcher& operator=(KmsgWatcher&& other) noexcept;
  KmsgWatcher(const KmsgWatcher&) = delete;
  KmsgWatcher& operator=(const KmsgWatcher&) = delete;
  ~KmsgWatcher();

  // Reads until nothing is left (EAGAIN, or end of file) and returns the
  // fault records, in log order. Never blocks.
  std::vector<KernelFaultRecord> read_available();
  // Every record read, fault or not, is also handed to this (`run
  // --logwatch`: the log anomaly detector sees the whole kernel log).
  void set_record_observer(std::function<void(const KmsgRecord&)> observer) {
    observer_ = std::move(observer);
  }

  // For poll(): POLLIN when a record is waiting. /dev/kmsg also sets POLLERR
  // and POLLPRI when records were overwritten before we read them; treat
  // that as readable too (read_available() counts them and goes on). A
  // regular file is always readable: poll it on a timer instead.
  [[nodiscard]] int fd() const { return fd_; }
  // Records the kernel overwrote before we read them (EPIPE: counted from the
  // sequence-number gap once the next record arrives; at least one when no
  // record had been read yet) or that did not fit our buffer (EINVAL).
  [[nodiscard]] uint64_t lost() const { return lost_; }
  [[nodiscard]] uint64_t records_read() const { return records_read_; }  // parsed or not
  [[nodiscard]] uint64_t malformed() const { return malformed_; }
  // Set when a read failed in a way that will not pass (not EAGAIN, EINTR,
  // EPIPE or EINVAL); read_available() then returns nothing more.
  [[nodiscard]] const std::optional<Error>& error() const { return error_; }

 private:
  KmsgWatcher(int fd, std::string path, bool record_per_read)
      : fd_(fd), path_(std::move(path)), record_per_read_(record_per_read) {}
  void take_record(std::string_view raw, std::vector<KernelFaultRecord>& out);
  void take(KmsgRecord record, std::vector<KernelFaultRecord>& out);
  void read_records(std::vector<KernelFaultRecord>& out);
  void read_stream(std::vector<KernelFaultRecord>& out);

  int fd_ = -1;
  std::string path_;
  bool record_per_read_ = true;  // /dev/kmsg; false: a byte stream split into lines
  std::string pending_;          // stream: bytes after the last whole line
  std::optional<uint64_t> next_seq_;
  std::function<void(const KmsgRecord&)> observer_;
  uint64_t lost_ = 0;
  uint64_t records_read_ = 0;
  uint64_t malformed_ = 0;
  std::optional<Error> error_;
};

}  // namespace ckpt
