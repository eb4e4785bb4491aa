#!/usr/bin/env python3
"""Host-side checks of the VM scenario `server-stop` (tests/vm/scenarios/server-stop.sh).

Usage: check_server_stop.py RUN_DIR   (summary.json, outage.txt, truth-save.json, truth-load.json)

The NFS server was stopped while the save's fsync was sending its data, held
down for some seconds, then restarted. outage.txt has the guest's clock
(/proc/uptime: CLOCK_BOOTTIME at 10 ms, = CLOCK_MONOTONIC in the VM) right
before `rpc.nfsd 0` (stop_ns) and right after `rpc.nfsd 8` returned
(restarted_ns). Asserts, from ckptscope's `summary --json`:
  - a save and a load of the ground truths' bytes; the job exited 0 and was
    traced; both ground truths say ok (the load read back and verified every
    byte after the restart: the data is intact);
  - a `stall` failure (a flush call, fsync or close, in flight > stall_s = 2 s)
    in the save checkpoint, flagged inside the outage (stop_ns - 20 ms <= time
    <= restarted_ns), naming the shard;
  - an `nfs_server_not_responding` failure flagged inside the outage, naming
    the server 127.0.0.1:2049 (the save's or, when the save's last flush got
    through while nfsd drained and the first major timeout hit another RPC
    between checkpoints, the job's); one a checkpoint holds also says when
    the server responded again;
  - the stall between the save's start and end;
  - every stage of the save has an own time (exclusive_ns) within its busy
    time, and the save's verdict names a stage below host_io (nfs_client,
    rpc_queue, rpc_rtt, transport): its calls waited on the server, not on
    local storage (docs/stitching.md "Exclusive time").
Prints the outage window, every failure other than tcp_reset, and the count
of each failure kind. Python 3 standard library only.
"""
import collections
import sys

import vmcheck as v

SLACK_NS = 20_000_000  # /proc/uptime's resolution is 10 ms


