// Comma-separated records (RFC 4180) and the text clean-up around them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace ckpt::fleet {

// One CSV line split into fields. RFC 4180: a field that starts with a quote
// (after optional blanks) runs to the matching quote, "" inside is one quote
// and commas inside are data; blanks may follow the closing quote, anything
// else is an error, as is a quote that never closes (fields cannot span
// lines here). Unquoted fields are kept as written (a stray quote inside is
// data). A trailing "\r" (CRLF files) is dropped. Fields are not trimmed.
Expected<std::vector<std::string>> split_csv_record(std::string_view line);

// A whole CSV text by the same rules, except that a quoted field may span
// lines here (RFC 4180 2.6). Records end at "\n" or "\r\n"; blank lines are
// skipped. Each record carries the 1-based line it starts on, and errors
// name the line and column.
struct CsvRecord {
  size_t line = 0;
  std::vector<std::string> fields;
};
Expected<std::vector<CsvRecord>> split_csv_text(std::string_view text);

// `text` without leading and trailing ASCII whitespace (" \t\n\v\f\r").
std::string_view trim(std::string_view text);

// `text` without a leading UTF-8 byte order mark (EF BB BF), which spreadsheet
// programs write at the start of "CSV UTF-8" files.
std::string_view strip_utf8_bom(std::string_view text);

}  // namespace ckpt::fleet
