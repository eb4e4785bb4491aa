#!/usr/bin/env bash
# Every test: installs dependencies, builds, runs the unit tests, the
# real-kernel eBPF tests (as root), the workload's tests, the unit tests again
# under AddressSanitizer+UndefinedBehaviorSanitizer, the fuzz targets for a
# bounded time (scripts/fuzz.sh), and the linters.
#
# Each stage prints "test.sh: STAGE took N s" and the run ends with the whole
# budget, stage by stage (docs/ci.md has the figures and what they cost).
set -euo pipefail
cd "$(dirname "$0")/.."

# --- stage timing -----------------------------------------------------------
stage_names=()
stage_seconds=()
stage_name=""
stage_t0=0
run_t0=$(date +%s)
stage_start() {
  stage_name=$1
  stage_t0=$(date +%s)
  echo "test.sh: $stage_name ..."
}
stage_end() {
  local took=$(($(date +%s) - stage_t0))
  stage_names+=("$stage_name")
  stage_seconds+=("$took")
  echo "test.sh: $stage_name took $took s"
  stage_name=""
}
stage_summary() {
  local i
  echo "test.sh: stage times:"
  for i in "${!stage_names[@]}"; do
    printf 'test.sh:   %-14s %6d s\n' "${stage_names[$i]}" "${stage_seconds[$i]}"
  done
  printf 'test.sh:   %-14s %6d s\n' total "$(($(date +%s) - run_t0))"
}
# A failing stage still says how long it ran, and what ran before it.
on_exit() {
  local rc=$?
  if [ -n "$stage_name" ]; then
    echo "test.sh: $stage_name FAILED (exit $rc) after $(($(date +%s) - stage_t0)) s" >&2
    stage_summary >&2
  fi
}
trap on_exit EXIT

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
stage_start install-deps
"${sudo_cmd[@]}" scripts/install-deps.sh
stage_end

jobs=$(nproc)
stage_start build
cmake --preset default >/dev/null
cmake --build --preset default -j "$jobs"
stage_end

# The eBPF tests load programs: they need root and skip (saying so) without it.
# -j: tests that share machine-wide state (eBPF programs, the kernel log,
# /var/log/ckptscope, the exporter's cgroups, the VMs) are RUN_SERIAL and run
# alone; the rest two at a time. The time per label comes from ctest's own
# summary ("Label Time Summary").
stage_start ctest
"${sudo_cmd[@]}" ctest --preset default -j "$jobs" --timeout 600
stage_end
# The report as Chromium rendered it (tests/html): kept for a look.
ls -l build/test-artifacts/ 2>/dev/null || true

stage_start asan-build
cmake --preset asan >/dev/null
asan_targets=(unit_tests workload_tests logwatch_unit_tests fleet_common_unit_tests
  fleet_html_unit_tests fleet_records_unit_tests fleet_prometheus_unit_tests
  fleet_attribution_unit_tests fleet_checkpoints_unit_tests fuzz_replay)
# The CUPTI library's unit tests, where CMake found the CUDA toolkit.
grep -q '^CKPTSCOPE_HAVE_CUPTI:BOOL=ON' build-asan/CMakeCache.txt && asan_targets+=(cupti_unit_tests)
cmake --build --preset asan -j "$jobs" --target "${asan_targets[@]}"
stage_end
stage_start asan-ctest
ctest --preset asan -j "$jobs"
stage_end

# libFuzzer targets (clang-14, build-fuzz/): every parser of outside input,
# 25 s each, two at a time; fails on any crash and names its input
# (tests/fuzz/README.md). About 8 minutes on 2 cores with the build.
stage_start fuzz
scripts/fuzz.sh 25
stage_end

# clang-tidy only what changed since .ci/tidy-clean-at, closed over the
# build's header dependencies (scripts/tidy_targets.py says what and why);
# CKPT_LINT_FULL=1 checks every TU.
stage_start lint
if [ -n "${CKPT_LINT_FULL:-}" ]; then
  scripts/lint.sh --full
else
  scripts/lint.sh
fi
stage_end
stage_summary
