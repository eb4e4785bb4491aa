#!/usr/bin/env python3
"""Host side of bench/vm/nfs-overhead.sh: the slowdown of a traced NFS save
and the BPF cost per NFS RPC, as measured inside one QEMU guest.

Usage: check_nfs_overhead.py RUN_DIR [--json OUT]

Prints the medians of the bare and traced save durations (each from the
workload's ground truth), their ratio, and from the kernel's BPF stats the
run time of each NFS program per run and the NFS programs' total per finished
RPC (rpc_stats_latency runs once per RPC). Exit 1 when a figure is missing.
Python 3 standard library only.
"""
import glob
import json
import os
import statistics
import sys

NFS_PROGRAMS = {"nfs_initiate_write", "nfs_initiate_read", "nfs_writeback_done",
                "nfs_readpage_done", "nfs_initiate_commit", "nfs_commit_done",
                "rpc_task_sleep", "rpc_task_wakeup", "rpc_stats_latency",
                "rpc_timeout_status", "rpc_task_end"}


def durations(run, kind):
    out = []
    for path in sorted(glob.glob(os.path.join(run, "rounds", f"{kind}-*.json"))):
        with open(path) as f:
            cps = json.load(f)["checkpoints"]
        out.append(sum(c["end_ns"] - c["start_ns"] for c in cps))
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[4], file=sys.stderr)
        return 2
    run = argv[1]
    bare, traced = durations(run, "bare"), durations(run, "traced")
    if not bare or not traced:
        print("FAIL: no rounds in", run)
        return 1
    mb, mt = statistics.median(bare), statistics.median(traced)
    report = {"rounds": len(bare), "bare_median_ms": mb / 1e6, "traced_median_ms": mt / 1e6,
              "slowdown": mt / mb - 1.0,
              "bare_ms": [round(d / 1e6, 1) for d in bare],
              "traced_ms": [round(d / 1e6, 1) for d in traced]}
    with open(os.path.join(run, "bpf-stats.json")) as f:
        stats = json.load(f)
    per_prog = {}
    total_ns = 0
    rpcs = 0
    for s in stats:
        if s["name"] not in NFS_PROGRAMS:
            continue
        total_ns += s["run_time_ns"]
        if s["name"] == "rpc_stats_latency":
            rpcs = s["run_cnt"]
        if s["run_cnt"]:
            per_prog[s["name"]] = {"runs": s["run_cnt"], "ns_per_run": s["run_time_ns"] / s["run_cnt"]}
    report["nfs_programs"] = per_prog
    report["nfs_rpcs"] = rpcs
    report["bpf_ns_per_rpc"] = total_ns / rpcs if rpcs else None
    print(f"NFS save, {len(bare)} rounds: bare median {mb / 1e6:.1f} ms, traced median {mt / 1e6:.1f} ms,"
          f" slowdown {100 * (mt / mb - 1):+.2f}%")
    for name, p in sorted(per_prog.items()):
        print(f"  {name:22} {p['runs']:7d} runs  {p['ns_per_run']:8.0f} ns/run")
    if rpcs:
        print(f"NFS programs per finished RPC: {total_ns / rpcs:.0f} ns ({rpcs} RPCs)")
    if "--json" in argv:
        with open(argv[argv.index("--json") + 1], "w") as f:
            json.dump(report, f, indent=2)
    return 0 if rpcs else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
