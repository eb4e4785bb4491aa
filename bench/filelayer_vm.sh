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
# Also bench/minimal_probe (one fexit on vfs_write/vfs_read, the floor the
# issue's target was set against) in the same rotation, and every per-call
# kind once more cycling over --span bytes of the file (0: not).
#
# Usage: bench/filelayer_vm.sh [--kernel 6.1|6.12|all] [--rounds N] [--calls N]
#                              [--span BYTES] [--icount SHIFT | --wall-clock [--smp N]]
#                              [--out DIR] [--build DIR] [--baseline-build DIR] [--no-mode-flag]
# --baseline-build DIR: DIR/bin/ckptscope (another build, e.g. from before
# issue 18) runs as one more per-call kind, "baseline", without --probe-mode.
# By default the guest's clock counts instructions (tests/vm/run.sh --icount 2:
# 4 ns each, about TCG's real speed, so the guest's own timeouts still hold;
# one vCPU): the host's load, which moved TCG wall-clock figures by 2x between
# rounds, no longer enters them, and "ns added" reads as 4 x "instructions
# added". --wall-clock: TCG's real time instead (--smp N).
# --no-mode-flag: no --probe-mode (a build from before issue 18: checks the harness only).
# Needs build/bin/{ckptscope,ckptscope-workload,io_loop,getppid_loop,minimal_probe}.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
kernel=6.12 rounds=5 calls=20000 span=1048576 smp=1 icount=2 out=/tmp/ckptscope-filelayer-bench build="$repo/build" baseline= no_mode=0
while [ $# -gt 0 ]; do
  case $1 in
    --kernel) kernel=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --span) span=$2; shift 2 ;;
    --smp) smp=$2; shift 2 ;;
    --icount) icount=$2; shift 2 ;;
    --wall-clock) icount=; shift ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --baseline-build) baseline=$2; shift 2 ;;
    --no-mode-flag) no_mode=1; shift ;;
    -h | --help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "filelayer_vm.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if ! [[ $span =~ ^[0-9]+$ ]] || [ $((span % 4096)) -ne 0 ]; then
  echo "filelayer_vm.sh: --span takes a multiple of 4096 bytes (0: no spanned rounds), not $span" >&2
  exit 2
fi
for n in "$rounds" "$calls"; do
  if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
    echo "filelayer_vm.sh: --rounds and --calls take a positive number, not $n" >&2
    exit 2
  fi
done
for b in io_loop getppid_loop minimal_probe; do
  [ -x "$build/bin/$b" ] || { echo "filelayer_vm.sh: no $build/bin/$b: build the bench targets" >&2; exit 2; }
done
extra_bins=
if [ -n "$baseline" ]; then
  [ -x "$baseline/bin/ckptscope" ] || { echo "filelayer_vm.sh: no $baseline/bin/ckptscope" >&2; exit 2; }
  extra_bins="ckptscope-baseline=$baseline/bin/ckptscope"
fi
VM_EXTRA_BINS=$extra_bins VM_ENV_BENCH_BASELINE=${baseline:+1} VM_ENV_BENCH_ROUNDS=$rounds VM_ENV_BENCH_CALLS=$calls VM_ENV_BENCH_SPAN=$span VM_ENV_BENCH_NO_MODE=$no_mode \
  "$repo/tests/vm/run.sh" --scenario-dir "$here/vm" --scenario filelayer-overhead --kernel "$kernel" \
  --nfs 4.2 --out "$out" --build "$build" --timeout $((300 + rounds * 90)) --smp "$smp" ${icount:+--icount "$icount"}
for d in "$out"/*-filelayer-overhead; do
  echo "== $(basename "$d")"
  PYTHONDONTWRITEBYTECODE=1 python3 "$here/vm/check_filelayer_overhead.py" "$d" --json "$d/bench.json"
done
