#!/usr/bin/env python3
"""What the mapping probes cost a page fault, measured as ratios in one run (needs root).

fault_loop (bench/fault_loop.cpp) touches every page of three fresh mappings,
MIB MiB each: anonymous memory (faults every program on the node takes, no
file's), a cached checkpoint file read through a shared mapping, and the same
file stored to through one (each page dirtied once). Runs alternate bare and
under `ckptscope run` (the job traced, in the mode this kernel allows), their
order rotated every round; medians of each run's own per-page timings, with
the spread (min-max) of each. A run of its own with kernel BPF stats gives
each mapping program's ns per run (page_fault_user/kernel, the filemap
tracepoints, writeback_dirty_folio; set_pte_range and do_set_pmd in the file
layer), since the stats cost time themselves.

With --baseline CKPTSCOPE (another build's binary, say the commit before the
mapping probes), its traced runs join the same rotation, so the figures of
both builds come from one run.

Usage: sudo bench/fault_overhead.py [--build build] [--rounds 7] [--mib 64]
                                    [--dir /var/tmp] [--baseline CKPTSCOPE] [--json out.json]
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

KINDS = ("anon_ns", "read_ns", "store_ns")
PROGRAMS = ("on_user_fault", "on_kernel_fault", "on_rss_stat", "on_fault_tp", "on_map_pages_tp", "on_folio_dirtied",
            "on_page_cache_add", "fl_fault_enter", "fl_fault_exit", "fl_set_pte_range", "fl_do_set_pte",
            "fl_do_set_pmd_exit")


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"fault_overhead.py: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return p


def beside_a_traced_job(ckptscope, cmd, scratch):
    """fault_loop's output, run untraced while `ckptscope run` traces a sleep."""
    ready = os.path.join(scratch, "ready")
    job = subprocess.Popen([ckptscope, "run", "--quiet", "--trace", os.path.join(scratch, "node.db"), "--",
                            "sh", "-c", f"touch {ready}; exec sleep 600"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if os.path.exists(ready):
                break
            time.sleep(0.05)
        else:
            sys.exit("fault_overhead.py: the traced job never started")
        return run(cmd).stdout
    finally:
        job.terminate()
        job.wait()
        if os.path.exists(ready):
            os.unlink(ready)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--dir", default="/var/tmp", help="a local-disk directory for the mapped file")
    ap.add_argument("--baseline", help="another build's ckptscope, traced in the same rotation")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("fault_overhead.py: needs root (`ckptscope run` loads eBPF programs)")
    ckptscope = os.path.join(args.build, "bin", "ckptscope")
    loop = os.path.join(args.build, "bin", "fault_loop")
    for b in (ckptscope, loop):
        if not os.access(b, os.X_OK):
            sys.exit(f"fault_overhead.py: {b} is not built (ninja -C {args.build})")
    scratch = tempfile.mkdtemp(prefix="ckptscope-fault-bench-", dir=args.dir)
    try:
        target = os.path.join(scratch, "checkpoints", "step_1", "shard-0.bin")
        os.makedirs(os.path.dirname(target))
        cmd = [loop, target, str(args.mib), "3"]
        trace = os.path.join(scratch, "t.db")
        binaries = {"traced": ckptscope}
        if args.baseline:
            binaries["baseline"] = args.baseline
        # "node": fault_loop not traced while `ckptscope run` traces another
        # process: what every other program on the node pays.
        kinds = ["bare", "node"] + list(binaries)
        results = {k: [] for k in kinds}
        for i in range(args.rounds):
            for kind in kinds[i % len(kinds):] + kinds[:i % len(kinds)]:  # rotated each round
                if kind == "node":
                    results[kind].append(json.loads(beside_a_traced_job(ckptscope, cmd, scratch)))
                    continue
                full = cmd if kind == "bare" else [binaries[kind], "run", "--quiet", "--trace", trace, "--"] + cmd
                results[kind].append(json.loads(run(full).stdout))
        stats_file = os.path.join(scratch, "stats.json")
        run([ckptscope, "run", "--quiet", "--trace", trace, "--bpf-stats", stats_file, "--"] + cmd)
        with open(stats_file) as f:
            stats = {s["name"]: s for s in json.load(f)}
        out = {"mib": args.mib, "rounds": args.rounds, "per_page": {}, "bpf_ns_per_run": {}}
        for k in KINDS:
            b = [r[k] for r in results["bare"]]
            mb = statistics.median(b)
            row = {"bare_ns": round(mb, 1), "bare_spread": [round(min(b), 1), round(max(b), 1)]}
            for kind in ["node"] + list(binaries):
                t = [r[k] for r in results[kind]]
                mt = statistics.median(t)
                row.update({f"{kind}_ns": round(mt, 1), f"{kind}_spread": [round(min(t), 1), round(max(t), 1)],
                            f"{kind}_added_ns": round(mt - mb, 1), f"{kind}_over_bare": round(mt / mb, 3)})
            out["per_page"][k[:-3]] = row
        for p in PROGRAMS:
            s = stats.get(p)
            if s and s["run_cnt"]:
                out["bpf_ns_per_run"][p] = {"run_cnt": s["run_cnt"],
                                            "ns_per_run": round(s["run_time_ns"] / s["run_cnt"], 1)}
        text = json.dumps(out, indent=1)
        print(text)
        if args.json:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
