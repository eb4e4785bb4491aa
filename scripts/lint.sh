#!/usr/bin/env bash
# clang-format (every C, C++ and BPF file) and clang-tidy (our C++), as CI runs them.
# Needs a configured build/ (for compile_commands.json).
set -euo pipefail
cd "$(dirname "$0")/.."

bad=()
while IFS= read -r f; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.c' '*.h' '*.cpp')
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

[ -f build/compile_commands.json ] || { echo "lint: configure build/ first (cmake --preset default)" >&2; exit 1; }
log=$(mktemp)
# cupti/ is built (and so checked) only where CMake found the CUDA toolkit.
cupti=()
grep -q '/cupti/session.cpp' build/compile_commands.json && cupti=('cupti/*.cpp')
git ls-files 'userspace/*.cpp' 'exporters/*.cpp' 'analysis/*.cpp' 'apps/*.cpp' 'tools/*.cpp' "${cupti[@]}" |
  xargs -P "$(nproc)" -n 4 clang-tidy -p build --quiet >"$log" 2>/dev/null || true
# Findings inside generated code (bpftool's skeletons under build/) are not ours.
findings=$(grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log" | grep -v "^$PWD/build" | sort -u || true)
rm -f "$log"
if [ -n "$findings" ]; then
  echo "lint: clang-tidy findings:" >&2
  echo "$findings" >&2
  exit 1
fi
echo "lint: clang-tidy clean"
