#include "analysis/fleet/records/sessions_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <utility>

#include "analysis/fleet/common/csv.h"
#include "analysis/fleet/records/text_lines.h"
#include "analysis/fleet/records/wall_time.h"

namespace ckpt::fleet::records {
namespace {

constexpr std::array<std::string_view, 11> kColumns = {
    "session_id",  "name",       "chain_id", "attempt", "trigger",       "status",
    "submit_time", "start_time", "end_time", "nodes",   "excluded_nodes"};

// Node names separated by any ASCII whitespace (spaces, tabs, a newline in
// a quoted cell).
std::vector<std::string> node_names(std::string_view text) {
  std::vector<std::string> names;
  constexpr std::string_view kWhitespace = " \t\n\v\f\r";
  size_t pos = text.find_first_not_of(kWhitespace);
  while (pos != std::string_view::npos) {
    const size_t end = text.find_first_of(kWhitespace, pos);
    names.emplace_back(text.substr(pos, end == std::string_view::npos ? end : end - pos));
    pos = text.find_first_not_of(kWhitespace, end);
  }
  return names;
}

}  // namespace

Expected<void> read_sessions_csv(std::string_view text, std::string_view file, Records& records) {
  // Spreadsheets save "CSV UTF-8" with a byte order mark before the header.
  auto rows = split_csv_text(strip_utf8_bom(text));
  if (!rows) return make_error(fmt::format("{}: {}", file, rows.error().message));
  if (rows->empty()) return make_error(fmt::format("{}: empty (expected a header line)", file));
  const auto& header = rows->front().fields;
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < header.size(); ++i) column[lower(trim(header[i]))] = i;
  for (auto name : kColumns)
    if (!column.count(std::string(name)))
      return make_error(fmt::format("{}:1: no \"{}\" column (sessions CSV columns: {})", file, name,
                                    fmt::join(kColumns, ", ")));
  for (size_t r = 1; r < rows->size(); ++r) {
    const CsvRecord& row = (*rows)[r];
    std::string where = fmt::format("{}:{}", file, row.line);
    if (row.fields.size() != header.size())
      return make_error(
          fmt::format("{}: {} fields, the header has {}", where, row.fields.size(), header.size()));
    auto field = [&](std::string_view name) {
      return trim(row.fields[column.at(std::string(name))]);
    };
    Attempt a;
    a.scheduler = "sessions";
    a.source = where;
    a.job_id = std::string(field("session_id"));
    a.name = std::string(field("name"));
    a.chain_id = std::string(field("chain_id"));
    std::string_view attempt = field("attempt");
    auto [end, ec] =
        std::from_chars(attempt.data(), attempt.data() + attempt.size(), a.attempt_number);
    if (ec != std::errc() || end != attempt.data() + attempt.size() || a.attempt_number < 1)
      return make_error(
          fmt::format("{}: attempt \"{}\": expected a whole number from 1", where, attempt));
    std::string trigger = lower(field("trigger"));
    if (trigger == "auto")
      a.trigger = Trigger::automatic;
    else if (trigger == "manual")
      a.trigger = Trigger::manual;
    else
      return make_error(
          fmt::format("{}: trigger \"{}\": expected auto or manual", where, field("trigger")));
    std::string status = lower(field("status"));
    if (status == "success")
      a.outcome = Outcome::success;
    else if (status == "failure")
      a.outcome = Outcome::failure;
    else if (status == "cancelled")
      a.outcome = Outcome::cancelled;
    else
      return make_error(fmt::format("{}: status \"{}\": expected success, failure or cancelled",
                                    where, field("status")));
    a.state = status;
    for (auto [name, target] :
         {std::pair{"submit_time", &a.submit_unix_s}, std::pair{"start_time", &a.start_unix_s},
          std::pair{"end_time", &a.end_unix_s}}) {
      auto time = parse_wall_time(field(name));
      if (!time) return make_error(fmt::format("{}: {}: {}", where, name, time.error().message));
      *target = *time;
    }
    if (a.start_unix_s && a.end_unix_s && *a.end_unix_s < *a.start_unix_s)
      return make_error(fmt::format("{}: end_time is before start_time", where));
    a.nodes = node_names(field("nodes"));
    records.nodes.insert(a.nodes.begin(), a.nodes.end());
    for (auto& node : node_names(field("excluded_nodes"))) {
      records.nodes.insert(node);
      records.exclusions.push_back({node, "excluded", where});
    }
    records.attempts.push_back(std::move(a));
  }
  return {};
}

}  // namespace ckpt::fleet::records

namespace ckpt::fleet::records {

Expected<void> check_sessions_chains(const Records& records) {
  std::map<std::string, std::vector<const Attempt*>> chains;
  for (const auto& a : records.attempts)
    if (a.scheduler == "sessions" && !a.chain_id.empty()) chains[a.chain_id].push_back(&a);
  for (auto& [id, attempts] : chains) {
    std::stable_sort(attempts.begin(), attempts.end(), [](const Attempt* x, const Attempt* y) {
      return x->attempt_number < y->attempt_number;
    });
    for (size_t i = 0; i < attempts.size(); ++i) {
      const Attempt& a = *attempts[i];
      if (i > 0 && a.attempt_number == attempts[i - 1]->attempt_number)
        return make_error(fmt::format("chain \"{}\" has attempt {} twice: {} and {}", id,
                                      a.attempt_number, attempts[i - 1]->source, a.source));
      const int expected = static_cast<int>(i) + 1;
      if (a.attempt_number != expected)
        return make_error(fmt::format(
            "{}: chain \"{}\" has attempt {} but no attempt {} (a chain's attempts run 1, 2, ... "
            "without gaps; every --sessions file counts)",
            a.source, id, a.attempt_number, expected));
      if (i > 0 && a.start_unix_s && attempts[i - 1]->end_unix_s &&
          *a.start_unix_s < *attempts[i - 1]->end_unix_s)
        return make_error(fmt::format(
            "{}: chain \"{}\" attempt {} starts before attempt {} ended ({}): attempts of a chain "
            "run one after another",
            a.source, id, a.attempt_number, attempts[i - 1]->attempt_number,
            attempts[i - 1]->source));
    }
  }
  return {};
}

}  // namespace ckpt::fleet::records
