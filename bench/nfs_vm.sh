#!/usr/bin/env bash
# What tracing costs an NFS save, measured inside the tests/vm QEMU guest
# (the real kernel NFS client and server): the slowdown of a traced save
# against a bare one, alternated and rotated over rounds (medians), and the
# NFS programs' BPF run time per RPC from the kernel's own stats.
# Under TCG every instruction is emulated, ours and the kernel's alike: the
# ratios are what this harness can measure, not a bare-metal figure.
#
# Usage: bench/nfs_vm.sh [--kernel 6.1|6.12|all] [--nfs 3|4.2|all] [--rounds N]
#                        [--shard-size SIZE] [--smp N] [--out DIR] [--build DIR]
# --smp 2 (the default) leaves the profiler a CPU of its own, as on any real
# node; with one, its polling runs on the job's only CPU. Each vCPU gets a host
# thread of its own (run.sh --tcg-thread multi), so the two do run at once.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
kernel=6.12 nfs=4.2 rounds=7 size=8M smp=2 out=/tmp/ckptscope-nfs-bench build="$repo/build"
while [ $# -gt 0 ]; do
  case $1 in
    --kernel) kernel=$2; shift 2 ;;
    --nfs) nfs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --shard-size) size=$2; shift 2 ;;
    --smp) smp=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "nfs_vm.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
  echo "nfs_vm.sh: --rounds: a positive number, not $rounds" >&2
  exit 2
fi
VM_ENV_BENCH_ROUNDS=$rounds VM_ENV_BENCH_SHARD_SIZE=$size \
  "$repo/tests/vm/run.sh" --scenario-dir "$here/vm" --scenario nfs-overhead --kernel "$kernel" \
  --nfs "$nfs" --out "$out" --build "$build" --timeout 900 --smp "$smp" --tcg-thread multi
for d in "$out"/*-nfs-overhead; do
  echo "== $(basename "$d")"
  PYTHONDONTWRITEBYTECODE=1 python3 "$here/vm/check_nfs_overhead.py" "$d" --json "$d/bench.json"
done
