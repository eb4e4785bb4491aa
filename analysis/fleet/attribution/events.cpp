#include "analysis/fleet/attribution/events.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "analysis/fleet/common/csv.h"
#include "analysis/fleet/common/wall_time.h"
#include "files/input_file.h"

namespace ckpt::fleet::attribution {

std::string strip_port(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) return address;
  if (!std::all_of(address.begin() + static_cast<std::ptrdiff_t>(colon) + 1, address.end(),
                   [](unsigned char c) { return std::isdigit(c) != 0; }))
    return address;
  std::string host = address.substr(0, colon);
  // A bare IPv6 address has more colons and no brackets: it has no port.
  if (host.find(':') != std::string::npos && !(host.front() == '[' && host.back() == ']'))
    return address;
  return host;
}

std::string node_of(const Labels& labels, const std::string& node_label) {
  if (auto it = labels.find(node_label); it != labels.end() && !it->second.empty())
    return strip_port(it->second);
  if (auto it = labels.find("Hostname"); it != labels.end() && !it->second.empty())
    return it->second;
  return {};
}

std::string format_labels(const Labels& labels, bool with_name) {
  std::string out;
  if (with_name)
    if (auto it = labels.find("__name__"); it != labels.end()) out = it->second;
  std::string inner;
  for (const auto& [k, v] : labels) {
    if (k == "__name__") continue;
    if (!inner.empty()) inner += ", ";
    inner += fmt::format("{}=\"{}\"", k, v);
  }
  if (!inner.empty() || out.empty()) out += "{" + inner + "}";
  return out;
}

std::string xid_change_query(double change_window_s) {
  // The gauge holds the last XID: a change to a non-zero value is a new XID
  // (a repeat of the same XID is invisible in this metric). `!= 0` without
  // `bool` filters and keeps the value, the XID, as the event's type.
  return fmt::format("{0} != 0 and changes({0}[{1}s]) > 0", kXidMetric,
                     static_cast<long long>(std::ceil(change_window_s)));
}

std::string ckptscope_failure_query(double change_window_s) {
  // increase() handles counter resets as rate() does.
  return fmt::format("increase({}[{}s]) > 0", kCkptscopeFailureMetric,
                     static_cast<long long>(std::ceil(change_window_s)));
}

void EventDetector::add(const SeriesChunk& chunk) {
  const std::string key = format_labels(chunk.labels);
  auto [it, inserted] = last_sample_s_.try_emplace(key, 0.0);
  for (const auto& s : chunk.samples) {
    if (!std::isfinite(s.value)) continue;
    const bool new_run = inserted || s.time_s - it->second > run_gap_s_;
    inserted = false;
    it->second = s.time_s;
    if (!new_run) continue;
    FailureEvent e;
    if (kind_ == Kind::kXidChange) {
      e.type = fmt::format("{}", s.value);
      e.source = "xid";
    } else {
      auto kind = chunk.labels.find("kind");
      e.type = kind == chunk.labels.end() ? "unknown" : kind->second;
      e.source = "ckptscope";
    }
    e.node = node_of(chunk.labels, node_label_);
    e.time_unix_s = s.time_s;
    e.where = key;
    events_.push_back(std::move(e));
  }
}

std::vector<FailureEvent> EventDetector::events() const {
  auto out = events_;
  std::stable_sort(out.begin(), out.end(), [](const FailureEvent& a, const FailureEvent& b) {
    return a.time_unix_s != b.time_unix_s ? a.time_unix_s < b.time_unix_s : a.node < b.node;
  });
  return out;
}

std::vector<FailureEvent> merge_close_events(std::vector<FailureEvent> events, double merge_s) {
  std::stable_sort(events.begin(), events.end(), [](const FailureEvent& a, const FailureEvent& b) {
    return a.time_unix_s != b.time_unix_s ? a.time_unix_s < b.time_unix_s : a.node < b.node;
  });
  std::vector<FailureEvent> kept;
  std::map<std::string, double> last_kept;  // node -> time of its last kept event
  for (auto& e : events) {
    auto it = last_kept.find(e.node);
    if (it != last_kept.end() && e.time_unix_s - it->second < merge_s) continue;
    last_kept[e.node] = e.time_unix_s;
    kept.push_back(std::move(e));
  }
  return kept;
}

namespace {

// Unix seconds or ISO 8601, by the fleet-wide parsers.
Expected<double> parse_event_time(std::string_view text) {
  if (auto unix_s = parse_unix_s(text)) return unix_s;
  auto iso = parse_iso8601_unix_s(text);
  if (!iso)
    return make_error(
        fmt::format("bad time '{}': {}; or Unix seconds (1769860800)", text, iso.error().message));
  return iso;
}

}  // namespace

Expected<std::vector<FailureEvent>> parse_events_csv(const std::string& text,
                                                     const std::string& file_name, double from_s,
                                                     double to_s) {
  std::vector<FailureEvent> events;
  std::istringstream in(std::string(strip_utf8_bom(text)));
  std::string raw;
  int line_no = 0;
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string_view line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    const std::string where = fmt::format("{}:{}", file_name, line_no);
    auto split = split_csv_record(line);
    if (!split) return make_error(fmt::format("{}: {}", where, split.error().message));
    std::vector<std::string> fields;
    for (const auto& field : *split) fields.emplace_back(trim(field));
    if (events.empty() && fields.size() == 3 && fields[0] == "node" && fields[1] == "time" &&
        fields[2] == "type")
      continue;  // the header
    if (fields.size() != 3)
      return make_error(fmt::format("{}: expected 3 fields node,time,type, found {} in '{}'", where,
                                    fields.size(), line));
    if (fields[0].empty()) return make_error(fmt::format("{}: empty node", where));
    if (fields[2].empty()) return make_error(fmt::format("{}: empty type", where));
    auto time = parse_event_time(fields[1]);
    if (!time) return make_error(fmt::format("{}: {}", where, time.error().message));
    const double time_s = *time;
    if (time_s < from_s || time_s > to_s)
      return make_error(fmt::format("{}: time '{}' is outside --from..--to", where, fields[1]));
    events.push_back({.node = fields[0],
                      .time_unix_s = time_s,
                      .type = fields[2],
                      .source = "file",
                      .where = where});
  }
  return events;
}

Expected<std::vector<FailureEvent>> load_events_file(const std::string& path, double from_s,
                                                     double to_s) {
  // A line of some 40 bytes per GPU failure: 64 MiB is over a million of
  // them, more than a large fleet has in years.
  constexpr InputLimit kEventsFileLimit{64u << 20, "an events file is a short line per failure",
                                        true};
  auto text = read_file_bounded(path, kEventsFileLimit, "--events");
  if (!text) return text.error();
  auto events = parse_events_csv(*text, path, from_s, to_s);
  if (!events) return events.error();
  if (events->empty()) return make_error(fmt::format("--events {}: no events in the file", path));
  return events;
}

}  // namespace ckpt::fleet::attribution
