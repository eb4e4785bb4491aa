#!/usr/bin/env python3
"""Host-side checks of the VM scenario `file-layer` (tests/vm/scenarios/file-layer.sh).

Usage: check_file_layer.py RUN_DIR   (RUN_DIR holds summary.json, truth-clients.json, run.db.gz)

The real clients' ground truth (tests/clients/real_clients.py: fio's JSON
io_bytes, dd's report, the copied shards' sizes, the pages numpy's sum
touched) against ckptscope's summary and trace, by tests/clients/expect.py:
  - probe_mode is "file_layer" (the default auto mode picked it: 6.1 and
    6.12 have every required VFS function in their BTF);
  - one checkpoint per client (a copy two: a load of its sources and a save
    of its destinations), in the
    client's time window, with its direction, its exact bytes and its
    bytes_by_via (io_uring for fio's io_uring engine, aio for its libaio
    engine with O_DIRECT, mmap for its mmap engine's stores, syscall for psync, dd
    and a cp across file systems, copy_file_range for a cp within one, mmap
    plus the header reads for numpy);
  - per file (the trace's files table) the bytes written and read;
  - the job traced and exit 0, nothing dropped, no checkpoint no client made;
  - issue 19 (unrecognised.json, a run of its own): dd's 32 MiB into
    /tmp/local/out/model_state.dat and cp's copy of it are no checkpoint, and
    the unrecognised_io notice names both with their exact bytes (the file
    layer's sums of calls on files ruled out) and the flag for each.
Prints every figure it compared. Exit 0 when all hold. Python 3 standard library only.
"""
import gzip
import os
import shutil
import sys
import tempfile

import vmcheck as v

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients"))
import expect  # noqa: E402


MIB = 1 << 20


def check_unrecognised(c, s):
    """The issue-19 run: no checkpoint, and the notice with the exact bytes."""
    c.check(s.get("probe_mode") == "file_layer", f"unrecognised run: probe_mode {s.get('probe_mode')!r}")
    c.check(not s.get("checkpoints"), "unrecognised run: a checkpoint was detected")
    io = s.get("unrecognised_io")
    if not c.check(isinstance(io, dict), "unrecognised run: no unrecognised_io notice"):
        return
    files = {f.get("path"): f for f in io.get("files", [])}
    want = {
        "/tmp/local/out/model_state.dat": (32 * MIB, 32 * MIB, "model_state.dat"),
        "/tmp/local/out/model_copy.dat": (32 * MIB, 0, "model_copy.dat"),
    }
    for path, (written, read, glob) in want.items():
        f = files.get(path)
        if not c.check(f is not None, f"unrecognised run: {path} not among {sorted(files)}"):
            continue
        c.say(f"unrecognised: {path} written {f.get('bytes_written')} read {f.get('bytes_read')} "
              f"glob {f.get('checkpoint_glob')!r}")
        c.check(f.get("bytes_written") == written, f"{path}: bytes_written {f.get('bytes_written')} != {written}")
        c.check(f.get("bytes_read") == read, f"{path}: bytes_read {f.get('bytes_read')} != {read}")
        c.check(f.get("checkpoint_glob") == glob, f"{path}: checkpoint_glob {f.get('checkpoint_glob')!r}")
    c.check(io.get("total_bytes", 0) >= 96 * MIB, f"unrecognised run: total_bytes {io.get('total_bytes')}")
    drops = s.get("drops", {}).get("total")
    c.check(drops == 0, f"unrecognised run: {drops} events dropped")


def main():
    run = v.usage(__doc__)
    c = v.Checker("file-layer", run)
    summary = c.load("summary.json")
    truth = c.load("truth-clients.json")
    if summary is None or truth is None:
        return c.finish()
    c.check(truth.get("page_cache_dropped") is True, "the guest did not drop the page cache before the run")
    files = None
    tmp = tempfile.mkdtemp(prefix="ckptscope-vm-")
    try:
        db = os.path.join(tmp, "run.db")
        try:
            with gzip.open(os.path.join(run, "run.db.gz")) as src, open(db, "wb") as dst:
                shutil.copyfileobj(src, dst)
            files = expect.trace_files(db)
        except (OSError, EOFError) as e:
            c.check(False, f"cannot read run.db.gz: {e}")
        expect.compare(c.check, c.say, summary, truth, files, "file_layer")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    unrecognised = c.load("unrecognised.json")
    if unrecognised is not None:
        check_unrecognised(c, unrecognised)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
