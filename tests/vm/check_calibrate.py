#!/usr/bin/env python3
"""Host-side checks of the VM scenario `calibrate` (tests/vm/scenarios/calibrate.sh).

Usage: check_calibrate.py RUN_DIR   (calibrate.json, maxima.json, left.txt, summary.json)

Asserts:
  - `calibrate --storage` measured the NFS mount itself: the entry's fs_type is
    nfs or nfs4, its source the export (127.0.0.1:...), its mount point
    /mnt/nfs; it wrote and read back 64 MiB in 4 streams with O_DIRECT; both
    rates are positive; the date is UTC ISO 8601 and max_source is
    "calibrated <that date>";
  - beside it: the NIC toward the server (lo here: its speed is unknown) and
    the config's figures (none);
  - the node file /var/lib/ckptscope/maxima.json holds exactly that entry;
  - nothing was left in the calibrated directory (no .nfsXXXX file either);
  - under `ckptscope run`, the save's and the load's storage and nfs_client
    maxima are the calibration's write and read rates, with its max_source,
    and so have a fraction of max (host_io's is the page cache's copy: no
    memory calibration in the guest, so unknown).
Prints every figure it compared. Python 3 standard library only.
"""
import re
import sys

import vmcheck as v


def main():
    run = v.usage(__doc__)
    c = v.Checker("calibrate", run)
    result = c.load("calibrate.json")
    node_file = c.load("maxima.json")
    summary = c.load("summary.json")
    left = c.text("left.txt")
    if result is None or node_file is None or summary is None or left is None:
        return c.finish()

    e = result.get("storage", {})
    c.say(f"calibrated {e.get('mount_point')} ({e.get('fs_type')} {e.get('source')}): "
          f"write {e.get('write_Bps', 0) / 1e6:.1f} MB/s, read {e.get('read_Bps', 0) / 1e6:.1f} MB/s, "
          f"{e.get('streams')} streams, {e.get('io')}")
    c.check(e.get("fs_type") in ("nfs", "nfs4"), f"fs_type {e.get('fs_type')!r}, want nfs or nfs4")
    c.check(str(e.get("source", "")).startswith("127.0.0.1:"), f"source {e.get('source')!r}")
    c.check(e.get("mount_point") == "/mnt/nfs", f"mount_point {e.get('mount_point')!r}")
    c.check(e.get("bytes") == 64 << 20 and e.get("bytes_read") == 64 << 20,
            f"bytes {e.get('bytes')} read {e.get('bytes_read')}, want 64 MiB each")
    c.check(e.get("streams") == 4, f"streams {e.get('streams')}")
    c.check(e.get("direct") is True and e.get("io") == "O_DIRECT", f"io {e.get('io')!r}: NFS allows O_DIRECT")
    c.check(e.get("write_Bps", 0) > 0 and e.get("read_Bps", 0) > 0, "a rate is not positive")
    date = str(e.get("date", ""))
    c.check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", date) is not None, f"date {date!r}")
    source = result.get("max_source")
    c.check(source == "calibrated " + date[:10], f"max_source {source!r}")
    beside = result.get("beside", {})
    nic = beside.get("nic")
    c.say(f"beside: {beside}")
    c.check(isinstance(nic, dict) and nic.get("server") == "127.0.0.1",
            f"beside.nic {nic!r}: want the NIC toward 127.0.0.1")
    c.check(beside.get("config", {}).get("write_Bps") is None, "the built-in config has no storage maxima")
    mounts = node_file.get("mounts", [])
    c.check(node_file.get("version") == 1 and mounts == [e],
            f"the node file holds {len(mounts)} entries, want exactly the calibration's")
    c.check(left.strip() == "", f"left in the calibrated directory: {left.split()}")

    cps = v.checkpoints(summary)
    c.check([cp.get("direction") for cp in cps] == ["save", "load"],
            f"checkpoints {[cp.get('direction') for cp in cps]}, want save then load")
    for cp in cps:
        want = e.get("write_Bps") if cp.get("direction") == "save" else e.get("read_Bps")
        st = v.stages(cp)
        for name in ("storage", "nfs_client"):
            s = st.get(name)
            if not c.check(s is not None, f"{cp.get('direction')}: no {name} stage"):
                continue
            c.say(f"{cp.get('direction')} {v.stage_row(s)}")
            c.check(s.get("max_source") == source,
                    f"{cp.get('direction')} {name} max_source {s.get('max_source')!r}, want {source!r}")
            c.check(s.get("max_Bps") == want, f"{cp.get('direction')} {name} max_Bps {s.get('max_Bps')}, want {want}")
            c.check(s.get("fraction_of_max") is not None, f"{cp.get('direction')} {name}: no fraction of max")
        io = st.get("host_io") or {}
        c.check(io.get("max_source") == "unknown",
                f"{cp.get('direction')} host_io max_source {io.get('max_source')!r}: the page cache's"
                " copy, not calibrated in the guest")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
