#!/usr/bin/env bash
# Every test: installs dependencies, builds, runs the unit tests, the
# real-kernel eBPF tests (as root), the workload's tests, the unit tests again
# under AddressSanitizer+UndefinedBehaviorSanitizer, the fuzz targets for a
# bounded time (scripts/fuzz.sh), and the linters.
set -euo pipefail
cd "$(dirname "$0")/.."
# Root runs everything itself; anyone else is elevated with sudo for the
# steps that need root (installing packages, loading eBPF), and only then.
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "test.sh: run it as root, or install sudo: it installs packages and loads eBPF" >&2
    exit 1
  fi
  sudo_cmd=(sudo)
fi
"${sudo_cmd[@]}" scripts/install-deps.sh

jobs=$(nproc)
cmake --preset default >/dev/null
cmake --build --preset default -j "$jobs"
# The eBPF tests load programs: they need root and skip (saying so) without it.
"${sudo_cmd[@]}" ctest --preset default -j 1 --timeout 600
# The report as Chromium rendered it (tests/html): kept for a look.
ls -l build/test-artifacts/ 2>/dev/null || true

cmake --preset asan >/dev/null
asan_targets=(unit_tests workload_tests logwatch_unit_tests fleet_common_unit_tests
  fleet_html_unit_tests fleet_records_unit_tests fleet_prometheus_unit_tests
  fleet_attribution_unit_tests fleet_checkpoints_unit_tests fuzz_replay)
# The CUPTI library's unit tests, where CMake found the CUDA toolkit.
grep -q '^CKPTSCOPE_HAVE_CUPTI:BOOL=ON' build-asan/CMakeCache.txt && asan_targets+=(cupti_unit_tests)
cmake --build --preset asan -j "$jobs" --target "${asan_targets[@]}"
ctest --preset asan -j "$jobs"

# libFuzzer targets (clang-14, build-fuzz/): every parser of outside input,
# 25 s each, two at a time; fails on any crash and names its input
# (tests/fuzz/README.md). About 8 minutes on 2 cores with the build.
fuzz_start=$(date +%s)
scripts/fuzz.sh 25
echo "test.sh: fuzz stage took $(($(date +%s) - fuzz_start)) s"

scripts/lint.sh
