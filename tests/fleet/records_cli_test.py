"""`ckptscope fleet exclusions` / `fleet retries` as a user runs them: Slurm
records of every shape, TorchElastic, PyTorchJob and CSV fixtures with exact
answers through --json; stdin; bad input exits 2 naming the file, line or
field; no input exits 2 saying what to give."""

import argparse
import json
import os
import subprocess
import sys


def check(condition, what):
    if not condition:
        sys.exit(f"FAIL: {what}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckptscope", required=True)
    parser.add_argument("--source-dir", required=True)
    args = parser.parse_args()
    data = os.path.join(args.source_dir, "tests", "data", "fleet", "records")

    def fleet(*argv, stdin=None):
        return subprocess.run([args.ckptscope, "fleet", *argv], capture_output=True, text=True,
                              input=stdin, timeout=60)

    def fleet_json(*argv):
        p = fleet(*argv, "--json")
        check(p.returncode == 0, f"{argv}: exit {p.returncode}: {p.stderr}")
        return json.loads(p.stdout)

    f = lambda name: os.path.join(data, name)  # noqa: E731

    # Every Slurm shape at once: 21.08, 23.11 with -D duplicates, 24.05, -P and -p text (the
    # same jobs twice: each record counts), sinfo -R.
    ex = fleet_json("exclusions", "--sacct-json", f("sacct_21.08.json"),
                    "--sacct-json", f("sacct_23.11_duplicates.json"),
                    "--sacct-json", f("sacct_24.05.json"), "--sacct", f("sacct_parsable2.txt"),
                    "--sinfo", f("sinfo_R.txt"), "--nodes", "spare[1-3]")
    counts = {n["node"]: n["exclusions"] for n in ex["nodes"] if n["exclusions"]}
    check(counts == {"gpu02": 3, "gpu05": 2, "gpu03": 2, "node07": 1, "a3": 1, "a4": 1,
                     "gpu07": 1, "gpu08": 1, "gpu09": 1, "gpu10": 1}, f"exclusions {counts}")
    check(ex["total"] == 14, f"total {ex['total']}")
    check(ex["unattributed_node_failures"] == 1, "unattributed")
    # gpu01..gpu10, node07..node10, a1..a5, spare1..spare3.
    check(ex["gini_population"] == 22, f"population {ex['gini_population']}")
    check(ex["top_k_share"]["1"] == 3 / 14 and ex["top_k_share"]["3"] == 7 / 14, "top-k")
    check(set(ex) >= {"total", "nodes", "top_k_share", "gini"}, "contract keys")

    rt = fleet_json("retries", "--sacct-json", f("sacct_23.11_duplicates.json"),
                    "--sacct", f("sacct_parsable.txt"), "--torchelastic", f("torchelastic_success.txt"),
                    "--pytorchjob", f("pytorchjobs.json"), "--sessions", f("sessions.csv"))
    check((rt["chains"], rt["attempts"]) == (7, 19), f"chains {rt['chains']} attempts {rt['attempts']}")
    check((rt["auto"]["chains"], rt["auto"]["attempts"], rt["auto"]["success_rate"]) == (6, 17, 5 / 6),
          f"auto {rt['auto']}")
    check((rt["manual"]["chains"], rt["manual"]["attempts"], rt["manual"]["success_rate"]) == (1, 2, 1.0),
          f"manual {rt['manual']}")
    # 10 11 | 12 10 | 11 10 | 12 | 9 13 | 10 11 | 120
    iv = rt["interval_minutes"]
    check((iv["count"], iv["median"], iv["p25"], iv["p75"]) == (12, 11, 10, 12), f"intervals {iv}")
    for kind in ("auto", "manual"):
        check(set(rt[kind]) >= {"chains", "attempts", "success_rate"}, "contract keys")

    # Standard input.
    with open(f("sessions.csv")) as csv_file:
        p = fleet("retries", "--sessions", "-", "--json", stdin=csv_file.read())
    check(p.returncode == 0 and json.loads(p.stdout)["chains"] == 2, f"stdin: {p.stderr}")

    # Bad input: exit 2, naming what was wrong.
    bad = [
        (["exclusions"], "give at least one of --sacct-json"),
        (["retries"], "give at least one of --sacct-json"),
        (["exclusions", "--sacct-json", f("sacct_parsable2.txt")], "sacct_parsable2.txt: not valid JSON"),
        (["retries", "--sacct", f("sacct_21.08.json")], "sacct_21.08.json:1: the header has no JobID"),
        (["exclusions", "--sinfo", f("sacct_parsable2.txt")], "sacct_parsable2.txt:1: expected sinfo -R's header"),
        (["retries", "--pytorchjob", f("sacct_21.08.json")], "sacct_21.08.json: kind \"(none)\""),
        (["retries", "--torchelastic", f("sessions.csv")], "sessions.csv: no TorchElastic agent lines"),
        (["retries", "--sessions", f("sacct_parsable2.txt")], "no \"session_id\" column"),
        (["exclusions", "--sessions", "/nonexistent.csv"], "/nonexistent.csv: cannot read"),
        (["exclusions", "--sessions", f("sessions.csv"), "--nodes", "n[1-"], "--nodes: hostlist \"n[1-\""),
        (["exclusions", "--sessions", f("sessions.csv"), "--top", "0"], "--top 0"),
    ]
    for argv, message in bad:
        p = fleet(*argv)
        check(p.returncode == 2, f"{argv}: exit {p.returncode}, expected 2")
        check(message in p.stderr, f"{argv}: stderr {p.stderr!r} lacks {message!r}")
    p = fleet("exclusions", "--sessions", f("sessions.csv"), "--html", "/nonexistent/dir/x.html")
    check(p.returncode == 1 and "cannot write" in p.stderr, f"unwritable --html: {p.returncode}")
    print("ok")


if __name__ == "__main__":
    main()
