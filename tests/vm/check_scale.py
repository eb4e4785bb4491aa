#!/usr/bin/env python3
"""Host-side checks of the VM scenario `scale` (tests/vm/scenarios/scale.sh).

Usage: check_scale.py RUN_DIR   (scale.json, nN/sN-i.db; $CKPTSCOPE_BIN is the ckptscope to run)

The same save and load of one shard per node, on N = 1, 2, 4 and 8 client
network namespaces at once (each its own NFS client and TCP connection),
behind a shared link that is the limit from about 3 nodes on. From the N = 1
and 2 traces only, `ckptscope project --nodes 1,2,4,8` predicts; `project`
over every trace gives what each N measured (its `measured` rows). Asserts,
per direction (docs/projection.md "Checked against real runs"):
  - every run's jobs exited 0, and each trace has its checkpoints' RPCs;
  - each node's trace holds the whole of its save and its load, as one
    checkpoint each: the bytes and the number of its checkpoints in each
    direction against the workload's ground truth (nN/sN-i.truth-save.json,
    truth-load.json), so that a trace that lost events, or split a
    checkpoint in two (a piece of one node's is a checkpoint of one node:
    it lands in the N = 1 row), is named as such, not taken for a wrong
    prediction;
  - the forecast is supported, its maximum the one given;
  - the predicted duration at N = 4 and 8 is within 20% of the measured;
  - the predicted crossover on the grid 1,2,4,8 (the smallest N whose side
    is shared) is the measured one;
  - the measured rise of the RPC wait from N = 1 to N = 4 and 8 falls inside
    the predicted range.
The shared maximum given to `project` is the shared link's rate in payload,
what an operator quotes: tbf counts each frame's bytes (MTU + 14 of Ethernet
header on the veth) for MTU - 52 of TCP payload (IP, TCP and its timestamps
option). Prints predicted against measured per N. Python 3 standard library
only.
"""
import json
import os
import subprocess
import sys

import vmcheck as v

GRID = (1, 2, 4, 8)
BASE = (1, 2)
PREDICTED = (4, 8)
DURATION_TOLERANCE = 0.20
ETHERNET_HEADER = 14
IP_TCP_TIMESTAMPS = 52


