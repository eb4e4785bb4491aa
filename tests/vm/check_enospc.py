#!/usr/bin/env python3
"""Host-side checks of the VM scenario `enospc` (tests/vm/scenarios/enospc.sh).

Usage: check_enospc.py RUN_DIR   (summary.json, run.rc, truth.json)

A save of 16 MiB to an 8 MiB export. Asserts:
  - the job failed (exit code != 0) and `ckptscope run` exited with the job's
    own status (run.rc == summary's job.exit_code); the trace was written
    (summary.json comes from it) and the job was traced;
  - a save checkpoint is there;
  - an `rpc_enospc` or `enospc` failure whose evidence names one of the
    checkpoint's shard files (the ground truth's paths);
  - the ground truth (when the workload wrote one) says ok=false with an
    ENOSPC (errno 28) failure.
Prints every failure and the workload's own. Python 3 standard library only.
"""
import os
import sys

import vmcheck as v

ENOSPC = 28


def main():
    run = v.usage(__doc__)
    c = v.Checker("enospc", run)
    summary = c.load("summary.json")
    rc_text = c.text("run.rc")
    if summary is None or rc_text is None:
        return c.finish()
    rc = int(rc_text.strip()) if rc_text.strip().isdigit() else None
    job = summary.get("job", {})
    c.say(f"ckptscope run exited {rc}; job exit_code {job.get('exit_code')} exit_signal {job.get('exit_signal')}"
          f" traced {job.get('traced')}")
    c.check(job.get("traced") is True, f"job not traced: {job.get('trace_warning')!r}")
    c.check(isinstance(job.get("exit_code"), int) and job.get("exit_code") != 0,
            f"job exit_code {job.get('exit_code')}, want a failure (!= 0)")
    c.check(rc == job.get("exit_code"), f"ckptscope run exited {rc}, the job {job.get('exit_code')}: want the job's status")

    # The workload writes its ground truth on failure too; a missing one is reported, not fatal.
    truth = c.load("truth.json") if os.path.exists(os.path.join(run, "truth.json")) else None
    paths = set()
    if truth:
        for gt in truth.get("checkpoints", []):
            paths.update(f.get("path") for f in gt.get("files", []) if f.get("path"))
        own = [f for gt in truth.get("checkpoints", []) for f in gt.get("failures", [])]
        c.say(f"ground truth: ok {truth.get('ok')}, its failures: {[f.get('message') for f in own]}")
        c.check(truth.get("ok") is False, "the ground truth says ok although the save cannot fit")
        c.check(any(f.get("errno") == ENOSPC for f in own), f"the workload saw no ENOSPC: {own}")
    else:
        c.say("no ground truth from the workload")
    if not paths:
        paths = {f"/mnt/nfs/ckpt/checkpoint-1/shard-{i}.pt" for i in range(4)}

    cps = v.checkpoints(summary)
    for cp in cps:
        c.say(f"checkpoint {cp.get('id')} {cp.get('direction')} {cp.get('bytes')} B, {cp.get('files')} files,"
              f" bottleneck {cp.get('bottleneck')}")
    c.check(any(cp.get("direction") == "save" for cp in cps), "no save checkpoint")
    failures = v.all_failures(summary)
    for cid, f in failures:
        c.say("    " + v.fmt_failure(cid, f))
    named = [f for _, f in failures if f.get("kind") in ("rpc_enospc", "enospc")
             and any(p in f.get("evidence", "") for p in paths)]
    c.check(named, "no rpc_enospc/enospc failure naming a shard file ("
            + ", ".join(sorted(paths)) + "); failures: " + ", ".join(f.get("kind", "") for _, f in failures))
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
