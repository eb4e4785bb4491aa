#!/usr/bin/env bash
# clang-format (every C, C++ and BPF file) and clang-tidy (our C++), as CI runs them.
# Needs a built build/ (compile_commands.json, and ninja's dependency data for
# the diff-based tidy).
#
#   scripts/lint.sh                          clang-tidy only the TUs that changed since
#                                            .ci/tidy-clean-at, closed over their headers
#   scripts/lint.sh --full                   clang-tidy every TU
#   scripts/lint.sh [--full] --update-marker on a committed tree, when clean, point the
#                                            marker at HEAD
#
# scripts/tidy_targets.py says which TUs and why (docs/ci.md).
set -euo pipefail
cd "$(dirname "$0")/.."

full=()
update_marker=0
for arg in "$@"; do
  case "$arg" in
    --full) full=(--full) ;;
    --update-marker) update_marker=1 ;;
    -h | --help)
      sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "lint: unknown argument $arg (--full, --update-marker)" >&2
      exit 2
      ;;
  esac
done
# Without --full the marker can still move: a TU the selection leaves out has
# the same source, headers and fingerprint as at the old marker's commit, where
# it was clean, so it is clean at HEAD too; the ones it picks are checked here.
# The marker names HEAD, so the run must check HEAD: refused up front on a
# tree that differs from it (write-marker checks again at the end).
if [ "$update_marker" -eq 1 ] && ! git diff --quiet HEAD -- . ':(exclude).ci/tidy-clean-at'; then
  echo "lint: --update-marker: the working tree differs from HEAD; commit first" >&2
  exit 2
fi

# One clang-format a file (its exit status says which file is off), $(nproc)
# at a time: 437 files took 150 s one by one on 2 busy cores.
format_start=$(date +%s)
mapfile -t bad < <(git ls-files -z '*.c' '*.h' '*.cpp' |
  xargs -0 -P "$(nproc)" -n 16 sh -c 'for f; do clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || echo "$f"; done' _ |
  sort)
echo "lint: clang-format took $(($(date +%s) - format_start)) s"
if [ "${#bad[@]}" -gt 0 ]; then
  echo "lint: not clang-formatted (run clang-format -i):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "lint: clang-format clean"

# The tree reads bottom-up (README: Layout): no include runs up a layer.
python3 scripts/check_layering.py
# JSON is written and read one way (userspace/json/json_io.h): a raw dump()
# or json::parse aborts on hostile bytes or numbers.
python3 scripts/check_json_io.py
# A binary of unit tests is declared with ckpt_unit_tests (CMakeLists.txt),
# which puts it in the sanitizer tree's build: one labelled unit any other way
# would be left out of that run without a failure. A file that labels tests
# unit by hand (fuzz_replay's) says ckpt_unit_test_binary too.
stray=()
while IFS= read -r f; do
  [ "$f" = CMakeLists.txt ] && continue
  grep -q 'ckpt_unit_test_binary(' "$f" || stray+=("$f")
done < <(git grep -l 'LABELS unit' -- 'CMakeLists.txt' '*/CMakeLists.txt' '*.cmake')
if [ "${#stray[@]}" -gt 0 ]; then
  echo "lint: tests labelled unit outside ckpt_unit_tests (CMakeLists.txt), so not in the sanitizer run:" >&2
  printf '  %s\n' "${stray[@]}" >&2
  exit 1
fi
echo "unit tests: every binary labelled unit is in unit_test_binaries"
# The TU selection below is only as good as its own tests (a real ninja
# build with known includes): a few seconds.
if ! selection_test=$(python3 scripts/tidy_targets_test.py 2>&1); then
  echo "$selection_test" >&2
  echo "lint: scripts/tidy_targets_test.py failed" >&2
  exit 1
fi
echo "lint: tidy_targets_test: $(grep -E '^Ran ' <<<"$selection_test")"

[ -f build/compile_commands.json ] || { echo "lint: configure build/ first (cmake --preset default)" >&2; exit 1; }
# cupti/ is built (and so checked) only where CMake found the CUDA toolkit.
cupti=()
grep -q '/cupti/session.cpp' build/compile_commands.json && cupti=('cupti/*.cpp')
candidates=$(git ls-files 'userspace/*.cpp' 'exporters/*.cpp' 'analysis/*.cpp' 'apps/*.cpp' 'tools/*.cpp' "${cupti[@]}")
# Prints what it chose and why on stderr; exits 2 (saying why) when it cannot tell.
selected=$(python3 scripts/tidy_targets.py select "${full[@]}" <<<"$candidates")
count=$(grep -c . <<<"$selected" || true)

tidy_start=$(date +%s)
log=$(mktemp)
if [ "$count" -gt 0 ]; then
  # Biggest first: the slow TUs (clang-analyzer on analysis/) start early and
  # the two workers end together.
  while IFS= read -r f; do
    printf '%s %s\n' "$(stat -c %s "$f" 2>/dev/null || echo 0)" "$f"
  done <<<"$selected" | sort -rn | cut -d' ' -f2- |
    xargs -P "$(nproc)" -n 1 clang-tidy -p build --quiet >"$log" 2>/dev/null || true
fi
echo "lint: clang-tidy over $count TUs took $(($(date +%s) - tidy_start)) s"
# Findings inside generated code (bpftool's skeletons under build/) are not ours.
findings=$(grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log" | grep -v "^$PWD/build" | sort -u || true)
rm -f "$log"
if [ -n "$findings" ]; then
  echo "lint: clang-tidy findings:" >&2
  echo "$findings" >&2
  exit 1
fi
echo "lint: clang-tidy clean"
if [ "$update_marker" -eq 1 ]; then
  python3 scripts/tidy_targets.py write-marker <<<"$candidates"
fi
