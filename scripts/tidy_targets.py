#!/usr/bin/env python3
"""Which translation units scripts/lint.sh must clang-tidy: the diff since the
tree was last clang-tidy clean, closed over the build's own header
dependencies.

The marker (.ci/tidy-clean-at) names the commit at which every TU was clean,
the clang-tidy and compiler that said so, and one fingerprint per TU: its
compile command and the contents of every header it reads from outside the
source tree (system and third-party headers, and generated ones such as the
BPF skeletons under build/). A TU is checked again when

  * the TU itself changed since that commit (git diff, working tree included),
  * any in-tree file its object depends on changed (`ninja -t deps`: exactly
    the headers the compiler read, so a changed header pulls exactly the TUs
    that include it, directly or not),
  * its fingerprint differs (new TU, other flags, an upgraded library header,
    a regenerated skeleton), or the build has no valid dependency data for it
    (never built, or built before its sources last changed).

A TU the marker does not list (new, or left out of a partial marker: one
written from a full run that checked only some TUs) is checked every time.

Everything is checked when --full is given, .clang-tidy changed, clang-tidy
or the compiler is another version, or the marker's commit is not in this
history (a shallow clone, a rewritten branch): the diff would not be sound.

  tidy_targets.py select       [--full]  < candidates   -> TUs to check, on stdout
  tidy_targets.py write-marker           < candidates   -> rewrites the marker for HEAD

Candidates (the TUs lint.sh is responsible for, repository-relative) come on
stdin, one a line. Why each TU was chosen goes to stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

MARKER_HEADER = (
    "# The commit at which every C++ TU was last clang-tidy clean, the tools that\n"
    "# said so and one fingerprint per TU (compile command + headers from outside\n"
    "# the tree). Written by `scripts/lint.sh [--full] --update-marker`; read by\n"
    "# scripts/tidy_targets.py to check only what changed since.\n"
)
# Files whose change makes every TU's result suspect.
CONFIG_FILES = (".clang-tidy",)


class SelectionError(Exception):
    pass


@dataclass
class TuDeps:
    valid: bool
    paths: list[str]  # absolute, normalised


@dataclass
class Marker:
    commit: str = ""
    clang_tidy: str = ""
    compiler: str = ""
    fingerprints: dict[str, str] = field(default_factory=dict)  # repo-relative TU -> digest


def run(cmd: list[str], cwd: Path | None = None) -> str:
    return subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout


# ---------------------------------------------------------------- ninja deps


def parse_ninja_deps(text: str, build_dir: Path) -> dict[str, TuDeps]:
    """`ninja -t deps` output -> object (as build.ninja names it) -> its deps.

    Each record is a header line `OBJ: #deps N, deps mtime T (VALID|STALE)`
    followed by one indented path a line and a blank line."""
    deps: dict[str, TuDeps] = {}
    current: TuDeps | None = None
    for line in text.splitlines():
        if not line.strip():
            current = None
            continue
        if line[0].isspace():
            if current is None:
                raise SelectionError(f"ninja -t deps: a path outside any record: {line!r}")
            current.paths.append(os.path.normpath(build_dir / line.strip()))
            continue
        obj, sep, rest = line.partition(": #deps ")
        if not sep:
            raise SelectionError(f"ninja -t deps: unexpected line: {line!r}")
        current = TuDeps(valid=rest.rstrip().endswith("(VALID)"), paths=[])
        deps[obj] = current
    return deps


def ninja_deps(build_dir: Path) -> dict[str, TuDeps]:
    return parse_ninja_deps(run(["ninja", "-C", str(build_dir), "-t", "deps"]), build_dir)


# ------------------------------------------------------- compile_commands.json


@dataclass
class CompileEntry:
    source: str  # repo-relative
    obj: str  # relative to the build dir, as ninja names it
    command: list[str]


def compile_entries(build_dir: Path, repo: Path) -> dict[str, list[CompileEntry]]:
    """compile_commands.json -> repo-relative source -> its objects and commands
    (one a target that compiles it)."""
    path = build_dir / "compile_commands.json"
    try:
        entries = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise SelectionError(f"{path}: {error}") from error
    result: dict[str, list[CompileEntry]] = {}
    for entry in entries:
        args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
        directory = Path(entry["directory"])
        obj = entry.get("output")
        if obj is None and "-o" in args:
            obj = args[args.index("-o") + 1]
        if obj is None:
            raise SelectionError(f"{path}: no object for {entry['file']}")
        obj_abs = os.path.normpath(directory / obj)
        source = os.path.relpath(os.path.normpath(directory / entry["file"]), repo)
        result.setdefault(source, []).append(
            CompileEntry(source, os.path.relpath(obj_abs, build_dir), args))
    return result


# ---------------------------------------------------------------- fingerprint


class Fingerprinter:
    """One TU's digest: its compile command and the contents of the headers it
    reads from outside the source tree, with the checkout's own paths written
    as placeholders so that two clones agree."""

    def __init__(self, repo: Path, build_dir: Path):
        self.repo = str(repo)
        self.build = str(build_dir)
        self.file_digests: dict[str, str] = {}

    def normalise(self, text: str) -> str:
        return text.replace(self.build, "<build>").replace(self.repo, "<src>")

    def file_digest(self, path: str) -> str:
        if path not in self.file_digests:
            try:
                data = Path(path).read_bytes()
            except OSError:
                data = b"<missing>"
            if path.startswith(self.build + os.sep):
                data = data.replace(self.build.encode(), b"<build>").replace(
                    self.repo.encode(), b"<src>")
            self.file_digests[path] = hashlib.sha256(data).hexdigest()
        return self.file_digests[path]

    def in_tree(self, path: str) -> bool:
        return path.startswith(self.repo + os.sep) and not path.startswith(self.build + os.sep)

    def tu(self, entry: CompileEntry, deps: TuDeps) -> str:
        digest = hashlib.sha256()
        # The object's path is where the output goes, not how the TU reads;
        # -g* (-g, -g1, -gline-tables-only, -gdwarf-4) only says how much
        # debug info the object gets: no macro, no diagnostic depends on it.
        command = [arg for i, arg in enumerate(entry.command)
                   if arg != "-o" and (i == 0 or entry.command[i - 1] != "-o")
                   and not arg.startswith("-g")]
        digest.update(self.normalise(" ".join(command)).encode())
        for path in sorted(set(deps.paths)):
            if not self.in_tree(path):
                digest.update(f"\0{self.normalise(path)}\0{self.file_digest(path)}".encode())
        return digest.hexdigest()[:16]


def tu_deps(entries: list[CompileEntry], deps_by_obj: dict[str, TuDeps]) -> list[TuDeps] | None:
    """The dependency records of every object built from one TU, or None when
    the build has no valid record for one of them (never built, or stale)."""
    found = [deps_by_obj.get(entry.obj) for entry in entries]
    if not found or any(deps is None or not deps.valid for deps in found):
        return None
    return found  # type: ignore[return-value]


def tu_fingerprint(fingerprinter: Fingerprinter, entries: list[CompileEntry],
                   deps: list[TuDeps]) -> str:
    if len(entries) == 1:
        return fingerprinter.tu(entries[0], deps[0])
    parts = sorted(fingerprinter.tu(entry, d) for entry, d in zip(entries, deps))
    return hashlib.sha256(" ".join(parts).encode()).hexdigest()[:16]


# ---------------------------------------------------------------- git, tools


def git(repo: Path, *args: str) -> str:
    return run(["git", "-C", str(repo), *args])


def commit_in_history(repo: Path, commit: str) -> bool:
    if not commit:
        return False
    probe = subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor", commit, "HEAD"],
                           capture_output=True)
    return probe.returncode == 0


def changed_since(repo: Path, commit: str) -> set[str]:
    """Repository-relative paths that differ between COMMIT and the working
    tree (both sides of a rename), plus files git does not track yet."""
    changed = git(repo, "diff", "--no-renames", "--name-only", commit, "--").splitlines()
    untracked = git(repo, "ls-files", "--others", "--exclude-standard").splitlines()
    return {p for p in changed + untracked if p}


def first_line(cmd: list[str]) -> str:
    try:
        out = run(cmd)
    except (OSError, subprocess.CalledProcessError) as error:
        raise SelectionError(f"{' '.join(cmd)}: {error}") from error
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    return " ".join(lines[:2]) if cmd[0].endswith("clang-tidy") else (lines[0] if lines else "")


def tool_versions(entries: dict[str, list[CompileEntry]]) -> tuple[str, str]:
    compilers = sorted({entry.command[0] for tu in entries.values() for entry in tu})
    compiler = "; ".join(first_line([c, "--version"]) for c in compilers)
    return first_line(["clang-tidy", "--version"]), compiler


# ---------------------------------------------------------------- marker


def read_marker(path: Path) -> Marker:
    marker = Marker()
    try:
        text = path.read_text()
    except FileNotFoundError:
        return marker
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        key, _, value = line.partition(" ")
        if key == "commit":
            marker.commit = value.strip()
        elif key == "clang-tidy":
            marker.clang_tidy = value.strip()
        elif key == "compiler":
            marker.compiler = value.strip()
        elif key == "tu":
            digest, _, tu = value.partition(" ")
            marker.fingerprints[tu.strip()] = digest
        else:
            raise SelectionError(f"{path}:{number}: unknown key {key!r}")
    return marker


def format_marker(marker: Marker) -> str:
    lines = [MARKER_HEADER.rstrip("\n"), f"commit {marker.commit}",
             f"clang-tidy {marker.clang_tidy}", f"compiler {marker.compiler}"]
    lines += [f"tu {digest} {tu}" for tu, digest in sorted(marker.fingerprints.items())]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- selection


@dataclass
class Selection:
    full_reason: str = ""
    changed_tus: list[str] = field(default_factory=list)
    through_headers: dict[str, list[str]] = field(default_factory=dict)  # TU -> changed deps
    fingerprint_changed: list[str] = field(default_factory=list)
    not_in_marker: list[str] = field(default_factory=list)  # never checked clean
    no_deps: list[str] = field(default_factory=list)
    changed_files: int = 0

    def tus(self, candidates: list[str]) -> list[str]:
        if self.full_reason:
            return list(candidates)
        chosen = (set(self.changed_tus) | set(self.through_headers) |
                  set(self.fingerprint_changed) | set(self.not_in_marker) | set(self.no_deps))
        return [tu for tu in candidates if tu in chosen]


def select(repo: Path, build_dir: Path, marker: Marker, candidates: list[str], *,
           full: bool, versions: tuple[str, str] | None = None) -> Selection:
    repo, build_dir = repo.resolve(), build_dir.resolve()
    entries = compile_entries(build_dir, repo)
    selection = Selection()
    clang_tidy, compiler = versions or tool_versions(entries)
    if full:
        selection.full_reason = "--full"
    elif not marker.commit:
        selection.full_reason = "no marker commit"
    elif not commit_in_history(repo, marker.commit):
        selection.full_reason = f"marker commit {marker.commit[:12]} is not in this history"
    elif clang_tidy != marker.clang_tidy:
        selection.full_reason = f"clang-tidy is now {clang_tidy!r}, marker has {marker.clang_tidy!r}"
    elif compiler != marker.compiler:
        selection.full_reason = f"compiler is now {compiler!r}, marker has {marker.compiler!r}"
    if selection.full_reason:
        return selection
    changed = changed_since(repo, marker.commit)
    selection.changed_files = len(changed)
    config = sorted(set(CONFIG_FILES) & changed | {p for p in changed if p.endswith("/.clang-tidy")})
    if config:
        selection.full_reason = f"{', '.join(config)} changed"
        return selection
    deps_by_obj = ninja_deps(build_dir)
    fingerprinter = Fingerprinter(repo, build_dir)
    changed_abs = {os.path.normpath(repo / p) for p in changed}
    for tu in candidates:
        tu_entries = entries.get(tu, [])
        deps = tu_deps(tu_entries, deps_by_obj)
        if tu in changed:
            selection.changed_tus.append(tu)
        if deps is None:
            selection.no_deps.append(tu)
            continue
        hit = sorted({os.path.relpath(p, repo) for d in deps for p in d.paths
                      if p in changed_abs} - {tu})
        if hit:
            selection.through_headers[tu] = hit
        if tu not in marker.fingerprints:
            selection.not_in_marker.append(tu)
        elif tu_fingerprint(fingerprinter, tu_entries, deps) != marker.fingerprints[tu]:
            selection.fingerprint_changed.append(tu)
    return selection


def explain(selection: Selection, candidates: list[str], marker: Marker) -> str:
    chosen = selection.tus(candidates)
    if selection.full_reason:
        return f"tidy: all {len(chosen)} TUs ({selection.full_reason})"
    lines = [
        f"tidy: {len(chosen)} of {len(candidates)} TUs, since {marker.commit[:12]} "
        f"({selection.changed_files} files changed): {len(selection.changed_tus)} TUs changed, "
        f"{len(set(selection.through_headers) - set(selection.changed_tus))} more through headers, "
        f"{len(selection.fingerprint_changed)} with another compile command or outside header, "
        f"{len(selection.not_in_marker)} not in the marker, "
        f"{len(selection.no_deps)} without dependency data"]
    for tu in selection.changed_tus:
        lines.append(f"  {tu}: changed")
    for tu, headers in sorted(selection.through_headers.items()):
        shown = ", ".join(headers[:3]) + (f" and {len(headers) - 3} more" if len(headers) > 3 else "")
        lines.append(f"  {tu}: includes {shown}")
    for tu in selection.fingerprint_changed:
        lines.append(f"  {tu}: compile command or outside header differs from the marker's")
    for tu in selection.not_in_marker:
        lines.append(f"  {tu}: not in the marker (new, or never checked clean)")
    for tu in selection.no_deps:
        lines.append(f"  {tu}: no valid dependency data in the build (not built, or stale)")
    return "\n".join(lines)


def write_marker(repo: Path, build_dir: Path, path: Path, candidates: list[str],
                 versions: tuple[str, str] | None = None) -> Marker:
    """The marker for HEAD, after a clean full run. Refused when the working
    tree differs from HEAD (the run would not have checked HEAD) or a TU has
    no valid dependency data (its fingerprint would be unknown)."""
    repo, build_dir = repo.resolve(), build_dir.resolve()
    marker_rel = os.path.relpath(path.resolve(), repo)
    dirty = [p for p in git(repo, "diff", "--name-only", "HEAD", "--").splitlines()
             if p and p != marker_rel]
    if dirty:
        raise SelectionError("the working tree differs from HEAD (" + ", ".join(dirty[:5]) +
                             "): commit first, then run --full --update-marker")
    entries = compile_entries(build_dir, repo)
    deps_by_obj = ninja_deps(build_dir)
    fingerprinter = Fingerprinter(repo, build_dir)
    marker = Marker(commit=git(repo, "rev-parse", "HEAD").strip())
    marker.clang_tidy, marker.compiler = versions or tool_versions(entries)
    missing = []
    for tu in candidates:
        tu_entries = entries.get(tu, [])
        deps = tu_deps(tu_entries, deps_by_obj)
        if deps is None:
            missing.append(tu)
            continue
        marker.fingerprints[tu] = tu_fingerprint(fingerprinter, tu_entries, deps)
    if missing:
        raise SelectionError("no valid dependency data for " + ", ".join(missing[:5]) +
                             ": build everything first (cmake --build --preset default)")
    path.write_text(format_marker(marker))
    return marker


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["select", "write-marker"])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--build", type=Path, default=None, help="build dir (default REPO/build)")
    parser.add_argument("--marker", type=Path, default=None,
                        help="marker file (default REPO/.ci/tidy-clean-at)")
    parser.add_argument("--full", action="store_true", help="every candidate")
    args = parser.parse_args()
    build_dir = args.build or args.repo / "build"
    marker_path = args.marker or args.repo / ".ci" / "tidy-clean-at"
    candidates = [line.strip() for line in sys.stdin if line.strip()]
    try:
        if args.action == "write-marker":
            marker = write_marker(args.repo, build_dir, marker_path, candidates)
            print(f"tidy: {marker_path} now names {marker.commit[:12]} "
                  f"({len(marker.fingerprints)} TUs)", file=sys.stderr)
            return 0
        marker = read_marker(marker_path)
        selection = select(args.repo, build_dir, marker, candidates, full=args.full)
    except (SelectionError, subprocess.CalledProcessError, OSError) as error:
        detail = getattr(error, "stderr", "") or ""
        print(f"tidy_targets: {error} {detail}".rstrip(), file=sys.stderr)
        return 2
    print(explain(selection, candidates, marker), file=sys.stderr)
    for tu in selection.tus(candidates):
        print(tu)
    return 0


if __name__ == "__main__":
    sys.exit(main())
