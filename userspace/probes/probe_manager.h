// The one module that owns the BPF skeletons (Falco's libpman habit): open,
// configure, load, attach, poll the ring buffers, read drop counters and
// per-program stats. Everything above it sees decoded events only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "config/config.h"
#include "model/records.h"
#include "probes/jobio_programs.h"
#include "probes/kernel_features.h"
#include "probes/probe_feed.h"

struct jobio_bpf;
struct tcp_bpf;
struct nfs_bpf;
struct ring_buffer;

namespace ckpt {

struct ProbeOptions {
  enum class Filter { Tgids, Cgroup, All };
  Filter filter = Filter::Tgids;
  std::string cgroup_path;  // for Filter::Cgroup
  pid_t self_tgid = 0;      // never traced
  uint32_t ringbuf_bytes = 16u << 20;
  bool tcp = true;  // the transport probes
  std::vector<StorageEndpoint> endpoints;
  uint64_t tcp_sample_interval_ns = 10'000'000;
  bool floor_only = false;  // benchmarks: syscall programs return at once
  bool nfs = true;          // the NFS client and sunrpc probes, when the modules are present
  // Report a thread's on-CPU time at a context switch only once it adds up
  // to this much (bpf/jobio.bpf.c cpu_flush_min_ns); 0: at every switch.
  uint64_t cpu_flush_min_ns = 0;
  // A node exporter's registration socket: when one answers there, the
  // collector takes the job's records from it and loads no probes
  // (probes/exporter_feed.h). "" = always load our own.
  std::string exporter_socket;
  std::string client_name = "ckptscope";  // how the exporter knows this collector
  // Which probe family traces file I/O (probes/jobio_programs.h); auto: the
  // file layer where the kernel allows it, else syscalls.
  RequestedProbeMode probe_mode = RequestedProbeMode::Auto;
  // Folding of small calls in the kernel (bpf/jobio.h ckpt_io_record):
  // calls of at most fold_max_bytes starting within fold_window_ns of a
  // fold's first call join it; a window of 0 never folds.
  uint64_t fold_window_ns = 1'000'000;
  uint64_t fold_max_bytes = 65536;
};

// Raw record callback: the bytes of one ring-buffer record.
using RecordHandler = std::function<void(const void* data, size_t size)>;

// A storage socket's newest counters (bpf/tcp.h ckpt_tcp_latest).
struct TcpLatest {
  uint64_t time_ns = 0;
  uint64_t cookie = 0;
  uint64_t bytes_acked = 0;
  uint64_t bytes_received = 0;
  uint64_t bytes_sent = 0;
  uint64_t zero_window_ns = 0;
  uint32_t total_retrans = 0;
  uint32_t in_flight = 0;  // bytes sent, not yet acknowledged
  uint32_t backlog = 0;    // bytes queued or in flight, not yet acknowledged
};

struct ProgramStats {
  std::string name;
  uint64_t run_cnt = 0;  // run_cnt and run_time_ns: only while kernel.bpf_stats_enabled
  uint64_t run_time_ns = 0;
  // Runs the kernel skipped because the program was already running on that
  // CPU (bpf_prog_info.recursion_misses, counted always, since 5.12).
  uint64_t recursion_misses = 0;
};

class ProbeManager : public ProbeFeed {
 public:
  ~ProbeManager() override;
  ProbeManager(const ProbeManager&) = delete;
  ProbeManager& operator=(const ProbeManager&) = delete;

  // Loads and attaches; an error says why in words a user can act on
  // (not root, no BTF, a verifier message).
  static Expected<std::unique_ptr<ProbeManager>> start(const ProbeOptions& options,
                                                       const KernelFeatures& features,
                                                       RecordHandler on_jobio, RecordHandler on_tcp,
                                                       RecordHandler on_nfs);

