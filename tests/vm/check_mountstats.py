#!/usr/bin/env python3
"""Host-side checks of the VM scenario `mountstats` (tests/vm/scenarios/mountstats.sh).

Usage: check_mountstats.py RUN_DIR   (summary.json, mountstats-before.txt, mountstats-after.txt, truth-*.json)

The kernel's own RPC counters against ckptscope's eBPF figures, per I/O op
(WRITE, COMMIT, READ + READ_PLUS), count and wire bytes (bytes_sent +
bytes_received), within 1 %. Two cross-checks, both asserted:
  1. ckptscope's own: the `nfs_mounts` entry of /mnt/nfs in summary.json
     (mountstats deltas over the job, taken by ckptscope) must carry an eBPF side
     (`ebpf_ops` not null nor empty) and its `crosscheck` must agree for the
     I/O ops (and report them with figures > 0);
  2. this checker's: the guest's /proc/self/mountstats snapshots right before
     and right after `ckptscope run` (their difference is exactly the job's
     RPCs) against the sum of the checkpoints' eBPF `nfs.rpc_ops`.
Also: the save and the load are there with their ground-truth bytes, the
save's WRITE payload and the load's READ payload equal the file bytes within
1 % on both sides, the job exited 0 with no failure. And the storage stage
(what reached the storage, docs/stitching.md): the save's equals the WRITE
payload mountstats counted (`server_write` bytes of the mount over the job),
the load's the READ payload (`server_read`), the very bytes and time of
nfs_client (one view, not two counts), with no own time. Prints every figure.
Python 3 standard library only.
"""
import sys

import vmcheck as v

MNT = "/mnt/nfs"
AGREE = 0.01


