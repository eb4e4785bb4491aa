"""ckptscope's summary and trace against the real clients' ground truth
(real_clients.py's truth file): shared by tests/clients/clients_test.py (this
host, syscall mode) and tests/vm/check_file_layer.py (the guests, file-layer
mode). Python 3 standard library only.

compare() asserts, for each checkpoint a client made:
  - exactly one summary checkpoint lies in the client's time window (the
    clients run apart, with quiet gaps longer than the 1 s default); a copy
    (cp, rsync) is two, a load of its sources and a save of its destinations
    in the same window, one of each direction;
  - its direction, its bytes and
    its bytes_by_via exactly as the client reported them; a copy the
    storage made (server_copy, reflink) charged to no stage of the node
    (host_io, the NFS and transport stages) and said in a note;
  - its files: as many as the client touched, and per file (the trace's
    `files` table) the bytes written and read; a mapped file's read bytes may
    hold its mmap bytes or leave them to an mmap_bytes column (checked when
    there is one);
and for the run: probe_mode as expected, the job traced and exit 0, nothing
dropped, no checkpoint outside every client's window, no failure in any
checkpoint, and the end-of-run
accounting without a notice (the kernel's count of the job's writes within
the pages' slack of the trace's).
"""
import sqlite3

VIA_KEYS = ("syscall", "io_uring", "copy_file_range", "sendfile", "mmap", "summed", "aio",
            "server_copy", "reflink")
# Copies the storage made itself: no stage of the node moved their bytes.
STORAGE_COPIES = ("server_copy", "reflink")
NODE_STAGES = ("host_io", "nfs_client", "rpc_queue", "rpc_rtt", "transport")


def _overlaps(cp, t):
    return cp.get("start_ns", 0) <= t["end_ns"] and cp.get("end_ns", 0) >= t["start_ns"]


def trace_files(db_path):
    """{checkpoint_id: {path: row dict}} of the trace's files table; None if unreadable."""
    try:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        db.row_factory = sqlite3.Row
        out = {}
        for row in db.execute("SELECT * FROM files"):
            r = dict(row)
            out.setdefault(r["checkpoint_id"], {})[r["path"]] = r
        db.close()
        return out
    except sqlite3.Error:
        return None


