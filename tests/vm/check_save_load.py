#!/usr/bin/env python3
"""Host-side checks of the VM scenario `save-load` (tests/vm/scenarios/save-load.sh).

Usage: check_save_load.py RUN_DIR   (RUN_DIR holds summary.json, truth-save.json, truth-load.json)

Asserts, from ckptscope's own `summary --json` and the workload's ground
truths (the save's and the load's, merged):
  - exactly two checkpoints, a save then a load;
  - each checkpoint's bytes equal the ground truth's bytes exactly, and its files = 4;
  - every stage of the NFS pipeline is present and listed in pipeline order
    (serialize, host_io, metadata, nfs_client, rpc_queue, rpc_rtt, transport);
  - host_io moved exactly the checkpoint's bytes;
  - nfs_client's bytes and nfs.io_bytes equal the file bytes within 1 %;
  - the save's WRITE RPCs (> 0) carried the file bytes within 1 % (bytes_sent,
    headers included); the load's READ + READ_PLUS RPCs (> 0; READ_PLUS on 6.12
    NFSv4.2) carried them within 1 % (bytes_received): the load went over the
    wire (the scenario drops the page cache in between);
  - the fsync'ed save sent COMMITs (one per shard: each fsync commits its file);
    the load sent no WRITE or COMMIT, the save no READ;
  - transport (the NFS client's TCP connection to 127.0.0.1:2049) moved at
    least 99 % of the file bytes in each checkpoint (sampled counters);
  - no WRITE, COMMIT or READ RPC failed (a LOOKUP of a file not created yet
    fails with ENOENT: printed, not asserted);
  - probe_mode is "file_layer" (issue 18: the default mode on these kernels);
  - the job exited 0, was traced, the ground truths say ok, no failure flagged,
    nothing dropped, a connection to 127.0.0.1:2049 listed;
  - the trace itself (run.db.gz, opened with sqlite3) is schema version 4 or
    later and keeps every RPC: per checkpoint and op as many rpc_calls rows as
    nfs.rpc_ops counts, as many with checkpoint_io as nfs.io_rpcs, and their
    queue and round-trip times give nfs.queue_wait's and nfs.rtt's count,
    percentiles and maximum.
Prints every figure it compared. Exit 0 when all hold. Python 3 standard library only.
"""
import sys

import vmcheck as v

SHARDS = 4


