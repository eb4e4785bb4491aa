// Glue for one traced job: probes -> sources -> stitcher -> trace store.
// Records are written as they are stitched, so the trace written so far
// survives a killed profiler.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "common/expected.h"
#include "config/config.h"
#include "exporters/sqlite/trace_store.h"
#include "model/records.h"
#include "probes/kernel_features.h"
#include "probes/probe_feed.h"
#include "probes/probe_manager.h"
#include "sources/gpu_copy_source.h"
#include "sources/mountstats.h"
#include "sources/path_resolver.h"
#include "sources/source.h"
#include "stitch/io_accounting.h"
#include "stitch/stitcher.h"

namespace ckpt {

class Collector : public EventSink {
 public:
  // Opens the trace file; an error names the file and why.
  static Expected<std::unique_ptr<Collector>> create(const Config& config,
                                                     const std::string& trace_path, JobRecord job);
  ~Collector() override;

  // Loads the probes. On error the collector still records the job
  // (traced=false and the reason), so the job can run untraced.
  Expected<void> start(const ProbeOptions& options, const KernelFeatures& features);
  [[nodiscard]] bool traced() const { return probes_ != nullptr; }
  Expected<void> trace_tgid(uint32_t tgid);

  // Polls for up to timeout_ms, stitches, and writes what is complete.
  void pump(int timeout_ms);
  // Every traced process has exited (attach stops then).
  [[nodiscard]] const std::set<uint32_t>& live_tgids() const { return live_tgids_; }
  // Drains the ring buffers, closes open checkpoints, writes the rest.
  Expected<Trace> finish(const JobRecord& job);
  // A failure found outside the probes (the kernel log): job-level.
  void add_failure(FailureRecord failure);
  // The gpu_copy stage: a socket for libckptscope_cupti.so in the job (its
  // path goes in the job's CKPTSCOPE_CUPTI_SOCKET). Before the job starts.
  Expected<std::string> listen_for_gpu_copies(const std::string& parent_dir = "/tmp");
  // The GPUs the job's CUPTI libraries reported, by PCI address.
  [[nodiscard]] std::vector<std::string> gpu_pci_addresses() const {
    return gpu_ ? gpu_->device_pci_addresses() : std::vector<std::string>{};
  }
  // Something the trace's warning must say (the GPU stage could not run...).
  void warn_in_trace(const std::string& message);

  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }
  // Where the records come from ("probes of its own", "the node exporter at ...").
  [[nodiscard]] std::string feed_description() const {
    return probes_ ? probes_->description() : "nothing (untraced)";
  }
  // How the job's file I/O is traced ("syscall", "file_layer"; "" untraced)
  // and why, in words.
  [[nodiscard]] std::string probe_mode() const { return trace_.job.probe_mode; }
  [[nodiscard]] std::string probe_mode_reason() const {
    return probes_ ? probes_->probe_mode_reason() : std::string();
  }
  // Per-program run counts and times (needs BPF run-time stats enabled).
  [[nodiscard]] std::vector<ProgramStats> program_stats() const {
    return probes_ ? probes_->program_stats() : std::vector<ProgramStats>{};
  }

 private:
  Collector(const Config& config, TraceWriter writer, JobRecord job);
  void on_event(Event&& event) override;
  void flush_outputs();
  void await_storage_acks();
  void watch_nfs(uint64_t now_ns);
  // Adds a storage server to endpoints_ unless one there covers it; true if added.
  bool follow_endpoint(const StorageEndpoint& ep);
  std::vector<DropRecord> current_drops() const;
  // The end-of-run accounting row, from what the job's exited threads
  // carried and what the trace attributed.
  void write_io_accounting();

  Config config_;
  TraceWriter writer_;
  Trace trace_;
  PathResolver resolver_;
  std::unique_ptr<Stitcher> stitcher_;
  SourceRegistry sources_;
  std::unique_ptr<ProbeFeed> probes_;
  std::unique_ptr<GpuCopySource> gpu_;
  bool gpu_ok_ = false;        // a process of the job said its CUPTI library runs
  size_t notes_at_start_ = 0;  // the feed's notes already in the job record
  std::vector<std::string> notes_;
  // notes_ have gone into the job record's warning: later ones go there too.
  bool notes_in_job_ = false;
  uint64_t last_commit_ns_ = 0;
  std::set<uint32_t> live_tgids_;
  uint64_t write_errors_ = 0;
  // /proc/self/mountstats at the start: the NFS mounts' counters to diff at the end.
  std::vector<NfsMountStats> mounts_before_;
  std::vector<StorageEndpoint> endpoints_;  // followed by the transport probes
  uint64_t last_nfs_check_ns_ = 0;
  // The job's threads' own write counters against the trace's (the
  // io_accounting row, written at the end).
  IoAccounting accounting_;
};

}  // namespace ckpt
