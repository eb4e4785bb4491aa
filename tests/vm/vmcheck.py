"""Shared helpers of the host-side VM checkers (tests/vm/check_*.py).

Python 3 standard library only. A checker collects failed assertions with
Checker.check, prints the figures it compared with Checker.say and ends with
Checker.finish (exit status 0 when every assertion held).
"""
import atexit
import collections
import gzip
import json
import math
import os
import re
import sqlite3
import sys
import tempfile

# The stages a checkpoint on NFS has, in pipeline order (gpu_copy is not
# traced in these builds).
NFS_STAGES = ["serialize", "host_io", "metadata", "nfs_client", "rpc_queue", "rpc_rtt", "transport"]
READ_OPS = ("READ", "READ_PLUS")
NFS_PORT_SERVER = "127.0.0.1:2049"


class Checker:
    def __init__(self, name, run_dir):
        self.name = name
        self.run = run_dir
        self.errors = []
        self.lines = []

    def check(self, cond, msg):
        if not cond:
            self.errors.append(msg)
        return bool(cond)

    def say(self, msg):
        self.lines.append(msg)

    def load(self, name):
        """The run's JSON file NAME; None (and a failure) when missing or broken."""
        try:
            with open(os.path.join(self.run, name)) as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            self.errors.append(f"cannot read {name}: {e}")
            return None

    def text(self, name):
        try:
            with open(os.path.join(self.run, name)) as f:
                return f.read()
        except OSError as e:
            self.errors.append(f"cannot read {name}: {e}")
            return None

    def finish(self):
        for line in self.lines:
            print(line)
        if self.errors:
            for e in self.errors:
                print("FAIL: " + e)
            return 1
        print(f"{self.name}: all checks passed")
        return 0


def bytes_against_truth(c, summary, truth, direction, who):
    """Checks that the summary's checkpoints in `direction` hold the bytes the
    workload's ground truth says it moved; returns (held, moved)."""
    moved = sum(t["bytes"] for t in truth.get("checkpoints", []))
    held = sum(cp["bytes"] for cp in summary.get("checkpoints", [])
               if cp.get("direction") == direction)
    c.check(held == moved,
            f"{who}: its trace holds {held} bytes of {direction}, the workload moved {moved}: "
            f"the trace lost part of its checkpoint (drops counted: "
            f"{summary.get('drops', {}).get('total')})")
    return held, moved


