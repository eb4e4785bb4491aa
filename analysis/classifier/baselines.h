// The two baselines the classifier is measured against (GPUAlert's):
// unordered keyword matching (every class's keywords counted, the most hits
// wins, no precedence) and exit-code inspection (only how the process ended).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ckpt::classify {

std::string keyword_baseline(std::string_view log_text);
// exit_code as Python's subprocess reports it (negative = killed by that
// signal) or as a shell does (128 + signal).
std::string exit_code_baseline(std::optional<int> exit_code);

}  // namespace ckpt::classify
