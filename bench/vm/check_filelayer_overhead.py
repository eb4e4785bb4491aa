#!/usr/bin/env python3
"""Host side of bench/vm/filelayer-overhead.sh: per-call cost of the job-I/O
probes in file-layer and syscall mode, and the exporter's cost on calls that
are no checkpoint's, as measured inside one QEMU guest.

Usage: check_filelayer_overhead.py RUN_DIR [--json OUT]

Prints, per 4 KiB write and read on tmpfs (the file growing, "call", and
cycling over its first blocks, "span"): the median ns per call bare, under
`run --probe-mode file_layer`, `--probe-mode syscall` and bench/minimal_probe,
with the spread (min-max over the rounds), the ns added per call by each (the
difference of medians, and the median of each round's difference from that
round's bare run) and the ratios file_layer/syscall and minimal/syscall of
the added cost; then for a getppid loop and non-checkpoint 4 KiB writes and
reads, the median with `ckptscope exporter` running in each mode as % of
bare, also paired by round. Exit 1 when a figure is missing.
Python 3 standard library only.
"""
import glob
import json
import os
import statistics
import sys


def rounds_of(run, prefix, kind, key):
    """{round: value} of one kind's rounds."""
    out = {}
    for path in glob.glob(os.path.join(run, "rounds", f"{prefix}-{kind}-*.json")):
        with open(path) as f:
            text = f.read().strip()
        if text:
            out[int(path.rsplit("-", 1)[1].split(".")[0])] = json.loads(text)[key]
    return out


def series(run, prefix, kind, key):
    return [v for _, v in sorted(rounds_of(run, prefix, kind, key).items())]


def stat(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def fmt(s):
    return f"{s['median']:9.0f} ns  ({s['min']:.0f}-{s['max']:.0f}, n={s['n']})"


def paired_added(run, prefix, kind, key):
    """What `kind` added in each round over that round's bare run: rounds run
    the kinds back to back, so a slow round slows both and cancels out."""
    bare = rounds_of(run, prefix, "bare", key)
    traced = rounds_of(run, prefix, kind, key)
    return [traced[r] - bare[r] for r in sorted(bare) if r in traced]


TRACERS = ("file_layer", "syscall", "minimal")
# bench/filelayer_vm.sh --baseline-build: another build's `ckptscope run`.
OPTIONAL = ("baseline",)


def per_call(run, prefix, title, out, missing):
    print(title)
    section = {}
    for op in ("write", "read"):
        key = f"{op}_ns_per_call"
        tracers = TRACERS + tuple(k for k in OPTIONAL if series(run, prefix, k, key))
        s = {k: series(run, prefix, k, key) for k in ("bare",) + tracers}
        if not all(s.values()):
            missing.append(f"{prefix} {op}: rounds {[k for k, v in s.items() if not v]} missing")
            continue
        st = {k: stat(v) for k, v in s.items()}
        added = {k: st[k]["median"] - st["bare"]["median"] for k in tracers}
        paired = {k: stat(paired_added(run, prefix, k, key)) for k in tracers}
        section[op] = {
            "stats": st, "added_ns": added, "paired_added_ns": paired,
            "ratio_file_over_syscall": added["file_layer"] / added["syscall"] if added["syscall"] else None,
            "paired_ratio_file_over_syscall":
                paired["file_layer"]["median"] / paired["syscall"]["median"] if paired["syscall"]["median"] else None,
            "paired_ratio_minimal_over_syscall":
                paired["minimal"]["median"] / paired["syscall"]["median"] if paired["syscall"]["median"] else None,
        }
        print(f"  {op:5} bare       {fmt(st['bare'])}")
        for k in tracers:
            p = paired[k]
            print(f"  {op:5} {k:10} {fmt(st[k])}  added {added[k]:7.0f} ns; paired by round "
                  f"{p['median']:7.0f} ns ({p['min']:.0f}..{p['max']:.0f})")
        e = section[op]
        show = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
        print(f"  {op:5} added file_layer / syscall: {show(e['ratio_file_over_syscall'])} "
              f"(paired {show(e['paired_ratio_file_over_syscall'])}); "
              f"minimal / syscall paired {show(e['paired_ratio_minimal_over_syscall'])}")
        if "baseline" in paired and paired["baseline"]["median"]:
            base = paired["baseline"]["median"]
            e["paired_ratio_over_baseline"] = {k: paired[k]["median"] / base for k in TRACERS}
            print(f"  {op:5} paired, over baseline: " +
                  ", ".join(f"{k} {v:.2f}" for k, v in e["paired_ratio_over_baseline"].items()))
    out[prefix] = section


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[4], file=sys.stderr)
        return 2
    run = argv[1]
    out = {"exporter": {}}
    missing = []
    per_call(run, "call", "per traced call, checkpoint file on tmpfs, growing (median, min-max over rounds):",
             out, missing)
    if glob.glob(os.path.join(run, "rounds", "span-*")):
        per_call(run, "span", "per traced call, checkpoint file on tmpfs, cycling over its first blocks:",
                 out, missing)
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
        bare = rounds_of(run, prefix, "bare", key)
        paired = {}
        for k in ("exporter-file_layer", "exporter-syscall"):
            traced = rounds_of(run, prefix, k, key)
            paired[k] = stat([100.0 * (traced[r] / bare[r] - 1.0) for r in sorted(bare) if r in traced])
        out["exporter"][name] = {"stats": st, "percent_of_bare": pct, "paired_percent_of_bare": paired}
        print(f"  {name:11} bare {fmt(st['bare'])}; exporter file_layer {st['exporter-file_layer']['median']:.0f} ns "
              f"({pct['exporter-file_layer']:+.1f} %, paired {paired['exporter-file_layer']['median']:+.1f} % "
              f"[{paired['exporter-file_layer']['min']:+.1f}..{paired['exporter-file_layer']['max']:+.1f}]), "
              f"syscall {st['exporter-syscall']['median']:.0f} ns ({pct['exporter-syscall']:+.1f} %, paired "
              f"{paired['exporter-syscall']['median']:+.1f} % [{paired['exporter-syscall']['min']:+.1f}.."
              f"{paired['exporter-syscall']['max']:+.1f}])")
    if len(argv) >= 4 and argv[2] == "--json":
        with open(argv[3], "w") as f:
            json.dump(out, f, indent=1)
    for m in missing:
        print("MISSING: " + m, file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