def usage(doc):
    if len(sys.argv) != 2:
        print(doc.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    return sys.argv[1]


def checkpoints(summary):
    return sorted(summary.get("checkpoints", []), key=lambda c: c.get("start_ns", 0))


def truth_checkpoints(*truths):
    """The checkpoints of one or more ground truths, merged, in time order."""
    out = []
    for t in truths:
        if t:
            out.extend(t.get("checkpoints", []))
    return sorted(out, key=lambda c: c.get("start_ns", 0))


def truth_file_bytes(gt):
    key = "bytes_written" if gt.get("direction") == "save" else "bytes_read"
    return sum(f.get(key, 0) for f in gt.get("files", []))


def stages(cp):
    return {s.get("name"): s for s in cp.get("stages", [])}


def rpc_ops(cp):
    """{op: RPC_OP} of a checkpoint's eBPF figures ({} when it has none)."""
    nfs = cp.get("nfs") or {}
    return {o.get("op"): o for o in nfs.get("rpc_ops", [])}


def op_sum(ops, names, key):
    return sum(ops[n].get(key, 0) for n in names if n in ops)


def open_trace(checker, name):
    """The run's gzip'd trace NAME (e.g. run.db.gz) opened read-only with sqlite3,
    from a temporary copy removed at exit; None (and a failure) when missing or
    unreadable."""
    try:
        with gzip.open(os.path.join(checker.run, name)) as f:
            data = f.read()
    except (OSError, EOFError) as e:
        checker.errors.append(f"cannot read {name}: {e}")
        return None
    fd, path = tempfile.mkstemp(prefix="ckptscope-vm-", suffix=".db")
    atexit.register(lambda: os.path.exists(path) and os.unlink(path))
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as e:
        checker.errors.append(f"{name} is not an SQLite trace: {e}")
        return None
    return db


def nearest_rank(values):
    """{count, p50_ns, p90_ns, p99_ns, max_ns} of VALUES as the stitcher computes
    them (nearest-rank percentiles; mean left out: rounding)."""
    v = sorted(values)
    if not v:
        return {"count": 0, "p50_ns": 0, "p90_ns": 0, "p99_ns": 0, "max_ns": 0}

    def rank(p):
        k = math.ceil(p / 100.0 * len(v))
        return v[min(max(k, 1), len(v)) - 1]

    return {"count": len(v), "p50_ns": rank(50), "p90_ns": rank(90), "p99_ns": rank(99), "max_ns": v[-1]}


def check_rpc_calls(checker, db, cp):
    """A checkpoint's rows in the trace's rpc_calls (schema version 4) against its
    summary figures: per op as many rows as nfs.rpc_ops[op].count, the rows with
    checkpoint_io as many as nfs.io_rpcs, and their queue and round-trip times
    giving nfs.queue_wait's and nfs.rtt's count, percentiles and maximum."""
    d = cp.get("direction")
    nfs = cp.get("nfs")
    rows = db.execute("SELECT op, checkpoint_io, queue_ns, rtt_ns FROM rpc_calls "
                      "WHERE checkpoint_id = ? ORDER BY seq", (cp.get("id"),)).fetchall()
    if nfs is None:
        checker.check(not rows, f"{d}: {len(rows)} rpc_calls rows for a checkpoint without nfs figures")
        return
    per_op = dict(collections.Counter(op for op, _, _, _ in rows))
    want = {o: s.get("count") for o, s in rpc_ops(cp).items()}
    io = [(q, r) for _, is_io, q, r in rows if is_io]
    checker.say(f"    rpc_calls: {len(rows)} rows, by op {per_op} (rpc_ops {want});"
                f" checkpoint_io {len(io)} (io_rpcs {nfs.get('io_rpcs')})")
    checker.check(per_op == want, f"{d}: rpc_calls by op {per_op}, want rpc_ops' counts {want}")
    checker.check(len(io) == nfs.get("io_rpcs"),
                  f"{d}: {len(io)} rpc_calls with checkpoint_io, want nfs.io_rpcs {nfs.get('io_rpcs')}")
    for key, values in (("queue_wait", [q for q, _ in io]), ("rtt", [r for _, r in io])):
        got = nearest_rank(values)
        have = {k: (nfs.get(key) or {}).get(k) for k in got}
        checker.say(f"    {key} from the rows {got}")
        checker.check(got == have, f"{d}: {key} from rpc_calls {got}, summary says {have}")


def all_failures(summary):
    """Every failure: the job-level ones and each checkpoint's, as (checkpoint_id, failure)."""
    out = [(f.get("checkpoint_id"), f) for f in summary.get("failures", [])]
    for cp in summary.get("checkpoints", []):
        out.extend((cp.get("id"), f) for f in cp.get("failures", []))
    return sorted(out, key=lambda x: x[1].get("time_ns", 0))


def fmt_failure(cid, f):
    return f"[cp {cid}] {f.get('kind')} at {f.get('time_ns', 0) / 1e9:.3f} s: {f.get('evidence')}"


def within(a, b, frac):
    """|a - b| <= frac * max(a, b) (both numbers)."""
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return False
    hi = max(abs(a), abs(b))
    return abs(a - b) <= frac * hi


def diff_fraction(a, b):
    hi = max(a, b)
    return 0.0 if hi == 0 else abs(a - b) / hi


def stage_row(s):
    frac = s.get("fraction_of_max")
    mx = s.get("max_Bps")
    own = s.get("exclusive_ns")
    return (f"{s.get('name'):10} bytes {s.get('bytes'):>10}  busy {s.get('busy_ns', 0) / 1e6:8.1f} ms"
            f"  own {'-' if own is None else f'{own / 1e6:8.1f} ms'}"
            f"  {s.get('bandwidth_Bps', 0) / 1e6:8.2f} MB/s  max {'-' if mx is None else f'{mx / 1e6:.2f} MB/s'}"
            f"  of max {'-' if frac is None else f'{frac:.3f}'}  ({s.get('max_source')})")


# The stages a write on an NFS file waits on, in nesting order: a verdict that
# names one of them names the network side, not the calls waiting for it.
BELOW_HOST_IO = ("nfs_client", "rpc_queue", "rpc_rtt", "transport")


def own_times(cp):
    """'name busy/own ms, ...' of a checkpoint's stages, for messages."""
    def own(s):
        v = s.get("exclusive_ns")
        return "-" if v is None else f"{v / 1e6:.0f}"
    return ", ".join(f"{s.get('name')} {s.get('busy_ns', 0) / 1e6:.0f}/{own(s)} ms"
                     for s in cp.get("stages", []))


def check_own_times(c, label, cp):
    """Every stage has an own time, never more than its busy time."""
    for s in cp.get("stages", []):
        own = s.get("exclusive_ns")
        c.check(isinstance(own, int) and 0 <= own <= s.get("busy_ns", 0),
                f"{label}: stage {s.get('name')} exclusive_ns {own} not within 0..busy_ns {s.get('busy_ns')}")


def check_verdict_below_host_io(c, label, cp):
    """The verdict names a stage the calls wait on (docs/stitching.md "Exclusive time")."""
    c.check(cp.get("bottleneck") in BELOW_HOST_IO,
            f"{label}: verdict {cp.get('bottleneck')!r}, want a stage below host_io {BELOW_HOST_IO}"
            f" (stages busy/own: {own_times(cp)})")


# /proc/self/mountstats: per NFS mount point, its per-op statistics
# {op: [ops, transmissions, major_timeouts, bytes_sent, bytes_received,
#       queue_ms, rtt_ms, execute_ms, (errors)]} and its "bytes:" counters.
_DEVICE = re.compile(r"^device (\S+) mounted on (\S+) with fstype (nfs4?)\b")
_OP = re.compile(r"^\s+([A-Z_0-9]+):\s+(\d+(?:\s+\d+)*)\s*$")


def parse_mountstats(text):
    mounts = {}
    cur = None
    in_ops = False
    for line in text.splitlines():
        m = _DEVICE.match(line)
        if m:
            cur = {"device": m.group(1), "fstype": m.group(3), "ops": {}, "bytes": None}
            mounts[m.group(2)] = cur
            in_ops = False
            continue
        if line.startswith("device "):
            cur = None
            continue
        if cur is None:
            continue
        s = line.strip()
        if s.startswith("bytes:"):
            cur["bytes"] = [int(x) for x in s.split()[1:]]
        elif s == "per-op statistics":
            in_ops = True
        elif in_ops:
            m = _OP.match(line)
            if m:
                cur["ops"][m.group(1)] = [int(x) for x in m.group(2).split()]
            elif s:
                in_ops = False
    return mounts


def mountstats_delta(before, after, mount_point):
    """Per-op differences after - before on MOUNT_POINT: {op: [ops, trans, timeouts, sent, received, ...]}."""
    a = after.get(mount_point, {}).get("ops", {})
    b = before.get(mount_point, {}).get("ops", {})
    out = {}
    for op, vals in a.items():
        prev = b.get(op, [0] * len(vals))
        out[op] = [x - y for x, y in zip(vals, prev)]
    return out
