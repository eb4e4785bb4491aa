#!/usr/bin/env bash
# What the job-I/O probes cost per call in file-layer mode against syscall
# mode (issue 18), measured inside the tests/vm QEMU guest (6.12 by default:
# fentry is refused on this host): ns added per 4 KiB write and read on
# tmpfs, bare vs `ckptscope run --probe-mode file_layer` vs `--probe-mode
# syscall`, alternated and rotated over rounds (medians, spread, the ratio
# file/syscall); and a getppid loop and non-checkpoint 4 KiB I/O with
# `ckptscope exporter` running (both modes) vs bare, as % of bare.
# Under TCG every instruction is emulated: the ratios are what this harness
# can measure, not a bare-metal figure.
#
# Usage: bench/filelayer_vm.sh [--kernel 6.1|6.12|all] [--rounds N] [--calls N]
#                              [--smp N] [--out DIR] [--build DIR] [--no-mode-flag]
# --no-mode-flag: no --probe-mode (a build from before issue 18: checks the harness only).
# Needs build/bin/{ckptscope,ckptscope-workload,io_loop,getppid_loop}.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
kernel=6.12 rounds=5 calls=20000 smp=2 out=/tmp/ckptscope-filelayer-bench build="$repo/build" no_mode=0
while [ $# -gt 0 ]; do
  case $1 in
    --kernel) kernel=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --smp) smp=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --no-mode-flag) no_mode=1; shift ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "filelayer_vm.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for n in "$rounds" "$calls"; do
  if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
    echo "filelayer_vm.sh: --rounds and --calls take a positive number, not $n" >&2
    exit 2
  fi
done
for b in io_loop getppid_loop; do
  [ -x "$build/bin/$b" ] || { echo "filelayer_vm.sh: no $build/bin/$b: build the bench targets" >&2; exit 2; }
done
VM_ENV_BENCH_ROUNDS=$rounds VM_ENV_BENCH_CALLS=$calls VM_ENV_BENCH_NO_MODE=$no_mode \
  "$repo/tests/vm/run.sh" --scenario-dir "$here/vm" --scenario filelayer-overhead --kernel "$kernel" \
  --nfs 4.2 --out "$out" --build "$build" --timeout 900 --smp "$smp"
for d in "$out"/*-filelayer-overhead; do
  echo "== $(basename "$d")"
  PYTHONDONTWRITEBYTECODE=1 python3 "$here/vm/check_filelayer_overhead.py" "$d" --json "$d/bench.json"
done
