// /proc/self/mountstats, NFS entries: the kernel's own per-mount NFS and RPC
// counters. They are what ckptscope falls back to when eBPF cannot be loaded,
// and what the eBPF NFS numbers are checked against.
//
// Layout (fs/proc_namespace.c show_vfsstat, fs/nfs/super.c nfs_show_stats,
// net/sunrpc/stats.c rpc_clnt_show_stats, net/sunrpc/xprtsock.c):
//
//   device SRV:/export mounted on /mnt with fstype nfs4 statvers=1.1
//   \topts:\trw,vers=4.2,...
//   \tage:\t13968
//   \tevents:\t52 226 ...                 (one counter per enum nfs_stat_eventcounters)
//   \tbytes:\t1207640230 0 ...            (8 counters, see NfsMountStats)
//   \tRPC iostats version: 1.1  p/v: 100003/4 (nfs)
//   \txprt:\ttcp 832 0 1 0 11 6428 ...    (one line per transport; several with nconnect)
//   \tper-op statistics
//   \t        READ: 1298 1298 0 ...       (8 counters, 9 from iostats 1.1)
//
// Every counter is cumulative since the mount; take deltas between two
// snapshots (delta() below) to see an interval such as one checkpoint.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace ckpt {

// One `per-op statistics` line: one RPC procedure of the mount's RPC client.
struct NfsOpStats {
  std::string op;               // "READ", "WRITE", "COMMIT", ...
  uint64_t ops = 0;             // RPCs completed
  uint64_t transmissions = 0;   // transmissions, retransmissions included
  uint64_t major_timeouts = 0;  // major timeouts ("server not responding")
  uint64_t bytes_sent = 0;      // RPC call bytes on the wire, headers and retransmissions included
  uint64_t bytes_received = 0;  // RPC reply bytes, headers included
  uint64_t queue_ms = 0;        // sum of start -> transmit (waiting for a slot and the socket)
  uint64_t rtt_ms = 0;          // sum of transmit -> reply (wire and server)
  uint64_t execute_ms = 0;      // sum of start -> done (queue + RTT + client-side work and retries)
  std::optional<uint64_t> errors;  // RPCs that ended with an error; iostats 1.1 and later only

  // Averages per completed RPC; 0 when no RPC completed. Applied to a delta
  // they describe the interval, applied to a snapshot the whole mount's life.
  [[nodiscard]] double avg_queue_ms() const;
  [[nodiscard]] double avg_rtt_ms() const;
  [[nodiscard]] double avg_execute_ms() const;
  // (bytes_sent + bytes_received) / ops: the RPC size with headers, so about
  // the effective rsize/wsize for READ/WRITE.
  [[nodiscard]] double bytes_per_op() const;
};

// One `xprt:` line: an RPC transport (a TCP connection, a UDP socket, ...).
// Parsed for tcp and udp; any other protocol (rdma, local, future ones) keeps
// only `proto` and `raw`, its numbers 0. Fields udp does not print (connect_count,
// connect_time, idle_time) stay 0; kernels before max_slots/sending_u/pending_u
// existed (tcp with 10 numbers, udp with 7) leave those 0 too.
struct NfsXprtStats {
  std::string proto;           // "tcp", "udp", or what the kernel printed
  uint64_t port = 0;           // client-side (source) port; an identity, not a counter
  uint64_t bind_count = 0;     // rpcbind queries for the server's port
  uint64_t connect_count = 0;  // connections completed (tcp)
  uint64_t connect_time = 0;   // time spent connecting (tcp): seconds (jiffies on old kernels)
  uint64_t idle_time = 0;      // seconds since the last use (tcp); a gauge, not a counter
  uint64_t sends = 0;          // RPC transmissions
  uint64_t receives = 0;       // RPC replies received
  uint64_t bad_xids = 0;       // replies that matched no outstanding request
  // The *_u fields are cumulative: at each send the kernel adds the current
  // value (requests outstanding = sends - receives; length of the backlog,
  // sending and pending wait queues). delta(field) / delta(sends) is thus the
  // average depth seen by a send over the interval.
  uint64_t req_u = 0;
  uint64_t backlog_u = 0;  // tasks waiting for a free request slot
  uint64_t max_slots = 0;  // most request slots ever in use; a high-water mark, not a counter
  uint64_t sending_u = 0;  // tasks waiting for the transport's send lock (socket busy)
  uint64_t pending_u = 0;  // tasks sent and waiting for their reply
  std::string raw;         // the line after "xprt:", as printed, for every protocol

  // Average depths per send, 0 when nothing was sent. Note: the slot table
  // grows on demand on TCP, so the backlog can stay at 0 on a congested link
  // while queue time and the sending queue climb: judge by those too.
  [[nodiscard]] double avg_requests_outstanding() const;
  [[nodiscard]] double avg_backlog_queue() const;
  [[nodiscard]] double avg_sending_queue() const;
  [[nodiscard]] double avg_pending_queue() const;
};

