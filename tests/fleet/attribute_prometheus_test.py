"""`ckptscope fleet attribute` against a real Prometheus loaded with a fleet
whose answers are known (tests/data/fleet/attribution/planted_fleet.py): six
planted failures of three XID types on three nodes, each type with its own
planted ranking of six metrics, among calm and very noisy fillers.

Checks: the failures found from XID changes (and from ckptscope's failure
counter, and from an --events file) are the planted ones; each failure's
ranking starts with its type's planted order; noisy metrics never rank in the
planted places although their raw scores are larger; the dominance numbers
(rank-1 share, top-k overlap across types, Kendall's W, per-metric counts and
mean ranks) equal what the planted rankings give; a range without failures
is a clear error.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "data", "fleet", "attribution"))
import prom_harness  # noqa: E402
import planted_fleet as pf  # noqa: E402

HOUR = 3600
NODES = ["gpu-node-1", "gpu-node-2", "gpu-node-3"]


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


def run(ckptscope, args, expect_rc=0):
    r = subprocess.run([ckptscope, "fleet", "attribute"] + args, capture_output=True, text=True,
                       timeout=300)
    if r.returncode != expect_rc:
        raise Failed("fleet attribute %s: exit %d (expected %d)\nstdout: %s\nstderr: %s"
                     % (" ".join(args), r.returncode, expect_rc, r.stdout[-3000:],
                        r.stderr[-3000:]))
    return r


def fractional_ranks(values):
    order = sorted(range(len(values)), key=lambda i: -values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j < len(order) and values[order[j]] == values[order[i]]:
            j += 1
        for t in range(i, j):
            ranks[order[t]] = (i + 1 + j) / 2.0
        i = j
    return ranks


def kendall_w(rank_rows):
    m, n = len(rank_rows), len(rank_rows[0])
    sums = [sum(row[i] for row in rank_rows) for i in range(n)]
    mean = m * (n + 1) / 2.0
    s = sum((x - mean) ** 2 for x in sums)
    ties = 0.0
    for row in rank_rows:
        for r in set(row):
            t = row.count(r)
            ties += t ** 3 - t
    return 12 * s / (m * m * (n ** 3 - n) - m * ties)


def jaccard(a, b):
    return len(a & b) / float(len(a | b))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckptscope", required=True)
    parser.add_argument("--source-dir", required=True)
    args = parser.parse_args()

    start = prom_harness.past_start_s(2 * 24 * HOUR)
    end = start + 2 * 24 * HOUR - 60
    failures = [
        pf.Failure("gpu-node-1", 0, start + 10 * HOUR, 79),
        pf.Failure("gpu-node-2", 1, start + 16 * HOUR, 79),
        pf.Failure("gpu-node-3", 0, start + 22 * HOUR, 79),
        pf.Failure("gpu-node-1", 1, start + 28 * HOUR, 48),
        pf.Failure("gpu-node-2", 0, start + 30 * HOUR, 13),
        pf.Failure("gpu-node-3", 1, start + 40 * HOUR, 48),
    ]
    resets = [("gpu-node-2", 1, start + 18 * HOUR)]  # back to 0 after a reboot: no failure
    names = pf.metric_names()
    families = pf.families(start, end, NODES, 2, failures, resets=resets)
    common = ["--from", str(start), "--to", str(end), "--step", "60s",
              "--calibration-windows", "40"]

    with prom_harness.backfilled_prometheus(families) as prom, \
            tempfile.TemporaryDirectory() as tmp:
        url = prom.url
        planted_top = {}  # failure index -> planted metric names, first first
        for i, f in enumerate(failures):
            planted_top[i] = [pf.graded_name(g) for g in pf.ORDERS[f.xid]]

        # 1. Failures from XID changes, top 3, JSON and HTML.
        page = os.path.join(tmp, "attribute.html")
        r = run(args.ckptscope, ["--prometheus", url, "--top-k", "3", "--json", "--html", page]
                + common)
        out = json.loads(r.stdout)
        check(out["event_source"] == "xid", "event source %r" % out["event_source"])
        events = out["events"]
        check(len(events) == len(failures),
              "%d failures found, %d planted: %s" % (len(events), len(failures),
                                                      [(e["node"], e["time"]) for e in events]))
        for i, (e, f) in enumerate(zip(events, failures)):
            where = "failure %d (%s XID %s)" % (i, f.node, f.xid)
            check(e["node"] == f.node and e["time_unix_s"] == f.time_s and e["type"] == f.xid,
                  "%s found as %s %s XID %s" % (where, e["node"], e["time_unix_s"], e["type"]))
            got = [m["metric"] for m in e["top"]]
            check(got == planted_top[i][:3], "%s top 3 %s, planted %s" % (where, got,
                                                                        planted_top[i][:3]))
            first = e["top"][0]
            g = pf.ORDERS[f.xid][0]
            if pf.GRADED[g][2] == "gpu":
                check(first["labels"].get("gpu") == str(f.gpu),
                      "%s: rank 1 series %s, not the failing GPU %d" % (where, first["labels"],
                                                                        f.gpu))
            check(first["sign"] == pf.GRADED[g][3], "%s: sign %s" % (where, first["sign"]))
            check(-pf.SHIFT_TO_S <= first["lead_s"] <= -pf.SHIFT_FROM_S,
                  "%s: lead %s outside the planted shift" % (where, first["lead_s"]))
            check(first["p_value"] == 1.0 / 41, "%s: p-value %s" % (where, first["p_value"]))
        d = out["dominance"]
        check(d["events"] == 6, "dominance over %s failures" % d["events"])
        check(d["max_rank1_share"] == 0.5 and d["max_rank1_metric"] == "DCGM_FI_DEV_GPU_TEMP",
              "rank-1 share %s of %s, planted 3/6 of DCGM_FI_DEV_GPU_TEMP"
              % (d["max_rank1_share"], d["max_rank1_metric"]))
        tops = {t: {pf.graded_name(g) for g in order[:3]} for t, order in pf.ORDERS.items()}
        overlap = (jaccard(tops["79"], tops["48"]) + jaccard(tops["79"], tops["13"])
                   + jaccard(tops["48"], tops["13"])) / 3
        check(abs(d["mean_top_k_overlap_jaccard"] - overlap) < 1e-12,
              "top-3 overlap %s, planted %s" % (d["mean_top_k_overlap_jaccard"], overlap))
        for t in d["types"]:
            check(set(t["top"]) == tops[t["type"]], "type %s top %s" % (t["type"], t["top"]))
        expected_counts = {}
        for i in range(len(failures)):
            for name in planted_top[i][:3]:
                expected_counts[name] = expected_counts.get(name, 0) + 1
        got_counts = {m["metric"]: m["top_k_count"] for m in out["metrics"]}
        check(got_counts == expected_counts, "top-3 counts %s, planted %s" % (got_counts,
                                                                            expected_counts))
        with open(page, encoding="utf-8") as f:
            html = f.read()
        check("<svg" in html and "DCGM_FI_DEV_GPU_TEMP" in html and "Kendall" in html,
              "the HTML page lacks its charts or figures")

        # 2. The same failures from a file; every metric ranked.
        events_csv = os.path.join(tmp, "events.csv")
        with open(events_csv, "w", encoding="utf-8") as f:
            f.write("node,time,type\n# planted\n")
            for k, fl in enumerate(failures):
                when = fl.time_s if k % 2 else prom_iso(fl.time_s)
                f.write("%s,%s,%s\n" % (fl.node, when, fl.xid))
        r = run(args.ckptscope, ["--prometheus", url, "--events", events_csv, "--top-k", "100",
                                 "--json"] + common)
        out = json.loads(r.stdout)
        check(out["event_source"] == "file", "event source %r" % out["event_source"])
        check(len(out["events"]) == 6, "%d failures from the file" % len(out["events"]))
        noisy_beat_planted = False
        rank_rows = []
        for i, e in enumerate(out["events"]):
            got = [m["metric"] for m in e["top"]]
            check(sorted(got) == sorted(names),
                  "failure %d ranks %d metrics, the node has %d" % (i, len(got), len(names)))
            check(got[:6] == planted_top[i], "failure %d ranking starts %s, planted %s"
                  % (i, got[:6], planted_top[i]))
            sixth = e["top"][5]["score"]
            noisy_beat_planted |= any(m["score"] > sixth for m in e["top"]
                                      if m["metric"].startswith("node_noisy"))
            values = {m["metric"]: m["calibrated_score"] for m in e["top"]}
            rank_rows.append(fractional_ranks([values[n] for n in sorted(names)]))
        check(noisy_beat_planted, "no noisy metric out-scored a planted one before calibration: "
              "the fixture does not test calibration")
        d = out["dominance"]
        check(d["kendall_w_metrics"] == len(names), "W over %s metrics" % d["kendall_w_metrics"])
        w = kendall_w(rank_rows)
        check(abs(d["kendall_w"] - w) < 1e-9, "Kendall's W %s, from the rankings %s"
              % (d["kendall_w"], w))
        for m in out["metrics"]:
            ranks = [[x["metric"] for x in e["top"]].index(m["metric"]) + 1
                     for e in out["events"]]
            check(abs(m["mean_rank"] - sum(ranks) / 6.0) < 1e-12,
                  "%s mean rank %s, from the rankings %s" % (m["metric"], m["mean_rank"], ranks))

        # 3. Failures from ckptscope's own counter; only one type.
        r = run(args.ckptscope, ["--prometheus", url, "--event-source", "ckptscope", "--top-k",
                                 "1", "--json"] + common)
        out = json.loads(r.stdout)
        found = [(e["node"], e["time_unix_s"], e["type"]) for e in out["events"]]
        check(found == [(f.node, f.time_s, "gpu_xid") for f in failures],
              "ckptscope failures %s" % found)
        check(out["dominance"]["mean_top_k_overlap_jaccard"] is None,
              "overlap across one type should be null")

        # 4. The table; --event-type keeps XID 48 only.
        r = run(args.ckptscope, ["--prometheus", url, "--event-type", "48", "--top-k", "2"]
                + common)
        check(r.stdout.startswith("2 failures from xid"), "table: %s" % r.stdout[:200])
        for text in ("node_pcie_aer_errors_total", "Dominance", "Kendall's W"):
            check(text in r.stdout, "table lacks %r:\n%s" % (text, r.stdout))

        # 5. A range with no failures: a clear error, exit 2.
        r = run(args.ckptscope, ["--prometheus", url, "--from", str(start + 41 * HOUR), "--to",
                                 str(end)], expect_rc=2)
        for text in ("no failures", "DCGM_FI_DEV_XID_ERRORS", "ckptscope_failures_total"):
            check(text in r.stderr, "no-failure error lacks %r: %s" % (text, r.stderr))
        r = run(args.ckptscope, ["--prometheus", url, "--from", str(start - 30 * 24 * HOUR),
                                 "--to", str(start - 29 * 24 * HOUR), "--event-source", "xid"],
                expect_rc=2)
        check("no failures" in r.stderr, "empty range: %s" % r.stderr)

        # 6. Failures found but nothing scored: a --node-label the series lack, or a node
        # Prometheus does not scrape. Exit 1 naming the failures, nodes and label.
        r = run(args.ckptscope, ["--prometheus", url, "--events", events_csv, "--node-label",
                                 "no_such_label"] + common, expect_rc=1)
        for text in ("none of the 6 failures could be scored", 'no_such_label="<node>"',
                     "gpu-node-1, gpu-node-2, gpu-node-3"):
            check(text in r.stderr, "unscored error lacks %r: %s" % (text, r.stderr))
        check(r.stdout == "", "unscored run printed a result: %s" % r.stdout[:200])
        ghost_csv = os.path.join(tmp, "ghost.csv")
        with open(ghost_csv, "w", encoding="utf-8") as f:
            f.write("gpu-node-9,%d,79\n" % failures[0].time_s)
        r = run(args.ckptscope, ["--prometheus", url, "--events", ghost_csv] + common,
                expect_rc=1)
        check("none of the 1 failures could be scored" in r.stderr and "gpu-node-9" in r.stderr,
              "unscraped node: %s" % r.stderr)
    print("PASS: planted attribution, dominance and sources over a backfilled Prometheus")
    return 0


def prom_iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as e:
        print("FAIL: %s" % e)
        sys.exit(1)
