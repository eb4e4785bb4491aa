"""`ckptscope fleet checkpoints` against a real Prometheus backfilled with
planted checkpoints whose figures are known, from both sources:

- ckptscope's exporter metrics (deploy/metrics.md): bytes counted when a
  node's checkpoint closes, its duration in the duration histogram;
- node_exporter's mountstats metrics only: continuous NFS byte counters.

The fleet: 8 nodes scraped every 15 s for 3 hours. Planted (as in the
production study the issue cites):
- a load at 21.5% of the 700 GB/s read maximum for 600 s (every node an equal
  share);
- two saves of 600 s: all 8 nodes for 300 s, then 4 of them for 300 s more, at
  5 GB/s each: 16.0% then 8.0% of the 250 GB/s write maximum;
- RPC queue time 50 ms per RPC during checkpoints, 2 ms outside; transport
  backlog 4.0 RPCs per send during, 0.5 outside; TCP backlog 64 MB per node
  during, 1 MB outside.
Every figure checked below follows from these by arithmetic, at the 60 s step.
"""

import argparse
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prom_harness as ph  # noqa: E402

SCRAPE_S = 15
STEP_S = 60
DURATION_S = 3 * 3600
NODES = ["n%02d" % i for i in range(1, 9)]
EARLY = NODES[:4]  # their save part ends after 300 s
READ_MAX = 700e9
WRITE_MAX = 250e9
LOAD_TOTAL_BPS = 0.215 * READ_MAX  # 150.5 GB/s across the fleet
SAVE_NODE_BPS = 5e9  # 8 nodes: 40 GB/s = 16.0% of 250 GB/s; 4 nodes: 8.0%
RPC_PER_S = 100.0
BACKGROUND_READ_BPS = 1e9  # mountstats: other NFS reads, fleet total, always on
BACKGROUND_WRITE_BPS = 0.5e9
SERVER = "10.0.0.5:2049"
WORKLOAD = "slurm-42"


class Plan:
    def __init__(self, start):
        self.start = start
        self.load = (start + 1800, start + 2400)
        self.saves = [(start + 5400, start + 6000), (start + 9000, start + 9600)]

    def in_checkpoint(self, t):
        """Whether the instant t lies in a checkpoint (left-open, as steps are)."""
        return any(a < t <= b for a, b in [self.load] + self.saves)

    def node_read_bps(self, node, t):
        a, b = self.load
        return LOAD_TOTAL_BPS / len(NODES) if a < t <= b else 0.0

    def node_write_bps(self, node, t):
        for a, b in self.saves:
            end = a + 300 if node in EARLY else b
            if a < t <= end:
                return SAVE_NODE_BPS
        return 0.0

    def times(self):
        return range(self.start, self.start + DURATION_S + 1, SCRAPE_S)

    def closed_checkpoints(self, node):
        """(direction, close time, bytes, duration) of the node's checkpoints."""
        a, b = self.load
        out = [("load", b, LOAD_TOTAL_BPS / len(NODES) * (b - a), b - a)]
        for a, b in self.saves:
            end = a + 300 if node in EARLY else b
            out.append(("save", end, SAVE_NODE_BPS * (end - a), end - a))
        return out


def integral(rate_at, times):
    """A counter: the integral of rate_at (piecewise constant on scrape intervals)."""
    value = 0.0
    last = None
    for t in times:
        if last is not None:
            value += rate_at((last + t) / 2.0) * (t - last)
        last = t
        yield t, value


