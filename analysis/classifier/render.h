// How a classification is shown: the JSON contract of `classify --json`
// ({"file","class","rule","evidence":[{"line","text"}]}, extended with
// precedence, symptoms and scan figures) and a short text form.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/classifier/classifier.h"
#include "analysis/classifier/evaluation.h"

namespace ckpt::classify {

nlohmann::json to_json(const Classification& c, const std::string& file);
std::string to_text(const Classification& c, const std::string& file);

nlohmann::json to_json(const Evaluation& e);
std::string to_text(const Evaluation& e, const std::string& title);

}  // namespace ckpt::classify
