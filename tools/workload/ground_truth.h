// Results as JSON: the --ground-truth document, and the messages worker
// processes send their parent (the same per-checkpoint objects, so what a
// child measured reaches the file unchanged).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/expected.h"
#include "tools/workload/options.h"
#include "tools/workload/results.h"

namespace ckpt::workload {

void to_json(nlohmann::json& j, const IoFailure& failure);
void from_json(const nlohmann::json& j, IoFailure& failure);
void to_json(nlohmann::json& j, const StepResult& step);
void from_json(const nlohmann::json& j, StepResult& step);

// The whole document; dir is the absolute checkpoint root ("" with --tcp-only).
nlohmann::json ground_truth_document(const Options& options, const std::string& dir,
                                     const RunResult& run);

Expected<void> write_ground_truth(const std::string& path, const nlohmann::json& document);

}  // namespace ckpt::workload
