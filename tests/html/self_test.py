#!/usr/bin/env python3
"""Proves check_html.py can fail, and fails for the right reason.

    self_test.py [--case NAME ...] [--out DIR] [--chromium PATH] [--timeout S]

Runs check_html.py on each fixture in fixtures/ and asserts its exit status,
that the expected FAIL lines are there, and that every FAIL line is one the
case explains (a bad image must fail as a request to that image, not as
something unrelated). Without --case, runs every case; CTest runs one a test.
"""

import argparse
import os
import pathlib
import re
import struct
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
CHECK = HERE / "check_html.py"
FIX = HERE / "fixtures"

# The browser's own line for a failed load, which follows any blocked request.
LOAD_FAILED = r"console browser network\.error: Failed to load resource: net::ERR_\w+ at "

# name: (fixture, extra args, expected exit status, FAIL lines that must appear
#        (regexes), FAIL lines that may also appear (regexes))
CASES = {
    "clean": ("clean.html",
              ["--expect", "#job", "--expect", "#timeline svg", "--expect", ".waterfall svg",
               "--expect", "section#timeline", "--expect", "#added-by-script"],
              0, [], []),
    "external_image": ("external_image.html", [], 1,
                       [r"network request to http://example\.com/ckptscope-fixture\.png \[Image\]"],
                       [LOAD_FAILED + r"http://example\.com/ckptscope-fixture\.png"]),
    "external_script": ("external_script.html", [], 1,
                        [r"network request to https://cdn\.example\.org/ckptscope-fixture/chart\.min\.js "
                         r"\[Script\]"],
                        [LOAD_FAILED + r"https://cdn\.example\.org/"]),
    "fetch": ("fetch.html", [], 1,
              [r"network request to http://fetch\.example\.net/ckptscope-fixture\.json \[Fetch\]"],
              [LOAD_FAILED + r"http://fetch\.example\.net/"]),
    "console_error": ("console_error.html", [], 1,
                      [r"console console\.error: ckptscope-fixture: console\.error called at .*console_error\.html:7",
                       r"console uncaught exception: Error: ckptscope-fixture: uncaught exception at "
                       r".*console_error\.html:10"],
                      []),
    "missing_selector": ("clean.html", ["--expect", "#job", "--expect", "#nope"], 1,
                         [r"expected selector not found in the rendered page: #nope$"], []),
    # Beyond the brief's list: the paths that only one of the two request
    # detectors sees.
    "preconnect": ("preconnect.html", [], 1,
                   [r"network connection to https://preconnect\.example\.org in Chromium's network log"], []),
    "worker_fetch": ("worker_fetch.html", [], 1,
                     [r"network request to http://worker\.example\.net/ckptscope-fixture\.json \[Fetch\]"],
                     [LOAD_FAILED + r"http://worker\.example\.net/"]),
    "websocket": ("websocket.html", [], 1,
                  [r"network request to ws://ws\.example\.net/ckptscope-fixture \[WebSocket\]"],
                  [r"console browser network\.error: WebSocket connection to 'ws://ws\.example\.net/"
                   r"ckptscope-fixture' failed"]),
    "no_chromium": ("clean.html", ["--chromium", "/nonexistent/chromium"], 2, [], []),
}


def png_size(path):
    data = pathlib.Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    return struct.unpack(">II", data[16:24])


def run_case(name, out_dir, chromium, timeout):
    fixture, extra, want_rc, must, may = CASES[name]
    cmd = [sys.executable, str(CHECK), "--html", str(FIX / fixture), "--timeout", str(timeout)] + extra
    shot = None
    if name == "clean":
        shot = pathlib.Path(out_dir) / "clean.png"
        if shot.exists():
            shot.unlink()
        cmd += ["--screenshot", str(shot)]
    if chromium and "--chromium" not in extra:
        cmd += ["--chromium", chromium]
    print(f"self_test[{name}]: $ {' '.join(cmd)}", flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout * 3 + 30)
    out = proc.stdout
    print("\n".join("    | " + line for line in out.splitlines()), flush=True)
    errors = []
    if proc.returncode != want_rc:
        errors.append(f"exit status {proc.returncode}, expected {want_rc}")
    fails = [m.group(1) for m in re.finditer(r"^check_html: FAIL: (.*)$", out, re.M)]
    for pattern in must:
        if not any(re.search(pattern, f) for f in fails):
            errors.append(f"no FAIL line matches {pattern!r}")
    for f in fails:
        if not any(re.search(p, f) for p in must + may):
            errors.append(f"unexpected FAIL line (wrong reason): {f}")
    if want_rc == 0:
        if not re.search(r": clean \(", out):
            errors.append("no 'clean' verdict")
        n = sum(1 for a in extra if a == "--expect")
        if f"{n}/{n} expected selector(s) found" not in out:
            errors.append(f"not all {n} selectors reported found")
        if not re.search(r"^check_html: 1 request\(s\) seen by the page: Document file://", out, re.M):
            errors.append("the page's own request was not seen (is the Network domain watched?)")
        if not re.search(r"\[console\.log\] clean fixture", out):
            errors.append("the fixture's console.log was not seen (is the console watched?)")
    if want_rc == 2 and "chromium not found" not in out:
        errors.append("exit 2 without naming the missing chromium")
    if shot is not None:
        try:
            w, h = png_size(shot)
            if w < 1400 or h < 2000 or shot.stat().st_size < 1000:
                errors.append(f"screenshot {shot} is {w}x{h}, {shot.stat().st_size} bytes")
        except (OSError, ValueError) as e:
            errors.append(f"screenshot {shot}: {e}")
    for e in errors:
        print(f"self_test[{name}]: FAIL: {e}", flush=True)
    if not errors:
        why = "passes" if want_rc == 0 else f"exits {want_rc}, for the right reason"
        print(f"self_test[{name}]: ok ({why})", flush=True)
    return not errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", action="append", choices=sorted(CASES), help="run only this case (repeatable)")
    ap.add_argument("--out", help="where the clean case's screenshot goes (default: a temporary directory)")
    ap.add_argument("--chromium", help="passed on to check_html.py")
    ap.add_argument("--timeout", type=float, default=60.0, help="passed on to check_html.py (default 60)")
    args = ap.parse_args()
    cases = args.case or list(CASES)
    with tempfile.TemporaryDirectory(prefix="check_html_self_test.") as tmp:
        out = args.out or tmp
        os.makedirs(out, exist_ok=True)
        failed = [c for c in cases if not run_case(c, out, args.chromium, args.timeout)]
    print(f"self_test: {len(cases) - len(failed)}/{len(cases)} case(s) ok"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
