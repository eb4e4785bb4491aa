#!/usr/bin/env python3
"""What the job-I/O probes cost on this host (syscall mode: this kernel
refuses fentry), issue 18. Needs root.

1. Per call, above the tracepoint floor: io_loop (bench/io_loop.cpp) does
   CALLS 4 KiB writes then CALLS reads on tmpfs, of a checkpoint file
   (checkpoint-bench/io.pt) and of a non-checkpoint file (plain/io.dat):
   bare, under `ckptscope run --probe-mode syscall --probe-floor` (programs
   attached, returning at once: what enabling syscall tracepoints costs) and
   under `ckptscope run --probe-mode syscall`. The part above the floor
   (traced - floor) is what our programs, the verdict lookup, the ring buffer
   and the collector add; for a non-checkpoint file the verdict answers
   "other" and no record is made. Variants alternate, order rotated each round.
2. Whole workload: torch.save of 4 x 64 MiB shards (fsync'ed) into
   checkpoints/step_N/ on the local disk, bare against under `ckptscope run`,
   timed inside the saving process (import excluded), alternated with
   rotated order on a fixed cadence; medians, and the bare runs' spread,
   which is what a difference has to beat on this machine.
3. --darshan LIB: the same io_loop and torch.save with Darshan's runtime
   LD_PRELOADed (non-MPI: DARSHAN_ENABLE_NONMPI=1), for comparison.
4. The node exporter's tax on calls that are no checkpoint's (--node-modes):
   a getppid loop (bench/getppid_loop.cpp) and io_loop on the non-checkpoint
   file, bare and with `ckptscope exporter --probe-mode MODE` running for
   each MODE given, rotated each round; % of bare, from the medians and
   paired by round. Issue 18's target is within 3% of bare in file_layer
   mode, which needs a kernel with BPF trampolines: on such a machine,
   `--mode file_layer --node-modes file_layer,syscall`.

Usage: sudo bench/filelayer_host.py [--build build] [--rounds 9] [--calls 100000]
          [--workload-rounds 7] [--shard-mib 64] [--disk-dir DIR] [--mode syscall]
          [--darshan /tmp/darshan/lib/libdarshan.so] [--node-modes syscall[,file_layer]]
          [--ppid-calls N] [--json OUT]
--mode '' leaves --probe-mode off (a build from before issue 18).
"""
import argparse
import itertools
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

TORCH_SAVE = r"""
import json, os, sys, time, torch
out_dir, shards, mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tensors = [torch.full((mib << 18,), float(i), dtype=torch.float32) for i in range(shards)]
os.makedirs(out_dir, exist_ok=True)
t0 = time.monotonic_ns()
for i, t in enumerate(tensors):
    path = os.path.join(out_dir, f"shard-{i}.pt")
    with open(path, "wb") as f:
        torch.save({"shard": i, "t": t}, f)
        f.flush()
        os.fsync(f.fileno())
t1 = time.monotonic_ns()
print(json.dumps({"save_ns": t1 - t0}))
"""


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"filelayer_host.py: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return p


def med(v):
    return statistics.median(v) if v else None


def spread(v):
    return (min(v), max(v)) if v else None


_darshan_runs = itertools.count()


def darshan_env(args, scratch):
    """Darshan's runtime preloaded, non-MPI, each run's log a file of its own."""
    log = os.path.join(scratch, f"run-{next(_darshan_runs)}.darshan")
    return dict(os.environ, LD_PRELOAD=args.darshan, DARSHAN_ENABLE_NONMPI="1", DARSHAN_LOGFILE=log)


def traced(args, bins, trace, extra):
    mode = ["--probe-mode", args.mode] if args.mode else []
    return [bins["ckptscope"], "run", "--quiet", "--trace", trace] + mode + extra + ["--"]


