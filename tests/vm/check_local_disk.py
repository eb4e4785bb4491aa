#!/usr/bin/env python3
"""Host-side checks of the VM scenario `local-disk` (tests/vm/scenarios/local-disk.sh).

Usage: check_local_disk.py RUN_DIR   (summary.json, truth-both.json)

The storage stage on a block device (ext2 on a loop device) in the file
layer, against the ground truth of ckptscope-workload (2 checkpoints of
2 x 24 MiB: save 1 fsync'd, save 2 buffered, load 1 cold, load 2 warm):
  - the job ran in probe mode file_layer, exited 0, nothing was dropped, and
    nothing is "not seen" (the block and writeback probes load, the kernel's
    CONFIG_HZ read from /boot/config-RELEASE);
  - four checkpoints, save save load load, each of the ground truth's bytes;
  - save 1: the storage stage's bytes are the file bytes (its fsyncs' writeback)
    and at most 2 % more (ext2's indirect blocks and inodes go with them),
    busy > 0, nothing left dirty;
  - save 2: 0 B reached the storage inside it; dirty_at_end_bytes is the file
    bytes, exactly (every page dirtied once);
  - load 1 (cold): the storage stage's bytes are the file bytes, at most 2 %
    more, busy > 0 and with time of its own;
  - load 2 (warm): 0 B from the storage, and the verdict is not the storage.
Prints every figure. Python 3 standard library only.
"""
import sys

import vmcheck as v

SLACK = 0.02


def main():
    run = v.usage(__doc__)
    c = v.Checker("local-disk", run)
    summary = c.load("summary.json")
    truth = c.load("truth-both.json")
    if summary is None or truth is None:
        return c.finish()
    job = summary.get("job", {})
    c.check(job.get("traced") is True and job.get("exit_code") == 0,
            f"job traced {job.get('traced')} exit_code {job.get('exit_code')}, want traced and 0")
    c.check(summary.get("probe_mode") == "file_layer",
            f"probe_mode {summary.get('probe_mode')!r}, want file_layer on this kernel")
    warning = job.get("trace_warning") or ""
    c.check("not seen" not in warning,
            f"the trace's warning says something is not seen (the storage probes load on this"
            f" kernel, the throttle's pause at its place in the tracepoint's form): {warning!r}")
    drops = summary.get("drops") or {}
    c.check(drops.get("total") == 0, f"drops: {drops}")
    failures = v.all_failures(summary)
    c.check(not failures, "failures flagged: " + "; ".join(v.fmt_failure(i, f) for i, f in failures))

    cps = v.checkpoints(summary)
    dirs = [cp.get("direction") for cp in cps]
    c.check(dirs == ["save", "save", "load", "load"], f"checkpoints {dirs}, want save save load load")
    if len(cps) != 4:
        return c.finish()
    file_bytes = 2 * 24 << 20
    for i, cp in enumerate(cps):
        st = v.stages(cp)
        s = st.get("storage")
        c.say(f"checkpoint {i + 1} {cp.get('direction')}: {cp.get('bytes')} B, bottleneck"
              f" {cp.get('bottleneck')}, dirty_at_end {cp.get('dirty_at_end_bytes')}")
        for name in ("serialize", "host_io", "storage"):
            if name in st:
                c.say("    " + v.stage_row(st[name]))
        c.check(cp.get("bytes") == file_bytes, f"checkpoint {i + 1}: bytes {cp.get('bytes')}, want {file_bytes}")
        if not c.check(s is not None, f"checkpoint {i + 1}: no storage stage on a block device"):
            continue
        reached, busy, own = s.get("bytes", 0), s.get("busy_ns", 0), s.get("exclusive_ns") or 0
        if i in (0, 2):  # the fsync'd save, the cold load
            c.check(file_bytes <= reached <= file_bytes * (1 + SLACK),
                    f"checkpoint {i + 1}: storage bytes {reached}, want {file_bytes} to +{SLACK:.0%}")
            c.check(busy > 0, f"checkpoint {i + 1}: storage busy {busy}")
        else:  # the buffered save, the warm load
            c.check(reached == 0, f"checkpoint {i + 1}: storage bytes {reached}, want 0")
    c.check(cps[0].get("dirty_at_end_bytes") == 0,
            f"save 1 (fsync): dirty_at_end_bytes {cps[0].get('dirty_at_end_bytes')}, want 0")
    c.check(cps[1].get("dirty_at_end_bytes") == file_bytes,
            f"save 2 (buffered): dirty_at_end_bytes {cps[1].get('dirty_at_end_bytes')}, want {file_bytes}")
    c.check((v.stages(cps[2]).get("storage") or {}).get("exclusive_ns", 0) > 0,
            "load 1 (cold): the storage has no time of its own")
    c.check(cps[3].get("bottleneck") != "storage", "load 2 (warm): the verdict is the storage")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
