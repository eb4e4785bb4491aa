// The two JSON arrays the job table holds (command, root_pids), encoded and
// decoded by hand rather than with nlohmann::json for one reason: argv is
// bytes, not UTF-8, and the trace must give back exactly what it was given.
// The encoder escapes what JSON requires (quote, backslash, control bytes) and
// copies every other byte as is, so valid UTF-8 input yields standard JSON and
// anything else still round-trips. The decoder accepts standard JSON arrays
// (including \uXXXX escapes and surrogate pairs) of the right element type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt::json_text {

std::string encode_strings(const std::vector<std::string>& values);
std::optional<std::vector<std::string>> decode_strings(std::string_view text);

std::string encode_u32s(const std::vector<uint32_t>& values);
std::optional<std::vector<uint32_t>> decode_u32s(std::string_view text);

}  // namespace ckpt::json_text
