"""`ckptscope fleet ...` on hostile input (issue 22): each case here aborted
the command (an uncaught nlohmann exception, exit 134), wrote a raw byte into
the HTML page, or took a number that makes no sense. Now: JSON readers name
the file and the field (exit 2), JSON and HTML writers replace bytes that are
not UTF-8 with U+FFFD (exit 0), numeric flags refuse NaN, inf, negative and
absurd values before any request (exit 2), and an unwritable --html says why.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

SESSIONS_HEADER = ("session_id,name,chain_id,attempt,trigger,status,submit_time,start_time,"
                   "end_time,nodes,excluded_nodes\n")
# Nothing listens on port 9 (discard): a flag check that is missing shows as
# exit 1 (connection refused) instead of 2.
NO_PROMETHEUS = "http://127.0.0.1:9"


def check(condition, what):
    if not condition:
        sys.exit(f"FAIL: {what}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckptscope", required=True)
    parser.add_argument("--source-dir", required=True)
    args = parser.parse_args()

    def fleet(*argv):
        # bytes: the output must be checked as UTF-8, not decoded leniently.
        return subprocess.run([os.fsencode(args.ckptscope), b"fleet", *map(os.fsencode, argv)],
                              capture_output=True, timeout=60)

    with tempfile.TemporaryDirectory() as tmp:
        def write(name, data):
            path = os.path.join(tmp, name)
            with open(path, "wb") as out:
                out.write(data)
            return path

        # 1. An overflowing number (1e400) in a JSON input: exit 2 naming the file.
        for flag, command, name, text in [
                ("--sacct-json", "exclusions", "sacct.json", b'{"jobs": [{"job_id": 1e400}]}'),
                ("--sacct-json", "retries", "sacct2.json",
                 b'{"jobs": [{"job_id": 5, "time": {"start": {"set": true, "number": 1e400}}}]}'),
                ("--pytorchjob", "retries", "job.json",
                 b'{"kind": "PyTorchJob", "spec": {"replicas": 1e400}}')]:
            path = write(name, text)
            p = fleet(command, flag, path)
            err = p.stderr.decode(errors="replace")
            check(p.returncode == 2, f"{flag} 1e400: exit {p.returncode}, expected 2: {err!r}")
            check(f"{path}: not valid JSON" in err and "1e400" in err,
                  f"{flag} 1e400: stderr {err!r} does not name the file and the number")

        # A wrong type where a field is read: a field-level error, exit 2.
        path = write("kind.json", b'{"kind": "PyTorchJob", "status": {"conditions": '
                                  b'[{"type": "Failed", "status": false}]}}')
        p = fleet("retries", "--pytorchjob", path)
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 2 and "status.conditions[0].status: expected a string" in err,
              f"condition status false: exit {p.returncode}: {err!r}")
        path = write("infinite.json", b'{"jobs": [{"job_id": 5, "state": {"current": "FAILED"}, '
                                      b'"time": {"end": {"set": true, "infinite": 0, "number": 1}}}]}')
        p = fleet("retries", "--sacct-json", path)
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 2 and "jobs[0] (job_id 5): time.end.infinite: expected a boolean"
              in err, f"infinite 0: exit {p.returncode}: {err!r}")

        # 2. A byte that is not UTF-8 in a node name, from each records source.
        sources = {
            "--sinfo": write("sinfo.txt",
                             b"REASON               USER      TIMESTAMP           NODELIST\n"
                             b"xid 79               root      2024-03-02T08:00:00 gpu\xff1\n"),
            "--sessions": write("sessions.csv", SESSIONS_HEADER.encode() +
                                b"s1,job,c,1,manual,failure,,2024-03-01T10:00:00Z,"
                                b"2024-03-01T11:00:00Z,gpu\xff1,gpu\xff1\n"),
            "--sacct": write("sacct.txt",
                             b"JobID|JobName|User|State|Submit|Start|End|NodeList|FailedNode\n"
                             b"4001|llm|bob|NODE_FAIL|2024-03-01T10:00:00|2024-03-01T10:01:00|"
                             b"2024-03-01T11:00:00|gpu\xff1|gpu\xff1\n"),
        }
        for flag, path in sources.items():
            p = fleet("exclusions", flag, path, "--json")
            check(p.returncode == 0, f"{flag} \\xff --json: exit {p.returncode}: {p.stderr!r}")
            try:
                doc = json.loads(p.stdout.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as e:
                sys.exit(f"FAIL: {flag} \\xff --json: not UTF-8 JSON ({e}): {p.stdout[:200]!r}")
            nodes = [n["node"] for n in doc["nodes"]]
            check(nodes == ["gpu\ufffd1"], f"{flag} \\xff --json: nodes {nodes}")

            page = os.path.join(tmp, f"page{flag}.html")
            p = fleet("exclusions", flag, path, "--html", page)
            check(p.returncode == 0, f"{flag} \\xff --html: exit {p.returncode}: {p.stderr!r}")
            with open(page, "rb") as f:
                raw = f.read()
            check(b"\xff" not in raw, f"{flag} \\xff --html: the raw byte is in the page")
            try:
                html = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                sys.exit(f"FAIL: {flag} \\xff --html: the page is not UTF-8: {e}")
            check("gpu\ufffd1" in html, f"{flag} \\xff --html: node name not shown as gpu\ufffd1")

        # The subtitle names the input file: a path with such a byte and '<'.
        odd = os.path.join(os.fsencode(tmp), b"odd\xfe<name>.csv")
        with open(odd, "wb") as out, open(sources["--sessions"], "rb") as src:
            out.write(src.read())
        page = os.path.join(tmp, "odd.html")
        p = fleet("exclusions", "--sessions", odd, "--html", page)
        with open(page, "rb") as f:
            html = f.read().decode("utf-8")
        check(p.returncode == 0 and "odd\ufffd&lt;name&gt;.csv" in html and "<name>" not in html,
              f"file name in the page not made UTF-8 and escaped: exit {p.returncode}")

        # 4. An unwritable --html says why.
        p = fleet("exclusions", "--sessions", sources["--sessions"], "--html",
                  os.path.join(tmp, "no", "such", "dir", "x.html"))
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 1 and "cannot write: No such file or directory" in err,
              f"unwritable --html: exit {p.returncode}: {err!r}")

    # 3. Numbers that make no sense: exit 2 naming the flag, before any request.
    bad_flags = [
        (["checkpoints", "--timeout", "nan"], "--timeout"),
        (["checkpoints", "--timeout", "inf"], "--timeout"),
        (["checkpoints", "--timeout", "1e400"], "--timeout"),
        (["checkpoints", "--timeout", "1e9"], "--timeout"),
        (["checkpoints", "--timeout", "-1"], "--timeout"),
        (["checkpoints", "--burst-fraction", "nan"], "--burst-fraction"),
        (["checkpoints", "--burst-fraction", "-inf"], "--burst-fraction"),
        (["attribute", "--from", "now-1h", "--top-k", "-1"], "--top-k"),
        (["attribute", "--from", "now-1h", "--top-k", "0"], "--top-k"),
        (["attribute", "--from", "now-1h", "--calibration-windows", "100000000"],
         "--calibration-windows"),
        (["attribute", "--from", "now-1h", "--calibration-windows", "-1"], "--calibration-windows"),
        (["attribute", "--from", "now-1h", "--timeout", "1e300s"], "--timeout"),
        (["attribute", "--from", "now-1h", "--seed", "-1"], "--seed"),
        (["checkpoints", "--storage-read-max", "infGB/s"], "--storage-read-max"),
        (["checkpoints", "--storage-write-max", "nanGB/s"], "--storage-write-max"),
    ]
    for argv, flag in bad_flags:
        p = fleet(argv[0], "--prometheus", NO_PROMETHEUS, *argv[1:])
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 2, f"{argv}: exit {p.returncode}, expected 2: {err!r}")
        check(flag in err and "connection refused" not in err, f"{argv}: stderr {err!r}")
        check(len(err) < 400, f"{argv}: a message of {len(err)} characters: {err!r}")
    with tempfile.TemporaryDirectory() as tmp:
        sessions = os.path.join(tmp, "s.csv")
        with open(sessions, "w") as out:
            out.write(SESSIONS_HEADER + "s1,job,c,1,manual,failure,,2024-03-01T10:00:00Z,"
                                        "2024-03-01T11:00:00Z,n1,\n")
        p = fleet("retries", "--sessions", sessions, "--chains", "-1")
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 2 and "--chains -1: must be at least 0" in err,
              f"--chains -1: exit {p.returncode}: {err!r}")
    print("ok")


if __name__ == "__main__":
    main()
