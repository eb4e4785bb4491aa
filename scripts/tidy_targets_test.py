#!/usr/bin/env python3
"""scripts/tidy_targets.py on a real build: a small C++ tree compiled by ninja
with gcc depfiles (the build's own `ninja -t deps` output and
`ninja -t compdb`), in a real git repository. The include graph is known, so
the TUs a change must pull are known:

    a.h <- b.h <- x.cpp        z.cpp -> a.h        y.cpp -> c.h
    w.cpp -> <outside/ext.h> (a header from outside the tree)
    v.cpp -> build/gen/gen.h (generated into the build, as the BPF skeletons are;
             it names the build directory, as generated code does)

Run by scripts/lint.sh before it tidies; `python3 scripts/tidy_targets_test.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tidy_targets  # noqa: E402

VERSIONS = ("clang-tidy 14.0.6", "c++ 12.2.0")
SOURCES = {
    "src/a.h": "#pragma once\ninline int a() { return 1; }\n",
    "src/b.h": '#pragma once\n#include "a.h"\ninline int b() { return a() + 1; }\n',
    "src/c.h": "#pragma once\ninline int c() { return 3; }\n",
    "src/x.cpp": '#include "b.h"\nint x() { return b(); }\n',
    "src/y.cpp": '#include "c.h"\nint y() { return c(); }\n',
    "src/z.cpp": '#include "a.h"\nint z() { return a(); }\n',
    "src/w.cpp": "#include <ext.h>\nint w() { return ext(); }\n",
    "src/v.cpp": '#include "gen.h"\nint v() { return gen(); }\n',
    ".clang-tidy": "Checks: '-*,bugprone-*'\n",
}
CANDIDATES = ["src/v.cpp", "src/w.cpp", "src/x.cpp", "src/y.cpp", "src/z.cpp"]


def sh(cmd: list[str], cwd: Path) -> str:
    return subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout


@unittest.skipUnless(shutil.which("ninja") and shutil.which("c++") and shutil.which("git"),
                     "needs ninja, c++ and git")
class TidySelectionTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="tidy_targets_test."))
        self.repo = self.tmp / "repo"
        self.outside = self.tmp / "outside"
        self.build = self.repo / "build"
        self.outside.mkdir()
        (self.outside / "ext.h").write_text("#pragma once\ninline int ext() { return 4; }\n")
        for rel, text in SOURCES.items():
            (self.repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.repo / rel).write_text(text)
        (self.repo / ".gitignore").write_text("build/\n")
        self.build.mkdir()
        self.write_generated("1")
        self.write_ninja(extra_flags={})
        sh(["git", "init", "-q"], self.repo)
        sh(["git", "add", "."], self.repo)
        self.commit("tree")
        self.marker_path = self.repo / ".ci" / "tidy-clean-at"
        self.marker_path.parent.mkdir()
        self.marker = tidy_targets.write_marker(self.repo, self.build, self.marker_path, CANDIDATES,
                                                versions=VERSIONS)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def commit(self, message: str):
        sh(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message], self.repo)

    def write_generated(self, value: str, build: Path | None = None):
        gen = (build or self.build) / "gen"
        gen.mkdir(exist_ok=True)
        (gen / "gen.h").write_text(f"#pragma once\n// generated in {build or self.build}\n"
                                   f"inline int gen() {{ return {value}; }}\n")

    def write_ninja(self, extra_flags: dict[str, str], sources=("v", "w", "x", "y", "z"),
                    build: Path | None = None):
        # Absolute paths, as CMake writes them: the clone test needs them.
        build = build or self.build
        src = build.parent.resolve() / "src"
        rules = ["rule cxx",
                 f"  command = c++ -I{src} -I{build.resolve()}/gen -I{self.outside} $flags"
                 " -MD -MF $out.d -c $in -o $out",
                 "  depfile = $out.d", "  deps = gcc", ""]
        for name in sources:
            rules.append(f"build obj/{name}.o: cxx {src}/{name}.cpp")
            rules.append(f"  flags = {extra_flags.get(name, '')}")
        (build / "build.ninja").write_text("\n".join(rules) + "\n")
        sh(["ninja"], build)
        (build / "compile_commands.json").write_text(sh(["ninja", "-t", "compdb", "cxx"], build))

    def selected(self, full=False, versions=VERSIONS, repo: Path | None = None) -> list[str]:
        repo = repo or self.repo
        marker = tidy_targets.read_marker(repo / ".ci" / "tidy-clean-at")
        selection = tidy_targets.select(repo, repo / "build", marker, CANDIDATES, full=full,
                                        versions=versions)
        return selection.tus(CANDIDATES)

    def edit(self, rel: str, text: str):
        path = self.repo / rel
        path.write_text(path.read_text() + text)

    # ------------------------------------------------------------ the deps

    def test_real_ninja_deps_are_the_includes(self):
        deps = tidy_targets.ninja_deps(self.build.resolve())
        src = self.repo.resolve() / "src"
        x = {Path(p) for p in deps["obj/x.o"].paths}
        self.assertTrue(deps["obj/x.o"].valid)
        self.assertLessEqual({src / "x.cpp", src / "b.h", src / "a.h"}, x)
        self.assertNotIn(src / "c.h", x)
        self.assertIn(self.outside.resolve() / "ext.h", {Path(p) for p in deps["obj/w.o"].paths})

    def test_marker_round_trips(self):
        again = tidy_targets.read_marker(self.marker_path)
        self.assertEqual(again.commit, sh(["git", "rev-parse", "HEAD"], self.repo).strip())
        self.assertEqual(sorted(again.fingerprints), CANDIDATES)
        self.assertEqual(again.fingerprints, self.marker.fingerprints)

    # ------------------------------------------------------------ the diff

    def test_nothing_changed_checks_nothing(self):
        self.assertEqual(self.selected(), [])

    def test_changed_header_pulls_exactly_its_includers(self):
        # a.h: x.cpp through b.h, z.cpp directly; not y.cpp, not w.cpp.
        self.edit("src/a.h", "inline int a2() { return 2; }\n")
        self.assertEqual(self.selected(), ["src/x.cpp", "src/z.cpp"])

    def test_changed_header_of_one_tu(self):
        self.edit("src/c.h", "// c\n")
        self.assertEqual(self.selected(), ["src/y.cpp"])

    def test_intermediate_header_pulls_only_its_includers(self):
        self.edit("src/b.h", "// b\n")
        self.assertEqual(self.selected(), ["src/x.cpp"])

    def test_changed_tu_alone(self):
        self.edit("src/z.cpp", "int z2() { return 0; }\n")
        self.assertEqual(self.selected(), ["src/z.cpp"])

    def test_committed_change_counts_too(self):
        self.edit("src/c.h", "// c\n")
        sh(["git", "add", "."], self.repo)
        self.commit("c")
        self.assertEqual(self.selected(), ["src/y.cpp"])

    # ------------------------------------------------------ fingerprints

    def test_other_flags_recheck_that_tu(self):
        self.write_ninja(extra_flags={"y": "-DFOO=1"})
        self.assertEqual(self.selected(), ["src/y.cpp"])

    def test_debug_info_level_rechecks_nothing(self):
        # -g, -g1, -ggdb change only the object's debug info,
        # never what clang-tidy reads; -O2 does (it defines __OPTIMIZE__).
        self.write_ninja(extra_flags={"x": "-g1", "y": "-ggdb", "z": "-g -O2"})
        self.assertEqual(self.selected(), ["src/z.cpp"])

    def test_outside_header_change_rechecks_its_includers(self):
        (self.outside / "ext.h").write_text("#pragma once\ninline int ext() { return 5; }\n")
        self.assertEqual(self.selected(), ["src/w.cpp"])

    def test_regenerated_header_rechecks_its_includers(self):
        self.write_generated("2")
        sh(["ninja"], self.build)
        self.assertEqual(self.selected(), ["src/v.cpp"])

    def test_another_clone_elsewhere_agrees_with_the_marker(self):
        # CI checks a fresh clone at another path: the same commit, built
        # there, matches the marker written here (paths are placeholders).
        sh(["git", "add", ".ci"], self.repo)
        self.commit("marker")
        clone = self.tmp / "elsewhere" / "clone"
        sh(["git", "clone", "-q", str(self.repo), str(clone)], self.tmp)
        (clone / "build").mkdir()
        self.write_generated("1", build=clone / "build")
        self.write_ninja(extra_flags={}, build=clone / "build")
        self.assertEqual(self.selected(repo=clone), [])
        (clone / "src" / "c.h").write_text((clone / "src" / "c.h").read_text() + "// c\n")
        self.assertEqual(self.selected(repo=clone), ["src/y.cpp"])

    def test_unbuilt_tu_is_checked(self):
        # compile_commands names it, the build never compiled it: no deps.
        self.write_ninja(extra_flags={}, sources=("v", "x", "y", "z"))
        (self.build / "obj" / "w.o").unlink()
        entries = json.loads((self.build / "compile_commands.json").read_text())
        src = self.repo.resolve() / "src"
        entries.append({"directory": str(self.build), "file": f"{src}/w.cpp",
                        "command": f"c++ -I{src} -I{self.outside} -c {src}/w.cpp -o obj/w.o"})
        (self.build / "compile_commands.json").write_text(json.dumps(entries))
        sh(["ninja", "-t", "recompact"], self.build)
        self.assertEqual(self.selected(), ["src/w.cpp"])

    def test_tu_missing_from_the_marker_is_always_checked(self):
        # A partial marker (only some TUs checked clean) or a new TU.
        tidy_targets.write_marker(self.repo, self.build, self.marker_path,
                                  ["src/x.cpp", "src/y.cpp"], versions=VERSIONS)
        self.assertEqual(self.selected(), ["src/v.cpp", "src/w.cpp", "src/z.cpp"])
        self.edit("src/c.h", "// c\n")
        self.assertEqual(self.selected(), ["src/v.cpp", "src/w.cpp", "src/y.cpp", "src/z.cpp"])

    # --------------------------------------------------- everything again

    def test_clang_tidy_config_change_checks_all(self):
        self.edit(".clang-tidy", "WarningsAsErrors: '*'\n")
        self.assertEqual(self.selected(), CANDIDATES)

    def test_other_tool_versions_check_all(self):
        self.assertEqual(self.selected(versions=("clang-tidy 15.0.0", VERSIONS[1])), CANDIDATES)
        self.assertEqual(self.selected(versions=(VERSIONS[0], "c++ 13.1.0")), CANDIDATES)

    def test_marker_commit_outside_history_checks_all(self):
        text = self.marker_path.read_text().replace(self.marker.commit, "0" * 40)
        self.marker_path.write_text(text)
        self.assertEqual(self.selected(), CANDIDATES)

    def test_full_checks_all(self):
        self.assertEqual(self.selected(full=True), CANDIDATES)

    def test_marker_refused_on_a_dirty_tree(self):
        self.edit("src/c.h", "// c\n")
        with self.assertRaises(tidy_targets.SelectionError):
            tidy_targets.write_marker(self.repo, self.build, self.marker_path, CANDIDATES,
                                      versions=VERSIONS)


if __name__ == "__main__":
    unittest.main()
