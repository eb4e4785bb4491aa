// `ckptscope fleet checkpoints`: checkpoint bandwidth across the fleet as a
// fraction of the storage maximum, from a Prometheus (docs/fleet/checkpoints.md).
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>

#include "analysis/fleet/checkpoints/checkpoints.h"
#include "analysis/fleet/common/wall_time.h"
#include "analysis/fleet/prometheus/chunk_plan.h"
#include "analysis/fleet/prometheus/prometheus_client.h"
#include "apps/cli/command_registry.h"
#include "apps/cli/number_check.h"
#include "config/config.h"
#include "files/output_file.h"
#include "json/json_io.h"

namespace ckpt::cli {
namespace {

namespace cp = ckpt::fleet::checkpoints;

struct CheckpointsOptions {
  std::string prometheus;
  std::string from = "now-24h";
  std::string to = "now";
  std::string step = "60s";
  std::string source = "auto";
  std::string read_max;
  std::string write_max;
  double burst_fraction = 0.05;
  std::string merge_gap = "120s";
  double timeout_s = 60;
  int points_per_query = 11000;
  bool json = false;
  std::string html_path;
};

// --step and --merge-gap: the fleet commands' one duration form
// (parse_duration_s: 90, 90s, 15m, 1h, 1d, 1w), the error naming the flag.
Expected<double> parse_duration(const std::string& flag, const std::string& text) {
  auto seconds = fleet::parse_duration_s(text);
  if (!seconds) return make_error(fmt::format("{}: {}", flag, seconds.error().message));
  return *seconds;
}

int usage_error(const std::string& message) {
  fmt::print(stderr, "ckptscope fleet checkpoints: {}\n", message);
  return 2;
}

int run_checkpoints(const CheckpointsOptions& opts) {
  const double now_s = static_cast<double>(std::time(nullptr));
  auto from = fleet::parse_time(opts.from, now_s);
  if (!from) return usage_error("--from: " + from.error().message);
  auto to = fleet::parse_time(opts.to, now_s);
  if (!to) return usage_error("--to: " + to.error().message);
  if (!(*to > *from))
    return usage_error(
        fmt::format("--from {} is not before --to {}: the range is empty", opts.from, opts.to));
  auto step = parse_duration("--step", opts.step);
  if (!step) return usage_error(step.error().message);
  // Too fine a step for the range is bad usage, caught before any request.
  if (auto steps = fleet::last_evaluation_index({*from, *to}, *step); !steps)
    return usage_error(steps.error().message);
  if (*to - *from < *step)
    return usage_error(
        fmt::format("--from {} to --to {} is shorter than one --step ({} s): the "
                    "range must hold at least two steps",
                    opts.from, opts.to, *step));
  if (opts.prometheus.rfind("http://", 0) != 0 && opts.prometheus.rfind("https://", 0) != 0)
    return usage_error(
        fmt::format("--prometheus \"{}\": must start with http:// or https://", opts.prometheus));
  auto gap = parse_duration("--merge-gap", opts.merge_gap);
  if (!gap) return usage_error(gap.error().message);
  if (!(opts.burst_fraction > 0 && opts.burst_fraction < 1))
    return usage_error(
        fmt::format("--burst-fraction {}: must be between 0 and 1", opts.burst_fraction));
  cp::Options options;
  options.range = {*from, *to};
  options.step_s = *step;
  options.merge_gap_s = *gap;
  options.burst_fraction = opts.burst_fraction;
  options.source = opts.source == "ckptscope"    ? cp::Source::kCkptscope
                   : opts.source == "mountstats" ? cp::Source::kMountstats
                                                 : cp::Source::kAuto;
  for (const auto& [flag, text, into] :
       {std::tuple{"--storage-read-max", &opts.read_max, &options.read_max_bytes_per_second},
        std::tuple{"--storage-write-max", &opts.write_max, &options.write_max_bytes_per_second}}) {
    if (text->empty()) continue;
    // Finite and from 1 B/s to 1 PB/s (config.h): inf would make every
    // fraction of the maximum 0.
    auto bandwidth = parse_bandwidth(*text);
    if (!bandwidth) return usage_error(fmt::format("{} {}", flag, bandwidth.error().message));
    *into = *bandwidth;
  }

  fleet::PrometheusOptions client_options;
  client_options.timeout_s = opts.timeout_s;
  if (opts.points_per_query < 1 || opts.points_per_query > 11000)
    return usage_error(fmt::format("--points-per-query {}: must be 1..11000 (the API's cap)",
                                   opts.points_per_query));
  if (!(opts.timeout_s > 0))
    return usage_error(fmt::format("--timeout {}: must be positive", opts.timeout_s));
  client_options.max_points_per_chunk = opts.points_per_query;
  auto client = fleet::PrometheusClient::connect(opts.prometheus, client_options);
  if (!client) {
    fmt::print(stderr, "ckptscope fleet checkpoints: {}\n", client.error().message);
    return 1;
  }
  auto report = cp::analyse(*client, options);
  if (!report) {
    fmt::print(stderr, "ckptscope fleet checkpoints: {}\n", report.error().message);
    return 1;
  }
  if (!opts.html_path.empty()) {
    if (auto written = replace_file_contents(opts.html_path, cp::to_html(*report), "--html");
        !written) {
      fmt::print(stderr, "ckptscope fleet checkpoints: {}\n", written.error().message);
      return 1;
    }
  }
  if (opts.json)
    fmt::print("{}\n", dump_json(cp::to_json(*report), 2));
  else if (opts.html_path.empty())
    fmt::print("{}", cp::to_text(*report));
  return 0;
}

}  // namespace

void add_fleet_checkpoints_command(CLI::App& fleet, CommandList& commands) {
  auto opts = std::make_shared<CheckpointsOptions>();
  auto* cmd = fleet.add_subcommand(
      "checkpoints",
      "checkpoint bandwidth across the fleet as a fraction of the storage maximum, with RPC "
      "queueing and transport backlog (docs/fleet/checkpoints.md)");
  cmd->add_option("--prometheus", opts->prometheus, "Prometheus URL (http://host:9090)")
      ->required();
  cmd->add_option("--from", opts->from,
                  "start: RFC 3339, Unix seconds or now-6h (default now-24h)");
  cmd->add_option("--to", opts->to, "end, same forms (default now)");
  cmd->add_option("--step", opts->step, "resolution: 60, 60s, 5m, 1h, 1d, 1w (default 60s)");
  cmd->add_option("--source", opts->source,
                  "auto (ckptscope's exporter if present, else node_exporter mountstats), "
                  "ckptscope or mountstats")
      ->check(CLI::IsMember({"auto", "ckptscope", "mountstats"}));
  cmd->add_option("--storage-read-max", opts->read_max,
                  "the storage's aggregate read maximum, e.g. 700GB/s (default: "
                  "ckptscope_storage_max_bytes_per_second)");
  cmd->add_option("--storage-write-max", opts->write_max,
                  "the storage's aggregate write maximum, e.g. 250GB/s");
  cmd->add_option("--burst-fraction", opts->burst_fraction,
                  "mountstats: a checkpoint is a burst above this fraction of the maximum (of "
                  "the peak when unknown; default 0.05)")
      ->check(number_in(0.0, 1.0));
  cmd->add_option("--merge-gap", opts->merge_gap, "checkpoints this close are one (default 120s)");
  cmd->add_option("--timeout", opts->timeout_s, "seconds per HTTP request (default 60)")
      ->check(positive_up_to(fleet::kMaxTimeoutSeconds));
  cmd->add_option("--points-per-query", opts->points_per_query,
                  "steps per range request (default and most 11000, the API's cap per series)");
  cmd->add_flag("--json", opts->json, "JSON instead of a table");
  cmd->add_option("--html", opts->html_path, "write a self-contained HTML page to FILE");
  commands.push_back({cmd, [opts] { return run_checkpoints(*opts); }});
}

}  // namespace ckpt::cli
