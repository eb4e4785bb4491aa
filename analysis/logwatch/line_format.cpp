#include "analysis/logwatch/line_format.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/logwatch/blank.h"
#include "json/json_io.h"
#include "sources/kernel_log.h"

namespace ckpt::logwatch {

namespace {

// `line` less its first `n` whitespace-separated fields; field number
// `which` (0-based) in `*field` when given, and `which2` in `*field2` (one
// pass for both: BGL's label and level).
std::string_view skip_fields(std::string_view line, int n, std::string_view* field = nullptr,
                             int which = 0, std::string_view* field2 = nullptr, int which2 = 0) {
  std::size_t i = 0;
  for (int f = 0; f < n; ++f) {
    while (i < line.size() && is_blank(line[i])) ++i;
    std::size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (f == which && field != nullptr) *field = line.substr(start, i - start);
    if (f == which2 && field2 != nullptr) *field2 = line.substr(start, i - start);
  }
  while (i < line.size() && is_blank(line[i])) ++i;
  return line.substr(i);
}

bool is_iso_time(std::string_view field) {
  // 2026-12-01T01:47:21+0000 (short-iso) or with fractions.
  return field.size() >= 19 && field[4] == '-' && field[7] == '-' && field[10] == 'T';
}

bool is_month(std::string_view field) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (auto m : kMonths)
    if (field == m) return true;
  return false;
}

// A leading `<PRI>` (RFC 3164 section 4.1.1, RFC 5424 section 6.2.1):
// removed from `line`, its level (PRI & 7) returned.
std::optional<Severity> take_priority(std::string_view& line) {
  if (line.size() < 3 || line.front() != '<') return std::nullopt;
  auto close = line.find('>');
  if (close == std::string_view::npos || close < 2 || close > 4) return std::nullopt;
  int pri = -1;
  auto [end, ec] = std::from_chars(line.data() + 1, line.data() + close, pri);
  if (ec != std::errc() || end != line.data() + close || pri < 0 || pri > 191) return std::nullopt;
  line.remove_prefix(close + 1);
  // RFC 5424: `<PRI>1 TIMESTAMP HOST APP PROCID MSGID [SD] MSG`: keep from APP.
  if (line.size() > 2 && line[0] == '1' && line[1] == ' ') line = skip_fields(line, 3);
  return static_cast<Severity>(pri & 7);
}

std::string json_text(const nlohmann::json& field) {
  if (field.is_string()) return field.get<std::string>();
  // journalctl prints a MESSAGE that is not valid UTF-8 as an array of bytes.
  if (field.is_array()) {
    std::string out;
    for (const auto& b : field)
      if (b.is_number_unsigned()) out += static_cast<char>(b.get<unsigned>());
    return out;
  }
  return {};
}

// `journalctl -o json`: `IDENT[PID]: MESSAGE`, short-iso's layout.
ParsedLine parse_journal_json(std::string_view line, std::string& scratch) {
  ParsedLine p;
  auto parsed = parse_json(line, "journal line");
  if (!parsed || !parsed->is_object() || !parsed->contains("MESSAGE")) {
    p.message = line;
    return p;
  }
  const nlohmann::json& j = *parsed;
  if (auto pri = j.find("PRIORITY"); pri != j.end() && pri->is_string())
    p.severity = parse_severity(pri->get<std::string>());
  std::string ident;
  for (const char* key : {"SYSLOG_IDENTIFIER", "_COMM"})
    if (auto it = j.find(key); it != j.end() && ident.empty()) ident = json_text(*it);
  std::string pid;
  for (const char* key : {"SYSLOG_PID", "_PID"})
    if (auto it = j.find(key); it != j.end() && pid.empty()) pid = json_text(*it);
  scratch.clear();
  if (!ident.empty()) {
    scratch = ident;
    if (!pid.empty()) scratch += "[" + pid + "]";
    scratch += ": ";
  }
  scratch += json_text(j.at("MESSAGE"));
  p.message = scratch;
  return p;
}

// Log text is bytes (kernel and application logs do carry invalid UTF-8),
// and templates are written to the model as JSON: the message is made valid
// here, once, so that training and scoring see the same text and a template
// with a replaced byte still matches the lines it was learned from.
void make_valid_utf8(std::string_view& message, std::string& scratch) {
  const bool ascii = std::all_of(message.begin(), message.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) return;
  bool replaced = false;
  std::string valid = valid_utf8(message, &replaced);  // message may point into scratch
  if (!replaced) return;
  scratch = std::move(valid);
  message = scratch;
}

// log4j's levels (HDFS): FATAL crit, ERROR err, WARN warning, INFO info,
// DEBUG and TRACE debug.
std::optional<Severity> log4j_level(std::string_view level) {
  if (level == "FATAL") return Severity{2};
  if (level == "ERROR") return Severity{3};
  if (level == "WARN") return Severity{4};
  if (level == "INFO") return Severity{6};
  if (level == "DEBUG" || level == "TRACE") return Severity{7};
  return std::nullopt;
}

}  // namespace

Expected<LineFormat> parse_line_format(std::string_view name) {
  if (name == "raw") return LineFormat::kRaw;
  if (name == "bgl") return LineFormat::kBgl;
  if (name == "kmsg") return LineFormat::kKmsg;
  if (name == "syslog") return LineFormat::kSyslog;
  if (name == "journal") return LineFormat::kJournal;
  if (name == "thunderbird") return LineFormat::kThunderbird;
  if (name == "hdfs") return LineFormat::kHdfs;
  return make_error("unknown line format '" + std::string(name) +
                    "' (expected raw, bgl, kmsg, syslog, journal, thunderbird or hdfs)");
}

ParsedLine parse_line(std::string_view line, LineFormat format, std::string& scratch) {
  ParsedLine p;
  switch (format) {
    case LineFormat::kRaw:
      p.message = line;
      break;
    case LineFormat::kBgl: {
      std::string_view level;
      p.message = skip_fields(line, 9, &p.label, 0, &level, 8);
      p.severity = bgl_level(level);
      break;
    }
    case LineFormat::kThunderbird:
      // `Label Timestamp Date User Month Day Time Location Component[PID]: Content`.
      p.message = skip_fields(line, 8, &p.label);
      break;
    case LineFormat::kHdfs: {
      // `Date Time Pid Level Component: Content`; the component is the source tag.
      std::string_view level;
      p.message = skip_fields(line, 4, &level, 3);
      p.severity = log4j_level(level);
      break;
    }
    case LineFormat::kKmsg:
      if (auto r = ckpt::parse_kmsg_record(line)) {
        scratch = std::move(r->text);
        p.message = scratch;
        p.severity = r->level;
      } else {
        p.message = line;
      }
      break;
    case LineFormat::kJournal:
      p = parse_journal_json(line, scratch);
      break;
    case LineFormat::kSyslog: {
      p.severity = take_priority(line);
      std::string_view first;
      skip_fields(line, 1, &first);
      if (is_iso_time(first))
        p.message = skip_fields(line, 2);
      else if (is_month(first))
        p.message = skip_fields(line, 4);
      else
        p.message = line;
      // dmesg: `[  123.456789] message`.
      if (!p.message.empty() && p.message.front() == '[') {
        if (auto close = p.message.find(']'); close != std::string_view::npos)
          p.message = skip_fields(p.message.substr(close + 1), 0);
      }
      break;
    }
  }
  make_valid_utf8(p.message, scratch);
  return p;
}

}  // namespace ckpt::logwatch
