#!/usr/bin/env python3
"""Host-side check of tests/vm/repro/two-instances.sh: each round's trace
holds the bytes its load read (the workload's ground truth).

Usage: check_two_instances.py RUN_DIR. Python 3 standard library only.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vmcheck as v  # noqa: E402


def main():
    run = v.usage(__doc__)
    c = v.Checker("two-instances", run)
    for round_name in ("alone", "beside_another"):
        summary = c.load(f"{round_name}.summary.json")
        truth = c.load(f"truth-{round_name}.json")
        if summary is None or truth is None:
            continue
        held, moved = v.bytes_against_truth(c, summary, truth, "load", round_name)
        c.say(f"{round_name}: the trace holds {held} of the {moved} bytes loaded")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
