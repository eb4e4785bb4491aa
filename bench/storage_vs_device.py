#!/usr/bin/env python3
"""The storage stage of a cold load against what the device itself did, on
the same files (needs root): ckptscope-workload saves K shards with fsync in
a directory on a disk; then, round after round, in rotated order:

  ckptscope   the files evicted (posix_fadvise DONTNEED), a traced load;
              the storage stage's bandwidth (bytes / the device's busy time)
              and its bytes, from `summary --json`
  kernel      the files evicted, the same load untraced, with tracefs's
              block_rq_issue/block_rq_complete on: the bytes the device's
              read requests carried over the union of their issue-to-
              completion intervals (the kernel's own accounting of the
              same thing)
  dd          `dd iflag=direct bs=BS` of each file in turn (one request in
              flight: the device at queue depth 1)
  dd-parallel one `dd iflag=direct` per file at once

Medians with the spread (min..max) over the rounds; each figure also as a
fraction of the mount's calibrated read maximum when the maxima file has one.
A buffered load's readahead keeps several requests in flight, so on a device
that needs queue depth for its bandwidth (most SSDs and virtual disks) the
storage stage reads above `dd iflag=direct`'s single stream, and should match
the kernel's request accounting.

Usage: sudo bench/storage_vs_device.py --build BUILD --dir DIR_ON_A_DISK
        [--shards 4] [--shard-size 64M] [--rounds 5] [--bs 1M] [--json out.json]
"""
import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TRACEFS = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing", "/tmp/tfs"]


def tracefs():
    for d in TRACEFS:
        if os.path.exists(os.path.join(d, "events/block/block_rq_issue/enable")):
            return d
    os.makedirs("/tmp/tfs", exist_ok=True)
    subprocess.run(["mount", "-t", "tracefs", "nodev", "/tmp/tfs"], check=True)
    return "/tmp/tfs"


def evict(files):
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def device_of(path):
    st = os.stat(path)
    return os.major(st.st_dev), os.minor(st.st_dev)


def load_cmd(args, workload):
    return [workload, "--dir", args.dir, "--shards", str(args.shards), "--shard-size",
            args.shard_size, "--checkpoints", "1", "--mode", "load", "--quiet"]


def ckptscope_round(args, files, bins, scratch):
    evict(files)
    trace = os.path.join(scratch, "t.db")
    subprocess.run([os.path.join(bins, "ckptscope"), "run", "--quiet", "--trace", trace, "--"]
                   + load_cmd(args, os.path.join(bins, "ckptscope-workload")),
                   check=True, capture_output=True)
    out = subprocess.run([os.path.join(bins, "ckptscope"), "summary", "--json", trace],
                         check=True, capture_output=True, text=True).stdout
    loads = [c for c in json.loads(out)["checkpoints"] if c["direction"] == "load"]
    if len(loads) != 1:
        sys.exit(f"storage_vs_device.py: {len(loads)} loads in the trace, want 1")
    stage = {s["name"]: s for s in loads[0]["stages"]}["storage"]
    return stage["bandwidth_Bps"], stage["bytes"], stage["max_Bps"]


def kernel_round(args, files, bins, tfs, dev):
    evict(files)
    with open(os.path.join(tfs, "trace"), "w") as f:
        f.write("")
    for ev in ("block_rq_issue", "block_rq_complete"):
        with open(os.path.join(tfs, "events/block", ev, "enable"), "w") as f:
            f.write("1")
    try:
        subprocess.run(load_cmd(args, os.path.join(bins, "ckptscope-workload")), check=True,
                       capture_output=True)
    finally:
        for ev in ("block_rq_issue", "block_rq_complete"):
            with open(os.path.join(tfs, "events/block", ev, "enable"), "w") as f:
                f.write("0")
    pattern = re.compile(r"(\d+\.\d+): block_rq_(issue|complete): (\d+),(\d+) (\S+) "
                         r"(?:\d+ )?\(\S*\) (\d+) \+ (\d+)")
    issued, intervals = {}, []
    with open(os.path.join(tfs, "trace")) as f:
        for line in f:
            m = pattern.search(line)
            if not m or (int(m.group(3)), int(m.group(4))) != dev or "R" not in m.group(5):
                continue
            t, sector, sectors = float(m.group(1)), int(m.group(6)), int(m.group(7))
            if m.group(2) == "issue":
                issued[sector] = t
            elif sector in issued:
                intervals.append((issued.pop(sector), t, sectors * 512))
    intervals.sort()
    busy, nbytes, cur = 0.0, 0, None
    for s, e, b in intervals:
        nbytes += b
        if cur and s <= cur[1]:
            cur[1] = max(cur[1], e)
        else:
            if cur:
                busy += cur[1] - cur[0]
            cur = [s, e]
    if cur:
        busy += cur[1] - cur[0]
    return (nbytes / busy if busy else 0.0), nbytes


