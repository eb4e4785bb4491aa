#!/usr/bin/env python3
"""Host-side check of scenarios/trampoline-update.sh: a traced thread whose
call slept through another tool's trampoline update keeps being traced.

Usage: check_trampoline_update.py RUN_DIR. Python 3 standard library only.
"""
import sys

import vmcheck as v

CLOSE_SHARD_BYTES = 4 << 20

# round: (its checkpoint's direction, the exits it must count missed)
ROUNDS = {
    # A read of the FIFO: not a file we report, nothing of ours lost.
    "blocked_read": ("save", 0),
    # The open of the FIFO: a path call we record, lost and counted.
    "blocked_open": ("load", 1),
    # The shard's close, flushing on NFS: lost and counted; it must neither
    # hold the checkpoint open nor become a stall.
    "blocked_close": ("save", 1),
}


def main():
    run = v.usage(__doc__)
    c = v.Checker("trampoline-update", run)
    for name, (direction, missed_expected) in ROUNDS.items():
        summary = c.load(f"{name}.summary.json")
        # blocked_close writes no ground truth (that would be a file call
        # after the close): its one shard is 4 MiB.
        truth = ({"checkpoints": [{"bytes": CLOSE_SHARD_BYTES}]} if name == "blocked_close"
                 else c.load(f"truth-{name}.json"))
        if summary is None or truth is None:
            continue
        c.check(summary.get("probe_mode") == "file_layer",
                f"{name}: probe_mode {summary.get('probe_mode')!r}, not file_layer: "
                "the scenario tests the file-layer programs")
        held, moved = v.bytes_against_truth(c, summary, truth, direction, name)
        drops = summary.get("drops", {})
        missed = drops.get("jobio.exit_missed")
        c.say(f"{name}: the trace holds {held} of the {moved} bytes of its {direction}; "
              f"exits counted missed: {missed}; drops in all: {drops.get('total')}")
        c.check(missed == missed_expected,
                f"{name}: jobio.exit_missed is {missed}, expected {missed_expected}")
        c.check(drops.get("total") == missed,
                f"{name}: drops other than the missed exit: {drops}")
        failures = [f for cp in summary.get("checkpoints", []) for f in cp.get("failures", [])]
        failures += summary.get("failures", [])
        c.check(not failures, f"{name}: failures flagged: {failures}")
        c.check(len(summary.get("checkpoints", [])) == 1,
                f"{name}: {len(summary.get('checkpoints', []))} checkpoints, expected 1")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
