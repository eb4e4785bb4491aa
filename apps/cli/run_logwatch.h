// `run --logwatch-model FILE`: the kernel log the job's run already watches
// (runner/kernel_events.h) also goes through the node-log anomaly detector
// (analysis/logwatch), and each anomaly becomes a `log_anomaly` failure in
// the trace and a line in the job's log footer. Bounded: the first
// kMaxAnomalies are kept, the rest counted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/logwatch/detector.h"
#include "common/expected.h"
#include "model/records.h"
#include "runner/kernel_events.h"

namespace ckpt::cli {

class RunLogwatch {
 public:
  static constexpr size_t kMaxAnomalies = 1000;

  // The model (logwatch train); an error names the file and what is wrong.
  static Expected<std::unique_ptr<RunLogwatch>> load(const std::string& model_path);
  // Every kernel log record read from now on is scored.
  void watch(KernelEvents& kernel);
  // One record (what watch() hands over; tests call it directly).
  void observe(const KmsgRecord& record);

  [[nodiscard]] const std::vector<FailureRecord>& failures() const { return failures_; }
  [[nodiscard]] uint64_t anomalies() const { return anomalies_; }
  [[nodiscard]] uint64_t records() const { return records_; }
  [[nodiscard]] const std::string& model_path() const { return model_path_; }

 private:
  RunLogwatch(std::string model_path, logwatch::LogDetector detector)
      : model_path_(std::move(model_path)), detector_(std::move(detector)) {}
  std::string model_path_;
  logwatch::LogDetector detector_;
  std::vector<FailureRecord> failures_;
  uint64_t anomalies_ = 0;
  uint64_t records_ = 0;
};

}  // namespace ckpt::cli
