"""`ckptscope fleet exclusions` / `fleet retries` on inputs the reviewer found
mishandled (docs/fleet/records.md): a directory as input, a sessions CSV with
a byte order mark and tab-separated node lists, chains whose attempts repeat
across files, skip a number or overlap in time (exit 2 naming FILE:LINE), and
the keys of top_k_share (1, 3, 5 and --top's k, also the default 10)."""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HEADER = ("session_id,name,chain_id,attempt,trigger,status,submit_time,start_time,end_time,"
          "nodes,excluded_nodes\n")


def check(condition, what):
    if not condition:
        sys.exit(f"FAIL: {what}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckptscope", required=True)
    parser.add_argument("--source-dir", required=True)
    args = parser.parse_args()
    data = os.path.join(args.source_dir, "tests", "data", "fleet", "records")

    def fleet(*argv):
        return subprocess.run([args.ckptscope, "fleet", *argv], capture_output=True, text=True,
                              timeout=60)

    with tempfile.TemporaryDirectory() as tmp:
        def write(name, rows, bom=False):
            path = os.path.join(tmp, name)
            with open(path, "wb") as out:
                out.write((b"\xef\xbb\xbf" if bom else b"") + (HEADER + rows).encode())
            return path

        # A directory: exit 2 with a message, not an abort.
        p = fleet("retries", "--sessions", tmp)
        check(p.returncode == 2 and "is a directory" in p.stderr,
              f"directory: exit {p.returncode}: {p.stderr!r}")

        # BOM and tabs: 3 nodes, n2 and n3 excluded once each.
        bom = write("bom.csv", "s1,job,c,1,manual,failure,,2024-03-01T10:00:00Z,"
                               "2024-03-01T11:00:00Z,\"n1\tn2  n3\",n2\tn3\n"
                               "s2,job,c,2,auto,success,,2024-03-01T11:05:00Z,"
                               "2024-03-01T12:00:00Z,n1,\n", bom=True)
        p = fleet("exclusions", "--sessions", bom, "--json")
        check(p.returncode == 0, f"BOM: exit {p.returncode}: {p.stderr}")
        ex = json.loads(p.stdout)
        counts = {n["node"]: n["exclusions"] for n in ex["nodes"]}
        check(counts == {"n1": 0, "n2": 1, "n3": 1}, f"BOM/tab nodes {counts}")
        p = fleet("retries", "--sessions", bom, "--json")
        rt = json.loads(p.stdout)
        check(rt["auto"]["chains"] == 1 and rt["interval_minutes"]["median"] == 5,
              f"BOM retries {rt['auto']} {rt['interval_minutes']}")

        # Chains checked over all --sessions files together.
        first = write("first.csv", "s1,job,c,1,manual,failure,,,,,\n")
        again = write("again.csv", "s9,job,c,2,auto,failure,,,,,\ns2,job,c,1,auto,success,,,,,\n")
        gap = write("gap.csv", "s1,job,c,1,manual,failure,,,,,\ns2,job,c,3,auto,success,,,,,\n")
        overlap = write("overlap.csv",
                        "s1,job,c,1,manual,failure,,2024-03-01T10:00:00Z,2024-03-01T11:00:00Z,,\n"
                        "s2,job,c,2,auto,success,,2024-03-01T10:59:00Z,2024-03-01T12:00:00Z,,\n")
        leap = write("leap.csv", "s1,job,c,1,manual,failure,,2023-02-29T10:00:00Z,,,\n")
        bad = [
            (["--sessions", first, "--sessions", again],
             f"chain \"c\" has attempt 1 twice: {first}:2 and {again}:3"),
            (["--sessions", gap], f"{gap}:3: chain \"c\" has attempt 3 but no attempt 2"),
            (["--sessions", overlap],
             f"{overlap}:3: chain \"c\" attempt 2 starts before attempt 1 ended ({overlap}:2)"),
            (["--sessions", leap], f"{leap}:2: start_time: \"2023-02-29T10:00:00Z\""),
        ]
        for argv, message in bad:
            for command in ("retries", "exclusions"):
                p = fleet(command, *argv)
                check(p.returncode == 2, f"{command} {argv}: exit {p.returncode}, expected 2")
                check(message in p.stderr, f"{command} {argv}: {p.stderr!r} lacks {message!r}")

    # top_k_share: 1, 3, 5 always, plus --top (default 10).
    sessions = os.path.join(data, "sessions.csv")
    for top, keys in ((None, {"1", "3", "5", "10"}), ("7", {"1", "3", "5", "7"}),
                      ("3", {"1", "3", "5"})):
        argv = ["exclusions", "--sessions", sessions, "--json"] + (["--top", top] if top else [])
        p = fleet(*argv)
        check(p.returncode == 0, f"{argv}: exit {p.returncode}: {p.stderr}")
        got = set(json.loads(p.stdout)["top_k_share"])
        check(got == keys, f"--top {top}: top_k_share keys {sorted(got)}, expected {sorted(keys)}")
    print("ok")


if __name__ == "__main__":
    main()
