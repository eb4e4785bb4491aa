"""`ckptscope fleet attribute` on bad input, without a Prometheus: every case
exits non-zero with an error that names what was wrong (the URL, the file and
line, the flag and value). The --events file is checked before any request,
so a bad file is reported even with no server (exit 2); an unreachable server
is a runtime failure (exit 1).
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prom_harness  # noqa: E402


class Failed(Exception):
    pass


def expect(ckptscope, args, rc, *texts):
    r = subprocess.run([ckptscope, "fleet", "attribute"] + args, capture_output=True, text=True,
                       timeout=120)
    if r.returncode != rc:
        raise Failed("%s: exit %d, expected %d\nstderr: %s" % (" ".join(args), r.returncode, rc,
                                                               r.stderr))
    for text in texts:
        if text not in r.stderr:
            raise Failed("%s: stderr lacks %r:\n%s" % (" ".join(args), text, r.stderr))
    if r.stdout:
        raise Failed("%s: printed on stdout on error: %s" % (" ".join(args), r.stdout))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckptscope", required=True)
    parser.add_argument("--source-dir", required=True)
    args = parser.parse_args()
    ck = args.ckptscope
    nowhere = "http://127.0.0.1:%d" % prom_harness.free_port()
    rng = ["--from", "1769860800", "--to", "1769947200"]
    cases = 0
    with tempfile.TemporaryDirectory() as tmp:
        # Unreachable Prometheus: runtime failure naming the URL.
        expect(ck, ["--prometheus", nowhere] + rng, 1, nowhere)
        cases += 1
        # Bad --events files: named by file and line, before any request.
        bad = {
            "fields.csv": ("node,time,type\ngpu-1,2026-01-31T12:00:00Z\n", "fields.csv:2",
                           "expected 3 fields"),
            "time.csv": ("gpu-1,2026-01-31T12:00:00Z,79\ngpu-2,yesterday,79\n", "time.csv:2",
                         "bad time 'yesterday'"),
            "outside.csv": ("gpu-1,2026-03-01T00:00:00Z,79\n", "outside.csv:1",
                            "outside --from..--to"),
            "node.csv": ("# comment\n,2026-01-31T12:00:00Z,79\n", "node.csv:2", "empty node"),
            "empty.csv": ("node,time,type\n", "empty.csv", "no events"),
            # Strict times (the shared parser): no 31 February, no +99:99 offset.
            "feb31.csv": ("gpu-1,2026-02-31T12:00:00Z,79\n", "feb31.csv:1",
                          "bad time '2026-02-31T12:00:00Z'", "2026-02 has no day 31"),
            "offset.csv": ("gpu-1,2026-01-31T12:00:00+99:99,79\n", "offset.csv:1",
                           "zone offset out of range"),
            "quote.csv": ('"gpu-1,2026-01-31T12:00:00Z,79\n', "quote.csv:1",
                          "the quote opened here is never closed"),
        }
        for name, (text, where, *what) in bad.items():
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            expect(ck, ["--prometheus", nowhere, "--events", path] + rng, 2, where, *what)
            cases += 1
        expect(ck, ["--prometheus", nowhere, "--events", os.path.join(tmp, "missing.csv")] + rng,
               2, "missing.csv: cannot read it")
        cases += 1
        # Empty or malformed ranges and flags.
        expect(ck, ["--prometheus", nowhere, "--from", "1769947200", "--to", "1769860800"], 2,
               "--from 1769947200 is not before --to 1769860800")
        expect(ck, ["--prometheus", nowhere, "--from", "1769860800", "--to", "1769860800"], 2,
               "the range is empty")
        expect(ck, ["--prometheus", nowhere, "--from", "last tuesday"], 2, "--from",
               "last tuesday")
        expect(ck, ["--prometheus", nowhere, "--baseline", "1x"] + rng, 2, "--baseline '1x'")
        expect(ck, ["--prometheus", nowhere, "--step", "0s"] + rng, 2, "--step '0s'")
        expect(ck, ["--prometheus", nowhere, "--event-source", "file"] + rng, 2,
               "--event-source file needs --events")
        # Durations by the shared parser: weeks are a unit (so the flags pass and the
        # unreachable server is what fails), 0 only where a window may be empty.
        expect(ck, ["--prometheus", nowhere, "--baseline", "1w", "--gap", "0m"] + rng, 1, nowhere)
        expect(ck, ["--prometheus", nowhere, "--baseline", "0"] + rng, 2, "--baseline '0'")
        expect(ck, ["--prometheus", nowhere, "--step", "9" * 400] + rng, 2, "--step '999",
               "not a finite number")
        cases += 9
    print("PASS: %d bad inputs named and refused" % cases)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as e:
        print("FAIL: %s" % e)
        sys.exit(1)
