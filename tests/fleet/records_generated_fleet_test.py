"""`ckptscope fleet exclusions` and `fleet retries` on a generated 63-node,
224-session fleet (a sessions CSV written here) whose statistics are planted:
the top 3 nodes hold 47 of 90 exclusions (52.2%), 12 automatic retry chains
with 73 attempts of which 4 succeed (33.3%), 8 manual chains with 1 success
(12.5%), 69 retry intervals with median 11 minutes and IQR 10-11 (numpy's
linear percentiles). The CLI's --json must reproduce every figure exactly;
the --html page must carry them."""

import argparse
import csv
import datetime
import json
import math
import os
import random
import subprocess
import sys
import tempfile

NODES = [f"gpu{i:02d}" for i in range(1, 64)]
TOP = {"gpu17": 20, "gpu42": 15, "gpu05": 12, "gpu33": 4, "gpu60": 3}
AUTO_CHAIN_ATTEMPTS = [6] * 11 + [7]          # 73 attempts
AUTO_SUCCEEDING = {0, 3, 6, 9}                # 4 of 12
MANUAL_CHAINS, MANUAL_SUCCEEDING = 8, {0}     # 2 attempts each, 1 of 8
SESSIONS = 224
INTERVALS = [9] * 15 + [10] * 10 + [11] * 30 + [12, 12, 13, 13, 13, 14, 14, 14] + [15] * 6
EPOCH = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)


def iso(minutes):
    return (EPOCH + datetime.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def exclusion_counts(rng):
    counts = {n: 0 for n in NODES}
    counts.update(TOP)
    others = [n for n in NODES if n not in TOP]
    rng.shuffle(others)
    for n in others[:36]:
        counts[n] = 1
    return counts  # 90 in all; 22 nodes never excluded


def generate(path):
    rng = random.Random(8)
    counts = exclusion_counts(rng)
    names = [n for n, c in counts.items() for _ in range(c)]
    rng.shuffle(names)
    intervals = list(INTERVALS)
    rng.shuffle(intervals)
    rows = []

    def add(name, chain, attempt, trigger, status, start_min):
        rows.append({"name": name, "chain_id": chain, "attempt": attempt, "trigger": trigger,
                     "status": status, "submit_time": iso(start_min - 1),
                     "start_time": iso(start_min), "end_time": iso(start_min + 60)})
        return start_min + 60

    day = 0
    for c, attempts in enumerate(AUTO_CHAIN_ATTEMPTS):
        t = day * 1440
        day += 1
        for a in range(1, attempts + 1):
            last = a == attempts
            status = "success" if last and c in AUTO_SUCCEEDING else "failure"
            end = add(f"pretrain-{c}", f"auto-{c}", a, "manual" if a == 1 else "auto", status, t)
            if not last:
                t = end + intervals.pop()
    for c in range(MANUAL_CHAINS):
        t = day * 1440
        day += 1
        end = add(f"finetune-{c}", f"manual-{c}", 1, "manual", "failure", t)
        add(f"finetune-{c}", f"manual-{c}", 2, "manual",
            "success" if c in MANUAL_SUCCEEDING else "failure", end + intervals.pop())
    assert not intervals
    lone = SESSIONS - len(rows)
    for i in range(lone):
        add(f"notebook-{i}", "", 1, "manual", ("success", "failure", "cancelled")[i % 3],
            day * 1440 + i * 90)
    rng.shuffle(rows)
    for i, row in enumerate(rows):
        row["session_id"] = f"sess-{i:03d}"
        row["nodes"] = " ".join(NODES[(i * 4 + k) % len(NODES)] for k in range(4))
        row["excluded_nodes"] = ""
        row["queue"] = "default"  # an extra column: ignored
    for k, node in enumerate(names):  # 5 and 224 are coprime: one name per session
        rows[(k * 5) % SESSIONS]["excluded_nodes"] = node
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["session_id", "name", "chain_id", "attempt", "trigger",
                                          "status", "submit_time", "start_time", "end_time",
                                          "nodes", "excluded_nodes", "queue"])
        w.writeheader()
        w.writerows(rows)
    return counts


