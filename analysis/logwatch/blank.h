// What separates a log line's fields: a space or a tab (a record is one line,
// so never a newline). One definition for every field scanner in logwatch.
#pragma once

namespace ckpt::logwatch {

constexpr bool is_blank(char c) { return c == ' ' || c == '\t'; }

}  // namespace ckpt::logwatch
