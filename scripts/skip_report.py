#!/usr/bin/env python3
"""Every skipped test of a run, with its reason; fails on a reason not allowed.

Reads the JUnit files ctest wrote (`ctest --output-junit FILE`), finds each
test ctest did not run or that skipped, takes the reason it gave (GoogleTest:
the line after "FILE:LINE: Skipped"; the Python and shell tests: the text
after "SKIP:"), and prints them grouped by reason. A reason that matches no
line of tests/allowed_skips.txt (privilege and hardware only, issue 40) is a
failure, as is a skipped test that gave no reason.

Usage: skip_report.py --allowed tests/allowed_skips.txt JUNIT.xml...
Exit 0: every skip allowed; 1: a skip not allowed (or a file unreadable).
"""
import argparse
import collections
import re
import sys
import xml.etree.ElementTree as ET

GTEST_SKIP = re.compile(r":\d+: Skipped\n(.+)")
SCRIPT_SKIP = re.compile(r"\bSKIP: (.+)")


def allowed_patterns(path):
    patterns = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                patterns.append(re.compile(line))
    return patterns


def skip_reason(output):
    """The reason a skipped test gave in its output, or None."""
    m = GTEST_SKIP.search(output) or SCRIPT_SKIP.search(output)
    return m.group(1).strip() if m else None


def skipped_tests(junit_path):
    """(test name, reason or None) of every test the file says was skipped."""
    root = ET.parse(junit_path).getroot()
    for case in root.iter("testcase"):
        if case.get("status") != "notrun" and case.find("skipped") is None:
            continue
        out = case.findtext("system-out") or ""
        # A test ctest did not run for want of its binary says so itself.
        reason = skip_reason(out)
        if reason is None and "Could not find executable" in out:
            reason = "its executable was not built"
        name = case.get("name", "?").split("  # GetParam()")[0]
        yield name, reason


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--allowed", required=True)
    ap.add_argument("junit", nargs="+")
    args = ap.parse_args()
    try:
        patterns = allowed_patterns(args.allowed)
    except OSError as e:
        print(f"skip_report: --allowed {args.allowed}: {e.strerror}", file=sys.stderr)
        return 1
    by_reason = collections.defaultdict(list)
    for path in args.junit:
        try:
            for name, reason in skipped_tests(path):
                by_reason[reason or "(no reason given)"].append(name)
        except (OSError, ET.ParseError) as e:
            print(f"skip_report: {path}: {e}", file=sys.stderr)
            return 1
    bad = 0
    total = sum(len(v) for v in by_reason.values())
    print(f"skip_report: {total} skipped test(s)")
    for reason in sorted(by_reason):
        names = by_reason[reason]
        ok = reason != "(no reason given)" and any(p.search(reason) for p in patterns)
        bad += 0 if ok else len(names)
        print(f"skip_report: {'' if ok else 'NOT ALLOWED: '}{len(names)} x {reason}")
        for name in sorted(names)[:20]:
            print(f"skip_report:     {name}")
        if len(names) > 20:
            print(f"skip_report:     ... and {len(names) - 20} more")
    if bad:
        print(f"skip_report: {bad} test(s) skipped for a reason not in {args.allowed} "
              "(only privilege and hardware reasons are; a missing package is a failure)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
