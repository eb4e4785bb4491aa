#!/usr/bin/env python3
"""`ckptscope project` and `report --project` as a user runs them, on the
report benchmark's synthetic traces (three nodes of one job, 1 GiB
checkpoints over NFS, storage maxima in their config): every format, the
forecast's invariants, and the errors a user can make.

  report_bench_traces_test.py --ckptscope PATH --report-bench PATH --source-dir DIR
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(cmd, expect=0):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != expect:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}, expected {expect}\n"
                 f"stdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}")
    return p


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckptscope", required=True)
    ap.add_argument("--report-bench", required=True)
    ap.add_argument("--source-dir", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ckpt-project-") as d:
        run([a.report_bench, "--ckptscope", a.ckptscope, "--runs", "1", "--events", "24000",
             "--checkpoints", "8", "--dir", d, "--keep"])
        traces = [os.path.join(d, f"gpu04{i}.db") for i in (1, 2, 3)]
        grid = [3, 8, 16, 64, 1024]
        j = json.loads(run([a.ckptscope, "project", *traces, "--nodes", "1024,3,8,16,64,8",
                            "--format", "json"]).stdout)
        check(j["nodes"] == grid, f"the grid sorted and deduplicated: {j['nodes']}")
        check(j["job"] == "train" and len(j["traces"]) == 3, "job and traces named")
        dirs = {x["direction"]: x for x in j["directions"]}
        check(set(dirs) == {"save", "load"}, f"both directions: {list(dirs)}")
        for name, x in dirs.items():
            check(x["supported"], f"{name} supported: {x['why']}")
            check(x["shared_max_source"].startswith("config:storage."),
                  f"{name}: maximum from the traces' config: {x['shared_max_source']}")
            check([f["nodes"] for f in x["forecasts"]] == grid, f"{name}: one forecast per N")
            check(x["measured"] and x["measured"][0]["nodes"] == 3,
                  f"{name}: measured at the traces' scale, 3 nodes")
            check(len(x["samples"]) == 3 * x["measured"][0]["checkpoints"],
                  f"{name}: a sample per node per checkpoint")
            prev = None
            for f in x["forecasts"]:
                for key in ("duration_s", "aggregate_Bps", "fraction_of_max", "rpc_wait_ms",
                            "rpc_wait_rise_ms", "rpc_execute_ms", "efficiency",
                            "shared_utilisation"):
                    r = f[key]
                    check(r["low"] <= r["value"] + 1e-9 and r["value"] <= r["high"] + 1e-9,
                          f"{name} N={f['nodes']} {key}: low <= value <= high: {r}")
                check(f["aggregate_Bps"]["high"] <= x["shared_max_Bps"] * 1.0001,
                      f"{name} N={f['nodes']}: never above the shared maximum")
                check(f["side"] in ("node", "shared"), "side is node or shared")
                check(f["stages"], f"{name} N={f['nodes']}: stages forecast")
                if prev:
                    check(f["duration_s"]["value"] >= prev["duration_s"]["value"] - 1e-9,
                          f"{name}: duration grows with N")
                    check(f["efficiency"]["value"] <= prev["efficiency"]["value"] + 1e-9,
                          f"{name}: efficiency falls with N")
                prev = f
            last = x["forecasts"][-1]
            check(last["side"] == "shared" and last["bottleneck"] == x["shared_stage"],
                  f"{name}: 1024 nodes are held back by the shared side: {last['side']}")
            c = x["crossover"]
            check(c["nodes"] is not None and c["low"] <= c["nodes"] <= (c["high"] or 10**9),
                  f"{name}: a crossover within its range: {c}")
            on_grid = next(f["nodes"] for f in x["forecasts"] if f["side"] == "shared")
            check(c["on_grid"] == on_grid, f"{name}: crossover on the grid {c}")
            # At the traces' own scale the model gives each sample back: the
            # forecast at N=3 holds the measured per-node durations.
            f3 = x["forecasts"][0]
            per_node = [s["duration_s"] for s in x["samples"]]
            check(f3["duration_s"]["low"] <= min(per_node) + 1e-9 and
                  f3["duration_s"]["high"] >= max(per_node) - 1e-9 and
                  abs(f3["duration_s"]["value"] - sum(per_node) / len(per_node)) < 1e-6,
                  f"{name}: N=3 {f3['duration_s']} is the samples' mean and holds "
                  f"{min(per_node)}-{max(per_node)}")

        table = run([a.ckptscope, "project", *traces, "--nodes", "8,64"]).stdout
        check("save:" in table and "load:" in table and "forecast" in table and
              "measured" in table, f"the table: {table[:400]}")
        md = os.path.join(d, "p.md")
        run([a.ckptscope, "project", *traces, "--nodes", "8,64", "-o", md])
        text = open(md).read()
        check(text.startswith("### save") and "| N |" in text, f"markdown by extension: {text[:200]}")
        page = os.path.join(d, "p.html")
        run([a.ckptscope, "project", *traces, "--nodes", "8,64", "-o", page])
        html = open(page).read()
        check(html.startswith("<!DOCTYPE html>") and "<table>" in html and "<script" not in html,
              "an HTML page by extension")

        # A lower maximum given on the command line wins over the config's.
        j = json.loads(run([a.ckptscope, "project", *traces, "--nodes", "64", "--format", "json",
                            "--storage-write-max", "4GiB/s"]).stdout)
        save = next(x for x in j["directions"] if x["direction"] == "save")
        check(save["shared_max_source"] == "--storage-write-max" and
              save["shared_max_Bps"] == 4 * 2**30, f"the flag's maximum: {save['shared_max_source']}")
        # --config's storage section.
        cfg = os.path.join(d, "c.json")
        with open(cfg, "w") as f:
            json.dump({"storage": {"read_bandwidth": "5GiB/s"}}, f)
        j = json.loads(run([a.ckptscope, "project", *traces, "--nodes", "64", "--format", "json",
                            "--config", cfg]).stdout)
        load = next(x for x in j["directions"] if x["direction"] == "load")
        check(load["shared_max_source"].startswith("config:" + cfg),
              f"--config's maximum: {load['shared_max_source']}")

        # The report with its projection section.
        rj = json.loads(run([a.ckptscope, "report", *traces, "--project", "8,64", "--format",
                             "json"]).stdout)
        check([f["nodes"] for f in rj["projection"]["directions"][0]["forecasts"]] == [8, 64],
              "report --project: the JSON's projection key")
        rmd = run([a.ckptscope, "report", *traces, "--project", "8", "--format", "md"]).stdout
        check("## Scale projection" in rmd, "report --project: the Markdown section")
        rhtml = run([a.ckptscope, "report", *traces, "--project", "8"]).stdout
        check('<section id="projection">' in rhtml, "report --project: the HTML section")

        # What a user gets wrong, each named.
        for args, code, words in (
                (["--nodes", "0"], 2, "--nodes '0'"),
                (["--nodes", "8,x"], 2, "'x' is not a node count"),
                (["--nodes", "8", "--format", "csv"], 2, "unknown --format 'csv'"),
                (["--nodes", "8", "--storage-write-max", "fast"], 2, "--storage-write-max"),
                (["--nodes", "8", "--config", os.path.join(d, "none.json")], 2, "--config")):
            p = run([a.ckptscope, "project", *traces, *args], expect=code)
            check(words in p.stderr, f"{args}: says {words!r}: {p.stderr}")
        p = run([a.ckptscope, "project", os.path.join(d, "missing.db"), "--nodes", "8"], expect=1)
        check("missing.db" in p.stderr, f"a missing trace is named: {p.stderr}")
        p = run([a.ckptscope, "report", *traces, "--project", "0"], expect=2)
        check("--project" in p.stderr, f"report --project 0 is refused: {p.stderr}")
    print("ok")


if __name__ == "__main__":
    main()
