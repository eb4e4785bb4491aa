#!/usr/bin/env python3
"""The tree reads bottom-up as the data path: no file includes a folder above its own.

Each source folder has a rank (README.md: Layout). A file may include headers of
its own folder and of folders ranked lower; an include of a folder ranked higher,
or of a sibling that is not below it, is a layering error. tests/ and bench/ may
include anything they test; tools/workload stands alone (common/ only).

Usage: check_layering.py [--root DIR]. Exit 1 with one line per upward include.
"""
import argparse
import pathlib
import re
import sys

# folder -> rank along the data path. A file includes its own folder and lower
# ranks; folders of the same rank are siblings and include each other only
# where SIBLINGS_ALLOWED says so.
LAYERS = {
    "bpf": 0,
    "cupti": 0,
    "userspace/common": 0,
    "userspace/model": 1,
    "userspace/files": 1,
    "userspace/json": 2,
    "userspace/notify": 3,
    "userspace/config": 4,
    "userspace/probes": 5,
    "userspace/calibrate": 5,
    "userspace/sources": 6,
    "userspace/stitch": 6,
    "userspace/runner": 7,
    "exporters": 8,
    "analysis": 8,
    "apps/collector": 9,
    "apps/exporter": 9,
    "apps/cli": 10,
}
# Same-rank folders a folder may include: none today. Kept explicit so adding
# one is a visible decision.
SIBLINGS_ALLOWED = {}
# Include roots, in the order the build searches them (CMake: userspace/ and the
# repository root; bpf/ and the generated skeletons for the probes' headers).
INCLUDE_ROOTS = ["userspace", "", "bpf"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = ("*.c", "*.h", "*.cpp", "*.cc", "*.in")


def folder_of(rel: str):
    """The ranked folder a repository path belongs to (longest match), or None."""
    best = None
    for folder in LAYERS:
        if rel == folder or rel.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def resolve(root: pathlib.Path, including: pathlib.Path, name: str):
    """The repository path an include names, as the compiler would find it."""
    candidates = [including.parent / name] + [root / r / name for r in INCLUDE_ROOTS]
    for c in candidates:
        if c.is_file():
            return c.resolve().relative_to(root.resolve()).as_posix()
    return None  # generated (skeletons, vmlinux.h) or a system header


def violations(root: pathlib.Path):
    for folder in LAYERS:
        base = root / folder
        if not base.is_dir():
            continue
        for pattern in SOURCES:
            for path in sorted(base.rglob(pattern)):
                rel = path.relative_to(root).as_posix()
                own = folder_of(rel)
                if own != folder:
                    continue  # counted under its deeper folder
                text = path.read_text(errors="replace")
                for m in INCLUDE.finditer(text):
                    target = resolve(root, path, m.group(1))
                    if target is None:
                        continue
                    other = folder_of(target)
                    if other is None:
                        line = text.count("\n", 0, m.start()) + 1
                        yield f"{rel}:{line}: includes {target}, outside every library folder"
                        continue
                    if other == own or LAYERS[other] < LAYERS[own]:
                        continue
                    if other in SIBLINGS_ALLOWED.get(own, ()):
                        continue
                    line = text.count("\n", 0, m.start()) + 1
                    where = "above" if LAYERS[other] > LAYERS[own] else "beside"
                    yield (f"{rel}:{line}: includes {target}: {other} (rank {LAYERS[other]}) is "
                           f"{where} {own} (rank {LAYERS[own]})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent,
                        type=pathlib.Path)
    args = parser.parse_args()
    found = list(violations(args.root))
    for v in found:
        print(v, file=sys.stderr)
    if found:
        print(f"layering: {len(found)} include(s) run upward or sideways", file=sys.stderr)
        return 1
    print("layering: every include runs down the data path")
    return 0


if __name__ == "__main__":
    sys.exit(main())