def per_call(args, bins, scratch):
    files = {"checkpoint": os.path.join(scratch, "checkpoint-bench", "io.pt"),
             "other": os.path.join(scratch, "plain", "io.dat")}
    for f in files.values():
        os.makedirs(os.path.dirname(f), exist_ok=True)
    kinds = ["bare", "floor", "traced"] + (["darshan"] if args.darshan else [])
    res = {fk: {k: [] for k in kinds} for fk in files}
    trace = os.path.join(scratch, "t.db")
    for i in range(args.rounds):
        order = kinds[i % len(kinds):] + kinds[:i % len(kinds)]
        for fk, path in files.items():
            loop = [bins["io_loop"], path, str(args.calls), "4096"]
            for kind in order:
                env = None
                if kind == "bare":
                    cmd = loop
                elif kind == "darshan":
                    cmd, env = loop, darshan_env(args, scratch)
                else:
                    cmd = traced(args, bins, trace, ["--probe-floor"] if kind == "floor" else []) + loop
                res[fk][kind].append(json.loads(run(cmd, env).stdout.strip().splitlines()[-1]))
                if os.path.exists(trace):
                    os.unlink(trace)
    out = {}
    for fk in files:
        out[fk] = {}
        for op in ("write", "read"):
            key = f"{op}_ns_per_call"
            m = {k: med([r[key] for r in res[fk][k]]) for k in kinds}
            s = {k: spread([r[key] for r in res[fk][k]]) for k in kinds}
            out[fk][op] = {"median_ns": m, "spread_ns": s,
                           "added_ns": m["traced"] - m["bare"], "floor_ns": m["floor"] - m["bare"],
                           "above_floor_ns": m["traced"] - m["floor"]}
            if args.darshan:
                out[fk][op]["darshan_added_ns"] = m["darshan"] - m["bare"]
    return out


def workload(args, bins, scratch):
    py = "/usr/bin/python3"
    base = tempfile.mkdtemp(prefix="ckptscope-torch-bench-", dir=args.disk_dir)
    kinds = ["bare", "traced"] + (["darshan"] if args.darshan else [])
    res = {k: [] for k in kinds}
    trace = os.path.join(scratch, "w.db")
    try:
        step = 0
        for i in range(args.workload_rounds):
            order = kinds[i % len(kinds):] + kinds[:i % len(kinds)]
            for kind in order:
                t_next = time.monotonic() + args.cadence_s
                step += 1
                out_dir = os.path.join(base, "checkpoints", f"step_{step}")
                save = [py, "-c", TORCH_SAVE, out_dir, "4", str(args.shard_mib)]
                env = darshan_env(args, scratch) if kind == "darshan" else None
                cmd = traced(args, bins, trace, []) + save if kind == "traced" else save
                res[kind].append(json.loads(run(cmd, env).stdout.strip().splitlines()[-1])["save_ns"] / 1e9)
                shutil.rmtree(out_dir, ignore_errors=True)
                if os.path.exists(trace):
                    os.unlink(trace)
                os.sync()
                time.sleep(max(0.0, t_next - time.monotonic()))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    m = {k: med(v) for k, v in res.items()}
    out = {"runs_s": res, "median_s": m, "bare_spread_s": spread(res["bare"]),
           "traced_overhead_pct": 100.0 * (m["traced"] / m["bare"] - 1.0)}
    if args.darshan:
        out["darshan_overhead_pct"] = 100.0 * (m["darshan"] / m["bare"] - 1.0)
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_exporter(bins, mode, log_path):
    """`ckptscope exporter` in MODE, once it serves /metrics (its probes are attached by then)."""
    port = free_port()
    log = open(log_path, "w")
    proc = subprocess.Popen([bins["ckptscope"], "exporter", "--listen", f"127.0.0.1:{port}",
                             "--socket", "", "--probe-mode", mode], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=1).read()
            return proc, log
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            log.close()
            with open(log_path) as f:
                tail = f.read()[-2000:]
            sys.exit(f"filelayer_host.py: ckptscope exporter --probe-mode {mode} did not serve "
                     f"/metrics on port {port}:\n{tail}")
        time.sleep(0.1)


def stop_exporter(proc, log):
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:  # never leave a node agent attached
        proc.kill()
        proc.wait()
    log.close()