def main():
    run = v.usage(__doc__)
    c = v.Checker("server-stop", run)
    summary = c.load("summary.json")
    ts, tl = c.load("truth-save.json"), c.load("truth-load.json")
    text = c.text("outage.txt")
    if None in (summary, ts, tl, text):
        return c.finish()
    outage = {}
    for line in text.split():
        k, _, val = line.partition("=")
        outage[k] = int(val) if val.isdigit() else val
    stop, restarted = outage.get("stop_ns"), outage.get("restarted_ns")
    if not c.check(isinstance(stop, int) and isinstance(restarted, int) and stop < restarted,
                   f"outage.txt: {outage}"):
        return c.finish()
    c.say(f"outage: stop {stop / 1e9:.2f} s (rpc.nfsd 0 done {outage.get('stopped_ns', 0) / 1e9:.2f} s),"
          f" restart {outage.get('restart_ns', 0) / 1e9:.2f} s (rpc.nfsd 8 done {restarted / 1e9:.2f} s),"
          f" held {outage.get('outage_s')} s")

    job = summary.get("job", {})
    c.check(job.get("traced") is True, f"job not traced: {job.get('trace_warning')!r}")
    c.check(job.get("exit_code") == 0, f"job exit_code {job.get('exit_code')}, want 0")
    c.check(ts.get("ok") is True, "the save's ground truth says ok=false")
    c.check(tl.get("ok") is True, "the load's ground truth says ok=false (the data did not survive the outage)")

    cps = v.checkpoints(summary)
    want = {gt.get("direction"): gt for gt in v.truth_checkpoints(ts, tl)}
    saves = [cp for cp in cps if cp.get("direction") == "save" and cp.get("bytes")]
    loads = [cp for cp in cps if cp.get("direction") == "load" and cp.get("bytes")]
    for cp in cps:
        c.say(f"checkpoint {cp.get('id')} {cp.get('direction')} {cp.get('bytes')} B"
              f" {cp.get('start_ns', 0) / 1e9:.3f}-{cp.get('end_ns', 0) / 1e9:.3f} s, {len(cp.get('failures', []))} failures")
    if not c.check(len(saves) == 1 and len(loads) == 1, f"want one save and one load with bytes; got {[(cp.get('id'), cp.get('direction'), cp.get('bytes')) for cp in cps]}"):
        return c.finish()
    save, load = saves[0], loads[0]
    c.check(save.get("bytes") == want.get("save", {}).get("bytes"),
            f"save bytes {save.get('bytes')}, ground truth {want.get('save', {}).get('bytes')}")
    c.check(load.get("bytes") == want.get("load", {}).get("bytes"),
            f"load bytes {load.get('bytes')}, ground truth {want.get('load', {}).get('bytes')}")
    c.check(save.get("start_ns", 0) <= stop <= save.get("end_ns", 0),
            f"the server was stopped at {stop / 1e9:.3f} s, outside the save"
            f" ({save.get('start_ns', 0) / 1e9:.3f}-{save.get('end_ns', 0) / 1e9:.3f} s): not mid-save")

    failures = v.all_failures(summary)
    counts = collections.Counter(f.get("kind") for _, f in failures)
    c.say(f"failure kinds: {dict(counts)}")
    for cid, f in failures:
        if f.get("kind") != "tcp_reset":
            c.say("    " + v.fmt_failure(cid, f))
    lo, hi = stop - SLACK_NS, restarted
    shard = want.get("save", {}).get("files", [{}])[0].get("path", "shard-0.pt")

    def find(kind):
        return [f for cid, f in failures if f.get("kind") == kind and cid == save.get("id")]

    stalls = find("stall")
    if c.check(stalls, f"no stall failure in the save checkpoint (failure kinds: {dict(counts)})"):
        inside = [f for f in stalls if lo <= f.get("time_ns", 0) <= hi]
        c.check(inside, "no stall flagged inside the outage: "
                + "; ".join(f"{f.get('time_ns', 0) / 1e9:.3f} s" for f in stalls))
        c.check(any(shard in f.get("evidence", "") and ("fsync(" in f.get("evidence", "") or "close(" in f.get("evidence", ""))
                    for f in inside), f"no stall inside the outage names a flush call on {shard}: {inside}")
        for f in inside:
            c.say(f"stall {(f.get('time_ns', 0) - stop) / 1e9:+.3f} s after the stop, "
                  f"{(restarted - f.get('time_ns', 0)) / 1e9:.3f} s before the restart returned")
    down_owned = [(cid, f) for cid, f in failures if f.get("kind") == "nfs_server_not_responding"]
    down = [f for _, f in down_owned]
    if c.check(down, f"no nfs_server_not_responding failure (failure kinds: {dict(counts)})"):
        inside = [(cid, f) for cid, f in down_owned if lo <= f.get("time_ns", 0) <= hi]
        c.check(inside, "no nfs_server_not_responding flagged inside the outage: "
                + "; ".join(f"{f.get('time_ns', 0) / 1e9:.3f} s" for f in down))
        c.check(any("127.0.0.1:2049" in f.get("evidence", "") for _, f in inside),
                f"no nfs_server_not_responding inside the outage names 127.0.0.1:2049: {inside}")
        for cid, f in inside:
            if cid is not None:
                c.check("responding again" in f.get("evidence", ""),
                        f"checkpoint {cid}'s nfs_server_not_responding does not say when the server"
                        f" responded again: {f.get('evidence')}")
        inside = [f for _, f in inside]
        for f in inside:
            c.say(f"nfs_server_not_responding {(f.get('time_ns', 0) - stop) / 1e9:+.3f} s after the stop, "
                  f"{(restarted - f.get('time_ns', 0)) / 1e9:.3f} s before the restart returned")
    for f in stalls:
        c.check(save.get("start_ns", 0) <= f.get("time_ns", 0) <= save.get("end_ns", 0),
                f"{f.get('kind')} at {f.get('time_ns', 0) / 1e9:.3f} s outside the save checkpoint")

    c.say(f"save: bottleneck {save.get('bottleneck')}; stages busy/own: {v.own_times(save)};"
          f" wait_by_queue_ns {(save.get('nfs') or {}).get('wait_by_queue_ns')}")
    for name, s in v.stages(save).items():
        c.say("    " + v.stage_row(s))
    c.say(f"load: bottleneck {load.get('bottleneck')}; stages busy/own: {v.own_times(load)}")
    v.check_own_times(c, "save", save)
    v.check_own_times(c, "load", load)
    v.check_verdict_below_host_io(c, "save", save)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
