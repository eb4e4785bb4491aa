#!/usr/bin/env python3
"""What `ckptscope run` costs as a wrapper, measured as ratios in one run.

1. Wrapper overhead: `ckptscope run --no-trace -- /bin/true` against
   `/bin/true`, both started by this script with posix_spawn and timed to
   their exit (target: under 1 ms added). The wrapper does everything it
   does for a real job: the log created with its header, the tee, the
   kernel log opened, the classifier on failure (not here: true succeeds).
2. With tracing (root only): the one-time start-up cost of loading and
   attaching the eBPF programs, `ckptscope run -- /bin/true` against
   `--no-trace`, reported separately.
3. Classifier throughput: bench/classifier_bench's MB/s (target >= 100 MB/s).

Runs alternate and their order rotates every round; medians are quoted.

Usage: bench/wrapper_overhead.py [--build build] [--rounds 200] [--traced-rounds 9] [--json F]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd, cwd):
    t0 = time.perf_counter_ns()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t1 = time.perf_counter_ns()
    if p.returncode != 0:
        sys.exit(f"wrapper_overhead.py: {' '.join(cmd)} exited {p.returncode}")
    return (t1 - t0) / 1e6


def alternate(variants, rounds, cwd):
    times = {name: [] for name, _ in variants}
    for r in range(rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for name, cmd in order:
            times[name].append(timed(cmd, cwd))
    return {name: statistics.median(v) for name, v in times.items()}, times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--traced-rounds", type=int, default=9)
    ap.add_argument("--json")
    args = ap.parse_args()
    ckpt = os.path.abspath(os.path.join(args.build, "bin", "ckptscope"))
    bench = os.path.abspath(os.path.join(args.build, "bin", "classifier_bench"))
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        logs = os.path.join(tmp, "logs")
        bare = ("bare", ["/bin/true"])
        wrapped = ("wrapped", [ckpt, "run", "--no-trace", "--quiet", "--log-dir", logs, "--",
                               "/bin/true"])
        # Warm the page cache and the dynamic loader before measuring.
        for _ in range(5):
            timed(bare[1], tmp)
            timed(wrapped[1], tmp)
        med, _ = alternate([bare, wrapped], args.rounds, tmp)
        out["wrapper"] = {"bare_ms": med["bare"], "wrapped_ms": med["wrapped"],
                          "added_ms": med["wrapped"] - med["bare"], "rounds": args.rounds}
        print(f"wrapper: /bin/true {med['bare']:.3f} ms, under run --no-trace "
              f"{med['wrapped']:.3f} ms: +{med['wrapped'] - med['bare']:.3f} ms "
              f"(median of {args.rounds}; target < 1 ms)")
        if os.geteuid() == 0:
            traced = ("traced", [ckpt, "run", "--quiet", "--trace", os.path.join(tmp, "t.db"),
                                 "--log-dir", logs, "--", "/bin/true"])
            med2, _ = alternate([wrapped, traced], args.traced_rounds, tmp)
            out["startup"] = {"untraced_ms": med2["wrapped"], "traced_ms": med2["traced"],
                              "bpf_startup_ms": med2["traced"] - med2["wrapped"],
                              "rounds": args.traced_rounds}
            print(f"tracing start-up (BPF load and attach, trace file, stop): "
                  f"+{med2['traced'] - med2['wrapped']:.1f} ms "
                  f"({med2['traced']:.1f} vs {med2['wrapped']:.1f} ms, median of "
                  f"{args.traced_rounds})")
        else:
            print("tracing start-up: skipped (needs root)")
    if os.path.exists(bench):
        p = subprocess.run([bench, "--benchmark_format=json", "--benchmark_min_time=1"],
                           capture_output=True, text=True, check=True)
        for b in json.loads(p.stdout)["benchmarks"]:
            mbs = b["bytes_per_second"] / 1e6
            out.setdefault("classifier", {})[b["name"].split("/")[0]] = mbs
            print(f"classifier {b['name'].split('/')[0]}: {mbs:.0f} MB/s (target >= 100 MB/s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