def node(args, bins, scratch):
    plain = os.path.join(scratch, "plain", "io.dat")
    os.makedirs(os.path.dirname(plain), exist_ok=True)
    kinds = ["bare"] + [f"exporter-{m}" for m in args.node_modes]
    loops = {"getppid": [bins["getppid_loop"], str(args.ppid_calls)],
             "plain": [bins["io_loop"], plain, str(args.calls), "4096"]}
    res = {k: [] for k in kinds}
    for loop in loops.values():  # a warm-up, not recorded: cold caches
        run(loop)
    for i in range(args.rounds):
        for kind in kinds[i % len(kinds):] + kinds[:i % len(kinds)]:
            exporter = None
            if kind != "bare":
                exporter = start_exporter(bins, kind.removeprefix("exporter-"),
                                          os.path.join(scratch, f"{kind}.log"))
            try:
                r = {}
                for loop in loops.values():
                    r.update(json.loads(run(loop).stdout.strip().splitlines()[-1]))
            finally:
                if exporter:
                    stop_exporter(*exporter)
            res[kind].append(r)
    out = {}
    for key in ("getppid_ns_per_call", "write_ns_per_call", "read_ns_per_call"):
        bare = [r[key] for r in res["bare"]]
        out[key] = {"median_ns": {k: med([r[key] for r in res[k]]) for k in kinds},
                    "spread_ns": {k: spread([r[key] for r in res[k]]) for k in kinds}}
        for k in kinds[1:]:
            runs = [r[key] for r in res[k]]
            paired = [100.0 * (x / b - 1.0) for x, b in zip(runs, bare)]
            out[key][k] = {"pct_of_bare": 100.0 * (med(runs) / med(bare) - 1.0),
                           "paired_pct_median": med(paired), "paired_pct_spread": spread(paired)}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--calls", type=int, default=100000)
    ap.add_argument("--workload-rounds", type=int, default=7)
    ap.add_argument("--shard-mib", type=int, default=64)
    ap.add_argument("--cadence-s", type=float, default=3.0)
    ap.add_argument("--disk-dir", default="/var/tmp", help="local-disk directory for torch.save")
    ap.add_argument("--mode", default="syscall", help="--probe-mode to pass ('' for none)")
    ap.add_argument("--darshan", help="libdarshan.so to LD_PRELOAD for a comparison")
    ap.add_argument("--skip-workload", action="store_true")
    ap.add_argument("--node-modes", default="syscall",
                    help="exporter probe modes for part 4, comma-separated ('' skips it)")
    ap.add_argument("--ppid-calls", type=int, default=2000000)
    ap.add_argument("--skip-per-call", action="store_true")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    args.node_modes = [m for m in args.node_modes.split(",") if m]
    for m in args.node_modes:
        if m not in ("syscall", "file_layer", "auto"):
            sys.exit(f"filelayer_host.py: --node-modes: {m!r} is no probe mode (syscall, file_layer, auto)")
    if os.geteuid() != 0:
        sys.exit("filelayer_host.py: needs root (ckptscope run loads eBPF programs)")
    needed = ("ckptscope", "io_loop") + (("getppid_loop",) if args.node_modes else ())
    bins = {b: os.path.join(args.build, "bin", b) for b in needed}
    for b, p in bins.items():
        if not os.access(p, os.X_OK):
            sys.exit(f"filelayer_host.py: no {p}: build the {b} target")
    if args.darshan and not os.path.exists(args.darshan):
        sys.exit(f"filelayer_host.py: --darshan {args.darshan}: no such file")
    scratch = tempfile.mkdtemp(prefix="ckptscope-fl-bench-", dir="/dev/shm")
    figures = {}
    try:
        figures["per_call"] = {} if args.skip_per_call else per_call(args, bins, scratch)
        for fk, ops in figures["per_call"].items():
            for op, f in ops.items():
                m, s = f["median_ns"], f["spread_ns"]
                line = (f"{fk:10} {op:5} bare {m['bare']:6.0f} ({s['bare'][0]:.0f}-{s['bare'][1]:.0f})  "
                        f"floor {m['floor']:6.0f}  traced {m['traced']:6.0f}  added {f['added_ns']:5.0f}"
                        f" = floor {f['floor_ns']:4.0f} + above {f['above_floor_ns']:4.0f} ns")
                if args.darshan:
                    line += f"  darshan +{f['darshan_added_ns']:.0f} ns"
                print(line)
        if not args.skip_workload:
            w = figures["workload"] = workload(args, bins, scratch)
            print(f"torch.save 4 x {args.shard_mib} MiB: bare median {w['median_s']['bare']:.3f} s "
                  f"(spread {w['bare_spread_s'][0]:.3f}-{w['bare_spread_s'][1]:.3f}), traced "
                  f"{w['median_s']['traced']:.3f} s: {w['traced_overhead_pct']:+.2f} %"
                  + (f"; darshan {w['median_s']['darshan']:.3f} s: {w['darshan_overhead_pct']:+.2f} %"
                     if args.darshan else ""))
            for k, v in w["runs_s"].items():
                print(f"  {k}: {' '.join(f'{x:.3f}' for x in v)}")
        if args.node_modes:
            figures["node"] = node(args, bins, scratch)
            for key, f in figures["node"].items():
                m, s = f["median_ns"], f["spread_ns"]
                line = f"node {key.removesuffix('_ns_per_call'):8} bare {m['bare']:6.1f} ({s['bare'][0]:.1f}-{s['bare'][1]:.1f})"
                for k in [k for k in m if k != "bare"]:
                    p = f[k]
                    line += (f"  {k} {m[k]:6.1f}: {p['pct_of_bare']:+.1f}% (paired {p['paired_pct_median']:+.1f}%, "
                             f"{p['paired_pct_spread'][0]:+.1f}..{p['paired_pct_spread'][1]:+.1f})")
                print(line)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
