#!/usr/bin/env bash
# Every test: installs dependencies, builds, runs the real-kernel eBPF tests
# (as root), the CLI, exporter and client tests, the VM tests, the unit tests
# under AddressSanitizer+UndefinedBehaviorSanitizer (clang, in the fuzz
# targets' build), the fuzz targets for a bounded time (scripts/fuzz.sh), and
# the linters.
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
# A failing stage still says how long it ran, and what ran before it; what
# runs in the background (the sanitizer build, lint) stops with it.
background_pids=()
on_exit() {
  local rc=$? pid
  for pid in "${background_pids[@]}"; do
    kill -- -"$pid" 2>/dev/null || true
  done
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
# The unit tests are built and run once, under the sanitizers in build-fuzz/
# (below); build/ holds everything else (CKPTSCOPE_UNIT_TESTS, docs/ci.md).
# `cmake --preset default -DCKPTSCOPE_UNIT_TESTS=ON` brings them back here.
cmake --preset default -DCKPTSCOPE_UNIT_TESTS=OFF >/dev/null
cmake --build --preset default -j "$jobs"
stage_end

# One sanitizer build serves the asan-ctest and fuzz stages: build-fuzz/
# (`cmake --preset fuzz`: clang-14, -O1, ASan+UBSan, failures fatal; the
# libraries also carry libFuzzer's coverage instrumentation) holds the fuzz
# targets and every binary with tests labelled unit. It replaced a gcc ASan
# build of the unit tests (the asan preset, still there for developers) that
# compiled every library a second time (docs/ci.md).
san_build() {
  # (Called where `set -e` does not reach into it: each step says if it failed.)
  cmake --preset fuzz >/dev/null || return
  local targets
  mapfile -t targets <build-fuzz/tests/fuzz/targets.txt || return
  # unit_test_binaries: every binary with tests labelled unit (CMakeLists.txt:
  # ckpt_unit_test_binary), the CUPTI library's where CMake found the toolkit.
  targets=("${targets[@]/#/fuzz_}" unit_test_binaries)
  cmake --build --preset fuzz -j "$jobs" --target "${targets[@]}"
}

# The eBPF tests load programs: they need root and skip (saying so) without it.
# -j: tests that share machine-wide state (eBPF programs, the kernel log,
# /var/log/ckptscope, the exporter's cgroups) are RUN_SERIAL and run alone;
# the rest two at a time. ctest's "Label Time Summary" gives each label's share.
# (-LE ^vm: the VM tests, quarantined ones too, are not this stage's.)
# Each ctest run writes JUnit (build*/junit-*.xml): the skip report at the
# end reads every skipped test's reason from them.
junit_files=("$PWD/build/junit-ctest.xml" "$PWD/build/junit-vm.xml" "$PWD/build-fuzz/junit-unit.xml")
rm -f "${junit_files[@]}"
run_ctest() {
  "${sudo_cmd[@]}" ctest --preset default -j "$jobs" --timeout 600 -LE '^vm' \
    --output-junit "${junit_files[0]}"
}
# The VM tests (tests/vm, label vm) boot one single-CPU TCG guest at a time:
# about 13 minutes with one core busy (docs/ci.md).
run_vm_tests() {
  "${sudo_cmd[@]}" ctest --preset default -j 1 --timeout 600 -L '^vm$' --output-junit "${junit_files[1]}"
}
# clang-tidy only what changed since .ci/tidy-clean-at, closed over the
# build's header dependencies (scripts/tidy_targets.py says what and why);
# CKPT_LINT_FULL=1 checks every TU.
run_lint() {
  if [ -n "${CKPT_LINT_FULL:-}" ]; then
    scripts/lint.sh --full
  else
    scripts/lint.sh
  fi
}

# The sanitizer build starts with the ctest stage and goes on beside the VM
# tests, at the lowest priority: it takes what the tests leave idle (ctest
# waits on servers, timeouts and RUN_SERIAL tests a good part of the time;
# the guest keeps a whole core, as the VM tests check its timings). Lint
# needs only build/: it follows the sanitizer build, also at the lowest
# priority, and so takes what is still idle beside the VM tests and the
# stages after them; the lint stage waits for it. CKPT_CI_SEQUENTIAL=1: one
# after the other (stages ctest, vm, asan-build, ..., lint), each timed alone.
if [ -n "${CKPT_CI_SEQUENTIAL:-}" ]; then
  stage_start ctest
  run_ctest
  stage_end
  stage_start vm
  run_vm_tests
  stage_end
  stage_start asan-build
  san_build
  stage_end
else
  mkdir -p build-fuzz
  san_log=build-fuzz/asan-build.log
  san_done=build-fuzz/asan-build.done
  lint_log=build/lint.log
  rm -f "$san_done"
  # Each in a process group of its own (job control on while they fork), so
  # that a failing stage stops the whole of them (on_exit).
  set -m
  (
    renice -n 19 -p "$BASHPID" >/dev/null
    t0=$(date +%s)
    rc=0
    san_build || rc=$?
    echo "test.sh: asan-build (beside ctest and the VM tests) took $(($(date +%s) - t0)) s, exit $rc"
    touch "$san_done"
    exit "$rc"
  ) >"$san_log" 2>&1 &
  san_pid=$!
  (
    renice -n 19 -p "$BASHPID" >/dev/null
    # Not beside the sanitizer build: the two would share the idle core,
    # and the asan-ctest stage waits for the build.
    while [ ! -e "$san_done" ]; do sleep 5; done
    t0=$(date +%s)
    rc=0
    run_lint || rc=$?
    echo "test.sh: lint (in the background) took $(($(date +%s) - t0)) s, exit $rc"
    exit "$rc"
  ) >"$lint_log" 2>&1 &
  lint_pid=$!
  set +m
  background_pids=("$san_pid" "$lint_pid")
  stage_start ctest
  run_ctest
  stage_end
  stage_start vm+asan-build
  vm_t0=$(date +%s)
  vm_rc=0
  run_vm_tests || vm_rc=$?
  echo "test.sh: vm (beside the ASan build) took $(($(date +%s) - vm_t0)) s, exit $vm_rc"
  san_rc=0
  wait "$san_pid" || san_rc=$?
  background_pids=("$lint_pid")
  echo "test.sh: the ASan build's output ($san_log):"
  cat "$san_log"
  if [ "$vm_rc" -ne 0 ] || [ "$san_rc" -ne 0 ]; then
    echo "test.sh: vm tests exit $vm_rc, ASan build exit $san_rc" >&2
    exit 1
  fi
  stage_end
fi
# The report as Chromium rendered it (tests/html): kept for a look.
ls -l build/test-artifacts/ 2>/dev/null || true

# The unit tests (label unit) under clang's ASan+UBSan, from build-fuzz/.
stage_start asan-ctest
ctest --preset fuzz -j "$jobs" --output-junit "${junit_files[2]}"
stage_end

# libFuzzer targets (build-fuzz/, built above): every parser of outside
# input, 15 s each, two at a time; fails on any crash and names its input
# (tests/fuzz/README.md). About 2 minutes on 2 cores.
stage_start fuzz
CKPT_FUZZ_NO_BUILD=1 scripts/fuzz.sh 15
stage_end

stage_start lint
if [ -n "${CKPT_CI_SEQUENTIAL:-}" ]; then
  run_lint
else
  lint_rc=0
  wait "$lint_pid" || lint_rc=$?
  background_pids=()
  echo "test.sh: lint's output ($lint_log):"
  cat "$lint_log"
  if [ "$lint_rc" -ne 0 ]; then
    echo "test.sh: lint exit $lint_rc" >&2
    exit 1
  fi
fi
stage_end

# Every skipped test with its reason; a reason that is not a missing
# privilege or missing hardware (tests/allowed_skips.txt) fails the run.
stage_start skips
/usr/bin/python3 scripts/skip_report.py --allowed tests/allowed_skips.txt "${junit_files[@]}"
stage_end
stage_summary
