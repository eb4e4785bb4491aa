// `run --logwatch-model FILE`: the kernel log the job's run already watches
// (runner/kernel_events.h) also goes through the node-log anomaly detector
// (analysis/logwatch), grouped and budgeted as `logwatch` does
// (alarm_grouper.h): each alarm becomes a `log_anomaly` failure in the trace
// and a line in the job's log footer, a burst of one template one failure
// with its count. What the budget held back is counted and said, never
// dropped in silence. Bounded: the first kMaxAlarms are kept, the rest counted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/logwatch/alarm_grouper.h"
#include "analysis/logwatch/detector.h"
#include "common/expected.h"
#include "model/records.h"
#include "runner/kernel_events.h"

namespace ckpt::cli {

class RunLogwatch {
 public:
  static constexpr size_t kMaxAlarms = 1000;

  // The model (logwatch train); an error names the file and what is wrong.
  static Expected<std::unique_ptr<RunLogwatch>> load(const std::string& model_path,
                                                     const logwatch::AlarmConfig& alarms = {});
  // Every kernel log record read from now on is scored.
  void watch(KernelEvents& kernel);
  // One record (what watch() hands over; tests call it directly).
  void observe(const KmsgRecord& record);

  // One failure per alarm (log_anomaly, or a known fault's kind), its
  // evidence naming how many lines it grouped; then one per template the
  // budget held back, with its count.
  [[nodiscard]] std::vector<FailureRecord> failures() const;
  // The budget's changes, as logwatch says them on stderr.
  [[nodiscard]] const std::vector<std::string>& notices() const { return notices_; }
  [[nodiscard]] uint64_t anomalies() const { return anomalies_; }
  [[nodiscard]] uint64_t alarms() const { return grouper_.alarms(); }
  // Anomalous lines the budget held back (not shown as alarms).
  [[nodiscard]] uint64_t held() const { return grouper_.held(); }
  [[nodiscard]] uint64_t records() const { return records_; }
  [[nodiscard]] const std::string& model_path() const { return model_path_; }
  // What was scored and what became of it, for the log's footer.
  [[nodiscard]] std::string footer() const;

 private:
  struct ShownAlarm {
    FailureRecord failure;  // its evidence: the first line's
    uint64_t lines = 1;     // anomalous lines grouped into it
  };
  RunLogwatch(std::string model_path, logwatch::LogDetector detector,
              const logwatch::AlarmConfig& alarms);
  std::string model_path_;
  double max_rate_;
  logwatch::LogDetector detector_;
  logwatch::AlarmGrouper grouper_;
  std::vector<ShownAlarm> shown_;
  // A template's latest shown alarm (an index into shown_), which a grouped line joins.
  std::unordered_map<std::string, size_t> latest_by_template_;
  std::vector<std::string> notices_;
  uint64_t anomalies_ = 0;
  uint64_t alarms_not_kept_ = 0;  // past kMaxAlarms
  uint64_t records_ = 0;
  uint64_t last_record_ns_ = 0;  // CLOCK_MONOTONIC of the last record scored
};

}  // namespace ckpt::cli