def gini_by_mean_difference(values):
    n, mean = len(values), sum(values) / len(values)
    return sum(abs(x - y) for x in values for y in values) / (2 * n * n * mean)


def run(ckptscope, *args):
    p = subprocess.run([ckptscope, "fleet", *args], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit(f"ckptscope fleet {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p.stdout


def check(condition, what):
    if not condition:
        sys.exit(f"FAIL: {what}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckptscope", required=True)
    parser.add_argument("--source-dir")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = os.path.join(tmp, "fleet.csv")
        counts = generate(csv_path)
        total = sum(counts.values())
        ranked = sorted(counts.values(), reverse=True)

        ex = json.loads(run(args.ckptscope, "exclusions", "--sessions", csv_path, "--json"))
        check(ex["total"] == 90 == total, f"total {ex['total']}")
        check(ex["gini_population"] == 63 and len(ex["nodes"]) == 63, "63 nodes")
        for k in ("1", "3", "5"):
            want = sum(ranked[:int(k)]) / total
            check(ex["top_k_share"][k] == want, f"top_k_share[{k}] {ex['top_k_share'][k]} != {want}")
        check(ex["top_k_share"]["3"] > 0.5, "the top 3 hold over half")
        want_gini = gini_by_mean_difference(list(counts.values()))
        check(math.isclose(ex["gini"], want_gini, rel_tol=1e-12), f"gini {ex['gini']} != {want_gini}")
        got_nodes = {n["node"]: (n["exclusions"], n["share"]) for n in ex["nodes"]}
        check(got_nodes == {n: (c, c / total) for n, c in counts.items()}, "per-node counts and shares")
        check([n["node"] for n in ex["nodes"][:3]] == ["gpu17", "gpu42", "gpu05"], "ranking")
        check(ex["lorenz"][0] == [0, 0] and ex["lorenz"][-1] == [1, 1] and len(ex["lorenz"]) == 64,
              "Lorenz curve ends")

        rt = json.loads(run(args.ckptscope, "retries", "--sessions", csv_path, "--json"))
        check(rt["chains"] == 20 and rt["attempts"] == 89, f"chains {rt['chains']} attempts {rt['attempts']}")
        check(rt["auto"]["chains"] == 12 and rt["auto"]["attempts"] == 73, "auto chains/attempts")
        check(rt["auto"]["success_rate"] == 4 / 12, f"auto rate {rt['auto']['success_rate']}")
        check(rt["manual"]["chains"] == 8 and rt["manual"]["attempts"] == 16, "manual chains/attempts")
        check(rt["manual"]["success_rate"] == 1 / 8, f"manual rate {rt['manual']['success_rate']}")
        check(round(rt["auto"]["success_rate"] / rt["manual"]["success_rate"], 1) == 2.7, "2.7x")
        iv = rt["interval_minutes"]
        check((iv["median"], iv["p25"], iv["p75"], iv["count"]) == (11, 10, 11, 69), f"intervals {iv}")
        check(rt["runs_outside_chains"] == 135, "135 sessions outside chains")
        check(rt["attempts_per_chain"] == {"2": 8, "6": 11, "7": 1}, f"{rt['attempts_per_chain']}")

        table = run(args.ckptscope, "retries", "--sessions", csv_path)
        check("auto        12       73         4        33.3%  11.0 (10.0-11.0)" in table,
              f"retries table:\n{table}")
        html_path = os.path.join(tmp, "ex.html")
        run(args.ckptscope, "exclusions", "--sessions", csv_path, "--html", html_path)
        page = open(html_path, encoding="utf-8").read()
        for needle in ("<svg", "gpu17", "52.2%", "Lorenz"):
            check(needle in page, f"exclusions page lacks {needle!r}")
        html_path = os.path.join(tmp, "rt.html")
        run(args.ckptscope, "retries", "--sessions", csv_path, "--html", html_path)
        page = open(html_path, encoding="utf-8").read()
        for needle in ("<svg", "33.3%", "12.5%", "auto-11"):
            check(needle in page, f"retries page lacks {needle!r}")
    print("ok: generated fleet reproduced")


if __name__ == "__main__":
    main()
