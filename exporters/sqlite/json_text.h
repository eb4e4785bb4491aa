// The JSON text columns of the trace (job.command, job.root_pids,
// job.failure_symptoms, checkpoint_nfs.servers, checkpoint_nfs.wait_by_queue),
// encoded and decoded by hand rather than with nlohmann::json for one reason:
// argv and names are bytes, not UTF-8, and the trace must give back exactly
// what it was given.
// The encoder escapes what JSON requires (quote, backslash, control bytes) and
// copies every other byte as is, so valid UTF-8 input yields standard JSON and
// anything else still round-trips. The decoder accepts standard JSON arrays
// (including \uXXXX escapes and surrogate pairs) of the right element type,
// and objects of unsigned numbers (kept as an ordered list of pairs, so the
// order and any repeated key survive the round trip).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ckpt::json_text {

std::string encode_strings(const std::vector<std::string>& values);
std::optional<std::vector<std::string>> decode_strings(std::string_view text);

std::string encode_u32s(const std::vector<uint32_t>& values);
std::optional<std::vector<uint32_t>> decode_u32s(std::string_view text);

// {"key": n, ...}: values are unsigned decimals up to 2^64 - 1.
std::string encode_u64_object(const std::vector<std::pair<std::string, uint64_t>>& values);
std::optional<std::vector<std::pair<std::string, uint64_t>>> decode_u64_object(
    std::string_view text);

}  // namespace ckpt::json_text
