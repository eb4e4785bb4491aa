// `logwatch` beside the exporter: each alarm goes to the exporter as a
// FailureRecord{kind, CLOCK_MONOTONIC ns, evidence}, through
// ckpt::FailureReporter (probes/failure_reporter.h), and the exporter counts
// it in ckptscope_failures_total{workload="node",kind} (from root only): kind
// "log_anomaly" for a novelty, the fault's own (`machine_check`,
// `gpu_xid`, ...) for a known fault. The lines the alert budget held back
// go as counts, into ckptscope_log_anomalies_held_back_total. When the exporter goes away or
// refuses a report, the sink says so once and stops sending; the watch goes on printing anomalies.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "analysis/logwatch/detector.h"
#include "common/expected.h"
#include "model/records.h"
#include "probes/failure_reporter.h"

namespace ckpt::logwatch {

// "line N: REASON (score S): TEXT".
std::string anomaly_evidence(const Anomaly& anomaly);
FailureRecord anomaly_failure(const Anomaly& anomaly, std::uint64_t time_ns);

class ExporterSink {
 public:
  // An error naming `socket_path` when no exporter listens there.
  static Expected<std::unique_ptr<ExporterSink>> connect(const std::string& socket_path);

  // Sends one anomaly, time-stamped CLOCK_MONOTONIC now. The first failure
  // returns its warning and disconnects; later calls do nothing.
  std::optional<std::string> send(const Anomaly& anomaly);
  // Adds `lines` held back by the budget to the exporter's count; as send().
  std::optional<std::string> send_held_back(std::uint64_t lines);
  [[nodiscard]] bool connected() const { return reporter_ != nullptr; }
  [[nodiscard]] std::uint64_t sent() const { return sent_; }
  [[nodiscard]] const std::string& socket_path() const { return socket_path_; }

 private:
  ExporterSink(std::unique_ptr<FailureReporter> reporter, std::string socket_path)
      : reporter_(std::move(reporter)), socket_path_(std::move(socket_path)) {}
  std::unique_ptr<FailureReporter> reporter_;
  std::string socket_path_;
  std::uint64_t sent_ = 0;
};

}  // namespace ckpt::logwatch
