#!/usr/bin/env python3
"""The exporter as Prometheus sees it (root; label exporter).

Starts `ckptscope exporter` on 127.0.0.1:<free port> and a real Prometheus
(Debian's /usr/bin/prometheus) on 127.0.0.1:<free port> scraping it every
second; runs ckptscope-workload as Slurm job J, a random id (K checkpoints of N shards,
saved then loaded, fsync) and waits, with a deadline, until Prometheus,
queried through its HTTP API, holds exactly the ground truth:

  sum(ckptscope_checkpoint_bytes_total{workload="slurm-J",direction="save",stage="host_io"})
      == bytes the workload wrote (and direction="load" == bytes it read)
  sum(ckptscope_checkpoints_total{workload="slurm-J",direction="save"}) == K  (and load)

It also checks up{job="ckptscope-exporter"} == 1, ckptscope_build_info in
Prometheus, the same figures in a direct scrape, `promtool check metrics` on a
live scrape, the index page linking /metrics, and exit 0 on SIGTERM.
(`promtool check rules` on deploy/prometheus/ckptscope-rules.yml is
tests/deploy's deploy_promtool_check.)

Usage: prometheus_integration_test.py --ckptscope BIN --workload BIN [--deadline 60]
Exit: 0 pass, 1 fail, 77 skipped (not root, no prometheus).
"""
import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exporter_harness as h  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    h.add_binary_args(ap)
    ap.add_argument("--prometheus", default="/usr/bin/prometheus")
    # Random by default: the exporter traces the whole node, so two runs of this
    # test on one machine (a developer's beside CI's) each counted the other's
    # job too when both used one id (seen 2026-12-02: 6 checkpoints for 3).
    ap.add_argument("--job-id", type=int, default=random.randint(10000, 99999),
                    help="the Slurm job id of the workload's cgroup [random]")
    ap.add_argument("--checkpoints", type=int, default=3)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--shard-size", default="8MiB")
    ap.add_argument("--quiet-gap-ms", type=int, default=300)
    ap.add_argument("--gap-ms", type=int, default=1500)
    ap.add_argument("--deadline", type=float, default=60.0,
                    help="seconds after the workload ends for Prometheus to hold the exact figures")
    args = ap.parse_args()
    h.need_root("prometheus_integration_test")
    h.main_wrapper(lambda: run(args))


def run(args):
    h.check_binaries(args)
    tmp = h.TempDir("ckptscope-exptest-prom-", args.work_dir, args.keep)
    cgroups = h.JobCgroups()
    workload = f"slurm-{args.job_id}"
    config = h.write_config(tmp.path, quiet_gap_ms=args.quiet_gap_ms)
    exporter = h.Exporter(args.ckptscope, f"127.0.0.1:{h.free_port()}", config=config,
                          socket_dir=tmp.path).start().wait_ready()
    prom_dir = os.path.join(tmp.path, "prometheus")
    os.mkdir(prom_dir)
    prom = h.Prometheus(prom_dir, [exporter.hostport], binary=args.prometheus).start()
    try:
        check(args, tmp, cgroups, workload, exporter, prom)
    except h.TestFailure:
        h.log(f"prometheus log (tail):\n{prom.log_text() or '(empty)'}")
        raise
    finally:
        prom.stop()
    exporter.stop()


