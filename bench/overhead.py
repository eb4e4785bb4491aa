#!/usr/bin/env python3
"""What tracing costs the job, measured as ratios in one run (needs root).

1. Added cost per traced call: io_loop does CALLS 4 KiB writes then CALLS
   reads on tmpfs, bare and under `ckptscope run`; the difference of the
   medians of its own per-call timings (target: <= 200 ns added per call).
   A third variant, `--probe-floor`, attaches the same programs but returns
   at once: what merely enabling syscall tracepoints costs (the kernel's
   slow syscall path), separated from what our programs add.
2. BPF cost per event from the kernel's own stats (run_time_ns / run_cnt),
   for the enter+exit programs of write and read.
3. The whole checkpoint workload, bare against traced (target: < 2%): runs
   alternate on a fixed cadence with rotated order, since disk idle time
   alone moves this machine's figures by 10% or more; medians are quoted.

Usage: sudo bench/overhead.py [--build build] [--rounds 9] [--calls 100000]
                              [--workload-rounds 7] [--json out.json]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"overhead.py: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return p


def per_call(args, bins, scratch):
    ckpt_dir = os.path.join(scratch, "checkpoint-bench")
    os.makedirs(ckpt_dir, exist_ok=True)
    target = os.path.join(ckpt_dir, "io.pt")
    loop = [bins["io_loop"], target, str(args.calls), "4096"]
    results = {"bare": [], "floor": [], "traced": []}
    stats = []
    trace = os.path.join(scratch, "t.db")
    kinds = ["bare", "floor", "traced"]
    for i in range(args.rounds):
        order = kinds[i % 3:] + kinds[:i % 3]  # rotated each round
        for kind in order:
            if kind == "bare":
                cmd = loop
            else:
                # floor: the syscall tracepoints enabled, programs returning at once
                extra = ["--probe-floor"] if kind == "floor" else []
                cmd = [bins["ckptscope"], "run", "--quiet", "--trace", trace] + extra + ["--"] + loop
            results[kind].append(json.loads(run(cmd).stdout))
    # Kernel BPF stats cost time themselves: measured in runs of their own.
    for _ in range(max(1, args.rounds // 3)):
        stats_file = os.path.join(scratch, "stats.json")
        run([bins["ckptscope"], "run", "--quiet", "--trace", trace, "--bpf-stats", stats_file, "--"] + loop)
        with open(stats_file) as f:
            stats.append({s["name"]: s for s in json.load(f)})
    # Enter and exit programs run for every traced call (2 per call: write then read).
    bpf = statistics.median(
        sum(s[p]["run_time_ns"] / max(1, s[p]["run_cnt"]) for p in ("on_sys_enter", "on_sys_exit") if p in s)
        for s in stats)
    out = {"bpf_ns_per_traced_call": round(bpf, 1),
           "bpf_programs": {name: {"run_cnt": st["run_cnt"],
                                   "ns_per_run": round(st["run_time_ns"] / max(1, st["run_cnt"]), 1)}
                            for name, st in stats[-1].items() if st["run_cnt"] > 0}}
    for op in ("write", "read"):
        b, f, t = (statistics.median(r[f"{op}_ns_per_call"] for r in results[k]) for k in kinds)
        out[op] = {"bare_ns_per_call": round(b, 1), "traced_ns_per_call": round(t, 1),
                   "added_ns_per_call": round(t - b, 1),
                   "floor_added_ns_per_call": round(f - b, 1),
                   "ours_added_ns_per_call": round(t - f, 1),
                   "traced_over_bare": round(t / b, 3)}
    return out


def workload(args, bins, scratch):
    disk_dir = tempfile.mkdtemp(prefix="ckptscope-bench-", dir=args.disk_dir)
    base = [bins["ckptscope-workload"], "--dir", os.path.join(disk_dir, "ckpt"), "--shards", "4",
            "--shard-size", args.shard_size, "--checkpoints", "2", "--gap-ms", "0", "--fsync",
            "--quiet"]
    times = {"bare": [], "traced": []}
    try:
        for i in range(args.workload_rounds):
            order = ["bare", "traced"] if i % 2 == 0 else ["traced", "bare"]
            for kind in order:
                truth = os.path.join(scratch, "truth.json")
                cmd = base + ["--ground-truth", truth]
                if kind == "traced":
                    cmd = [bins["ckptscope"], "run", "--quiet", "--trace",
                           os.path.join(scratch, "w.db"), "--"] + cmd
                run(cmd)
                with open(truth) as f:
                    g = json.load(f)
                times[kind].append((g["end_ns"] - g["start_ns"]) / 1e9)
                shutil.rmtree(os.path.join(disk_dir, "ckpt"), ignore_errors=True)
                time.sleep(args.cadence_s)  # a fixed cadence: the disk settles alike
    finally:
        shutil.rmtree(disk_dir, ignore_errors=True)
    b = statistics.median(times["bare"])
    t = statistics.median(times["traced"])
    return {"bare_s_median": round(b, 3), "traced_s_median": round(t, 3),
            "overhead_percent": round(100 * (t - b) / b, 2),
            "runs": times}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--calls", type=int, default=100000)
    ap.add_argument("--workload-rounds", type=int, default=7)
    ap.add_argument("--shard-size", default="64M")
    ap.add_argument("--cadence-s", type=float, default=2.0)
    ap.add_argument("--disk-dir", default=os.getcwd(), help="local-disk directory for the workload")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("overhead.py: needs root (it loads eBPF programs)")
    bins = {n: os.path.join(args.build, "bin", n) for n in ("ckptscope", "ckptscope-workload", "io_loop")}
    for n, p in bins.items():
        if not os.access(p, os.X_OK):
            sys.exit(f"overhead.py: {p} not built (cmake --build --preset default)")
    scratch = tempfile.mkdtemp(prefix="ckptscope-bench-", dir="/dev/shm")
    try:
        result = {"per_call": per_call(args, bins, scratch)}
        if args.workload_rounds > 0:
            result["workload"] = workload(args, bins, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