def compare(check, say, summary, truth, files_by_cp, probe_mode):
    """check(cond, msg) records a failed assertion, say(msg) a figure compared."""
    job = summary.get("job", {})
    check(job.get("traced") is True, f"job not traced: {job.get('trace_warning')!r}")
    check(job.get("exit_code") == 0, f"job exit_code {job.get('exit_code')}, want 0 (a client failed?)")
    check(summary.get("probe_mode") == probe_mode,
          f"probe_mode {summary.get('probe_mode')!r}, want {probe_mode!r}")
    say(f"probe_mode {summary.get('probe_mode')!r} (want {probe_mode!r}); "
        f"trace_warning {job.get('trace_warning')!r}")
    drops = summary.get("drops") or {}
    check(drops.get("total", 0) == 0, f"drops: { {k: v for k, v in drops.items() if v} }")
    cps = sorted(summary.get("checkpoints", []), key=lambda c: c.get("start_ns", 0))
    claimed = set()
    for t in truth.get("checkpoints", []):
        name = f"{t['client']} ({t['direction'] or 'copy'})"
        say(f"{name}: the client says {t['report']}")
        # A copy's two sides share its window: each truth is the checkpoint
        # of its own direction there (docs/stitching.md, "Copies").
        got = [c for c in cps if _overlaps(c, t)
               and (not t.get("copy_side") or c.get("direction") == t["direction"])]
        window = f"[{t['start_ns']}, {t['end_ns']}] ns"
        if t["direction"]:
            ok = check(len(got) == 1, f"{name}: {len(got)} summary checkpoints in its window {window}, "
                       f"want 1: {[(c.get('id'), c.get('direction'), c.get('bytes')) for c in got]}")
        else:
            # A copy: its loads and saves may be one checkpoint or several (the
            # stitcher splits where data starts moving the other way); together
            # they hold the source's reads and the destination's writes.
            ok = check(len(got) >= 1, f"{name}: no summary checkpoint in its window {window}")
        if not ok:
            continue
        claimed.update(c.get("id") for c in got)
        total = sum(c.get("bytes") or 0 for c in got)
        via = {}
        for c in got:
            v = c.get("bytes_by_via")
            if not isinstance(v, dict):
                via = None
                break
            for k, n in v.items():
                via[k] = via.get(k, 0) + (n or 0)
        say(f"    checkpoints {[c.get('id') for c in got]}: {[c.get('direction') for c in got]}, bytes {total} "
            f"(truth {t['bytes']}), bytes_by_via {via} (truth {t['bytes_by_via']}), "
            f"files {[c.get('files') for c in got]}")
        if t["direction"]:
            check(got[0].get("direction") == t["direction"],
                  f"{name}: direction {got[0].get('direction')}, want {t['direction']}")
        check(total == t["bytes"], f"{name}: bytes {total}, the client moved {t['bytes']}")
        if check(via is not None, f"{name}: the summary has no bytes_by_via "
                 f"(got {[c.get('bytes_by_via') for c in got]!r})"):
            nonzero = {k: v for k, v in via.items() if v}
            if t.get("via_one_of"):
                # Which calls the kernel summed and which it recorded one by
                # one depends on when its verdict came: only the ways, and the
                # total, are the client's.
                check(set(nonzero) <= set(t["via_one_of"]) and sum(nonzero.values()) == t["bytes"],
                      f"{name}: bytes_by_via {nonzero}, want {t['bytes']} bytes in all, "
                      f"by way of {t['via_one_of']} only")
            else:
                check(nonzero == t["bytes_by_via"],
                      f"{name}: bytes_by_via {nonzero}, want {t['bytes_by_via']}")
            unknown = set(via) - set(VIA_KEYS)
            check(not unknown, f"{name}: bytes_by_via has unknown keys {sorted(unknown)}")
            if set(t["bytes_by_via"]) <= set(STORAGE_COPIES):
                # The storage copied every byte: no stage of this node moved
                # them. The transport stage still carries the RPCs that asked
                # for the copy (OPEN, COPY, GETATTR: a few KiB on the wire),
                # never the copied bytes (under 1% of them).
                for c in got:
                    charged = {s.get("name"): s.get("bytes") for s in c.get("stages") or []
                               if s.get("name") in NODE_STAGES and s.get("bytes")
                               and (s.get("name") != "transport"
                                    or s.get("bytes") * 100 >= t["bytes"])}
                    check(not charged, f"{name}: the storage copied its bytes, yet checkpoint "
                          f"{c.get('id')} charges {charged}")
                    check(any("the storage copied" in n for n in c.get("notes") or []),
                          f"{name}: checkpoint {c.get('id')} does not say the storage copied "
                          f"its bytes: notes {c.get('notes')}")
        want_files = {f["path"]: f for f in t["files"]}
        if t["direction"]:
            check(got[0].get("files") == len(want_files),
                  f"{name}: files {got[0].get('files')}, the client touched {len(want_files)}")
        if files_by_cp is None:
            check(False, f"{name}: the trace's files table could not be read")
            continue
        have = {}
        for c in got:
            for path, row in files_by_cp.get(c.get("id"), {}).items():
                acc = have.setdefault(path, {"bytes_written": 0, "bytes_read": 0})
                for k in ("bytes_written", "bytes_read", "mmap_bytes"):
                    if k in row:
                        acc[k] = acc.get(k, 0) + (row[k] or 0)
        check(set(have) == set(want_files),
              f"{name}: trace files {sorted(have)}, want {sorted(want_files)}")
        for path, f in want_files.items():
            row = have.get(path)
            if row is None:
                continue
            mmap_want = t.get("mmap_bytes", 0) if f["bytes_read"] else 0
            reads_ok = row["bytes_read"] in {f["bytes_read"], f["bytes_read"] - mmap_want} \
                if mmap_want else row["bytes_read"] == f["bytes_read"]
            say(f"    {path}: written {row['bytes_written']} (truth {f['bytes_written']}), read "
                f"{row['bytes_read']} (truth {f['bytes_read']}"
                f"{f', of it mmap ' + str(mmap_want) if mmap_want else ''})"
                + (f", mmap_bytes {row['mmap_bytes']}" if "mmap_bytes" in row else ""))
            check(row["bytes_written"] == f["bytes_written"],
                  f"{name}: {path} bytes_written {row['bytes_written']}, want {f['bytes_written']}")
            check(reads_ok, f"{name}: {path} bytes_read {row['bytes_read']}, want {f['bytes_read']}"
                  + (f" (or {f['bytes_read'] - mmap_want} without its mmap bytes)" if mmap_want else ""))
            if mmap_want and "mmap_bytes" in row:
                check(row["mmap_bytes"] == mmap_want,
                      f"{name}: {path} mmap_bytes {row['mmap_bytes']}, want {mmap_want}")
    extra = [(c.get("id"), c.get("direction"), c.get("bytes")) for c in cps if c.get("id") not in claimed]
    check(not extra, f"checkpoints no client made: {extra}")
    # The clients fail nothing: a failure named is a probe's refusal read
    # as one (cp's copy_file_range across file systems, EXDEV), or real.
    failed = [(c.get("id"), f.get("kind"), f.get("evidence")) for c in cps
              for f in c.get("failures") or []]
    check(not failed, f"failures in the clients' checkpoints: {failed[:4]}")
    # The end-of-run accounting: the kernel's count of what the job's threads
    # wrote is within the pages' slack of the trace's (every write seen).
    io = summary.get("io_accounting")
    if check(isinstance(io, dict), f"no end-of-run accounting in the summary: {io!r}"):
        say(f"io_accounting: kernel wrote {io.get('kernel_written_bytes')} over {io.get('threads')} "
            f"threads, the trace {io.get('traced_written_bytes')}, unseen "
            f"{io.get('unseen_written_bytes')} (slack {io.get('allowance_bytes')})")
        check(io.get("notice") is None, f"end-of-run accounting: {io.get('notice')}")
