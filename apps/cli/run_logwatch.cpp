#include "apps/cli/run_logwatch.h"

#include <fmt/format.h>

#include "analysis/logwatch/model_file.h"
#include "model/vocabulary.h"

namespace ckpt::cli {

Expected<std::unique_ptr<RunLogwatch>> RunLogwatch::load(const std::string& model_path) {
  auto detector = logwatch::load_model(model_path);
  if (!detector) return make_error("--logwatch-model: " + detector.error().message);
  return std::unique_ptr<RunLogwatch>(new RunLogwatch(model_path, std::move(*detector)));
}

void RunLogwatch::watch(KernelEvents& kernel) {
  kernel.set_record_observer([this](const KmsgRecord& record) { observe(record); });
}

void RunLogwatch::observe(const KmsgRecord& record) {
  ++records_;
  // The record's place in what this run read stands for the input line.
  auto anomaly = detector_.observe_line(records_, record.text, record.level);
  if (!anomaly) return;
  ++anomalies_;
  if (failures_.size() >= kMaxAnomalies) return;
  failures_.push_back(FailureRecord{std::string(kFailureLogAnomaly), record.mono_ns,
                                    fmt::format("kernel log: {} (score {:.2f}): {}",
                                                anomaly->reason, anomaly->score, anomaly->text),
                                    std::nullopt});
}

}  // namespace ckpt::cli
