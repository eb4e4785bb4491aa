// The names of the causes the BPF programs count lost events under: each
// per-CPU drops array (jobio_drops, tcp_drops, nfs_drops) is indexed by its
// enum in bpf/*.h, and these tables name each index. They are the `cause` of
// DropRecord, the trace's drops table and the ckptscope_dropped_events_total
// label, so the names never change; the static_asserts below fail the build
// when an enum gains, loses or reorders a cause without its name following.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "jobio.h"
#include "nfs.h"
#include "tcp.h"

namespace ckpt {

struct DropCauseName {
  uint32_t index;  // the enum value, which is the drops array's index
  std::string_view name;
};

inline constexpr DropCauseName kJobioDropCauses[] = {
    {CKPT_DROP_RINGBUF_FULL, "ringbuf_full"},
    {CKPT_DROP_INFLIGHT_FULL, "inflight_full"},
    {CKPT_DROP_THREAD_FULL, "thread_table_full"},
    {CKPT_DROP_TGID_FULL, "tgid_table_full"},
    {CKPT_DROP_URING_INFLIGHT_FULL, "uring_inflight_full"},
    {CKPT_DROP_EXIT_MISSED, "exit_missed"},
    {CKPT_DROP_AIO_INFLIGHT_FULL, "aio_inflight_full"},
    {CKPT_DROP_AIO_UNREADABLE, "aio_unreadable"},
    {CKPT_DROP_AIO_UNMATCHED, "aio_unmatched"},
    {CKPT_DROP_AIO_UNREAPED, "aio_unreaped"},
    {CKPT_DROP_MMAP_UNATTRIBUTED, "mmap_unattributed"},
    {CKPT_DROP_STORAGE_BIOS_FULL, "storage_bios_full"},
};
inline constexpr DropCauseName kTcpDropCauses[] = {
    {CKPT_TCP_DROP_RINGBUF_FULL, "ringbuf_full"},
    {CKPT_TCP_DROP_SOCK_FULL, "socket_table_full"},
};
inline constexpr DropCauseName kNfsDropCauses[] = {
    {CKPT_NFS_DROP_RINGBUF_FULL, "ringbuf_full"},
    {CKPT_NFS_DROP_TASK_TABLE_FULL, "task_table_full"},
};

// Counted by the node exporter for one client of its registration socket
// (apps/exporter/registration_server.h), sent to the client with the
// exporter's own counters: the `exporter` source of the client's trace.
// A record that did not fit the client's bounded buffer.
inline constexpr std::string_view kExporterForwardBufferFull = "forward_buffer_full";
// A process that exec'd a program changing its credentials (setuid, setgid,
// file capabilities): it left an unprivileged client's trace (one per process).
inline constexpr std::string_view kExporterCredentialsChanged = "credentials_changed";

// Counted by the kernel, not by the programs, for every source: runs of its
// programs skipped because the program was already running on that CPU
// (bpf_prog_info.recursion_misses).
inline constexpr std::string_view kRecursionSkippedCause = "recursion_skipped";

// Every entry sits at its own enum value: table[i] names index i.
template <size_t N>
constexpr bool each_at_its_index(const DropCauseName (&table)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (table[i].index != i || table[i].name.empty()) return false;
  return true;
}

static_assert(std::size(kJobioDropCauses) == CKPT_JOBIO_DROP_MAX,
              "bpf/jobio.h ckpt_jobio_drop and kJobioDropCauses differ in size");
static_assert(each_at_its_index(kJobioDropCauses), "kJobioDropCauses is out of enum order");
static_assert(std::size(kTcpDropCauses) == CKPT_TCP_DROP_MAX,
              "bpf/tcp.h ckpt_tcp_drop and kTcpDropCauses differ in size");
static_assert(each_at_its_index(kTcpDropCauses), "kTcpDropCauses is out of enum order");
static_assert(std::size(kNfsDropCauses) == CKPT_NFS_DROP_MAX,
              "bpf/nfs.h ckpt_nfs_drop and kNfsDropCauses differ in size");
static_assert(each_at_its_index(kNfsDropCauses), "kNfsDropCauses is out of enum order");

}  // namespace ckpt
