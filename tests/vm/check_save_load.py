#!/usr/bin/env python3
"""Host-side checks of the VM scenario `save-load` (tests/vm/scenarios/save-load.sh).

Usage: check_save_load.py RUN_DIR   (RUN_DIR holds summary.json and truth.json)

Asserts, from ckptscope's own `summary --json` and the workload's ground truth:
  - exactly two checkpoints, a save then a load;
  - each checkpoint's bytes equal the ground truth's bytes exactly, and its files = 4;
  - host_io is present and moved exactly the checkpoint's bytes;
  - transport (the NFS client's kernel-owned TCP connection to 127.0.0.1:2049,
    selected by endpoint) is present, with bytes > 0 for the save;
  - the job exited 0, was traced, and no failure was flagged.
Prints transport bytes next to file bytes for each checkpoint. Exit 0 when all hold.
Python 3 standard library only.
"""
import json
import os
import sys

SHARDS = 4


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    run = argv[1]
    try:
        with open(os.path.join(run, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(run, "truth.json")) as f:
            truth = json.load(f)
    except (OSError, ValueError) as e:
        print(f"FAIL: cannot read the run's JSON: {e}")
        return 1

    errors = []

    def check(cond, msg):
        if not cond:
            errors.append(msg)
        return cond

    job = summary.get("job", {})
    check(job.get("traced") is True, f"job not traced: {job.get('trace_warning')!r}")
    check(job.get("exit_code") == 0, f"job exit_code {job.get('exit_code')}, want 0")
    check(truth.get("ok") is True, "the workload's ground truth says ok=false")

    cps = sorted(summary.get("checkpoints", []), key=lambda c: c.get("start_ns", 0))
    want = sorted(truth.get("checkpoints", []), key=lambda c: c.get("start_ns", 0))
    dirs = [c.get("direction") for c in cps]
    check(dirs == ["save", "load"], f"checkpoints {dirs}, want ['save', 'load']")
    check([c.get("direction") for c in want] == ["save", "load"],
          "ground truth is not one save then one load")

    rows = []
    for cp, gt in zip(cps, want):
        d = cp.get("direction")
        file_key = "bytes_written" if d == "save" else "bytes_read"
        gt_bytes = gt.get("bytes")
        gt_file_bytes = sum(f.get(file_key, 0) for f in gt.get("files", []))
        check(gt_bytes == gt_file_bytes, f"{d}: ground truth bytes {gt_bytes} != sum of its files {gt_file_bytes}")
        check(cp.get("bytes") == gt_bytes, f"{d}: bytes {cp.get('bytes')}, ground truth {gt_bytes}")
        check(cp.get("files") == SHARDS == len(gt.get("files", [])),
              f"{d}: files {cp.get('files')}, want {SHARDS} (ground truth {len(gt.get('files', []))})")
        check(not cp.get("failures"), f"{d}: failures flagged: {cp.get('failures')}")
        stages = {s.get("name"): s for s in cp.get("stages", [])}
        absent = cp.get("absent_stages", [])
        host_io = stages.get("host_io")
        if check(host_io is not None and "host_io" not in absent, f"{d}: no host_io stage"):
            check(host_io.get("bytes") == gt_bytes, f"{d}: host_io bytes {host_io.get('bytes')}, want {gt_bytes}")
        transport = stages.get("transport")
        tb = None
        if check(transport is not None and "transport" not in absent,
                 f"{d}: no transport stage (absent: {absent})"):
            tb = transport.get("bytes")
            if d == "save":
                check(isinstance(tb, int) and tb > 0, f"save: transport bytes {tb}, want > 0")
        ratio = f"{tb / gt_bytes:.4f}" if tb is not None and gt_bytes else "-"
        rows.append(f"{d:4}  file bytes {gt_bytes}  host_io {host_io.get('bytes') if host_io else '-'}"
                    f"  transport {tb}  (transport/file {ratio})  bottleneck {cp.get('bottleneck')}")

    check(not summary.get("failures"), f"failures flagged: {summary.get('failures')}")
    conns = [f"{c.get('local')}->{c.get('remote')} sent {c.get('bytes_sent')} received {c.get('bytes_received')}"
             f" retrans {c.get('retransmits')}" for c in summary.get("connections", [])]
    check(any(c.get("remote") == "127.0.0.1:2049" for c in summary.get("connections", [])),
          "no connection to 127.0.0.1:2049 in the summary")

    for r in rows:
        print(r)
    for c in conns:
        print("connection " + c)
    print(f"drops total {summary.get('drops', {}).get('total')}")
    if errors:
        for e in errors:
            print("FAIL: " + e)
        return 1
    print("save-load: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
