#include "analysis/fleet/records/sacct_text.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <tuple>

#include "analysis/fleet/records/slurm_record.h"
#include "analysis/fleet/records/text_lines.h"
#include "analysis/fleet/records/wall_time.h"

namespace ckpt::fleet::records {

Expected<void> read_sacct_text(std::string_view text, std::string_view file, Records& records) {
  auto lines = split_lines(text);
  size_t header_line = 0;
  while (header_line < lines.size() && trim(lines[header_line]).empty()) ++header_line;
  if (header_line == lines.size()) return make_error(fmt::format("{}: empty", file));
  std::string_view header = lines[header_line];
  // `-p` ends every line, the header too, with a "|".
  bool trailing_bar = !header.empty() && header.back() == '|';
  if (trailing_bar) header.remove_suffix(1);
  auto names = split(header, '|');
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < names.size(); ++i) column[lower(trim(names[i]))] = i;
  for (const char* needed : {"jobid", "state"})
    if (!column.count(needed))
      return make_error(fmt::format(
          "{}:{}: the header has no {} column (sacct -P or -p with a header: --format "
          "JobID,JobName,User,State,Submit,Start,End,NodeList,FailedNode)",
          file, header_line + 1, needed == std::string_view("jobid") ? "JobID" : "State"));
  for (size_t n = header_line + 1; n < lines.size(); ++n) {
    std::string_view line = lines[n];
    if (trim(line).empty()) continue;
    std::string where = fmt::format("{}:{}", file, n + 1);
    if (trailing_bar) {
      if (line.back() != '|')
        return make_error(
            fmt::format("{}: no \"|\" at the end, as the header (sacct -p) has", where));
      line.remove_suffix(1);
    }
    auto fields = split(line, '|');
    if (fields.size() != names.size())
      return make_error(
          fmt::format("{}: {} fields, the header has {}", where, fields.size(), names.size()));
    auto field = [&](const char* name) -> std::string_view {
      auto it = column.find(name);
      return it == column.end() ? std::string_view{} : trim(fields[it->second]);
    };
    std::string_view job_id = field("jobid");
    if (job_id.find('.') != std::string_view::npos) continue;  // a step, not a job
    SlurmRecord record;
    record.source = where;
    record.job_id = std::string(job_id);
    record.name = std::string(field("jobname"));
    record.user = std::string(field("user"));
    record.state = std::string(field("state"));
    record.node_list = std::string(field("nodelist"));
    record.failed_node = std::string(field("failednode"));
    for (auto [name, label, target] : {std::tuple{"submit", "Submit", &record.submit_unix_s},
                                       std::tuple{"start", "Start", &record.start_unix_s},
                                       std::tuple{"end", "End", &record.end_unix_s}}) {
      auto time = parse_wall_time(field(name));
      if (!time) return make_error(fmt::format("{}: {}: {}", where, label, time.error().message));
      *target = *time;
    }
    auto added = add_slurm_record(record, records);
    if (!added) return added.error();
  }
  return {};
}

}  // namespace ckpt::fleet::records
