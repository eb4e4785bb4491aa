#!/usr/bin/env python3
"""Host-side checks of the VM scenario `throttle` (tests/vm/scenarios/throttle.sh).

Usage: check_throttle.py RUN_DIR   (summary.json, truth-base.json, truth-throttled.json, config.json)

Two saves of the same 8 x 2 MiB in one trace: the baseline on the plain
loopback, then on the throttled, lossy loopback (netem). Asserts, from
ckptscope's `summary --json`:
  - two save checkpoints with the ground truths' bytes, the job exited 0, the
    ground truths say ok;
  - the throttle took effect: the baseline save ran faster than the throttle's
    rate (so the throttle is what can slow the second one), the throttled save
    took longer than the baseline, and its file bytes over its duration stay
    under the throttle's rate. (Not a ratio of the two durations: the baseline
    is CPU-bound under TCG and doubles when the host is loaded; a ">= 3x"
    check failed at 2.6x in a clean clone whose ASan build ran beside it.)
  - the TCP backlog (tcp_backlog_mean: bytes handed to TCP, not yet
    acknowledged, on average over the save's samples) is higher throttled
    than in the baseline (not its max: the send buffer caps both peaks);
  - the RPC queue wait (queue_wait p50 or mean) is higher throttled;
  - every stage of both saves has an own time (exclusive_ns) within its busy
    time, and the throttled save's verdict (bottleneck) names a stage below
    host_io (nfs_client, rpc_queue, rpc_rtt, transport): its calls only wait
    on the link (docs/stitching.md "Exclusive time");
  - the throttled transport stage does not run faster than that maximum
    (fraction_of_max <= 1.25: its busy time covers the time the link was busy).
Prints both saves' stages, queue wait, RTT, waits by queue, in-flight max and
mean, retransmits. Python 3 standard library only.
"""
import sys

import vmcheck as v

MAX_FRACTION = 1.25


def nfs_line(label, cp):
    n = cp.get("nfs") or {}
    qw, rtt = n.get("queue_wait") or {}, n.get("rtt") or {}
    return (f"    {label}: queue wait p50 {qw.get('p50_ns', 0) / 1e6:.3f} ms mean {qw.get('mean_ns', 0) / 1e6:.3f} ms"
            f" p90 {qw.get('p90_ns', 0) / 1e6:.3f} ms; rtt p50 {rtt.get('p50_ns', 0) / 1e6:.1f} ms"
            f" mean {rtt.get('mean_ns', 0) / 1e6:.1f} ms; wait_by_queue_ns {n.get('wait_by_queue_ns')};"
            f" tcp in flight max {n.get('tcp_in_flight_max')} mean {n.get('tcp_in_flight_mean') or 0:.0f};"
            f" tcp backlog max {n.get('tcp_backlog_max')} mean {n.get('tcp_backlog_mean') or 0:.0f};"
            f" retransmits {n.get('tcp_retransmits')}")


