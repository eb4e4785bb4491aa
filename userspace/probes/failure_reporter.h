// The client side of the exporter's "failure" request
// (probes/forward_protocol.h): a ckptscope process running beside the
// exporter (`logwatch`) hands it the failures it finds, which the exporter
// counts in ckptscope_failures_total{workload="node",kind}. The reporter
// registers without processes and asks for no records, so the exporter sends
// it nothing but answers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/expected.h"
#include "model/records.h"

namespace ckpt {

class FailureReporter {
 public:
  // An error when no exporter listens at `socket_path` or it refused.
  static Expected<std::unique_ptr<FailureReporter>> connect(const std::string& socket_path,
                                                            const std::string& client,
                                                            int timeout_ms = 2000);
  ~FailureReporter();
  FailureReporter(const FailureReporter&) = delete;
  FailureReporter& operator=(const FailureReporter&) = delete;

  // Sends one failure. Never blocks for long (2 s at most on a full socket).
  // An error when the exporter went away or refused an earlier report (its
  // answer, e.g. "failure reports are taken from root only ...").
  Expected<void> report(const FailureRecord& failure);
  // Adds `lines` to the node's count of anomalous log lines held back under
  // logwatch's alert budget (the "held_back" request).
  Expected<void> report_held_back(uint64_t lines);
  [[nodiscard]] const std::string& socket_path() const { return socket_path_; }

 private:
  FailureReporter() = default;
  Expected<void> read_answers();
  int fd_ = -1;
  std::string socket_path_;
  std::string in_;
};

}  // namespace ckpt