def ckptscope_families(plan, with_max=True, storage_stage=False):
    """storage_stage: the exporters also count what reached the storage (the
    storage stage): every byte of the saves, none of the load (the page cache
    served it)."""
    times = plan.times

    def bytes_series():
        stages = ("host_io", "storage") if storage_stage else ("host_io",)
        for node in NODES:
            for direction in ("load", "save"):
                closes = [(t, b) for d, t, b, _ in plan.closed_checkpoints(node) if d == direction]
                for stage in stages:
                    share = 0.0 if stage == "storage" and direction == "load" else 1.0
                    yield ph.series({"instance": node, "job": "ckptscope-exporter",
                                     "workload": WORKLOAD, "direction": direction,
                                     "stage": stage},
                                    ((t, share * sum(b for c, b in closes if c <= t))
                                     for t in times()))

    def duration_series():
        for node in NODES:
            for direction in ("load", "save"):
                closes = [(t, d) for dd, t, _, d in plan.closed_checkpoints(node) if dd == direction]
                labels = {"instance": node, "direction": direction}
                yield ph.series(labels, ((t, float(sum(d for c, d in closes if c <= t)))
                                         for t in times()), "_sum")
                yield ph.series(labels, ((t, float(sum(1 for c, _ in closes if c <= t)))
                                         for t in times()), "_count")

    def queue_series():
        for node in NODES:
            labels = {"instance": node, "op": "READ", "server": SERVER}
            per_rpc = lambda t: 0.050 if plan.in_checkpoint(t) else 0.002  # noqa: E731
            yield ph.series(labels, integral(lambda t: RPC_PER_S * per_rpc(t), times()), "_sum")
            yield ph.series(labels, integral(lambda t: RPC_PER_S, times()), "_count")

    def gauge(during, outside):
        def series():
            for node in NODES:
                yield ph.series({"instance": node, "server": SERVER},
                                ((t, during if plan.in_checkpoint(t) else outside)
                                 for t in times()))
        return series()

    def max_series():
        for node in NODES:
            for direction, value in (("load", READ_MAX), ("save", WRITE_MAX)):
                yield ph.series({"instance": node, "direction": direction},
                                ((t, value) for t in times()))

    families = [
        ph.family("ckptscope_checkpoint_bytes", "counter", bytes_series()),
        ph.family("ckptscope_checkpoint_duration_seconds", "histogram", duration_series()),
        ph.family("ckptscope_rpc_queue_seconds", "histogram", queue_series()),
        ph.family("ckptscope_rpc_backlog_depth", "gauge", gauge(4.0, 0.5)),
        ph.family("ckptscope_tcp_backlog_bytes", "gauge", gauge(64e6, 1e6)),
    ]
    if with_max:
        families.append(ph.family("ckptscope_storage_max_bytes_per_second", "gauge",
                                  max_series()))
    return families


def mountstats_families(plan):
    times = plan.times
    base = {"export": "10.0.0.5:/ckpt", "protocol": "tcp", "mountaddr": "10.0.0.5"}

    def labels(node, **extra):
        out = dict(base, instance=node, job="node")
        out.update(extra)
        return out

    def bytes_series(direction):
        background = BACKGROUND_READ_BPS if direction == "read" else BACKGROUND_WRITE_BPS
        for node in NODES:
            rate = plan.node_read_bps if direction == "read" else plan.node_write_bps
            yield ph.series(labels(node), integral(
                lambda t, node=node, rate=rate: rate(node, t) + background / len(NODES),
                times()))

    def per_node(rate_during, rate_outside, **extra):
        for node in NODES:
            yield ph.series(labels(node, **extra), integral(
                lambda t: rate_during if plan.in_checkpoint(t) else rate_outside, times()))

    return [
        ph.family("node_mountstats_nfs_total_read_bytes", "counter", bytes_series("read")),
        ph.family("node_mountstats_nfs_total_write_bytes", "counter", bytes_series("write")),
        ph.family("node_mountstats_nfs_operations_queue_time_seconds", "counter",
                  per_node(RPC_PER_S * 0.050, RPC_PER_S * 0.002, operation="READ")),
        ph.family("node_mountstats_nfs_operations_requests", "counter",
                  per_node(RPC_PER_S, RPC_PER_S, operation="READ")),
        ph.family("node_mountstats_nfs_transport_backlog_queue", "counter",
                  per_node(RPC_PER_S * 3.0, RPC_PER_S * 0.3)),
        ph.family("node_mountstats_nfs_transport_sending_queue", "counter",
                  per_node(RPC_PER_S * 1.0, RPC_PER_S * 0.2)),
        ph.family("node_mountstats_nfs_transport_sends", "counter",
                  per_node(RPC_PER_S, RPC_PER_S)),
    ]


class Checker:
    def __init__(self):
        self.failures = []

    def near(self, what, got, want, rel=1e-9):
        if got is None or want is None:
            if got is not want:
                self.failures.append("%s: got %r, want %r" % (what, got, want))
        elif not math.isclose(got, want, rel_tol=rel, abs_tol=1e-12):
            self.failures.append("%s: got %r, want %r" % (what, got, want))

    def equal(self, what, got, want):
        if got != want:
            self.failures.append("%s: got %r, want %r" % (what, got, want))

    def true(self, what, condition):
        if not condition:
            self.failures.append(what)


def run(ckptscope, url, plan, *extra):
    cmd = [ckptscope, "fleet", "checkpoints", "--prometheus", url,
           "--from", str(plan.start), "--to", str(plan.start + DURATION_S),
           "--step", "%ds" % STEP_S, "--json", *extra]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), result.returncode,
                                                   result.stderr))
    return json.loads(result.stdout)


