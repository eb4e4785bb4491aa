// How every JSON output of ours writes the two kinds of value that need
// care: an unknown (null, never 0, so "not measured" differs from "measured
// nothing") and text from the traced system (made valid UTF-8, so dumping
// never throws).
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "json/json_io.h"

namespace ckpt {

template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

inline nlohmann::json json_text(std::string_view s) { return nlohmann::json(valid_utf8(s)); }

}  // namespace ckpt