def main():
    run = v.usage(__doc__)
    c = v.Checker("mountstats", run)
    summary = c.load("summary.json")
    ts, tl = c.load("truth-save.json"), c.load("truth-load.json")
    before_t, after_t = c.text("mountstats-before.txt"), c.text("mountstats-after.txt")
    if None in (summary, ts, tl, before_t, after_t):
        return c.finish()

    job = summary.get("job", {})
    c.check(job.get("traced") is True and job.get("exit_code") == 0,
            f"job traced {job.get('traced')} exit_code {job.get('exit_code')}, want traced and 0")
    c.check(ts.get("ok") is True and tl.get("ok") is True, "a ground truth says ok=false")
    failures = v.all_failures(summary)
    c.check(not failures, "failures flagged: " + "; ".join(v.fmt_failure(i, f) for i, f in failures))

    cps = v.checkpoints(summary)
    want = v.truth_checkpoints(ts, tl)
    c.check([cp.get("direction") for cp in cps] == ["save", "load"],
            f"checkpoints {[cp.get('direction') for cp in cps]}, want ['save', 'load']")
    for cp, gt in zip(cps, want):
        c.check(cp.get("bytes") == gt.get("bytes"),
                f"{cp.get('direction')}: bytes {cp.get('bytes')}, ground truth {gt.get('bytes')}")
    file_bytes = want[0].get("bytes", 0) if want else 0

    # The eBPF totals of the job's checkpoints, per op.
    ebpf = {}
    for cp in cps:
        for op, s in v.rpc_ops(cp).items():
            e = ebpf.setdefault(op, {"count": 0, "bytes_sent": 0, "bytes_received": 0})
            for k in e:
                e[k] += s.get(k, 0)

    # 2. The guest's snapshots.
    before, after = v.parse_mountstats(before_t), v.parse_mountstats(after_t)
    c.check(MNT in before and MNT in after, f"no {MNT} in the guest's mountstats snapshots")
    delta = v.mountstats_delta(before, after, MNT)
    c.say(f"guest mountstats delta over the job vs eBPF (sum of the checkpoints' nfs.rpc_ops), {MNT}:")
    groups = [("WRITE", ["WRITE"]), ("COMMIT", ["COMMIT"]), ("READ+READ_PLUS", list(v.READ_OPS))]
    for label, names in groups:
        m_ops = sum(delta.get(n, [0] * 5)[0] for n in names)
        m_bytes = sum(delta.get(n, [0] * 5)[3] + delta.get(n, [0] * 5)[4] for n in names)
        e_ops = sum(ebpf.get(n, {}).get("count", 0) for n in names)
        e_bytes = sum(ebpf.get(n, {}).get("bytes_sent", 0) + ebpf.get(n, {}).get("bytes_received", 0) for n in names)
        od, bd = v.diff_fraction(m_ops, e_ops), v.diff_fraction(m_bytes, e_bytes)
        c.say(f"    {label:15} ops mountstats {m_ops:5} eBPF {e_ops:5} (diff {od:.4f});"
              f" bytes mountstats {m_bytes:10} eBPF {e_bytes:10} (diff {bd:.4f})")
        c.check(m_ops > 0, f"guest mountstats: no {label} RPCs during the job")
        c.check(od <= AGREE and bd <= AGREE,
                f"{label}: guest mountstats ops {m_ops} bytes {m_bytes} vs eBPF ops {e_ops} bytes {e_bytes}:"
                f" differ by {od:.4f} / {bd:.4f} (> {AGREE})")
    # The payloads on the kernel's side.
    w_sent = delta.get("WRITE", [0] * 5)[3]
    r_recv = sum(delta.get(n, [0] * 5)[4] for n in v.READ_OPS)
    c.say(f"    WRITE bytes_sent {w_sent} ({w_sent / max(file_bytes, 1):.4f} x file bytes {file_bytes});"
          f" READ bytes_received {r_recv} ({r_recv / max(file_bytes, 1):.4f} x)")
    c.check(v.within(w_sent, file_bytes, AGREE), f"mountstats WRITE bytes_sent {w_sent} vs file bytes {file_bytes}")
    c.check(v.within(r_recv, file_bytes, AGREE), f"mountstats READ bytes_received {r_recv} vs file bytes {file_bytes}")
    others = {op: d[0] for op, d in delta.items() if d[0] and op not in ("WRITE", "COMMIT") + v.READ_OPS}
    c.say(f"    other ops in the delta (not compared): {others}")

    # 1. ckptscope's own cross-check.
    mounts = [m for m in summary.get("nfs_mounts") or [] if m.get("mount_point") == MNT]
    if c.check(mounts, f"summary.json has no nfs_mounts entry for {MNT} (nfs_mounts: {summary.get('nfs_mounts')!r})"):
        m = mounts[0]
        c.say(f"ckptscope nfs_mounts: {m.get('device')} version {m.get('version')} server {m.get('server')!r}"
              f" interval {m.get('interval_s')} s since_mount {m.get('since_mount')} bytes {m.get('bytes')}")
        ebpf_ops = m.get("ebpf_ops")
        cross = {x.get("op"): x for x in m.get("crosscheck") or []}
        for label, names in groups:
            for n in names:
                if n in cross:
                    x = cross[n]
                    c.say(f"    crosscheck {n:10} ops {x.get('mountstats_ops')} vs {x.get('ebpf_ops')}"
                          f" (diff {x.get('ops_diff_fraction'):.4f}); bytes {x.get('mountstats_bytes')}"
                          f" vs {x.get('ebpf_bytes')} (diff {x.get('bytes_diff_fraction'):.4f}); agree {x.get('agree')}")
        # The storage view: what reached the server, as mountstats counts it.
        counted = m.get("bytes") or {}
        for cp, key in zip(cps, ("server_write", "server_read")):
            stages = {s.get("name"): s for s in cp.get("stages") or []}
            st, client = stages.get("storage"), stages.get("nfs_client")
            if not c.check(st and client, f"{cp.get('direction')}: no storage or nfs_client stage"):
                continue
            want = counted.get(key, 0)
            c.say(f"    storage stage {cp.get('direction')}: {st.get('bytes')} B in"
                  f" {st.get('busy_ns')} ns (own {st.get('exclusive_ns')}); mountstats {key}"
                  f" {want} B (diff {v.diff_fraction(want, st.get('bytes', 0)):.6f})")
            c.check(st.get("bytes") == client.get("bytes") and st.get("busy_ns") == client.get("busy_ns"),
                    f"{cp.get('direction')}: storage {st} is not nfs_client's figures {client}")
            c.check(v.within(st.get("bytes", 0), want, AGREE),
                    f"{cp.get('direction')}: storage bytes {st.get('bytes')} vs mountstats {key} {want}")
            c.check(st.get("exclusive_ns") == 0, f"{cp.get('direction')}: storage owns time on NFS: {st}")
        if c.check(ebpf_ops, f"nfs_mounts[{MNT}]: ebpf_ops is {ebpf_ops!r} (server {m.get('server')!r}):"
                             " ckptscope matched none of its eBPF RPC totals to this mount"
                             + (" (its server is empty: the kernel's mountstats 'opts:' line has no addr=,"
                                " /proc/mounts has it)" if not m.get("server") else "")):
            for label, names in groups:
                rows = [cross[n] for n in names if n in cross]
                c.check(rows, f"crosscheck has no row for {label}")
                for x in rows:
                    c.check(x.get("agree") is True and x.get("ebpf_ops", 0) > 0,
                            f"crosscheck {x.get('op')}: {x}")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
