// The transport stage: TCP toward the storage servers, from the connections'
// samples (bytes acknowledged or received, retransmits, zero windows), and
// the resets a checkpoint claims. Owns the connections and the resets no
// checkpoint has claimed yet.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "model/events.h"
#include "model/records.h"
#include "stitch/exclusive.h"
#include "stitch/maxima.h"
#include "stitch/open_checkpoint.h"

namespace ckpt {

// A connection reset, held until a checkpoint around it claims it or it is
// released as the job's.
struct PendingReset {
  uint64_t time_ns;
  std::string local;
  std::string remote;
  bool sent;
};

class TransportStage {
 public:
  TransportStage(std::shared_ptr<MaximaProvider> maxima, uint64_t sample_interval_ns,
                 uint64_t quiet_gap_ns, FailureThresholds thresholds)
      : maxima_(std::move(maxima)),
        sample_interval_ns_(sample_interval_ns),
        quiet_gap_ns_(quiet_gap_ns),
        thresholds_(thresholds) {}

  void on_tcp(const TcpEvent& ev);
  // The transport stage of the closing checkpoint, with its retransmit
  // storms and zero windows added to `failures` and its intervals to
  // `spans`. Absent when no storage connection was open during it (a
  // checkpoint on local disk): nothing to measure is not a measured 0.
  std::optional<StageRecord> stage(const OpenCheckpoint& c, Direction d,
                                   std::vector<FailureRecord>& failures, uint64_t id,
                                   StageSpans& spans);
  // The resets inside the checkpoint's window (acknowledged up to a sample
  // interval after it): they are its own and leave the pending list.
  std::vector<PendingReset> claim_resets(const OpenCheckpoint& c);
  // Resets no checkpoint can claim any more: those older than `horizon_ns`
  // before the open checkpoint's start (`open_start_ns`, none when closed),
  // a server's together once its newest is `horizon_ns` old; all of them
  // at `now_ns` == UINT64_MAX.
  std::vector<PendingReset> take_settled_resets(uint64_t now_ns, uint64_t horizon_ns,
                                                std::optional<uint64_t> open_start_ns);
  // The connections to `servers` during [start_ns, end_ns], as the NFS
  // record describes them (tcp_* fields); untouched when none has samples.
  void describe_toward(const std::set<std::string>& servers, uint64_t start_ns, uint64_t end_ns,
                       NfsCheckpointRecord& nfs) const;
  // The link maximum of the first connection to `servers` that knows one.
  [[nodiscard]] std::optional<StageMax> link_toward(const std::set<std::string>& servers) const;
  // Drops samples older than `horizon_ns`, keeping one before it per connection.
  void prune(uint64_t horizon_ns);
  [[nodiscard]] std::vector<ConnectionRecord> connections() const;

 private:
  struct TcpPoint {
    uint64_t time_ns;
    uint64_t acked;
    uint64_t received;
    uint64_t retrans;
    uint64_t zero_window_ns;
    uint64_t in_flight;
    uint64_t backlog;
  };
  struct Connection {
    ConnectionRecord record;
    uint64_t base_acked = 0;
    uint64_t base_sent = 0;
    uint64_t base_received = 0;
    uint64_t base_retrans = 0;
    std::deque<TcpPoint> points;
  };

  static uint64_t acked_data(const Connection& conn, const TcpEvent& ev);

  std::shared_ptr<MaximaProvider> maxima_;
  uint64_t sample_interval_ns_;
  uint64_t quiet_gap_ns_;
  FailureThresholds thresholds_;
  std::map<uint64_t, Connection> connections_;
  std::vector<PendingReset> pending_resets_;  // not yet claimed by a checkpoint
};

// A TCP event as the sample row traces and metrics keep of it.
TcpSampleRecord tcp_sample_record(const TcpEvent& ev);

}  // namespace ckpt
