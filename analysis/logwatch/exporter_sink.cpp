#include "analysis/logwatch/exporter_sink.h"

#include <fmt/format.h>

#include "common/clock.h"
#include "model/vocabulary.h"

namespace ckpt::logwatch {

std::string anomaly_evidence(const Anomaly& anomaly) {
  return fmt::format("line {}: {} (score {:.2f}): {}", anomaly.line, anomaly.reason, anomaly.score,
                     anomaly.text);
}

FailureRecord anomaly_failure(const Anomaly& anomaly, std::uint64_t time_ns) {
  return FailureRecord{anomaly.kind.empty() ? std::string(kFailureLogAnomaly) : anomaly.kind,
                       time_ns, anomaly_evidence(anomaly), std::nullopt};
}

Expected<std::unique_ptr<ExporterSink>> ExporterSink::connect(const std::string& socket_path) {
  auto reporter = FailureReporter::connect(socket_path, "ckptscope logwatch");
  if (!reporter)
    return make_error(fmt::format("exporter {}: {}", socket_path, reporter.error().message));
  return std::unique_ptr<ExporterSink>(new ExporterSink(std::move(*reporter), socket_path));
}

std::optional<std::string> ExporterSink::send(const Anomaly& anomaly) {
  if (!reporter_) return std::nullopt;
  if (auto sent = reporter_->report(anomaly_failure(anomaly, monotonic_ns())); !sent) {
    reporter_.reset();
    return fmt::format("exporter {}: {}; anomalies are no longer sent to it (still printed)",
                       socket_path_, sent.error().message);
  }
  ++sent_;
  return std::nullopt;
}

std::optional<std::string> ExporterSink::send_held_back(std::uint64_t lines) {
  if (!reporter_ || lines == 0) return std::nullopt;
  if (auto sent = reporter_->report_held_back(lines); !sent) {
    reporter_.reset();
    return fmt::format("exporter {}: {}; anomalies are no longer sent to it (still printed)",
                       socket_path_, sent.error().message);
  }
  return std::nullopt;
}

}  // namespace ckpt::logwatch
