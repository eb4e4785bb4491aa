#!/usr/bin/env python3
"""`exporter --path.procfs DIR` reads the kernel's files from DIR (issue 22; label exporter).

DIR is a test tree whose 1/mountstats and self/mountstats hold an NFS mount
with a malformed counter line. The exporter must start, serve /metrics, log
the rejected sample with its reason once (not once per second), and count
every rejected sample in
ckptscope_dropped_events_total{source="mountstats",cause="malformed"}, with
ckptscope_scrape_collector_success{collector="mountstats"} 0.

Needs root (the exporter's probes); exits 77 otherwise. About 10 s.
Usage: procfs_test.py --ckptscope BIN [--keep]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exporter_harness as h  # noqa: E402

MALFORMED = ("device srv:/export mounted on /mnt/ckpt with fstype nfs4 statvers=1.1\n"
             "\tage:\tnot-a-number\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    h.add_binary_args(ap)
    args = ap.parse_args()
    h.need_root("the --path.procfs test")
    h.check_binaries(args, names=("ckptscope",))
    tmp = h.TempDir("ckptscope-procfs-", base=args.work_dir, keep=args.keep)
    procfs = os.path.join(tmp.path, "proc")
    for d in ("1", "self"):
        os.makedirs(os.path.join(procfs, d))
        with open(os.path.join(procfs, d, "mountstats"), "w") as f:
            f.write(MALFORMED)
    exporter = h.Exporter(args.ckptscope, f"127.0.0.1:{h.free_port()}", socket_dir=tmp.path,
                          extra_args=["--path.procfs", procfs]).start()
    exporter.wait_ready()
    time.sleep(4)  # four more samples, one a second
    samples = h.parse_exposition(exporter.scrape())
    dropped = h.series_sum(samples, "ckptscope_dropped_events_total", source="mountstats",
                           cause="malformed")
    success = h.series_sum(samples, "ckptscope_scrape_collector_success", collector="mountstats")
    exporter.stop()
    notes = [line for line in exporter.stderr_text().splitlines()
             if "mountstats sample rejected (malformed)" in line]
    h.log(f"dropped mountstats samples {dropped}, collector success {success}, log lines {len(notes)}")
    if dropped is None or dropped < 3:
        h.fail(f"ckptscope_dropped_events_total{{source=\"mountstats\",cause=\"malformed\"}} = {dropped}, "
               "want one per rejected sample (3 or more)")
    if success != 0:
        h.fail(f"ckptscope_scrape_collector_success{{collector=\"mountstats\"}} = {success}, want 0")
    if len(notes) != 1:
        h.fail(f"{len(notes)} log lines about the rejected sample, want exactly 1; stderr:\n"
               f"{exporter.stderr_text()}")
    if procfs not in notes[0]:
        h.fail(f"the log line does not name the file under --path.procfs: {notes[0]}")


if __name__ == "__main__":
    h.main_wrapper(main)
