#!/usr/bin/env python3
"""What `ckptscope exporter` costs (needs root; not part of ctest).

1. One scrape's cost: GET /metrics against a fresh exporter idle, and after
   K checkpoints (saved, then loaded) of W workloads, each its own Slurm job
   cgroup (W = 1 and 10 by default, run at once). Per state: the median and
   p90 wall time of SCRAPES sequential GETs (after 5 unrecorded ones), the
   exporter's own CPU per scrape (its threads' schedstat over the GETs, in
   ns, divided by their number; utime+stime, which moves in 10 ms ticks, is
   kept beside it in the JSON), and the exposition's size in bytes and
   samples. Every round starts a fresh exporter for each state, the states'
   order rotated each round.
2. The exporter's CPU while a workload runs: rounds alternate a bare
   workload (no exporter running) and one under the exporter (order
   rotated), with /metrics scraped once a second as Prometheus would.
   Reported: the exporter's utime+stime (/proc/PID/stat; schedstat beside
   it) over the workload's wall time (its share of one core), the same until
   the last checkpoint has closed, as a ratio of the workload's own CPU time
   (wait4), its idle rate (a window before the workload), and the
   workload's wall time traced against bare.

Medians over the rounds are quoted; every run is kept in the JSON (--out).
Usage: sudo bench/exporter_bench.py [--build build] [--out exporter-bench.json]
                                    [--rounds 3] [--cpu-rounds 5]
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "exporter"))
import exporter_harness as h  # noqa: E402

h.log = lambda msg: print(msg, file=sys.stderr, flush=True)  # progress on stderr; the table on stdout


def median(xs):
    return statistics.median(xs) if xs else None


def p90(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))] if xs else None


def start_exporter(args, tmp, tag):
    sock_dir = os.path.join(tmp, f"sock-{tag}")
    os.makedirs(sock_dir, exist_ok=True)
    return h.Exporter(args.ckptscope, f"127.0.0.1:{h.free_port()}", config=args.config,
                      socket_dir=sock_dir, echo=args.verbose).start().wait_ready()


def counts(exporter):
    """{workload: (save checkpoints, load checkpoints)} from one scrape."""
    out = {}
    for n, lab, v in h.parse_exposition(exporter.scrape()):
        if n == "ckptscope_checkpoints_total":
            s, l = out.get(lab["workload"], (0, 0))
            if lab["direction"] == "save":
                s += v
            else:
                l += v
            out[lab["workload"]] = (s, l)
    return out


def wait_closed(exporter, want, deadline_s=60):
    """Waits until every workload in want ({label: K}) has K saves and K loads closed."""
    t_end = time.monotonic() + deadline_s
    while True:
        got = counts(exporter)
        if all(got.get(w, (0, 0)) == (k, k) for w, k in want.items()):
            return got
        if time.monotonic() > t_end:
            h.fail(f"checkpoints not all closed {deadline_s} s after the workloads: got "
                   f"{ {w: got.get(w) for w in want} }, want {want} of each direction\n"
                   f"exporter stderr:\n{exporter.stderr_tail()}")
        time.sleep(0.2)


def run_workloads(args, tmp, cgroups, n, job_base, shards, shard_size, checkpoints, gap_ms):
    """n workloads at once, each in job_<job_base+i>; returns {label: checkpoints}."""
    procs = []
    for i in range(n):
        job = job_base + i
        d = os.path.join(tmp, f"w{job}")
        argv = h.workload_args(args.workload, os.path.join(d, "ckpt"), os.path.join(tmp, f"truth-{job}.json"),
                               shards, shard_size, checkpoints, gap_ms)
        procs.append((job, d, h.start_in_cgroup(cgroups.job(job), argv)))
    for job, d, p in procs:
        rc = p.wait(timeout=600)
        if rc != 0:
            h.fail(f"workload in job_{job} exited {rc}")
    for job, d, _ in procs:
        shutil.rmtree(d, ignore_errors=True)
    return {f"slurm-{job}": checkpoints for job, _, _ in procs}


# --------------------------------------------------------------------------- 1. scrape cost

def scrape_state(args, tmp, cgroups, workloads, job_base):
    exporter = start_exporter(args, tmp, f"scrape-{workloads}")
    try:
        exporter.wait_collected()
        if workloads:
            want = run_workloads(args, tmp, cgroups, workloads, job_base, args.shards, args.shard_size,
                                 args.checkpoints, args.gap_ms)
            wait_closed(exporter, want)
        for _ in range(5):
            exporter.scrape()
        times = []
        size = 0
        cpu0 = h.proc_cpu_seconds(exporter.pid)
        precise0 = h.proc_cpu_seconds_precise(exporter.pid)
        for _ in range(args.scrapes):
            status, body, secs = h.http_get(exporter.metrics_url)
            if status != 200:
                h.fail(f"GET /metrics: {status}")
            times.append(secs)
            size = len(body)
        cpu = h.proc_cpu_seconds(exporter.pid) - cpu0
        precise = h.proc_cpu_seconds_precise(exporter.pid) - precise0
        samples = h.parse_exposition(body.decode())
        labels = h.label_values(samples, "ckptscope_checkpoints_total", "workload")
    finally:
        exporter.stop()
    return {"workloads": workloads, "median_ms": median(times) * 1e3, "p90_ms": p90(times) * 1e3,
            "exporter_cpu_ms_per_scrape": precise * 1e3 / args.scrapes,
            "exporter_utime_stime_ms_per_scrape": cpu * 1e3 / args.scrapes, "bytes": size, "samples": len(samples),
            "workload_labels": labels}


def scrape_cost(args, tmp, cgroups):
    states = [0] + args.workloads
    runs = {w: [] for w in states}
    for r in range(args.rounds):
        order = states[r % len(states):] + states[:r % len(states)]
        for w in order:
            res = scrape_state(args, tmp, cgroups, w, 5000 + 100 * r)
            h.log(f"scrape round {r + 1} W={w}: median {res['median_ms']:.2f} ms, "
                  f"exporter CPU {res['exporter_cpu_ms_per_scrape']:.2f} ms/scrape, {res['bytes']} B, "
                  f"{res['samples']} samples")
            runs[w].append(res)
    out = {}
    for w in states:
        rs = runs[w]
        out[str(w)] = {
            "median_ms": round(median([x["median_ms"] for x in rs]), 3),
            "p90_ms": round(median([x["p90_ms"] for x in rs]), 3),
            "exporter_cpu_ms_per_scrape": round(median([x["exporter_cpu_ms_per_scrape"] for x in rs]), 3),
            "exporter_utime_stime_ms_per_scrape":
                round(median([x["exporter_utime_stime_ms_per_scrape"] for x in rs]), 3),
            "bytes": int(median([x["bytes"] for x in rs])),
            "samples": int(median([x["samples"] for x in rs])),
            "runs": rs,
        }
    idle = out["0"]
    for w in args.workloads:
        o = out[str(w)]
        o["median_over_idle"] = round(o["median_ms"] / idle["median_ms"], 3)
        o["bytes_over_idle"] = round(o["bytes"] / idle["bytes"], 3)
    return out


# --------------------------------------------------------------------------- 2. CPU while a workload runs

def cpu_round(args, tmp, cgroups, traced, job):
    exporter = None
    scraper_stop = threading.Event()
    scraper = None
    res = {"kind": "traced" if traced else "bare"}
    try:
        if traced:
            exporter = start_exporter(args, tmp, f"cpu-{job}")
            exporter.wait_collected()
            c0 = h.proc_cpu_seconds(exporter.pid)
            time.sleep(args.idle_window_s)
            c1 = h.proc_cpu_seconds(exporter.pid)
            res["exporter_idle_cpu_share"] = (c1 - c0) / args.idle_window_s

            def scrape_loop():
                while not scraper_stop.wait(1.0):
                    exporter.scrape()
            scraper = threading.Thread(target=scrape_loop, daemon=True)
            scraper.start()
            c_start = h.proc_cpu_seconds(exporter.pid)
            p_start = h.proc_cpu_seconds_precise(exporter.pid)
        d = os.path.join(tmp, f"w{job}")
        argv = h.workload_args(args.workload, os.path.join(d, "ckpt"), os.path.join(tmp, f"truth-{job}.json"),
                               args.cpu_shards, args.cpu_shard_size, args.cpu_checkpoints, args.cpu_gap_ms)
        t0 = time.monotonic()
        p = h.start_in_cgroup(cgroups.job(job), argv)
        rc, wl_cpu = h.wait_rusage(p, timeout=600)
        wall = time.monotonic() - t0
        if rc != 0:
            h.fail(f"workload exited {rc}")
        res.update(workload_wall_s=wall, workload_cpu_s=wl_cpu)
        if traced:
            c_end = h.proc_cpu_seconds(exporter.pid)
            p_end = h.proc_cpu_seconds_precise(exporter.pid)
            wait_closed(exporter, {f"slurm-{job}": args.cpu_checkpoints})
            t_closed = time.monotonic()
            c_closed = h.proc_cpu_seconds(exporter.pid)
            res.update(exporter_cpu_s=c_end - c_start,
                       exporter_cpu_share=(c_end - c_start) / wall,
                       exporter_over_workload_cpu=(c_end - c_start) / wl_cpu if wl_cpu else None,
                       exporter_cpu_to_closed_s=c_closed - c_start,
                       exporter_schedstat_cpu_s=p_end - p_start,
                       closed_after_s=t_closed - t0 - wall)
        shutil.rmtree(d, ignore_errors=True)
    finally:
        scraper_stop.set()
        if scraper:
            scraper.join()
        if exporter:
            exporter.stop()
    return res


def cpu_share(args, tmp, cgroups):
    kinds = ["bare", "traced"]
    runs = {k: [] for k in kinds}
    for r in range(args.cpu_rounds):
        order = kinds if r % 2 == 0 else kinds[::-1]
        for k in order:
            res = cpu_round(args, tmp, cgroups, k == "traced", 7000 + 10 * r + (k == "traced"))
            runs[k].append(res)
            extra = (f", exporter {res['exporter_cpu_s'] * 1e3:.0f} ms CPU = {100 * res['exporter_cpu_share']:.2f}% "
                     f"of a core, {100 * res['exporter_over_workload_cpu']:.1f}% of the workload's CPU"
                     if k == "traced" else "")
            h.log(f"cpu round {r + 1} {k}: workload {res['workload_wall_s']:.3f} s wall, "
                  f"{res['workload_cpu_s']:.3f} s CPU{extra}")
            time.sleep(args.cadence_s)
    t, b = runs["traced"], runs["bare"]
    m = lambda rs, key: median([x[key] for x in rs if x.get(key) is not None])  # noqa: E731
    return {
        "workload": {"shards": args.cpu_shards, "shard_size": args.cpu_shard_size,
                     "checkpoints": args.cpu_checkpoints, "gap_ms": args.cpu_gap_ms},
        "bare_wall_s_median": round(m(b, "workload_wall_s"), 3),
        "traced_wall_s_median": round(m(t, "workload_wall_s"), 3),
        "traced_over_bare_wall": round(m(t, "workload_wall_s") / m(b, "workload_wall_s"), 4),
        "bare_workload_cpu_s_median": round(m(b, "workload_cpu_s"), 3),
        "traced_workload_cpu_s_median": round(m(t, "workload_cpu_s"), 3),
        "exporter_cpu_s_median": round(m(t, "exporter_cpu_s"), 4),
        "exporter_schedstat_cpu_s_median": round(m(t, "exporter_schedstat_cpu_s"), 4),
        "exporter_cpu_share_median": round(m(t, "exporter_cpu_share"), 5),
        "exporter_over_workload_cpu_median": round(m(t, "exporter_over_workload_cpu"), 4),
        "exporter_cpu_to_closed_s_median": round(m(t, "exporter_cpu_to_closed_s"), 4),
        "exporter_idle_cpu_share_median": round(m(t, "exporter_idle_cpu_share"), 5),
        "runs": runs,
    }


def print_table(result):
    s = result.get("scrape")
    if s:
        print("\nOne scrape of /metrics (medians over rounds; a fresh exporter per state)")
        print(f"{'state':<24}{'median ms':>10}{'p90 ms':>9}{'exporter CPU ms':>17}{'bytes':>9}{'samples':>9}"
              f"{'x idle':>8}")
        for w, o in s.items():
            name = "idle" if w == "0" else f"after {w} workload{'s' if w != '1' else ''}"
            print(f"{name:<24}{o['median_ms']:>10.2f}{o['p90_ms']:>9.2f}{o['exporter_cpu_ms_per_scrape']:>17.2f}"
                  f"{o['bytes']:>9}{o['samples']:>9}{o.get('median_over_idle', 1.0):>8.2f}")
    c = result.get("cpu")
    if c:
        w = c["workload"]
        print(f"\nExporter CPU while the workload runs ({w['checkpoints']} x {w['shards']} x {w['shard_size']}, "
              f"gap {w['gap_ms']} ms, fsync; medians)")
        rows = [
            ("workload wall, bare", f"{c['bare_wall_s_median']:.3f} s"),
            ("workload wall, under the exporter", f"{c['traced_wall_s_median']:.3f} s "
                                                  f"(x{c['traced_over_bare_wall']:.3f})"),
            ("workload CPU, bare / traced", f"{c['bare_workload_cpu_s_median']:.3f} / "
                                            f"{c['traced_workload_cpu_s_median']:.3f} s"),
            ("exporter CPU over the workload's wall", f"{c['exporter_cpu_s_median'] * 1e3:.1f} ms = "
                                                      f"{100 * c['exporter_cpu_share_median']:.2f}% of a core"),
            ("  the same from schedstat (ns resolution)", f"{c['exporter_schedstat_cpu_s_median'] * 1e3:.1f} ms"),
            ("exporter CPU / workload CPU", f"{100 * c['exporter_over_workload_cpu_median']:.1f}%"),
            ("exporter CPU until the last checkpoint closed", f"{c['exporter_cpu_to_closed_s_median'] * 1e3:.1f} ms"),
            ("exporter idle", f"{100 * c['exporter_idle_cpu_share_median']:.2f}% of a core"),
        ]
        for k, v in rows:
            print(f"{k:<48}{v}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build dir (its bin/ has the binaries)")
    ap.add_argument("--ckptscope", help="default: BUILD/bin/ckptscope")
    ap.add_argument("--workload", help="default: BUILD/bin/ckptscope-workload")
    ap.add_argument("--out", help="write the figures (and every run) here as JSON")
    ap.add_argument("--disk-dir", default="/var/tmp", help="local-disk directory for the workloads' files")
    ap.add_argument("--quiet-gap-ms", type=int, default=200, help="the exporter's checkpoint.quiet_gap_ms")
    ap.add_argument("--rounds", type=int, default=3, help="scrape-cost rounds")
    ap.add_argument("--scrapes", type=int, default=300, help="GETs timed per state and round")
    ap.add_argument("--workloads", default="1,10", help="workload counts for the scrape cost")
    ap.add_argument("--checkpoints", type=int, default=3)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--shard-size", default="1MiB")
    ap.add_argument("--gap-ms", type=int, default=500)
    ap.add_argument("--cpu-rounds", type=int, default=5, help="bare/traced rounds of the CPU share")
    ap.add_argument("--cpu-checkpoints", type=int, default=5)
    ap.add_argument("--cpu-shards", type=int, default=4)
    ap.add_argument("--cpu-shard-size", default="16MiB")
    ap.add_argument("--cpu-gap-ms", type=int, default=500)
    ap.add_argument("--idle-window-s", type=float, default=3.0)
    ap.add_argument("--cadence-s", type=float, default=1.0, help="pause between CPU runs (the disk settles)")
    ap.add_argument("--skip", choices=["scrape", "cpu"], action="append", default=[])
    ap.add_argument("--verbose", action="store_true", help="echo the exporter's stderr")
    args = ap.parse_args()
    args.workloads = [int(x) for x in args.workloads.split(",") if x]
    args.ckptscope = args.ckptscope or os.path.join(args.build, "bin", "ckptscope")
    args.workload = args.workload or os.path.join(args.build, "bin", "ckptscope-workload")
    if os.geteuid() != 0:
        sys.exit("exporter_bench.py: needs root (the exporter loads eBPF; the workloads run in cgroups)")
    for p in (args.ckptscope, args.workload):
        if not os.access(p, os.X_OK):
            sys.exit(f"exporter_bench.py: {p} not built (cmake --build --preset default)")

    def run():
        tmp = h.TempDir("ckptscope-exporter-bench-", args.disk_dir).path
        args.config = h.write_config(tmp, quiet_gap_ms=args.quiet_gap_ms)
        cgroups = h.JobCgroups()
        result = {"ckptscope": os.path.abspath(args.ckptscope), "quiet_gap_ms": args.quiet_gap_ms,
                  "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
        if "scrape" not in args.skip:
            result["scrape"] = scrape_cost(args, tmp, cgroups)
        if "cpu" not in args.skip:
            result["cpu"] = cpu_share(args, tmp, cgroups)
        print_table(result)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(result, f, indent=2)
            print(f"\nwrote {args.out}")

    try:
        run()
    except h.TestFailure as e:
        sys.exit(f"exporter_bench.py: {e}")


if __name__ == "__main__":
    main()
