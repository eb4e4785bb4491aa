#!/usr/bin/env python3
"""Per-call cost of the job-I/O probes, one ckptscope build against another,
in one run (needs root): a plain 4 KiB write(2) and read(2) (io_loop on
tmpfs), getppid(2) and ioctl(FIONREAD) (getppid_loop), each bare and under
`ckptscope run` of either build. Runs alternate, their order rotated each
round; medians over rounds, with the spread (min..max). The subjects are
this build's io_loop and getppid_loop: only the tracer differs.

With --disk DIR (a directory on a disk, not tmpfs), also 1 MiB write(2)s
and read(2)s of a checkpoint file there, `--disk-calls` of each (default
256: 256 MiB written, every page dirtied once, what the storage probes of
issue 38 see: writeback_dirty_folio per folio, block_bio_queue per bio);
the keys get a `disk_` prefix.

Usage: sudo bench/probe_cost_vs.py --old OLD_BUILD --new NEW_BUILD
                                   [--rounds 9] [--calls 200000] [--json out.json]
                                   [--disk DIR [--disk-calls 256]]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"probe_cost_vs.py: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="the build directory to compare against")
    ap.add_argument("--new", required=True, help="the build directory measured")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--calls", type=int, default=200000)
    ap.add_argument("--json")
    ap.add_argument("--disk", help="also 1 MiB calls on a checkpoint file in this directory")
    ap.add_argument("--disk-calls", type=int, default=256)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("probe_cost_vs.py: needs root (`ckptscope run` loads eBPF)")
    bins = os.path.join(args.new, "bin")
    scratch = tempfile.mkdtemp(prefix="probe-cost-", dir="/dev/shm")
    ckpt = os.path.join(scratch, "checkpoint-bench")
    os.makedirs(ckpt)
    subjects = {
        "io": [os.path.join(bins, "io_loop"), os.path.join(ckpt, "io.pt"), str(args.calls), "4096"],
        "getppid": [os.path.join(bins, "getppid_loop"), str(args.calls), "getppid"],
        "ioctl": [os.path.join(bins, "getppid_loop"), str(args.calls), "ioctl"],
    }
    disk_ckpt = None
    if args.disk:
        disk_ckpt = tempfile.mkdtemp(prefix="checkpoint-bench-", dir=args.disk)
        subjects["disk"] = [os.path.join(bins, "io_loop"), os.path.join(disk_ckpt, "io.pt"),
                            str(args.disk_calls), str(1 << 20)]
    tracers = {"bare": None, "old": os.path.join(args.old, "bin", "ckptscope"),
               "new": os.path.join(args.new, "bin", "ckptscope")}
    names = list(tracers)
    samples = {t: {} for t in names}
    trace = os.path.join(scratch, "t.db")
    for i in range(args.rounds):
        order = names[i % len(names):] + names[:i % len(names)]
        for tracer in order:
            for subject, cmd in subjects.items():
                full = cmd if tracers[tracer] is None else \
                    [tracers[tracer], "run", "--quiet", "--probe-mode", "syscall", "--trace", trace,
                     "--"] + cmd
                for key, value in run(full).items():
                    key = "disk_" + key if subject == "disk" else key
                    samples[tracer].setdefault(key, []).append(value)
    if disk_ckpt:
        shutil.rmtree(disk_ckpt, ignore_errors=True)
    out = {"rounds": args.rounds, "calls": args.calls, "ns_per_call": {}}
    for key in samples["bare"]:
        row = {}
        for tracer in names:
            v = samples[tracer][key]
            row[tracer] = {"median": round(statistics.median(v), 1), "min": round(min(v), 1),
                           "max": round(max(v), 1)}
        row["old_added"] = round(row["old"]["median"] - row["bare"]["median"], 1)
        row["new_added"] = round(row["new"]["median"] - row["bare"]["median"], 1)
        out["ns_per_call"][key] = row
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