def main():
    run = v.usage(__doc__)
    c = v.Checker("save-load", run)
    summary = c.load("summary.json")
    truth_save = c.load("truth-save.json")
    truth_load = c.load("truth-load.json")
    if summary is None or truth_save is None or truth_load is None:
        return c.finish()

    job = summary.get("job", {})
    c.check(job.get("traced") is True, f"job not traced: {job.get('trace_warning')!r}")
    # Issue 18: these kernels take the file-layer probes (the default, auto);
    # every NFS stage below must come out of that mode unchanged.
    c.check(summary.get("probe_mode") == "file_layer",
            f"probe_mode {summary.get('probe_mode')!r}, want 'file_layer' (6.1 and 6.12 have fentry)")
    c.say(f"probe_mode {summary.get('probe_mode')!r}")
    c.check(job.get("exit_code") == 0, f"job exit_code {job.get('exit_code')}, want 0")
    c.check(truth_save.get("ok") is True, "the save's ground truth says ok=false")
    c.check(truth_load.get("ok") is True, "the load's ground truth says ok=false")

    cps = v.checkpoints(summary)
    want = v.truth_checkpoints(truth_save, truth_load)
    dirs = [cp.get("direction") for cp in cps]
    c.check(dirs == ["save", "load"], f"checkpoints {dirs}, want ['save', 'load']")
    c.check([gt.get("direction") for gt in want] == ["save", "load"],
            "ground truths are not one save then one load")

    for cp, gt in zip(cps, want):
        d = cp.get("direction")
        gt_bytes = gt.get("bytes")
        c.check(gt_bytes == v.truth_file_bytes(gt),
                f"{d}: ground truth bytes {gt_bytes} != sum of its files {v.truth_file_bytes(gt)}")
        c.check(cp.get("bytes") == gt_bytes, f"{d}: bytes {cp.get('bytes')}, ground truth {gt_bytes}")
        c.check(cp.get("files") == SHARDS == len(gt.get("files", [])),
                f"{d}: files {cp.get('files')}, want {SHARDS} (ground truth {len(gt.get('files', []))})")
        c.check(not cp.get("failures"), f"{d}: failures flagged: {cp.get('failures')}")

        # Stages: all present, in pipeline order.
        names = [s.get("name") for s in cp.get("stages", []) if s.get("name") in v.NFS_STAGES]
        c.check(names == v.NFS_STAGES, f"{d}: stages {names}, want {v.NFS_STAGES} in that order")
        absent = [s for s in cp.get("absent_stages", []) if s in v.NFS_STAGES]
        c.check(not absent, f"{d}: stages reported absent: {absent}")
        st = v.stages(cp)
        c.say(f"{d}: file bytes {gt_bytes}, bottleneck {cp.get('bottleneck')}, took {(cp.get('duration_ns') or 0) / 1e6:.0f} ms")
        for name in v.NFS_STAGES:
            if name in st:
                c.say("    " + v.stage_row(st[name]))
        host_io = st.get("host_io", {})
        c.check(host_io.get("bytes") == gt_bytes, f"{d}: host_io bytes {host_io.get('bytes')}, want {gt_bytes}")
        nfs_client = st.get("nfs_client", {}).get("bytes")
        c.check(v.within(nfs_client, gt_bytes, 0.01),
                f"{d}: nfs_client bytes {nfs_client}, want {gt_bytes} within 1 %")
        transport = st.get("transport", {}).get("bytes")
        # (Counted from sampled TCP counters over the checkpoint's window: the
        # tail can be cut by a sample interval, hence 1 % below the file bytes.)
        c.check(isinstance(transport, int) and transport >= 0.99 * gt_bytes,
                f"{d}: transport bytes {transport}, want >= 0.99 x the file bytes {gt_bytes}")

        # The RPCs.
        nfs = cp.get("nfs")
        if not c.check(nfs is not None, f"{d}: no nfs figures (the NFS probes saw none of its RPCs)"):
            continue
        ops = v.rpc_ops(cp)
        c.check(v.within(nfs.get("io_bytes"), gt_bytes, 0.01),
                f"{d}: nfs.io_bytes {nfs.get('io_bytes')}, want {gt_bytes} within 1 %")
        c.check(v.NFS_PORT_SERVER in nfs.get("servers", []), f"{d}: nfs.servers {nfs.get('servers')}")
        writes = v.op_sum(ops, ["WRITE"], "count")
        write_bytes = v.op_sum(ops, ["WRITE"], "bytes_sent")
        reads = v.op_sum(ops, v.READ_OPS, "count")
        read_bytes = v.op_sum(ops, v.READ_OPS, "bytes_received")
        commits = v.op_sum(ops, ["COMMIT"], "count")
        op_list = ", ".join(f"{o} {s.get('count')}" for o, s in ops.items())
        c.say(f"    RPCs: {op_list}; io_rpcs {nfs.get('io_rpcs')}"
              f" io_bytes {nfs.get('io_bytes')}")
        c.say(f"    WRITE {writes} carrying {write_bytes} B ({write_bytes / gt_bytes:.4f} x file bytes);"
              f" READ/READ_PLUS {reads} carrying {read_bytes} B ({read_bytes / gt_bytes:.4f} x); COMMIT {commits}")
        qw, rtt = nfs.get("queue_wait", {}), nfs.get("rtt", {})
        c.say(f"    queue wait p50 {qw.get('p50_ns', 0) / 1e6:.2f} ms mean {qw.get('mean_ns', 0) / 1e6:.2f} ms;"
              f" rtt p50 {rtt.get('p50_ns', 0) / 1e6:.2f} ms; wait_by_queue_ns {nfs.get('wait_by_queue_ns')};"
              f" tcp in flight max {nfs.get('tcp_in_flight_max')} retransmits {nfs.get('tcp_retransmits')}")
        # (A LOOKUP of a file not created yet fails with ENOENT: not an error of the I/O.)
        errs = {o: s.get("errors", 0) for o, s in ops.items() if s.get("errors", 0)}
        c.say(f"    RPC errors by op: {errs or 'none'}")
        io_errors = sum(errs.get(o, 0) for o in ("WRITE", "COMMIT") + v.READ_OPS)
        c.check(io_errors == 0, f"{d}: {io_errors} WRITE/COMMIT/READ RPC errors: {errs}")
        if d == "save":
            c.check(writes > 0, f"save: {writes} WRITE RPCs, want > 0")
            c.check(v.within(write_bytes, gt_bytes, 0.01),
                    f"save: WRITE bytes_sent {write_bytes}, want the file bytes {gt_bytes} within 1 %")
            c.check(commits >= SHARDS, f"save: {commits} COMMIT RPCs, want >= {SHARDS} (one per fsync'ed shard)")
            c.check(reads == 0, f"save: {reads} READ RPCs, want 0")
        else:
            c.check(reads > 0, f"load: {reads} READ/READ_PLUS RPCs, want > 0 (did the load go over the wire?)")
            c.check(v.within(read_bytes, gt_bytes, 0.01),
                    f"load: READ/READ_PLUS bytes_received {read_bytes}, want the file bytes {gt_bytes} within 1 %")
            c.check(writes == 0 and commits == 0, f"load: {writes} WRITE and {commits} COMMIT RPCs, want 0")

    # The trace's per-RPC rows add up to the summary's NFS figures.
    db = v.open_trace(c, "run.db.gz")
    if db is not None:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        c.say(f"trace schema version {version}")
        if c.check(version >= 4, f"run.db.gz has schema version {version}, want >= 4 (rpc_calls)"):
            for cp in cps:
                c.say(f"{cp.get('direction')} (checkpoint {cp.get('id')}) in the trace:")
                v.check_rpc_calls(c, db, cp)
        db.close()

    failures = v.all_failures(summary)
    c.check(not failures, "failures flagged: " + "; ".join(v.fmt_failure(i, f) for i, f in failures))
    for conn in summary.get("connections", []):
        c.say(f"connection {conn.get('local')}->{conn.get('remote')} sent {conn.get('bytes_sent')}"
              f" received {conn.get('bytes_received')} retrans {conn.get('retransmits')}")
    c.check(any(conn.get("remote") == v.NFS_PORT_SERVER for conn in summary.get("connections", [])),
            "no connection to 127.0.0.1:2049 in the summary")
    drops = summary.get("drops", {}).get("total")
    c.say(f"drops total {drops}")
    c.check(drops == 0, f"drops: {summary.get('drops')}")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
