#include "analysis/fleet/records/sinfo_reasons.h"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "analysis/fleet/records/hostlist.h"
#include "analysis/fleet/records/text_lines.h"
#include "analysis/fleet/records/wall_time.h"

namespace ckpt::fleet::records {
namespace {

bool has_xid(std::string_view text) {
  for (size_t pos = text.find("xid"); pos != std::string_view::npos;
       pos = text.find("xid", pos + 1)) {
    size_t i = pos + 3;
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == ':' || text[i] == '_' || text[i] == '-' || text[i] == '='))
      ++i;
    if (i < text.size() && text[i] >= '0' && text[i] <= '9') return true;
  }
  return false;
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
    size_t end = pos;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    if (end > pos) out.push_back(line.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

}  // namespace

std::string normalise_drain_reason(std::string_view reason) {
  std::string text = lower(reason);
  auto any = [&](std::initializer_list<std::string_view> needles) {
    for (auto n : needles)
      if (text.find(n) != std::string::npos) return true;
    return false;
  };
  if (any({"kill task failed", "kill_task_failed"})) return "kill_task_failed";
  if (any({"not responding", "not_responding", "unresponsive"})) return "not_responding";
  if (has_xid(text)) return "gpu_xid";
  if (any({"gpu", "ecc", "nvlink", "nvidia", "dcgm", "cuda"})) return "gpu_error";
  if (any({"nhc", "health check", "healthcheck", "health_check"})) return "health_check";
  if (any({"memory", "oom", "dimm"})) return "memory";
  if (any({"infiniband", "ib ", "ib:", "link", "network", "eth", "mlx"})) return "network";
  if (any({"nfs", "lustre", "gpfs", "disk", "filesystem", "file system", "storage", "mount"}))
    return "storage";
  if (any({"reboot"})) return "reboot";
  if (any({"maint", "upgrade", "admin"})) return "maintenance";
  return "other";
}

Expected<void> read_sinfo_reasons(std::string_view text, std::string_view file, Records& records) {
  bool piped = false;
  bool header_seen = false;
  auto lines = split_lines(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = trim(lines[n]);
    if (line.empty()) continue;
    std::string where = fmt::format("{}:{}", file, n + 1);
    if (!header_seen) {
      header_seen = true;
      if (lower(line).rfind("reason", 0) == 0) {
        piped = line.find('|') != std::string_view::npos;
        continue;
      }
      return make_error(fmt::format(
          "{}: expected sinfo -R's header \"REASON USER TIMESTAMP NODELIST\", got \"{}\"", where,
          line));
    }
    std::string_view reason, timestamp, node_list;
    if (piped) {
      auto fields = split(line, '|');
      if (fields.size() != 4)
        return make_error(fmt::format("{}: {} fields, expected 4 (REASON|USER|TIMESTAMP|NODELIST)",
                                      where, fields.size()));
      reason = trim(fields[0]);
      timestamp = trim(fields[2]);
      node_list = trim(fields[3]);
    } else {
      auto w = words(line);
      if (w.size() < 4)
        return make_error(fmt::format("{}: expected REASON USER TIMESTAMP NODELIST, got {} words",
                                      where, w.size()));
      node_list = w[w.size() - 1];
      timestamp = w[w.size() - 2];
      reason = line.substr(0, static_cast<size_t>(w[w.size() - 3].data() - line.data()));
      reason = trim(reason);
    }
    auto time = parse_wall_time(timestamp);
    if (!time) return make_error(fmt::format("{}: TIMESTAMP: {}", where, time.error().message));
    auto nodes = expand_hostlist(node_list);
    if (!nodes) return make_error(fmt::format("{}: NODELIST: {}", where, nodes.error().message));
    if (nodes->empty()) return make_error(fmt::format("{}: NODELIST is empty", where));
    std::string normalised = normalise_drain_reason(reason);
    for (const auto& node : *nodes) {
      records.nodes.insert(node);
      if (!records.drain_events.insert(fmt::format("{}|{}|{}", node, reason, timestamp)).second)
        continue;
      records.exclusions.push_back({node, normalised, where});
    }
  }
  return {};
}

}  // namespace ckpt::fleet::records
