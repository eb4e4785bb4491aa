#!/usr/bin/env python3
"""Checks `ckptscope summary T.db --json` against checkpoint_like's ground truth.

  check_gpu.py --truth truth.json --summary summary.json [--tolerance-us 2000]

For each of the program's four checkpoints (save through pageable memory,
save through pinned, load through pageable, load through pinned), in order:

- the checkpoint is there with the right direction, and its gpu_copy stage
  is present;
- gpu_copy's bytes equal the program's D2H bytes (save) or H2D bytes (load)
  exactly, and its `copies` the number of copies (the small D2H copy the
  program makes after the last load belongs to no checkpoint);
- the stage's `pageable_bytes` / `pinned_bytes` split is what the program
  used, the checkpoint's `gpu` detail agrees (async copies are the pinned
  ones, nothing in other_bytes), and its devices are PCI addresses;
- the copies' times (`gpu.first_ns`, `gpu.last_ns`) lie inside the program's
  own CLOCK_MONOTONIC brackets of its copy calls, within the tolerance, and
  inside the run;
- on a save the first copy starts before the first write (gpu_copy before
  host_io) and inside the checkpoint's window; on a load the last copy ends
  after the last read;
- host_io moved the files' bytes;
and no `cupti.*` drop counter is above zero, the trace was taken with eBPF,
and no trace warning says gpu_copy was not traced.

Exit 0 when every check passes, 1 otherwise (each failure printed).
"""
import argparse
import json
import re
import sys

PCI = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


class Checker:
    def __init__(self):
        self.failures = 0
        self.passes = 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passes += 1
            print(f"ok    {what}")
        else:
            self.failures += 1
            print(f"FAIL  {what}" + (f": {detail}" if detail else ""))
        return ok


def stage(cp, name):
    for s in cp.get("stages", []):
        if s.get("name") == name:
            return s
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--summary", required=True)
    ap.add_argument("--tolerance-us", type=int, default=2000,
                    help="how far a CUPTI time may lie outside the program's bracket (default 2000)")
    args = ap.parse_args()
    with open(args.truth) as f:
        truth = json.load(f)
    with open(args.summary) as f:
        summary = json.load(f)
    tol = args.tolerance_us * 1000
    c = Checker()

    c.check(truth.get("contents_ok") is True, "the loaded tensors equal the saved ones",
            f"{truth.get('mismatched_words')} words differ")
    job = summary.get("job", {})
    c.check(job.get("traced") is True, "the trace was taken with eBPF (run as root)",
            job.get("trace_warning", ""))
    warning = job.get("trace_warning") or ""
    c.check("gpu_copy not traced" not in warning, "no warning that gpu_copy was not traced", warning)

    checkpoints = sorted(summary.get("checkpoints", []), key=lambda cp: cp["start_ns"])
    want = truth["checkpoints"]
    c.check(len(checkpoints) == len(want), f"{len(want)} checkpoints",
            f"got {len(checkpoints)}: " + ", ".join(cp["direction"] for cp in checkpoints))
    run_start, run_end = truth["run_start_ns"], truth["run_end_ns"]

    for t, cp in zip(want, checkpoints):
        name = f"checkpoint-{t['index']} {t['direction']} ({t['memory']})"
        if not c.check(cp["direction"] == t["direction"], f"{name}: direction", cp["direction"]):
            continue
        g = stage(cp, "gpu_copy")
        if not c.check(g is not None, f"{name}: gpu_copy stage present",
                       f"absent_stages={cp.get('absent_stages')}"):
            continue
        copy_bytes, count = t["copy_bytes"], t["copy_count"]
        c.check(g["bytes"] == copy_bytes, f"{name}: gpu_copy bytes == the program's "
                f"{'D2H' if t['direction'] == 'save' else 'H2D'} bytes ({copy_bytes})", str(g["bytes"]))
        c.check(g.get("copies") == count, f"{name}: gpu_copy copies == {count}", str(g.get("copies")))
        pageable = copy_bytes if t["memory"] == "pageable" else 0
        pinned = copy_bytes if t["memory"] == "pinned" else 0
        c.check(g.get("pageable_bytes") == pageable, f"{name}: pageable_bytes == {pageable}",
                str(g.get("pageable_bytes")))
        c.check(g.get("pinned_bytes") == pinned, f"{name}: pinned_bytes == {pinned}",
                str(g.get("pinned_bytes")))
        gpu = cp.get("gpu")
        if not c.check(isinstance(gpu, dict), f"{name}: the checkpoint's gpu detail", str(gpu)):
            continue
        c.check(gpu.get("copy_count") == count and gpu.get("copies") == count,
                f"{name}: gpu.copies and gpu.copy_count == {count}",
                f"copies={gpu.get('copies')} copy_count={gpu.get('copy_count')}")
        async_want = count if t["memory"] == "pinned" else 0
        c.check(gpu.get("async_copies") == async_want, f"{name}: async copies == {async_want}",
                str(gpu.get("async_copies")))
        c.check(gpu.get("other_bytes") == 0, f"{name}: nothing in other_bytes", str(gpu.get("other_bytes")))
        devices = gpu.get("devices") or []
        c.check(len(devices) == 1 and all(PCI.match(d) for d in devices),
                f"{name}: one device, by its PCI address", str(devices))

        first_begin = min(x["begin_ns"] for x in t["copies"])
        last_end = max(x["end_ns"] for x in t["copies"])
        first, last = gpu["first_ns"], gpu["last_ns"]
        c.check(first_begin - tol <= first <= last <= last_end + tol,
                f"{name}: copy times inside the program's brackets (±{args.tolerance_us} us)",
                f"gpu [{first}, {last}] vs calls [{first_begin}, {last_end}]: "
                f"{(first - first_begin) / 1e3:+.1f} us, {(last - last_end) / 1e3:+.1f} us")
        c.check(run_start <= first and last <= run_end, f"{name}: copy times inside the run",
                f"[{first}, {last}] vs run [{run_start}, {run_end}]")
        if t["direction"] == "save":
            c.check(first < t["first_io_begin_ns"], f"{name}: the first copy starts before the first write",
                    f"copy {first}, write {t['first_io_begin_ns']}")
            c.check(cp["start_ns"] <= first <= cp["end_ns"],
                    f"{name}: the first copy is inside the checkpoint's window",
                    f"{first} vs [{cp['start_ns']}, {cp['end_ns']}]")
        else:
            c.check(last > t["last_io_end_ns"], f"{name}: the last copy ends after the last read",
                    f"copy {last}, read {t['last_io_end_ns']}")
            c.check(cp["start_ns"] <= last <= cp["end_ns"],
                    f"{name}: the last copy is inside the checkpoint's window",
                    f"{last} vs [{cp['start_ns']}, {cp['end_ns']}]")
        h = stage(cp, "host_io")
        c.check(h is not None and h["bytes"] == t["file_bytes"],
                f"{name}: host_io moved the files' {t['file_bytes']} bytes",
                str(h and h["bytes"]))

    drops = summary.get("drops", {})
    cupti = {k: v for k, v in drops.items() if k.startswith("cupti.")}
    c.check(all(v == 0 for v in cupti.values()), "no cupti.* drops", json.dumps(cupti))

    print(f"{c.passes} passed, {c.failures} failed")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
