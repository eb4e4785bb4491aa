#!/usr/bin/env bash
# Runs one VM scenario many times in a row (not in CI): a scenario that
# passes once may still fail under the load CI puts beside it. With
# --busy-build DIR, a build of the project (an already configured CMake build
# directory, cleaned and built again in a loop) runs at the lowest priority
# beside every run, as scripts/test.sh runs the sanitizer build beside the VM
# tests.
#
#   tests/vm/stress.sh --scenario scale --runs 20 --out /tmp/stress [--busy-build build-fuzz]
#                      [--build build] [--kernel K] [--nfs V]
#
# --kernel and --nfs default to the scenario's `# vm-kernels:` and
# `# vm-nfs-versions:` headers (else 6.12 and 4.2). Each run leaves
# OUT/run-NN/ (tests/vm/run.sh's results). Prints one line per run (ok or
# FAIL, seconds, the checker's FAIL lines) and a summary; every run is made,
# and the exit status is 0 only when all passed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

scenario='' runs='' out='' busy='' build="$repo/build" kernel='' nfs=''
while [ $# -gt 0 ]; do
  case "$1" in
    --scenario) scenario=${2:?}; shift 2 ;;
    --runs) runs=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --busy-build) busy=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    --kernel) kernel=${2:?}; shift 2 ;;
    --nfs) nfs=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "stress.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
file="$here/scenarios/$scenario.sh"
if [ -z "$scenario" ] || [ ! -f "$file" ]; then
  echo "stress.sh: --scenario: no scenario '$scenario' in $here/scenarios" >&2
  exit 2
fi
case "$runs" in
  '' | *[!0-9]* | 0) echo "stress.sh: --runs: a positive number of runs (got '$runs')" >&2; exit 2 ;;
esac
[ -n "$out" ] || { echo "stress.sh: --out DIR is required" >&2; exit 2; }
if [ -n "$busy" ] && [ ! -f "$busy/build.ninja" ] && [ ! -f "$busy/Makefile" ]; then
  echo "stress.sh: --busy-build: $busy is not a configured build directory" >&2
  exit 2
fi
header() { sed -n "s/^# vm-$1: *//p" "$file" | head -n 1 | tr ' ' ','; }
[ -n "$kernel" ] || kernel=$(header kernels)
[ -n "$nfs" ] || nfs=$(header nfs-versions)
kernel=${kernel:-6.12} nfs=${nfs:-4.2}
mkdir -p "$out"

busy_pid=''
stop_busy() {
  if [ -n "$busy_pid" ]; then
    kill -- -"$busy_pid" 2>/dev/null || true
  fi
  busy_pid=''
}
trap stop_busy EXIT
if [ -n "$busy" ]; then
  set -m
  (
    renice -n 19 -p "$BASHPID" >/dev/null
    while :; do
      cmake --build "$busy" --target clean >/dev/null 2>&1 || true
      cmake --build "$busy" -j "$(nproc)" >>"$out/busy-build.log" 2>&1 || true
    done
  ) &
  busy_pid=$!
  set +m
  echo "stress.sh: busy build of $busy at nice 19 (pid $busy_pid), log $out/busy-build.log"
fi

passed=0 failed=0
for i in $(seq 1 "$runs"); do
  dir=$(printf '%s/run-%02d' "$out" "$i")
  rm -rf "$dir"
  t0=$(date +%s)
  if "$here/run.sh" --kernel "$kernel" --nfs "$nfs" --scenario "$scenario" --out "$dir" \
    --build "$build" >"$dir.log" 2>&1; then
    verdict=ok
    passed=$((passed + 1))
  else
    verdict=FAIL
    failed=$((failed + 1))
  fi
  took=$(($(date +%s) - t0))
  echo "stress.sh: run $i/$runs: $verdict in $took s"
  if [ "$verdict" = FAIL ]; then
    grep -h 'FAIL' "$dir"/*/check.log 2>/dev/null | sed 's/^/  /' | head -20 || true
  fi
done
stop_busy
echo "stress.sh: $scenario ($kernel, NFS $nfs): $passed of $runs passed, $failed failed"
[ "$failed" -eq 0 ]
