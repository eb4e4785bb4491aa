#!/usr/bin/env python3
"""JSON is written and read one way: userspace/json/json_io.h (issue 22).

nlohmann::json::dump() throws type_error.316 on the first invalid UTF-8 byte,
and json::parse() throws on bad syntax and on numbers no double holds (1e400);
either, uncaught, aborts a root daemon or a reader. Outside userspace/json/,
the program code calls dump_json() and parse_json()/read_json() instead.
tests/, bench/ and tools/ are not checked: they dump what they built.

Usage: check_json_io.py [--root DIR]. Exit 1 with one line per raw call.
"""
import argparse
import pathlib
import re
import sys

CHECKED = ("userspace", "exporters", "analysis", "apps", "cupti")
ALLOWED = ("userspace/json/",)
RAW = [
    (re.compile(r"\.dump\s*\("), "dump() throws on invalid UTF-8: use dump_json()"),
    (re.compile(r"\bjson::parse\s*\("), "json::parse throws: use parse_json()"),
    (re.compile(r"\bjson::accept\s*\("), None),  # never throws: fine
]
COMMENT = re.compile(r"//.*$")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent)
    root = pathlib.Path(ap.parse_args().root)
    problems = []
    for top in CHECKED:
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in (".cpp", ".h", ".cc") or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            if rel.startswith(ALLOWED):
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                code = COMMENT.sub("", line)
                for pattern, why in RAW:
                    if why and pattern.search(code):
                        problems.append(f"{rel}:{number}: {why}")
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"json-io: {len(problems)} raw JSON call(s) outside userspace/json/", file=sys.stderr)
        return 1
    print("json-io: every JSON write and read goes through userspace/json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
