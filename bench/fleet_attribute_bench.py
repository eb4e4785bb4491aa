#!/usr/bin/env python3
"""What `ckptscope fleet attribute` costs at the issue's scale: attribution of
10 failures over 751 metrics against a local Prometheus, target under a
minute (docs/fleet/attribute.md). Not part of ctest.

A fleet of NODES nodes with 751 metric names each (6 with planted shifts
before each failure, 600 calm gauges, 100 calm counters, 45 noisy gauges:
tests/data/fleet/attribution/planted_fleet.py), scraped every 60 s for DAYS
days, is backfilled into Debian's Prometheus (promtool tsdb
create-blocks-from openmetrics); 10 XID changes are planted across the
nodes. Then `ckptscope fleet attribute --json` runs end to end ROUNDS times
for each --step in STEPS (default 15 s, the default, and 60 s, the scrape
interval), under /usr/bin/time -v: per step the median wall seconds, the
largest peak RSS of ckptscope, its CPU seconds and the Prometheus server's
(/proc/PID/stat over the run: the server is another process, its query time
is in the wall time but not in the RSS), and how many failures were found and
had the planted rank-1 metric (so a fast but wrong run does not pass).

Usage: bench/fleet_attribute_bench.py [--build build] [--nodes 3] [--days 1]
                                      [--rounds 3] [--steps 15s,60s] [--out FILE.json]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "fleet"))
sys.path.insert(0, os.path.join(ROOT, "tests", "data", "fleet", "attribution"))
import prom_harness  # noqa: E402
import planted_fleet as pf  # noqa: E402

HOUR = 3600
CALM_GAUGES, CALM_COUNTERS, NOISY = 600, 100, 45  # + 6 planted = 751 metric names


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def cpu_seconds(pid):
    """utime + stime of a process (/proc/PID/stat fields 14 and 15)."""
    with open("/proc/%d/stat" % pid, encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--days", type=float, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", default="15s,60s",
                        help="fleet attribute --step values to time, comma-separated")
    parser.add_argument("--out")
    args = parser.parse_args()
    ckptscope = os.path.join(ROOT, args.build, "bin", "ckptscope")
    names = pf.metric_names(CALM_GAUGES, CALM_COUNTERS, NOISY)
    assert len(names) == 751, len(names)

    duration = int(args.days * 24 * HOUR)
    start = prom_harness.past_start_s(duration)
    end = start + duration - 60
    nodes = ["gpu-node-%d" % (i + 1) for i in range(args.nodes)]
    types = ["79", "48", "13"]
    # 10 failures, spread over the range and the nodes, 2 hours clear of the
    # ends. A GPU's next failure has another XID: the gauge holds the last
    # XID, so a repeat of the same one is invisible (docs/fleet/attribute.md).
    failures = []
    for k in range(10):
        t = start + 2 * HOUR + k * (duration - 4 * HOUR) // 10
        round_ = k // len(nodes)
        failures.append(pf.Failure(nodes[k % len(nodes)], round_ % 2, t - t % 60,
                                   types[round_ % 3]))

    families = pf.families(start, end, nodes, 2, failures, calm_gauges=CALM_GAUGES,
                           calm_counters=CALM_COUNTERS, noisy=NOISY)
    with prom_harness.Prometheus() as prom:
        t0 = time.monotonic()
        samples = prom.backfill(families)
        log("backfilled %d samples (%d nodes x %d metrics x %.1f days) in %.0f s"
            % (samples, len(nodes), len(names), args.days, time.monotonic() - t0))
        prom.start()
        runs = []
        for r, step in ((r, step) for r in range(args.rounds) for step in args.steps.split(",")):
            cmd = ["/usr/bin/time", "-v", ckptscope, "fleet", "attribute", "--prometheus",
                   prom.url, "--from", str(start), "--to", str(end), "--step", step, "--json"]
            server_cpu = cpu_seconds(prom._process.pid)
            t0 = time.monotonic()
            p = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.monotonic() - t0
            server_cpu = cpu_seconds(prom._process.pid) - server_cpu
            if p.returncode != 0:
                log(p.stderr)
                return 1
            rss_kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)",
                                    p.stderr).group(1))
            out = json.loads(p.stdout)
            planted = {(f.node, f.time_s): pf.graded_name(pf.ORDERS[f.xid][0]) for f in failures}
            right = sum(1 for e in out["events"]
                        if planted.get((e["node"], e["time_unix_s"])) == e["top"][0]["metric"])
            client_cpu = (float(re.search(r"User time \(seconds\): ([0-9.]+)", p.stderr).group(1))
                          + float(re.search(r"System time \(seconds\): ([0-9.]+)",
                                            p.stderr).group(1)))
            runs.append({"step": step, "wall_s": wall, "peak_rss_mib": rss_kib / 1024.0,
                         "client_cpu_s": client_cpu, "prometheus_cpu_s": server_cpu,
                         "failures": len(out["events"]), "rank1_planted": right,
                         "series_per_window": max(e["series_seen"] for e in out["events"])})
            log("round %d, step %s: %.1f s (CPU: ckptscope %.1f s, Prometheus %.1f s), peak RSS "
                "%.0f MiB, %d failures, %d with the planted rank 1"
                % (r + 1, step, wall, client_cpu, server_cpu, rss_kib / 1024.0,
                   len(out["events"]), right))
        result = {
            "nodes": len(nodes), "metrics": len(names), "days": args.days, "samples": samples,
            "planted_failures": len(failures), "windows_fetched": len(nodes) * 20 + len(failures),
            "target_wall_s": 60, "runs": runs, "by_step": {},
        }
    for step in args.steps.split(","):
        mine = [r for r in runs if r["step"] == step]
        summary = {"median_wall_s": statistics.median(r["wall_s"] for r in mine),
                   "median_client_cpu_s": statistics.median(r["client_cpu_s"] for r in mine),
                   "median_prometheus_cpu_s": statistics.median(r["prometheus_cpu_s"]
                                                                for r in mine),
                   "max_peak_rss_mib": max(r["peak_rss_mib"] for r in mine),
                   "failures_found": min(r["failures"] for r in mine),
                   "rank1_planted": min(r["rank1_planted"] for r in mine)}
        result["by_step"][step] = summary
        print("fleet attribute, step %s: %d of %d failures x %d metrics on %d nodes: median %.1f s "
              "(target < 60 s; CPU ckptscope %.1f s, Prometheus %.1f s), peak RSS %.0f MiB, "
              "planted rank 1 in %d" % (step, summary["failures_found"], len(failures),
                                        len(names), len(nodes), summary["median_wall_s"],
                                        summary["median_client_cpu_s"],
                                        summary["median_prometheus_cpu_s"],
                                        summary["max_peak_rss_mib"], summary["rank1_planted"]))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