def main():
    run = v.usage(__doc__)
    c = v.Checker("throttle", run)
    summary = c.load("summary.json")
    tb, tt = c.load("truth-base.json"), c.load("truth-throttled.json")
    config = c.load("config.json")
    if None in (summary, tb, tt, config):
        return c.finish()
    throttle = (c.text("throttle.txt") or "").strip()
    c.say(f"link: {throttle}")

    job = summary.get("job", {})
    c.check(job.get("traced") is True and job.get("exit_code") == 0,
            f"job traced {job.get('traced')} exit_code {job.get('exit_code')}, want traced and 0")
    c.check(tb.get("ok") is True and tt.get("ok") is True, "a ground truth says ok=false")
    cps = v.checkpoints(summary)
    want = v.truth_checkpoints(tb, tt)
    if not c.check([cp.get("direction") for cp in cps] == ["save", "save"] and len(want) == 2,
                   f"checkpoints {[cp.get('direction') for cp in cps]}, want two saves"):
        return c.finish()
    for cp, gt, label in zip(cps, want, ("baseline", "throttled")):
        c.check(cp.get("bytes") == gt.get("bytes"), f"{label}: bytes {cp.get('bytes')}, ground truth {gt.get('bytes')}")
        c.check(cp.get("nfs") is not None, f"{label}: no nfs figures")
    base, thr = cps
    for label, cp in (("baseline", base), ("throttled", thr)):
        c.say(f"{label}: {cp.get('bytes')} B in {(cp.get('duration_ns') or 0) / 1e6:.0f} ms,"
              f" bottleneck {cp.get('bottleneck')}")
        st = v.stages(cp)
        for name in v.NFS_STAGES:
            if name in st:
                c.say("    " + v.stage_row(st[name]))
        c.say(nfs_line(label, cp))
    for cid, f in v.all_failures(summary):
        c.say("failure (not asserted): " + v.fmt_failure(cid, f))

    # The throttle took effect.
    st_thr = v.stages(thr)
    max_bps = (st_thr.get("transport") or {}).get("max_Bps")
    c.check(max_bps, f"throttled: transport has no maximum (config {config})")
    d_base, d_thr = base.get("duration_ns") or 0, thr.get("duration_ns") or 0
    c.check(d_thr > d_base, f"throttled save took {d_thr / 1e6:.0f} ms, no longer than the baseline's {d_base / 1e6:.0f} ms")
    avg = thr.get("bytes", 0) / (d_thr / 1e9) if d_thr else 0
    avg_base = base.get("bytes", 0) / (d_base / 1e9) if d_base else 0
    c.say(f"file bytes / duration: baseline {avg_base / 1e6:.2f} MB/s, throttled {avg / 1e6:.2f} MB/s,"
          f" transport maximum {(max_bps or 0) / 1e6:.2f} MB/s")
    if max_bps:
        c.check(avg_base > max_bps, f"the baseline save ran at {avg_base / 1e6:.2f} MB/s, not above the throttle's"
                f" {max_bps / 1e6:.2f} MB/s: the guest is too slow for the throttle to be what limits the second save")
        c.check(avg <= 1.05 * max_bps, f"throttled save ran at {avg / 1e6:.2f} MB/s, above the throttle {max_bps / 1e6:.2f} MB/s")

    nb, nt = base.get("nfs") or {}, thr.get("nfs") or {}
    # The TCP backlog (in flight on loopback is no guide: the baseline's acks
    # lag behind on the one emulated CPU, so bytes in flight are high there too).
    # Its mean, not its max: the send buffer caps both saves' peaks alike.
    ib, it = nb.get("tcp_backlog_mean"), nt.get("tcp_backlog_mean")
    c.check(isinstance(ib, (int, float)) and isinstance(it, (int, float)) and it > ib,
            f"tcp_backlog_mean throttled {it} not above baseline {ib}")
    # RPC queue wait.
    qb, qt = nb.get("queue_wait") or {}, nt.get("queue_wait") or {}
    c.check(qt.get("p50_ns", 0) > qb.get("p50_ns", 0) or qt.get("mean_ns", 0) > qb.get("mean_ns", 0),
            f"RPC queue wait not higher throttled: p50 {qt.get('p50_ns')} ns vs baseline {qb.get('p50_ns')} ns,"
            f" mean {qt.get('mean_ns')} ns vs {qb.get('mean_ns')} ns (rtt p50 {(nt.get('rtt') or {}).get('p50_ns')} ns"
            f" vs {(nb.get('rtt') or {}).get('p50_ns')} ns)")
    # The verdict, and the transport stage's own figures behind it.
    transport = st_thr.get("transport") or {}
    frac = transport.get("fraction_of_max")
    c.check(frac is not None and frac <= MAX_FRACTION,
            f"throttled transport fraction_of_max {frac} > {MAX_FRACTION}: bandwidth {transport.get('bandwidth_Bps', 0) / 1e6:.2f} MB/s"
            f" over busy {transport.get('busy_ns', 0) / 1e6:.0f} ms of a {d_thr / 1e6:.0f} ms save, above the link's"
            f" {(max_bps or 0) / 1e6:.2f} MB/s: its busy time misses most of the time the link was busy")
    for label, cp in (("baseline", base), ("throttled", thr)):
        v.check_own_times(c, label, cp)
    v.check_verdict_below_host_io(c, "throttled", thr)
    c.say(f"throttled stages busy/own: {v.own_times(thr)}; wait_by_queue_ns {nt.get('wait_by_queue_ns')}")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
