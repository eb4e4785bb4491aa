#include "apps/cli/run_logwatch.h"

#include <utility>

#include <fmt/format.h>

#include "analysis/logwatch/model_file.h"
#include "model/vocabulary.h"

namespace ckpt::cli {
namespace {

// The grouper's lines are this run's kernel log records, and its budget is
// run's flag: its notices name them so.
logwatch::AlarmConfig for_run(logwatch::AlarmConfig alarms) {
  alarms.line_noun = "kernel log record";
  alarms.rate_flag = "--logwatch-max-alarm-rate";
  return alarms;
}

}  // namespace

Expected<std::unique_ptr<RunLogwatch>> RunLogwatch::load(const std::string& model_path,
                                                         const logwatch::AlarmConfig& alarms) {
  auto detector = logwatch::load_model(model_path);
  if (!detector) return make_error("--logwatch-model: " + detector.error().message);
  return std::unique_ptr<RunLogwatch>(new RunLogwatch(model_path, std::move(*detector), alarms));
}

RunLogwatch::RunLogwatch(std::string model_path, logwatch::LogDetector detector,
                         const logwatch::AlarmConfig& alarms)
    : model_path_(std::move(model_path)),
      max_rate_(alarms.max_rate),
      detector_(std::move(detector)),
      grouper_(for_run(alarms), [this](const std::string& notice) { notices_.push_back(notice); }) {
}

void RunLogwatch::watch(KernelEvents& kernel) {
  kernel.set_record_observer([this](const KmsgRecord& record) { observe(record); });
}

void RunLogwatch::observe(const KmsgRecord& record) {
  ++records_;
  last_record_ns_ = record.mono_ns;
  // The record's place in what this run read stands for the input line.
  auto anomaly = detector_.observe_line(records_, record.text, record.level);
  if (!anomaly) {
    grouper_.tick(records_);
    return;
  }
  ++anomalies_;
  switch (grouper_.add(records_, anomaly->template_text, anomaly->score, anomaly->level,
                       anomaly->rank)) {
    case logwatch::AlarmDecision::kNewAlarm:
      if (shown_.size() >= kMaxAlarms) {
        ++alarms_not_kept_;
        latest_by_template_.erase(anomaly->template_text);
        return;
      }
      latest_by_template_[anomaly->template_text] = shown_.size();
      // A known fault is a failure of its own kind (machine_check, gpu_xid,
      // ...), a novelty a log_anomaly.
      shown_.push_back(
          {FailureRecord{anomaly->kind.empty() ? std::string(kFailureLogAnomaly) : anomaly->kind,
                         record.mono_ns,
                         fmt::format("kernel log: {} (score {:.2f}): {}", anomaly->reason,
                                     anomaly->score, anomaly->text),
                         std::nullopt},
           1});
      return;
    case logwatch::AlarmDecision::kGrouped:
      if (auto it = latest_by_template_.find(anomaly->template_text);
          it != latest_by_template_.end())
        ++shown_[it->second].lines;
      return;
    case logwatch::AlarmDecision::kHeld:
      return;  // counted by the grouper (held())
  }
}

std::vector<FailureRecord> RunLogwatch::failures() const {
  std::vector<FailureRecord> out;
  out.reserve(shown_.size());
  for (const ShownAlarm& a : shown_) {
    FailureRecord f = a.failure;
    if (a.lines > 1) f.evidence += fmt::format(" (and {} more lines of its template)", a.lines - 1);
    out.push_back(std::move(f));
  }
  // Held back is not lost: each template the budget held back, with its
  // count, is in the trace and the log too.
  for (const logwatch::HeldTemplate& h : grouper_.held_templates())
    out.push_back(FailureRecord{
        std::string(kFailureLogAnomaly), last_record_ns_,
        fmt::format("kernel log: held back by the budget ({}): {} records {}-{} of template: {}",
                    logwatch::to_string(h.rank), h.count, h.first_line, h.last_line,
                    h.template_text),
        std::nullopt});
  if (grouper_.held_untracked() > 0)
    out.push_back(FailureRecord{std::string(kFailureLogAnomaly), last_record_ns_,
                                fmt::format("kernel log: held back by the budget: {} more records "
                                            "of templates past the first {}",
                                            grouper_.held_untracked(), logwatch::kMaxHeldTemplates),
                                std::nullopt});
  return out;
}

std::string RunLogwatch::footer() const {
  std::string text = fmt::format("{} kernel log records scored with {}, {} anomalies in {} alarms",
                                 records_, model_path_, anomalies_, grouper_.alarms());
  if (grouper_.held() > 0)
    text += fmt::format(
        ", {} anomalous records held back by the budget of {} per 1000 records "
        "(--logwatch-max-alarm-rate)",
        grouper_.held(), max_rate_);
  if (alarms_not_kept_ > 0)
    text +=
        fmt::format(" (the first {} alarms kept, {} more not)", shown_.size(), alarms_not_kept_);
  return text;
}

}  // namespace ckpt::cli
