// The one way ckptscope writes and reads JSON (issue 22).
//
// Writing: traced and user-supplied text (paths, log lines, argv, node names)
// is bytes, not UTF-8, and nlohmann::json throws type_error.316 on the first
// invalid byte it is asked to dump. dump_json() never throws: it replaces
// each invalid sequence with U+FFFD. Where the replacement matters (a log
// line quoted as evidence), valid_utf8() says whether anything was replaced.
//
// Reading: every failure (syntax, a number that overflows a double such as
// 1e400, a wrong type, a missing key, a value out of range) becomes an Error
// that names the document and the field, never an exception. The build sets
// JSON_DIAGNOSTICS so nlohmann's exceptions carry the JSON pointer of the
// offending value; describe() turns that into "/checkpoint/quiet_gap_ms: ...".
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/expected.h"

namespace ckpt {

// `text` with every invalid UTF-8 sequence (stray continuation bytes,
// truncated or overlong sequences, surrogates, code points past U+10FFFF)
// replaced by U+FFFD, one per maximal invalid subpart (Unicode 15, 3.9
// "U+FFFD Substitution of Maximal Subparts"), as nlohmann's replace handler
// does. *replaced says whether any byte was replaced.
std::string valid_utf8(std::string_view text, bool* replaced = nullptr);

// nlohmann::json::dump that replaces invalid UTF-8 instead of throwing.
std::string dump_json(const nlohmann::json& value, int indent = -1);

// A json exception as a field-level sentence: "/a/b: type must be number,
// but is string" (the pointer is there when JSON_DIAGNOSTICS is on and the
// value has a parent), "syntax error at line 3, column 7: ...".
std::string describe(const nlohmann::json::exception& e);

// Parses `text`; `origin` names the document in the error ("config x.json",
// "--rules r.json").
Expected<nlohmann::json> parse_json(std::string_view text, std::string_view origin);

// Runs `read()` and turns any json exception it throws (a missing key, a
// wrong type, get<> out of range) into an Error naming `origin` and the
// field. `read` returns an Expected<...>.
template <typename Read>
auto read_json(std::string_view origin, Read&& read) -> decltype(read()) {
  try {
    return std::forward<Read>(read)();
  } catch (const nlohmann::json::exception& e) {
    std::string message(origin);
    message += ": ";
    message += describe(e);
    return Error{std::move(message)};
  }
}

}  // namespace ckpt
