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
# /var/log/ckptscope, the exporter's cgroups) are RUN_SERIAL and run alone;
# the rest two at a time. ctest's "Label Time Summary" gives each label's share.
stage_start ctest
"${sudo_cmd[@]}" ctest --preset default -j "$jobs" --timeout 600 -LE '^vm$'
stage_end
# The report as Chromium rendered it (tests/html): kept for a look.
ls -l build/test-artifacts/ 2>/dev/null || true

asan_targets=(unit_tests workload_tests logwatch_unit_tests fleet_common_unit_tests
  fleet_html_unit_tests fleet_records_unit_tests fleet_prometheus_unit_tests
  fleet_attribution_unit_tests fleet_checkpoints_unit_tests fuzz_replay)
asan_build() {
  # (Called where `set -e` does not reach into it: each step says if it failed.)
  cmake --preset asan >/dev/null || return
  # The CUPTI library's unit tests, where CMake found the CUDA toolkit.
  if grep -q '^CKPTSCOPE_HAVE_CUPTI:BOOL=ON' build-asan/CMakeCache.txt; then
    asan_targets+=(cupti_unit_tests)
  fi
  cmake --build --preset asan -j "$jobs" --target "${asan_targets[@]}"
}
# The VM tests (tests/vm, label vm) boot one single-CPU TCG guest at a time:
# ~10 minutes with one core busy. The ASan build takes the other core
# meanwhile, at the lowest priority so that the guest keeps a whole core (the
# tests check its timings). CKPT_CI_SEQUENTIAL=1: one after the other, each
# timed alone.
if [ -n "${CKPT_CI_SEQUENTIAL:-}" ]; then
  stage_start vm
  "${sudo_cmd[@]}" ctest --preset default -j 1 --timeout 600 -L '^vm$'
  stage_end
  stage_start asan-build
  asan_build
  stage_end
else
  stage_start vm+asan-build
  mkdir -p build-asan
  asan_log=build-asan/asan-build.log
  (
    renice -n 19 -p "$BASHPID" >/dev/null
    t0=$(date +%s)
    rc=0
    asan_build || rc=$?
    echo "test.sh: asan-build (beside the VM tests) took $(($(date +%s) - t0)) s, exit $rc"
    exit "$rc"
  ) >"$asan_log" 2>&1 &
  asan_pid=$!
  vm_t0=$(date +%s)
  vm_rc=0
  "${sudo_cmd[@]}" ctest --preset default -j 1 --timeout 600 -L '^vm$' || vm_rc=$?
  echo "test.sh: vm (beside the ASan build) took $(($(date +%s) - vm_t0)) s, exit $vm_rc"
  asan_rc=0
  wait "$asan_pid" || asan_rc=$?
  echo "test.sh: the ASan build's output ($asan_log):"
  cat "$asan_log"
  if [ "$vm_rc" -ne 0 ] || [ "$asan_rc" -ne 0 ]; then
    echo "test.sh: vm tests exit $vm_rc, ASan build exit $asan_rc" >&2
    exit 1
  fi
  stage_end
fi
stage_start asan-ctest
ctest --preset asan -j "$jobs"
stage_end

# libFuzzer targets (clang-14, build-fuzz/): every parser of outside input,
# 15 s each, two at a time; fails on any crash and names its input
# (tests/fuzz/README.md). About 5 minutes on 2 cores with the build.
stage_start fuzz
scripts/fuzz.sh 15
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