def project(c, binary, traces, nodes, maximum):
    cmd = [binary, "project", *traces, "--nodes", ",".join(map(str, nodes)), "--format", "json",
           "--storage-write-max", f"{maximum:.0f}", "--storage-read-max", f"{maximum:.0f}"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if not c.check(p.returncode == 0, f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}"):
        return None
    return {d["direction"]: d for d in json.loads(p.stdout)["directions"]}


def check_against_truth(c, run, n, node):
    """The bytes each direction's checkpoints hold in the node's summary
    against what the workload says it moved."""
    trace = os.path.join(run, node["trace"])
    base = trace[:-len(".db")] if trace.endswith(".db") else trace
    summary = c.load(os.path.relpath(base + ".summary.json", run))
    if summary is None:
        return
    for direction in ("save", "load"):
        truth = c.load(os.path.relpath(f"{base}.truth-{direction}.json", run))
        if truth is None:
            continue
        who = f"N={n} {node.get('name')}"
        v.bytes_against_truth(c, summary, truth, direction, who)
        traced = [cp for cp in v.checkpoints(summary) if cp.get("direction") == direction]
        made = len(truth.get("checkpoints", []))
        pieces = ", ".join(f"{(cp['end_ns'] - cp['start_ns']) / 1e9:.2f} s {cp['bytes']} B" for cp in traced)
        c.check(len(traced) == made,
                f"{who}: its trace has {len(traced)} {direction} checkpoint(s) ({pieces}), "
                f"the workload made {made}")


def main():
    run = v.usage(__doc__)
    c = v.Checker("scale", run)
    binary = os.environ.get("CKPTSCOPE_BIN", "")
    if not c.check(os.access(binary, os.X_OK), f"CKPTSCOPE_BIN ({binary!r}) is not an executable"):
        return c.finish()
    scale = c.load("scale.json")
    if scale is None:
        return c.finish()
    traces = {}
    for r in scale.get("runs", []):
        c.check(r.get("ok") is True, f"N={r.get('n')}: the run did not finish: {r}")
        for node in r.get("nodes", []):
            c.check(str(node.get("rc")) == "0", f"N={r['n']} {node.get('name')}: job exit {node.get('rc')}")
            traces.setdefault(r["n"], []).append(os.path.join(run, node["trace"]))
            check_against_truth(c, run, r["n"], node)
    c.check(sorted(traces) == list(GRID), f"runs at N = {sorted(traces)}, not {list(GRID)}")
    c.check(all(len(traces.get(n, [])) == n for n in GRID), "one trace per node of each run")
    if c.errors:
        return c.finish()
    mtu = scale["mtu"]
    maximum = scale["shared_Bps"] * (mtu - IP_TCP_TIMESTAMPS) / (mtu + ETHERNET_HEADER)
    c.say(f"shared link {scale['shared_rate']}, node links {scale['node_rate']}, "
          f"{scale['shard_size']} per node: maximum given {maximum / 1e6:.3f} MB/s of payload")

    predicted = project(c, binary, [t for n in BASE for t in traces[n]], GRID, maximum)
    measured = project(c, binary, [t for n in GRID for t in traces[n]], (1,), maximum)
    if predicted is None or measured is None:
        return c.finish()
    for direction in ("save", "load"):
        p, m = predicted.get(direction), measured.get(direction)
        if not c.check(p and m, f"{direction}: no {direction} in the traces"):
            continue
        if not c.check(p["supported"], f"{direction}: no forecast: {p['why']}"):
            continue
        c.check(p["shared_max_source"] == f"--storage-{'write' if direction == 'save' else 'read'}-max",
                f"{direction}: the maximum given: {p['shared_max_source']}")
        c.check(all(s["rpcs"] > 0 for s in m["samples"]),
                f"{direction}: a node checkpoint without RPCs: {[s['node'] for s in m['samples'] if not s['rpcs']]}")
        rows = {r["nodes"]: r for r in m["measured"]}
        forecasts = {f["nodes"]: f for f in p["forecasts"]}
        c.check(sorted(rows) == list(GRID), f"{direction}: measured at N = {sorted(rows)}")
        c.say(f"{direction}: {p['in_flight_per_node']:.1f} RPCs in flight per node, "
              f"{p['service_ms']:.2f} ms of the shared side per RPC")
        c.say("  N  predicted s (range)       measured s  error   wait rise predicted ms (range)   "
              "measured ms  side pred/meas")
        for n in GRID:
            f, r = forecasts.get(n), rows.get(n)
            if not (f and r):
                continue
            d, w = f["duration_s"], f["rpc_wait_rise_ms"]
            err = d["value"] / r["duration_s"] - 1
            c.say(f"  {n}  {d['value']:.2f} ({d['low']:.2f}-{d['high']:.2f})  {r['duration_s']:10.2f}  "
                  f"{err:+6.1%}   {w['value']:8.1f} ({w['low']:.1f}-{w['high']:.1f})  "
                  f"{r['rpc_wait_rise_ms']:10.1f}  {f['side']}/{r['side']}")
            if n not in PREDICTED:
                continue
            c.check(abs(err) <= DURATION_TOLERANCE,
                    f"{direction} N={n}: predicted {d['value']:.2f} s, measured {r['duration_s']:.2f} s "
                    f"({err:+.1%}, more than {DURATION_TOLERANCE:.0%})")
            c.check(w["low"] <= r["rpc_wait_rise_ms"] <= w["high"],
                    f"{direction} N={n}: measured RPC wait rise {r['rpc_wait_rise_ms']:.1f} ms outside "
                    f"the predicted {w['low']:.1f}-{w['high']:.1f} ms")
        cross = p["crossover"]
        c.say(f"  crossover: predicted N={cross['nodes']} ({cross['low']}-{cross['high']}), on the grid "
              f"{cross['on_grid']}; measured {m['crossover']['measured']}")
        c.check(cross["on_grid"] is not None and cross["on_grid"] == m["crossover"]["measured"],
                f"{direction}: predicted crossover on the grid {cross['on_grid']}, measured "
                f"{m['crossover']['measured']}")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