def check(args, tmp, cgroups, workload, exporter, prom):
    # The index page links /metrics.
    status, body, _ = h.http_get(f"http://{exporter.hostport}/", timeout=10)
    if status != 200 or b'href="/metrics"' not in body:
        h.fail(f"GET / gave {status}, want 200 and a page linking /metrics: {body[:500]!r}")

    # Prometheus scrapes the exporter: up == 1.
    up_expr = f'up{{job="{h.PROMETHEUS_JOB}"}}'
    deadline = time.monotonic() + 30
    up = None
    while time.monotonic() < deadline:
        up = prom.query_value(up_expr)
        if up == 1:
            break
        time.sleep(0.5)
    if up != 1:
        targets = h.http_get(prom.url + "/api/v1/targets", timeout=10)[1][:2000]
        h.fail(f"{up_expr} = {up} after 30 s, want 1; targets: {targets!r}\nexporter stderr:\n"
               f"{exporter.stderr_text()}")
    h.log(f"{up_expr} = 1")

    truth_path = os.path.join(tmp.path, "ground-truth.json")
    argv = h.workload_args(args.workload, os.path.join(tmp.path, "ckpt"), truth_path, args.shards,
                           args.shard_size, args.checkpoints, args.gap_ms)
    cpu, wall = h.run_workload_in_job(cgroups, args.job_id, argv)
    truth = h.read_truth(truth_path)
    totals = truth["totals"]
    want = {
        f'sum(ckptscope_checkpoint_bytes_total{{workload="{workload}",direction="save",stage="host_io"}})':
            totals["bytes_written"],
        f'sum(ckptscope_checkpoint_bytes_total{{workload="{workload}",direction="load",stage="host_io"}})':
            totals["bytes_read"],
        f'sum(ckptscope_checkpoints_total{{workload="{workload}",direction="save"}})': args.checkpoints,
        f'sum(ckptscope_checkpoints_total{{workload="{workload}",direction="load"}})': args.checkpoints,
    }
    if totals["checkpoints_saved"] != args.checkpoints or totals["checkpoints_loaded"] != args.checkpoints:
        h.fail(f"the workload's ground truth has {totals['checkpoints_saved']} saved and "
               f"{totals['checkpoints_loaded']} loaded checkpoints, want {args.checkpoints} each")
    h.log(f"workload done in {wall:.2f} s ({cpu:.2f} s CPU): wrote {totals['bytes_written']} B, "
          f"read {totals['bytes_read']} B; waiting up to {args.deadline:.0f} s for Prometheus")

    t_done = time.monotonic()
    last = {}
    while True:
        last = {expr: prom.query_value(expr) for expr in want}
        if all(last[e] == v for e, v in want.items()):
            break
        if time.monotonic() - t_done > args.deadline:
            lines = "\n".join(f"  {e} = {last[e]}  (want {v})" for e, v in want.items())
            scrape = exporter.scrape()
            mine = "\n".join(l for l in scrape.splitlines()
                             if l.startswith(("ckptscope_checkpoints_total", "ckptscope_checkpoint_bytes_total",
                                              "ckptscope_dropped_events_total"))
                             and not l.endswith(" 0"))
            h.fail(f"Prometheus did not hold the ground truth {args.deadline:.0f} s after the workload "
                   f"ended; last values:\n{lines}\nthe exporter's nonzero checkpoint/drop series now:\n"
                   f"{mine or '(none)'}\nexporter stderr:\n{exporter.stderr_text()}")
        time.sleep(0.5)
    h.log(f"Prometheus holds the ground truth {time.monotonic() - t_done:.1f} s after the workload ended:")
    for e, v in want.items():
        h.log(f"  {e} = {v:.0f}")

    # Every checkpoint closed ok; no failed ones.
    failed = prom.query_value(f'sum(ckptscope_checkpoints_total{{workload="{workload}",outcome="failed"}})')
    if failed != 0:
        h.fail(f'ckptscope_checkpoints_total{{workload="{workload}",outcome="failed"}} sums to {failed}, want 0')

    info = prom.query(f'ckptscope_build_info{{job="{h.PROMETHEUS_JOB}"}}')
    if len(info) != 1 or info[0]["value"][1] != "1" or not info[0]["metric"].get("version"):
        h.fail(f"ckptscope_build_info in Prometheus: {info}, want one series = 1 with a version label")
    h.log(f"ckptscope_build_info: {info[0]['metric']}")

    # The exporter's own scrape says the same, and passes Prometheus's lint.
    text = exporter.scrape()
    samples = h.parse_exposition(text)
    direct = {
        "save bytes": (h.series_sum(samples, "ckptscope_checkpoint_bytes_total", workload=workload,
                                    direction="save", stage="host_io"), totals["bytes_written"]),
        "load bytes": (h.series_sum(samples, "ckptscope_checkpoint_bytes_total", workload=workload,
                                    direction="load", stage="host_io"), totals["bytes_read"]),
        "save checkpoints": (h.series_sum(samples, "ckptscope_checkpoints_total", workload=workload,
                                          direction="save"), args.checkpoints),
        "load checkpoints": (h.series_sum(samples, "ckptscope_checkpoints_total", workload=workload,
                                          direction="load"), args.checkpoints),
    }
    bad = {k: v for k, v in direct.items() if v[0] != v[1]}
    if bad:
        h.fail(f"a direct scrape of /metrics disagrees with the ground truth: "
               f"{ {k: f'{g} (want {w})' for k, (g, w) in bad.items()} }")
    collectors = {lab.get("collector"): v for n, lab, v in samples if n == "ckptscope_scrape_collector_success"}
    if not collectors or any(v != 1 for v in collectors.values()):
        h.fail(f"ckptscope_scrape_collector_success: {collectors}, want every collector = 1")
    drops = h.series_sum(samples, "ckptscope_dropped_events_total")
    if drops is None:
        h.fail("no ckptscope_dropped_events_total in the scrape")
    h.log(f"collectors {sorted(collectors)} all succeeded; dropped events {drops:.0f}")
    ok, out = h.promtool_check_metrics(text)
    if not ok:
        h.fail(f"promtool check metrics failed on a live scrape of {exporter.metrics_url}:\n{out}")
    h.log(f"promtool check metrics: ok ({len(text)} bytes, {len(samples)} samples){': ' + out if out else ''}")


if __name__ == "__main__":
    main()
