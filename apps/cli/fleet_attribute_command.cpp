// `ckptscope fleet attribute`: which metrics move before GPU failures, from a
// fleet's Prometheus (docs/fleet/attribute.md).
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/fleet/attribution/attribution.h"
#include "analysis/fleet/attribution/duration.h"
#include "analysis/fleet/attribution/render.h"
#include "analysis/fleet/prometheus/chunk_plan.h"
#include "analysis/fleet/prometheus/prometheus_client.h"
#include "apps/cli/command_registry.h"
#include "apps/cli/number_check.h"
#include "files/output_file.h"

namespace ckpt::cli {
namespace {

namespace attribution = ckpt::fleet::attribution;

struct AttributeFlags {
  std::string prometheus_url;
  std::string from;
  std::string to = "now";
  std::string events_file;
  std::string event_source = "auto";
  std::vector<std::string> event_types;
  std::string node_label = "instance";
  std::size_t top_k = 10;
  std::string baseline = "60m";
  std::string gap = "0s";
  std::string before = "15m";
  std::string after = "5m";
  std::string step = "15s";
  std::string event_step = "60s";
  std::string rate_window = "2m";
  std::size_t calibration_windows = 20;
  std::uint64_t seed = 1;
  std::string timeout = "60s";
  bool json = false;
  std::string html_path;
};

// Bounds of the count flags: far beyond any use, low enough that a typo
// (1e9) is an error instead of a billion queries or an hour of sorting.
constexpr std::size_t kMaxTopK = 100000;
constexpr std::size_t kMaxCalibrationWindows = 10000;

// Exit codes: 2 for bad input (flags, --events, a range without failures),
// 1 for runtime failures (Prometheus unreachable or failing, --html unwritable).
int fail(int code, const std::string& message) {
  fmt::print(stderr, "ckptscope fleet attribute: {}\n", message);
  return code;
}

Expected<attribution::AttributionOptions> resolve(const AttributeFlags& f, double* timeout_s) {
  attribution::AttributionOptions o;
  const double now_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto from = fleet::parse_time(f.from, now_s);
  if (!from) return make_error("--from: " + from.error().message);
  auto to = fleet::parse_time(f.to, now_s);
  if (!to) return make_error("--to: " + to.error().message);
  if (*from >= *to)
    return make_error(
        fmt::format("--from {} is not before --to {}: the range is empty", f.from, f.to));
  o.range = {.from_s = *from, .to_s = *to};
  struct DurationFlag {
    const std::string& text;
    const char* flag;
    double* out;
    bool allow_zero;
  };
  const DurationFlag durations[] = {
      {f.baseline, "--baseline", &o.windows.baseline_s, false},
      {f.gap, "--gap", &o.windows.gap_s, true},
      {f.before, "--before", &o.windows.before_s, true},
      {f.after, "--after", &o.windows.after_s, true},
      {f.step, "--step", &o.step_s, false},
      {f.event_step, "--event-step", &o.event_step_s, false},
      {f.rate_window, "--rate-window", &o.rate_window_s, false},
      {f.timeout, "--timeout", timeout_s, false},
  };
  for (const auto& d : durations) {
    auto v = attribution::parse_duration_flag(d.text, d.flag, d.allow_zero);
    if (!v) return v.error();
    *d.out = *v;
  }
  if (o.windows.before_s + o.windows.after_s <= 0)
    return make_error("--before and --after are both 0: the anomaly window is empty");
  if (!(*timeout_s <= fleet::kMaxTimeoutSeconds))
    return make_error(
        fmt::format("--timeout {}: at most {} s (a day)", f.timeout, fleet::kMaxTimeoutSeconds));
  if (f.top_k == 0) return make_error("--top-k must be at least 1");
  if (f.event_source == "file" && f.events_file.empty())
    return make_error("--event-source file needs --events FILE");
  if (!f.events_file.empty() && f.event_source != "file" && f.event_source != "auto")
    return make_error(
        fmt::format("--events is used with --event-source file or auto, not {}", f.event_source));
  if (f.node_label.empty()) return make_error("--node-label is empty");
  // Every query's grid is checked before Prometheus is asked anything: the
  // failure search spans the range at --event-step, each failure's windows
  // span baseline + gap + before + after at --step.
  if (auto ok = fleet::last_evaluation_index(o.range, o.event_step_s); !ok) return ok.error();
  const double window_s =
      o.windows.baseline_s + o.windows.gap_s + o.windows.before_s + o.windows.after_s;
  if (auto ok = fleet::last_evaluation_index({0, window_s}, o.step_s); !ok) return ok.error();
  o.event_source = f.event_source;
  o.events_file = f.events_file;
  o.event_types = f.event_types;
  o.node_label = f.node_label;
  o.top_k = f.top_k;
  o.calibration_windows = f.calibration_windows;
  o.seed = f.seed;
  return o;
}

int run_attribute(const AttributeFlags& f) {
  double timeout_s = 60;
  auto options = resolve(f, &timeout_s);
  if (!options) return fail(2, options.error().message);
  // The file is read and checked before Prometheus is asked anything.
  std::vector<attribution::FailureEvent> file_events;
  if (!f.events_file.empty()) {
    auto events =
        attribution::load_events_file(f.events_file, options->range.from_s, options->range.to_s);
    if (!events) return fail(2, events.error().message);
    file_events = std::move(*events);
  }
  fleet::PrometheusOptions prometheus_options;
  prometheus_options.timeout_s = timeout_s;
  auto client = fleet::PrometheusClient::connect(f.prometheus_url, prometheus_options);
  if (!client) return fail(1, client.error().message);
  const auto source = attribution::prometheus_source(*client);
  auto result =
      attribution::attribute(source, *options, f.events_file.empty() ? nullptr : &file_events);
  if (!result) return fail(1, fmt::format("{}: {}", f.prometheus_url, result.error().message));
  for (const auto& w : result->warnings) fmt::print(stderr, "ckptscope fleet attribute: {}\n", w);
  if (result->events.empty())
    return fail(2, "nothing to attribute (see above); widen --from/--to or give --events");
  // Failures but no series around any of them: a runtime finding about the
  // fleet's data or --node-label, not a ranking (docs/fleet.md: exit 1).
  if (auto why = attribution::nothing_scored(*result, f.node_label)) return fail(1, *why);
  const attribution::RenderContext context{.prometheus_url = client->url(), .options = *options};
  if (f.json)
    fmt::print("{}", attribution::render_json(*result, context));
  else
    fmt::print("{}", attribution::render_table(*result, context));
  if (!f.html_path.empty()) {
    if (auto written = replace_file_contents(f.html_path,
                                             attribution::render_html(*result, context), "--html");
        !written)
      return fail(1, written.error().message);
  }
  return 0;
}

}  // namespace

void add_fleet_attribute_command(CLI::App& fleet, CommandList& commands) {
  auto flags = std::make_shared<AttributeFlags>();
  auto* cmd = fleet.add_subcommand(
      "attribute", "which metrics move before GPU failures (docs/fleet/attribute.md)");
  cmd->add_option("--prometheus", flags->prometheus_url, "Prometheus URL (http://host:9090)")
      ->required();
  cmd->add_option("--from", flags->from, "start of the failure search: RFC 3339, Unix s, now-30d")
      ->required();
  cmd->add_option("--to", flags->to, "end of the failure search")->capture_default_str();
  cmd->add_option("--events", flags->events_file, "CSV of failures: node,time,type");
  cmd->add_option("--event-source", flags->event_source,
                  "where failures come from: DCGM XID changes, ckptscope_failures_total, the file")
      ->check(CLI::IsMember({"auto", "xid", "ckptscope", "file"}))
      ->capture_default_str();
  cmd->add_option("--event-type", flags->event_types,
                  "keep only failures of this type (XID number or kind; repeatable)");
  cmd->add_option("--node-label", flags->node_label, "label naming the node (port stripped)")
      ->capture_default_str();
  cmd->add_option("--top-k", flags->top_k, "metrics listed per failure")
      ->check(number_in<std::size_t>(1, kMaxTopK))
      ->capture_default_str();
  cmd->add_option("--baseline", flags->baseline, "baseline window length")->capture_default_str();
  cmd->add_option("--gap", flags->gap, "gap between the baseline and the anomaly window")
      ->capture_default_str();
  cmd->add_option("--before", flags->before, "anomaly window: from this long before the failure")
      ->capture_default_str();
  cmd->add_option("--after", flags->after, "anomaly window: to this long after it")
      ->capture_default_str();
  cmd->add_option("--step", flags->step, "query_range step of the windows")->capture_default_str();
  cmd->add_option("--event-step", flags->event_step, "step of the failure search")
      ->capture_default_str();
  cmd->add_option("--rate-window", flags->rate_window, "counters' rate window")
      ->capture_default_str();
  cmd->add_option("--calibration-windows", flags->calibration_windows,
                  "random windows without failures per node")
      ->check(number_in<std::size_t>(0, kMaxCalibrationWindows))
      ->capture_default_str();
  // CLI11 reads -1 into a uint64_t as 2^64 - 1: refused instead (not with
  // CLI::NonNegativeNumber, whose message prints a 300-digit bound).
  cmd->add_option("--seed", flags->seed, "seed of the calibration windows")
      ->check(number_in<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()))
      ->capture_default_str();
  cmd->add_option("--timeout", flags->timeout, "per HTTP request")->capture_default_str();
  cmd->add_flag("--json", flags->json, "JSON on stdout instead of the table");
  cmd->add_option("--html", flags->html_path, "also write an HTML page with the charts");
  commands.push_back({cmd, [flags] { return run_attribute(*flags); }});
}

}  // namespace ckpt::cli
