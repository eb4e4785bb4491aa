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
        want = sum(t["bytes"] for t in truth.get("checkpoints", []))
        got = sum(cp["bytes"] for cp in summary.get("checkpoints", [])
                  if cp.get("direction") == "load")
        c.say(f"{round_name}: the trace holds {got} of the {want} bytes loaded")
        c.check(got == want, f"{round_name}: the trace holds {got} bytes of the load, the "
                             f"workload read {want} (drops counted: {summary['drops'].get('total')})")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
