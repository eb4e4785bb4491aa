#!/usr/bin/env python3
"""Host side of bench/vm/filelayer-overhead.sh: per-call cost of the job-I/O
probes in file-layer and syscall mode, and the exporter's cost on calls that
are no checkpoint's, as measured inside one QEMU guest.

Usage: check_filelayer_overhead.py RUN_DIR [--json OUT]

Prints, per 4 KiB write and read on tmpfs: the median ns per call bare, under
`run --probe-mode file_layer` and `--probe-mode syscall`, with the spread
(min-max over the rounds), the ns added per call in each mode and the ratio
file_layer/syscall of the added cost; then for a getppid loop and
non-checkpoint 4 KiB writes and reads, the median with `ckptscope exporter`
running in each mode as % of bare. Exit 1 when a figure is missing.
Python 3 standard library only.
"""
import glob
import json
import os
import statistics
import sys


def series(run, prefix, kind, key):
    out = []
    for path in sorted(glob.glob(os.path.join(run, "rounds", f"{prefix}-{kind}-*.json"))):
        with open(path) as f:
            text = f.read().strip()
        if text:
            out.append(json.loads(text)[key])
    return out


def stat(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def fmt(s):
    return f"{s['median']:9.0f} ns  ({s['min']:.0f}-{s['max']:.0f}, n={s['n']})"


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[4], file=sys.stderr)
        return 2
    run = argv[1]
    out = {"per_call": {}, "exporter": {}}
    missing = []
    print("per traced call, checkpoint file on tmpfs (median, min-max over rounds):")
    for op in ("write", "read"):
        key = f"{op}_ns_per_call"
        s = {k: series(run, "call", k, key) for k in ("bare", "file_layer", "syscall")}
        if not all(s.values()):
            missing.append(f"per-call {op}: rounds {[k for k, v in s.items() if not v]} missing")
            continue
        st = {k: stat(v) for k, v in s.items()}
        added = {k: st[k]["median"] - st["bare"]["median"] for k in ("file_layer", "syscall")}
        ratio = added["file_layer"] / added["syscall"] if added["syscall"] else None
        out["per_call"][op] = {"stats": st, "added_ns": added, "ratio_file_over_syscall": ratio}
        print(f"  {op:5} bare       {fmt(st['bare'])}")
        for k in ("file_layer", "syscall"):
            print(f"  {op:5} {k:10} {fmt(st[k])}  added {added[k]:7.0f} ns")
        print(f"  {op:5} added file_layer / syscall: {'-' if ratio is None else f'{ratio:.2f}'}")
    print("the exporter running, calls that are no checkpoint's (median, % of bare):")
    for name, prefix, key in (("getppid", "ppid", "getppid_ns_per_call"),
                              ("plain write", "plain", "write_ns_per_call"),
                              ("plain read", "plain", "read_ns_per_call")):
        s = {k: series(run, prefix, k, key) for k in ("bare", "exporter-file_layer", "exporter-syscall")}
        if not all(s.values()):
            missing.append(f"{name}: rounds {[k for k, v in s.items() if not v]} missing")
            continue
        st = {k: stat(v) for k, v in s.items()}
        pct = {k: 100.0 * (st[k]["median"] / st["bare"]["median"] - 1.0)
               for k in ("exporter-file_layer", "exporter-syscall")}
        out["exporter"][name] = {"stats": st, "percent_of_bare": pct}
        print(f"  {name:11} bare {fmt(st['bare'])}; exporter file_layer {st['exporter-file_layer']['median']:.0f} ns "
              f"({pct['exporter-file_layer']:+.1f} %), syscall {st['exporter-syscall']['median']:.0f} ns "
              f"({pct['exporter-syscall']:+.1f} %)")
    if len(argv) >= 4 and argv[2] == "--json":
        with open(argv[3], "w") as f:
            json.dump(out, f, indent=1)
    for m in missing:
        print("MISSING: " + m, file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