def dd_round(args, files, parallel):
    evict(files)
    t = time.perf_counter()
    procs = [subprocess.Popen(["dd", f"if={f}", "of=/dev/null", f"bs={args.bs}", "iflag=direct"],
                              stderr=subprocess.DEVNULL) for f in files] if parallel else []
    if parallel:
        for p in procs:
            p.wait()
    else:
        for f in files:
            subprocess.run(["dd", f"if={f}", "of=/dev/null", f"bs={args.bs}", "iflag=direct"],
                           check=True, capture_output=True)
    return sum(os.path.getsize(f) for f in files) / (time.perf_counter() - t)


def summary(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--dir", required=True, help="a directory on a disk (not tmpfs)")
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--shard-size", default="64M")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bs", default="1M")
    ap.add_argument("--json")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("storage_vs_device.py: needs root (eBPF, tracefs, evicting the page cache)")
    bins = os.path.join(args.build, "bin")
    os.makedirs(args.dir, exist_ok=True)
    dev = device_of(args.dir)
    if dev[0] == 0:
        sys.exit(f"storage_vs_device.py: {args.dir} is on no block device (tmpfs?)")
    subprocess.run([os.path.join(bins, "ckptscope-workload"), "--dir", args.dir, "--shards",
                    str(args.shards), "--shard-size", args.shard_size, "--checkpoints", "1",
                    "--mode", "save", "--fsync", "--quiet"], check=True)
    files = sorted(glob.glob(os.path.join(args.dir, "checkpoint-1", "*")))
    tfs = tracefs()
    scratch = tempfile.mkdtemp(prefix="storage-vs-device-")
    kinds = ["ckptscope", "kernel", "dd", "dd-parallel"]
    got = {k: [] for k in kinds}
    stage_bytes, kernel_bytes, read_max = [], [], None
    total = sum(os.path.getsize(f) for f in files)
    try:
        for r in range(args.rounds):
            for k in kinds[r % len(kinds):] + kinds[:r % len(kinds)]:
                if k == "ckptscope":
                    bw, b, read_max = ckptscope_round(args, files, bins, scratch)
                    stage_bytes.append(b)
                elif k == "kernel":
                    bw, b = kernel_round(args, files, bins, tfs, dev)
                    kernel_bytes.append(b)
                else:
                    bw = dd_round(args, files, k == "dd-parallel")
                got[k].append(bw)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(os.path.join(args.dir, "checkpoint-1"), ignore_errors=True)
    result = {"files": len(files), "bytes": total,
              "device": f"{dev[0]}:{dev[1]}", "rounds": args.rounds, "bs": args.bs,
              "storage_stage_bytes": stage_bytes, "kernel_request_bytes": kernel_bytes,
              "read_max_Bps": read_max, "Bps": {k: summary(v) for k, v in got.items()}}
    print(f"cold load of {args.shards} x {args.shard_size} on {result['device']}, "
          f"{args.rounds} rounds (GB/s, median [min..max]; of the calibrated read maximum)")
    for k in kinds:
        s = result["Bps"][k]
        frac = f"  {s['median'] / read_max:7.1%}" if read_max else ""
        print(f"  {k:12} {s['median'] / 1e9:6.3f} [{s['min'] / 1e9:.3f}..{s['max'] / 1e9:.3f}]"
              f"{frac}")
    ratio = result["Bps"]["ckptscope"]["median"] / result["Bps"]["kernel"]["median"]
    print(f"  storage stage / kernel's request accounting: {ratio:.3f}")
    print(f"  storage stage bytes {stage_bytes}, kernel's read requests {kernel_bytes}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
