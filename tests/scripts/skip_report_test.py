#!/usr/bin/env python3
"""scripts/skip_report.py on JUnit files as ctest writes them (issue 40).

A GoogleTest skip and a script's "SKIP:" give their reasons; a reason on
tests/allowed_skips.txt passes, any other (a missing package, a feature
probe's answer) or none fails the run; a CUPTI test not built is listed by
name. Exit 0 pass, 1 fail.
"""
import argparse
import os
import subprocess
import sys
import tempfile


def junit(cases):
    """A ctest JUnit file with (name, status, output) test cases."""
    body = "".join(
        f'<testcase name="{name}" classname="{name}" time="0.1" status="{status}">'
        + ('<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>' if status == "notrun" else "")
        + f"<system-out>{out}</system-out></testcase>"
        for name, status, out in cases)
    return f'<?xml version="1.0" encoding="UTF-8"?><testsuite name="x">{body}</testsuite>'


GTEST_ROOT = ("[ RUN      ] A.B\n/src/tests/bpf/harness.h:29: Skipped\n"
              "needs root to load eBPF programs\n[  SKIPPED ] A.B (1 ms)\n")
GTEST_FENTRY = ("/src/tests/bpf/other_io_records_test.cpp:67: Skipped\nthe kernel refuses fentry: "
                "attaching to vfs_read: Operation not permitted (the file layer runs in the "
                "tests/vm guests)\n")
SCRIPT_PACKAGE = "check_deploy: SKIP: systemd-analyze not found\n"
CUPTI = "SKIP: not built: no CUDA toolkit with CUPTI (cupti/README.md)\n"
PASSED = "[ RUN      ] C.D\n[       OK ] C.D (1 ms)\n"


def report(source_dir, *files):
    script = os.path.join(source_dir, "scripts", "skip_report.py")
    allowed = os.path.join(source_dir, "tests", "allowed_skips.txt")
    return subprocess.run([sys.executable, script, "--allowed", allowed, *files],
                          capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckptscope")  # given to every Python test; unused here
    ap.add_argument("--source-dir", required=True)
    args = ap.parse_args()
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        def write(name, cases):
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(junit(cases))
            return path

        allowed = write("allowed.xml", [
            ("A.B", "notrun", GTEST_ROOT),
            ("Modes/X.Y/FileLayer  # GetParam() = 4-byte object", "notrun", GTEST_FENTRY),
            ("cupti/SessionTest.Flush", "notrun", CUPTI),
            ("C.D", "passed", PASSED),
        ])
        p = report(args.source_dir, allowed)
        check(p.returncode == 0, f"privilege, kernel and not-built skips pass: {p.stdout}{p.stderr}")
        check("3 skipped test(s)" in p.stdout, "the three skips are counted, the pass is not")
        check("cupti/SessionTest.Flush" in p.stdout, "a test not built is listed by name")
        check("Modes/X.Y/FileLayer\n" in p.stdout, "a parameterised name loses its GetParam()")

        package = write("package.xml", [("deploy_systemd_verify", "notrun", SCRIPT_PACKAGE)])
        p = report(args.source_dir, allowed, package)
        check(p.returncode == 1, "a skip for a missing package fails the run")
        check("NOT ALLOWED: 1 x systemd-analyze not found" in p.stdout, f"and is named: {p.stdout}")

        silent = write("silent.xml", [("E.F", "notrun", "no reason here\n")])
        p = report(args.source_dir, silent)
        check(p.returncode == 1 and "(no reason given)" in p.stdout, "a skip without a reason fails")

        p = report(args.source_dir, os.path.join(tmp, "missing.xml"))
        check(p.returncode == 1 and "missing.xml" in p.stderr, "a missing JUnit file fails, named")

    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