def check_percentiles(c, what, got, mean, p50, p90, p99, peak):
    for key, want in (("mean", mean), ("p50", p50), ("p90", p90), ("p99", p99), ("max", peak)):
        c.near("%s %s" % (what, key), got[key], want)


def check_common(c, out, plan, source, save_bg=0.0, load_bg=0.0, read_max=READ_MAX,
                 write_max=WRITE_MAX):
    tag = source
    c.equal(tag + " source", out["source"], source)
    cps = out["checkpoints"]
    c.equal(tag + " checkpoint count", len(cps), 3)
    if len(cps) != 3:
        return
    load, save1, save2 = cps
    c.equal(tag + " directions", [x["direction"] for x in cps], ["load", "save", "save"])
    c.near(tag + " load start", load["start_unix_s"], plan.load[0])
    c.near(tag + " load end", load["end_unix_s"], plan.load[1])
    c.near(tag + " load bytes", load["bytes"], (LOAD_TOTAL_BPS + load_bg) * 600)
    f = (LOAD_TOTAL_BPS + load_bg) / read_max
    check_percentiles(c, tag + " load fraction", load["fraction_of_max"], f, f, f, f, f)
    c.near(tag + " load mean bytes/s", load["bytes_per_second"]["mean"], LOAD_TOTAL_BPS + load_bg)
    for i, (save, (a, b)) in enumerate(zip((save1, save2), plan.saves)):
        name = "%s save %d" % (tag, i + 1)
        c.near(name + " start", save["start_unix_s"], a)
        c.near(name + " end", save["end_unix_s"], b)
        high = (8 * SAVE_NODE_BPS + save_bg) / write_max  # 16.0% (+ background)
        low = (4 * SAVE_NODE_BPS + save_bg) / write_max  # 8.0%
        c.near(name + " bytes", save["bytes"], (8 * SAVE_NODE_BPS + 4 * SAVE_NODE_BPS +
                                                2 * save_bg) * 300)
        # 10 steps: 5 at high, 5 at low; nearest rank: p50 = 5th = low, p90 = 9th = high.
        check_percentiles(c, name + " fraction", save["fraction_of_max"],
                          (high + low) / 2, low, high, high, high)
    for cp in cps:
        name = "%s %s@%d" % (tag, cp["direction"], cp["start_unix_s"])
        c.near(name + " rpc queue during", cp["rpc_queue_seconds_per_rpc"]["during"], 0.050)
        c.near(name + " rpc queue outside", cp["rpc_queue_seconds_per_rpc"]["outside"], 0.002)
        c.near(name + " backlog during", cp["rpc_backlog"]["during"], 4.0)
        c.near(name + " backlog outside", cp["rpc_backlog"]["outside"], 0.5)
    tl = out["timeline"]
    c.equal(tag + " timeline length", len(tl["time_unix_s"]), DURATION_S // STEP_S + 1)
    k = (plan.load[0] + 60 - plan.start) // STEP_S
    c.near(tag + " timeline load bandwidth in the load", tl["load_bytes_per_second"][k],
           LOAD_TOTAL_BPS + load_bg)
    c.near(tag + " timeline load bandwidth before it", tl["load_bytes_per_second"][k - 1], load_bg)
    c.near(tag + " timeline rpc queue in the load", tl["rpc_queue_seconds_per_rpc"][k], 0.050)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckptscope", required=True)
    parser.add_argument("--source-dir")
    args = parser.parse_args()
    ph.require_prometheus()
    plan = Plan(ph.past_start_s(DURATION_S))
    c = Checker()

    with ph.backfilled_prometheus(ckptscope_families(plan)) as prom:
        out = run(args.ckptscope, prom.url, plan)
        check_common(c, out, plan, "ckptscope")
        c.equal("max source", out["storage_max"]["load"]["source"],
                "ckptscope_storage_max_bytes_per_second")
        c.near("load max from the metric", out["storage_max"]["load"]["bytes_per_second"], READ_MAX)
        for cp in out["checkpoints"]:
            c.equal("workload", cp.get("workload"), WORKLOAD)
            c.equal("nodes", cp.get("nodes"), 8)
            c.near("tcp backlog during", cp["tcp_backlog_bytes"]["during"], 8 * 64e6)
            c.near("tcp backlog outside", cp["tcp_backlog_bytes"]["outside"], 8 * 1e6)
        # Chunked: 7 steps per request (26 requests per query) gives the same answer.
        chunked = run(args.ckptscope, prom.url, plan, "--points-per-query", "7")
        c.equal("chunked queries give the same report", chunked, out)
        # The flag overrides the metric.
        halved = run(args.ckptscope, prom.url, plan, "--storage-read-max", "350GB/s")
        c.equal("flag max source", halved["storage_max"]["load"]["source"], "flag")
        c.near("load fraction against 350 GB/s", halved["checkpoints"][0]["fraction_of_max"]["p99"],
               0.43)
        # HTML: written, with the chart's reference line and the table.
        html_path = os.path.join(prom.dir, "checkpoints.html")
        subprocess.run([args.ckptscope, "fleet", "checkpoints", "--prometheus", prom.url,
                        "--from", str(plan.start), "--to", str(plan.start + DURATION_S),
                        "--html", html_path], check=True, capture_output=True, timeout=300)
        with open(html_path, encoding="utf-8") as f:
            page = f.read()
        c.true("html has the fraction chart", "fraction of the storage maximum" in page)
        c.true("html names the workload", WORKLOAD in page)
        c.true("html shows 21.5%", "21.5%" in page)
        # The table on the terminal.
        text = subprocess.run([args.ckptscope, "fleet", "checkpoints", "--prometheus", prom.url,
                               "--from", str(plan.start), "--to", str(plan.start + DURATION_S)],
                              capture_output=True, text=True, timeout=300).stdout
        c.true("text table shows 21.5%% and 16.0%%: %s" % text,
               "21.5%" in text and "16.0%" in text)

        c.true("exporters without the storage stage: a note says the bandwidth is the calls'",
               any("before the storage stage" in n for n in out["notes"]))

    # Exporters with the storage stage: the load the page cache served is
    # still a checkpoint of its bytes, at 0% of the storage's maximum; the
    # saves, whose every byte reached the storage, as before.
    with ph.backfilled_prometheus(ckptscope_families(plan, storage_stage=True)) as prom:
        out = run(args.ckptscope, prom.url, plan)
        cps = out["checkpoints"]
        c.equal("storage stage: 3 checkpoints", len(cps), 3)
        if len(cps) == 3:
            c.near("storage stage: the load's bytes", cps[0]["bytes"], LOAD_TOTAL_BPS * 600)
            check_percentiles(c, "storage stage: load fraction", cps[0]["fraction_of_max"],
                              0.0, 0.0, 0.0, 0.0, 0.0)
            c.near("storage stage: save fraction p99", cps[1]["fraction_of_max"]["p99"],
                   8 * SAVE_NODE_BPS / WRITE_MAX)
        c.true("storage stage: no note about older exporters",
               not any("before the storage stage" in n for n in out["notes"]))

    with ph.backfilled_prometheus(ckptscope_families(plan, with_max=False)) as prom:
        out = run(args.ckptscope, prom.url, plan)
        c.equal("no maximum: source", out["storage_max"]["load"]["source"], "unknown")
        c.equal("no maximum: fractions null", out["checkpoints"][0]["fraction_of_max"], None)
        c.true("no maximum: a note says why",
               any("--storage-read-max" in n for n in out["notes"]))

    with ph.backfilled_prometheus(mountstats_families(plan)) as prom:
        out = run(args.ckptscope, prom.url, plan, "--storage-read-max", "700GB/s",
                  "--storage-write-max", "250GB/s")
        check_common(c, out, plan, "mountstats", save_bg=BACKGROUND_WRITE_BPS,
                     load_bg=BACKGROUND_READ_BPS)
        c.equal("mountstats: no tcp backlog", out["checkpoints"][0]["tcp_backlog_bytes"], None)
        forced = run(args.ckptscope, prom.url, plan, "--source", "mountstats",
                     "--storage-read-max", "700GB/s", "--storage-write-max", "250GB/s")
        c.equal("--source mountstats gives the same", forced, out)
        # Without a maximum, bursts are found against the peak; fractions null.
        unknown = run(args.ckptscope, prom.url, plan)
        c.equal("mountstats without maximum: 3 checkpoints", len(unknown["checkpoints"]), 3)
        c.equal("mountstats without maximum: fractions null",
                unknown["checkpoints"][0]["fraction_of_max"], None)
        # --source ckptscope where only mountstats exists: a clear error.
        result = subprocess.run([args.ckptscope, "fleet", "checkpoints", "--prometheus", prom.url,
                                 "--from", str(plan.start), "--to", str(plan.start + DURATION_S),
                                 "--source", "ckptscope"], capture_output=True, text=True)
        c.equal("--source ckptscope without its metrics: exit", result.returncode, 1)
        c.true("--source ckptscope error names the metric: " + result.stderr,
               "ckptscope_checkpoint_bytes_total" in result.stderr)

    if c.failures:
        print("FAIL (%d)\n  %s" % (len(c.failures), "\n  ".join(c.failures)))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
