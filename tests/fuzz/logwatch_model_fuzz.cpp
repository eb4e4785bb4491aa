// Model files (`logwatch --model`). A model is checked against its
// checksum before its fields are read, so mutated files would almost never
// get past it: an input that starts with "B" is a body, given the checksum it
// needs (model_file.h) so the field reader is fuzzed too; any other input is
// a whole file as it would be on disk.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "analysis/logwatch/model_file.h"
#include "common/fnv1a.h"
#include "json/json_io.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

// A model document around `body_text`, with the checksum model_file.cpp
// computes (fnv1a64 of the body's compact dump); nullopt when the body is not
// JSON or not valid UTF-8 (the checksum would not be the one a writer makes).
std::optional<std::string> with_checksum(std::string_view body_text) {
  auto body = ckpt::parse_json(body_text, "fuzz body");
  if (!body) return std::nullopt;
  bool replaced = false;
  const std::string compact = ckpt::valid_utf8(ckpt::dump_json(*body), &replaced);
  if (replaced) return std::nullopt;
  nlohmann::json doc = nlohmann::json::object();
  doc["format"] = ckpt::logwatch::kModelFormat;
  doc["version"] = ckpt::logwatch::kModelVersion;
  doc["checksum"] = fmt::format("fnv1a64:{:016x}", ckpt::fnv1a64(compact));
  doc["body"] = std::move(*body);
  return ckpt::dump_json(doc);
}

}  // namespace

CKPT_FUZZ_TARGET {
  const std::string_view text = ckpt::fuzz::as_text(data, size);
  if (!text.empty() && text[0] == 'B') {
    auto document = with_checksum(text.substr(1));
    if (document) (void)ckpt::logwatch::model_from_string(*document, "fuzz");
    return 0;
  }
  (void)ckpt::logwatch::model_from_string(std::string(text), "fuzz");
  return 0;
}