// Indices of the `bytes:` counters (fs/nfs/iostat.h, enum nfs_stat_bytecounters).
enum class NfsBytes : size_t {
  kNormalRead = 0,  // bytes applications read(2) through the page cache
  kNormalWrite,     // bytes applications write(2) through the page cache
  kDirectRead,      // bytes read with O_DIRECT
  kDirectWrite,     // bytes written with O_DIRECT
  kServerRead,      // payload bytes the client read from the server in READ RPCs
  kServerWrite,     // payload bytes the client sent to the server in WRITE RPCs
  kPagesRead,       // pages read through ->readpage(s)/readahead: a page count, not bytes
  kPagesWritten,    // pages written through ->writepage(s): a page count, not bytes
};
// The counter at `which`, 0 if the line was shorter (never on a kernel with NFS iostats).
uint64_t nfs_bytes(const std::vector<uint64_t>& bytes, NfsBytes which);

// The `bytes:` counters by name, for a snapshot and a delta alike.
// NORMAL (buffered read/write) + DIRECT is what applications asked for;
// SERVER is what went over the wire. SERVER well above NORMAL+DIRECT means
// mmap or re-reads; below it, page-cache hits.
struct NfsByteCounters {
  std::vector<uint64_t> bytes;  // NfsBytes order

  [[nodiscard]] uint64_t normal_read_bytes() const { return at(NfsBytes::kNormalRead); }
  [[nodiscard]] uint64_t normal_write_bytes() const { return at(NfsBytes::kNormalWrite); }
  [[nodiscard]] uint64_t direct_read_bytes() const { return at(NfsBytes::kDirectRead); }
  [[nodiscard]] uint64_t direct_write_bytes() const { return at(NfsBytes::kDirectWrite); }
  [[nodiscard]] uint64_t server_read_bytes() const { return at(NfsBytes::kServerRead); }
  [[nodiscard]] uint64_t server_write_bytes() const { return at(NfsBytes::kServerWrite); }
  [[nodiscard]] uint64_t pages_read() const { return at(NfsBytes::kPagesRead); }
  [[nodiscard]] uint64_t pages_written() const { return at(NfsBytes::kPagesWritten); }

 private:
  [[nodiscard]] uint64_t at(NfsBytes which) const { return nfs_bytes(bytes, which); }
};

struct NfsMountStats : NfsByteCounters {
  std::string device;                       // "server:/export", octal escapes (\040) decoded
  std::string mount_point;                  // octal escapes decoded
  std::string fstype;                       // "nfs" (v2/v3) or "nfs4"
  std::string statvers;                     // "1.1"; empty if the kernel printed none
  std::map<std::string, std::string> opts;  // "vers" -> "4.0"; flags such as "hard" -> ""
  uint64_t age_s = 0;                       // seconds since the mount
  std::vector<uint64_t> events;             // enum nfs_stat_eventcounters order
  std::string iostats_version;              // "1.0" (no per-op errors) or "1.1"
  std::vector<NfsXprtStats> xprts;
  std::vector<NfsOpStats> ops;

  // The per-op line for `name`, nullptr when the mount's RPC program has no such op.
  [[nodiscard]] const NfsOpStats* op(std::string_view name) const;
};

// The NFS mounts (fstype nfs or nfs4) in mountstats text, in file order; other
// mounts are skipped. Unknown labelled lines and unknown sections (later
// kernels add some) are skipped too; an error names the line and what is wrong
// when a known line is malformed (a counter that is not a number, a per-op line
// with the wrong number of fields).
Expected<std::vector<NfsMountStats>> parse_mountstats(std::string_view text);
Expected<std::vector<NfsMountStats>> read_mountstats(
    const std::string& path = "/proc/self/mountstats");

// after - before modulo 2^64. Counters wrap: the kernel keeps the time sums
// as signed ktime and prints them unsigned, so a sum that went below 0 reads
// as 2^64 - n (the real sample's ACCESS queue ms, 18446743919241604546). The
// modular difference is still the true change as long as that is below 2^64.
// Assumes a 64-bit kernel: `unsigned long` counters there are 64 bits.
uint64_t counter_delta(uint64_t before, uint64_t after);

// Every counter as counter_delta(); `op` from after; errors only when both have it.
NfsOpStats delta(const NfsOpStats& before, const NfsOpStats& after);
// Counters as counter_delta(); port, idle_time and max_slots (gauges) and
// `proto`/`raw` are after's.
NfsXprtStats delta(const NfsXprtStats& before, const NfsXprtStats& after);

// What one NFS mount did between two snapshots.
struct NfsMountDelta : NfsByteCounters {
  std::string device;
  std::string mount_point;
  std::string fstype;
  uint64_t interval_s = 0;  // age difference: the interval at one-second resolution
  // True when there was no earlier snapshot of this mount, or it was mounted
  // again in between (its age went back): the figures are then its totals.
  bool since_mount = false;
  std::vector<uint64_t> events;
  std::vector<NfsXprtStats> xprts;  // paired by position with the earlier snapshot's
  std::vector<NfsOpStats> ops;      // paired by op name; an op new in `after` counts from 0

  [[nodiscard]] const NfsOpStats* op(std::string_view name) const;
};

// One mount between two snapshots of it (the caller has matched them).
NfsMountDelta delta(const NfsMountStats& before, const NfsMountStats& after);
// Every mount of `after`, matched to `before` by device and mount point (in
// order, when the same pair is mounted more than once); a mount absent from
// `before` is reported since_mount. Mounts gone from `after` are left out.
std::vector<NfsMountDelta> delta(const std::vector<NfsMountStats>& before,
                                 const std::vector<NfsMountStats>& after);

}  // namespace ckpt
