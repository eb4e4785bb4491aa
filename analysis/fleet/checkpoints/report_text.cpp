#include <cmath>

#include <fmt/format.h>

#include "analysis/fleet/checkpoints/checkpoints.h"
#include "analysis/format.h"

namespace ckpt::fleet::checkpoints {
namespace {

std::string max_text(const DirectionMax& m) {
  return m.bytes_per_second ? fmt::format("{:.1f} GB/s ({})", *m.bytes_per_second / 1e9, m.source)
                            : std::string("unknown");
}

}  // namespace

std::string to_text(const Report& report) {
  std::string out =
      fmt::format("{} metrics from {}, {} to {}, step {} s\nstorage maximum: load {}, save {}\n\n",
                  report.source, report.prometheus_url, format_unix_time_utc(report.range.from_s),
                  format_unix_time_utc(report.range.to_s), report.step_s, max_text(report.load_max),
                  max_text(report.save_max));
  out += fmt::format(
      "{:<5} {:<20} {:<23} {:>7} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>10} {:>10}\n", "dir",
      "workload", "start", "secs", "GB", "mean", "p50", "p90", "p99", "max", "queue ms", "backlog");
  for (const auto& c : report.checkpoints) {
    const auto f = c.fraction_of_max.value_or(Percentiles{NAN, NAN, NAN, NAN, NAN});
    out += fmt::format(
        "{:<5} {:<20} {:<23} {:>7.0f} {:>9.1f} {:>7} {:>7} {:>7} {:>7} {:>7} {:>10} {:>10}\n",
        c.direction, c.workload.empty() ? "-" : c.workload, format_unix_time_utc(c.start_unix_s),
        c.end_unix_s - c.start_unix_s, c.bytes / 1e9, format_percent(f.mean), format_percent(f.p50),
        format_percent(f.p90), format_percent(f.p99), format_percent(f.max),
        std::isfinite(c.rpc_queue_seconds_per_rpc.during)
            ? fmt::format("{:.2f}", c.rpc_queue_seconds_per_rpc.during * 1e3)
            : "n/a",
        std::isfinite(c.rpc_backlog.during) ? fmt::format("{:.2f}", c.rpc_backlog.during) : "n/a");
  }
  out +=
      "\n(fractions of the storage maximum: the fleet's aggregate bandwidth per step; queue: "
      "mean NFS RPC queue time per RPC; backlog: RPCs waiting per send)\n";
  for (const auto& n : report.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace ckpt::fleet::checkpoints