  Expected<void> trace_tgid(uint32_t tgid) override;
  // Loads the NFS probes if they are not running and the nfs and sunrpc
  // modules are now present (an NFS mount appeared); says why not otherwise.
  Expected<void> start_nfs_if_available() override;
  [[nodiscard]] bool nfs_enabled() const override { return nfs_ != nullptr; }
  // Adds a storage server to the transport probes while they run.
  Expected<void> add_storage_endpoint(const StorageEndpoint& endpoint) override;
  // Waits up to timeout_ms for records and hands them to the handlers.
  // Returns the number of records consumed, or an error.
  Expected<int> poll(int timeout_ms) override;
  void sync(int timeout_ms) override;
  // The newest counters of every tracked storage socket.
  [[nodiscard]] std::vector<TcpLatest> tcp_latest() const override;
  // Readable when a ring buffer has records (libbpf's epoll fd), for a
  // caller that waits on other fds too; poll(0) then consumes them.
  [[nodiscard]] int wait_fd() const;
  // Per-CPU drop counters summed, by source and cause.
  [[nodiscard]] std::vector<DropRecord> drops() const override;
  // Requires kernel.bpf_stats_enabled (see enable_bpf_stats).
  [[nodiscard]] std::vector<ProgramStats> program_stats() const override;
  [[nodiscard]] bool tcp_enabled() const override { return tcp_ != nullptr; }
  [[nodiscard]] const std::vector<std::string>& notes() const override { return notes_; }
  [[nodiscard]] std::string probe_mode() const override {
    return std::string(probe_mode_name(plan_.mode));
  }
  [[nodiscard]] std::string probe_mode_reason() const override { return plan_.reason; }
  // What was chosen: the mode, the programs loaded, what is not seen.
  [[nodiscard]] const JobioProgramPlan& program_plan() const { return plan_; }
  void set_file_verdict(const FileId& file, bool is_checkpoint) override;
  // Deletes every CKPT_VERDICT_OTHER verdict (the exporter, when a client
  // starts tracing processes whose globs it does not know); failures counted.
  void forget_other_verdicts();
  // Whether the kernel sums the calls on files ruled out (bpf/jobio.h
  // ckpt_other_io_record); on from the start. The exporter pauses it while no
  // client traces: it reports none of it, and each such call then costs less.
  void pause_other_io(bool paused);
  [[nodiscard]] uint64_t verdicts_written() const { return verdicts_written_; }
  // The threads whose state is in a CPU's hot slot now (bpf/jobio_state.bpf.h
  // hot_slots: the threads running traced I/O), by tid; for diagnostics and
  // the tests.
  [[nodiscard]] std::vector<uint32_t> threads_in_hot_slots() const;

 private:
  // Every change to file_verdicts is followed by this (thread_file_verdict's cache).
  void bump_verdict_generation();
  ProbeManager() = default;
  Expected<void> start_jobio(const ProbeOptions& options, const KernelFeatures& features);
  // Chooses the probe mode and turns off the programs it does not load.
  Expected<void> select_programs(const ProbeOptions& options, const KernelFeatures& features);
  Expected<void> attach_jobio();
  Expected<void> start_tcp(const ProbeOptions& options);
  Expected<void> start_nfs();

  jobio_bpf* jobio_ = nullptr;
  tcp_bpf* tcp_ = nullptr;
  nfs_bpf* nfs_ = nullptr;
  bool nfs_wanted_ = false;
  ring_buffer* rings_ = nullptr;
  int cgroup_fd_ = -1;
  JobioProgramPlan plan_;
  uint64_t verdicts_written_ = 0;
  uint64_t verdict_errors_ = 0;  // map updates that failed: exported as a drop
  std::vector<std::string> notes_;
  std::unique_ptr<RecordHandler> on_jobio_;
  std::unique_ptr<RecordHandler> on_tcp_;
  std::unique_ptr<RecordHandler> on_nfs_;
};

// Turns on kernel-wide BPF run-time stats while the returned fd is open
// (BPF_ENABLE_STATS); -1 with a message when the kernel refuses.
Expected<int> enable_bpf_stats();

}  // namespace ckpt
