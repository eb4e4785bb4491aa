// A collector's records from the node exporter instead of probes of its own
// (probes/forward_protocol.h): `run` and `attach` on a node where the
// exporter runs start at once, need no privileges to load eBPF, and add no
// second copy of the probes to the kernel's hot paths.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "probes/probe_feed.h"
#include "probes/probe_manager.h"

namespace ckpt {

class ExporterFeed : public ProbeFeed {
 public:
  // Connects and registers `tgids`. An error when no exporter listens
  // there (the caller loads its own probes then) or it refused, with why.
  static Expected<std::unique_ptr<ExporterFeed>> connect(
      const std::string& socket_path, const std::vector<uint32_t>& tgids, const std::string& client,
      RecordHandler on_jobio, RecordHandler on_tcp, RecordHandler on_nfs, int timeout_ms = 2000);
  ~ExporterFeed() override;

  Expected<void> trace_tgid(uint32_t tgid) override;
  Expected<int> poll(int timeout_ms) override;
  Expected<void> start_nfs_if_available() override;
  [[nodiscard]] bool nfs_enabled() const override { return nfs_; }
  [[nodiscard]] bool tcp_enabled() const override { return tcp_; }
  // The exporter follows the node's NFS servers and its own configured ones.
  Expected<void> add_storage_endpoint(const StorageEndpoint& endpoint) override;
  [[nodiscard]] std::vector<TcpLatest> tcp_latest() const override { return {}; }
  [[nodiscard]] std::vector<DropRecord> drops() const override;
  [[nodiscard]] std::vector<ProgramStats> program_stats() const override { return {}; }
  [[nodiscard]] const std::vector<std::string>& notes() const override { return notes_; }
  void sync(int timeout_ms) override;
  [[nodiscard]] std::string description() const override { return description_; }
  // The mode the exporter's probes run in, from its answer ("" from an
  // exporter too old to say). It writes no verdicts: the exporter decides
  // with its own config, and never against a file this client's job touched.
  [[nodiscard]] std::string probe_mode() const override { return probe_mode_; }
  [[nodiscard]] std::string probe_mode_reason() const override {
    return probe_mode_.empty() ? "" : "chosen by the node exporter";
  }

 private:
  ExporterFeed() = default;
  Expected<void> send_line(const std::string& line);
  // Reads what the socket has; false when the exporter went away.
  bool read_available();
  int dispatch_frames();
  void on_control(const std::string& json);

  int fd_ = -1;
  std::string socket_path_;
  std::string description_;
  std::string probe_mode_;
  std::string in_;
  bool tcp_ = false;
  bool nfs_ = false;
  bool lost_ = false;
  uint64_t sync_sent_ = 0;
  uint64_t sync_seen_ = 0;
  std::vector<DropRecord> exporter_drops_;
  std::vector<std::string> refusals_;  // errors the exporter sent back
  std::vector<std::string> notes_;
  RecordHandler on_jobio_, on_tcp_, on_nfs_;
};

}  // namespace ckpt
