#include "analysis/fleet/common/csv.h"

#include <optional>

#include <fmt/format.h>

namespace ckpt::fleet {
namespace {

constexpr std::string_view kWhitespace = " \t\n\v\f\r";

bool is_blank(char c) { return c == ' ' || c == '\t'; }

struct CsvFailure {
  size_t line = 0, column = 0;
  std::string what;
};

// The one RFC 4180 reader behind both entry points: fields separated by ',',
// records by "\n" or "\r\n", quoted fields may hold both.
class CsvReader {
 public:
  explicit CsvReader(std::string_view text) : text_(text) {}

  std::optional<CsvFailure> read(std::vector<CsvRecord>& records, bool keep_blank_records) {
    CsvRecord record{line_, {}};
    while (true) {
      auto field = read_field();
      if (!field) return failure_;
      record.fields.push_back(std::move(*field));
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      // End of the record: a line break or the end of the text.
      const bool at_end = pos_ >= text_.size();
      if (!at_end) {
        if (text_[pos_] == '\r') ++pos_;
        ++pos_;  // the '\n'
        ++line_;
        line_start_ = pos_;
      }
      const bool blank = record.fields.size() == 1 && record.fields[0].empty();
      if (keep_blank_records || !blank) records.push_back(std::move(record));
      if (at_end || pos_ >= text_.size()) return std::nullopt;
      record = CsvRecord{line_, {}};
    }
  }

 private:
  // One field, leaving pos_ on the ',' / line break after it or the end.
  std::optional<std::string> read_field() {
    size_t start = pos_;
    while (start < text_.size() && is_blank(text_[start])) ++start;
    if (start >= text_.size() || text_[start] != '"') {
      const size_t end = text_.find_first_of(",\n", pos_);
      const size_t stop = end == std::string_view::npos ? text_.size() : end;
      size_t data_end = stop;  // without the '\r' of a "\r\n" (a lone '\r' is data)
      if (data_end > pos_ && text_[data_end - 1] == '\r' &&
          (stop == text_.size() || text_[stop] == '\n'))
        --data_end;
      std::string field(text_.substr(pos_, data_end - pos_));
      pos_ = stop;
      return field;
    }
    const size_t open_line = line_, open_column = start - line_start_ + 1;
    std::string field;
    size_t i = start + 1;
    for (;; ++i) {
      if (i >= text_.size()) {
        failure_ = {open_line, open_column,
                    "the quote opened here is never closed (write \"\" for a quote inside a "
                    "field)"};
        return std::nullopt;
      }
      const char c = text_[i];
      if (c == '"') {
        if (i + 1 < text_.size() && text_[i + 1] == '"') {
          field.push_back('"');
          ++i;
          continue;
        }
        ++i;
        break;
      }
      if (c == '\n') {
        ++line_;
        line_start_ = i + 1;
      }
      field.push_back(c);
    }
    while (i < text_.size() && is_blank(text_[i])) ++i;
    if (i < text_.size() && text_[i] != ',' && text_[i] != '\n' &&
        !(text_[i] == '\r' && (i + 1 == text_.size() || text_[i + 1] == '\n'))) {
      failure_ = {line_, i - line_start_ + 1,
                  "text after a closing quote (write \"\" for a quote inside a field)"};
      return std::nullopt;
    }
    pos_ = i;
    return field;
  }

  std::string_view text_;
  size_t pos_ = 0;
  size_t line_ = 1;
  size_t line_start_ = 0;
  CsvFailure failure_;
};

}  // namespace

Expected<std::vector<std::string>> split_csv_record(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<CsvRecord> records;
  if (auto failure = CsvReader(line).read(records, /*keep_blank_records=*/true))
    return make_error(fmt::format("column {}: {}", failure->column, failure->what));
  if (records.size() != 1)
    return make_error("a line break inside a record (a quoted field cannot span lines here)");
  return std::move(records.front().fields);
}

Expected<std::vector<CsvRecord>> split_csv_text(std::string_view text) {
  std::vector<CsvRecord> records;
  if (text.empty()) return records;
  if (auto failure = CsvReader(text).read(records, /*keep_blank_records=*/false))
    return make_error(
        fmt::format("line {}, column {}: {}", failure->line, failure->column, failure->what));
  return records;
}

std::string_view trim(std::string_view text) {
  const size_t first = text.find_first_not_of(kWhitespace);
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(kWhitespace);
  return text.substr(first, last - first + 1);
}

std::string_view strip_utf8_bom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  return text;
}

}  // namespace ckpt::fleet
