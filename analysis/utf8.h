// JSON text must be UTF-8, while paths and argv are arbitrary bytes. The
// summary passes its strings through here so that dumping it never throws
// (nlohmann::json's default dump rejects invalid UTF-8).
#pragma once

#include <string>
#include <string_view>

namespace ckpt {

// `s` with every byte that does not start a valid UTF-8 sequence (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF) replaced by
// U+FFFD. Valid input comes back unchanged.
std::string valid_utf8(std::string_view s);

}  // namespace ckpt
