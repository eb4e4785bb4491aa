#!/usr/bin/env bash
# What libckptscope_cupti.so costs a job's large device-to-host copies: the
# checkpoint_like bench (COUNT x SIZE_MIB D2H copies, pinned and pageable,
# timed inside the program) under `ckptscope run`, with the library injected
# (CUDA_INJECTION64_PATH) and without it (--no-gpu), alternating which goes
# first each round. Everything else (the eBPF probes, the wrapper) is the same
# in both arms, and process start and CUDA init are outside the timed loop.
# Prints the median seconds per arm and memory kind and the slowdown
# (target: under 2%).
#
#   sudo bench/gpu_copy_overhead.sh [ROUNDS]
#
# Environment: BUILD (default build/), NVCC, NVCC_ARCH (default native),
# COUNT (default 20), SIZE_MIB (default 1024).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
rounds=${1:-5}
count=${COUNT:-20}
size_mib=${SIZE_MIB:-1024}
work=$(mktemp -d /tmp/ckptscope-gpu-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT

nvidia-smi -L >/dev/null 2>&1 || { echo "gpu_copy_overhead: no NVIDIA GPU here" >&2; exit 77; }
if [ ! -x "$build/bin/ckptscope" ] || [ ! -f "$build/lib/libckptscope_cupti.so" ]; then
  echo "gpu_copy_overhead: build ckptscope and ckptscope_cupti in $build first" >&2
  exit 2
fi
"$nvcc" -std=c++17 -O2 -arch="${NVCC_ARCH:-native}" -o "$work/checkpoint_like" \
  "$root/tests/gpu/checkpoint_like.cu"

# One run: the bench's JSON lines, tagged with the arm.
one() {
  local arm=$1 flag=()
  [ "$arm" = without ] && flag=(--no-gpu)
  "$build/bin/ckptscope" run --quiet "${flag[@]}" --trace "$work/$arm.db" -- \
    "$work/checkpoint_like" --bench --count "$count" --size-mib "$size_mib" --memory both \
    2>>"$work/stderr" | sed -n "s/^{\"bench\"/{\"arm\": \"$arm\", \"bench\"/p" >>"$work/results.jsonl"
  rm -f "$work/$arm.db"
}

for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then one with; one without; else one without; one with; fi
  echo "round $r/$rounds done" >&2
done
grep -h "ckptscope-cupti:" "$work/stderr" >&2 || true

python3 - "$work/results.jsonl" "$count" "$size_mib" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
count, size_mib = sys.argv[2], sys.argv[3]
print(f"D2H copies: {count} x {size_mib} MiB per run, {len(rows) // 4} rounds, medians")
worst = 0.0
for memory in ("pinned", "pageable"):
    arms = {a: [r["seconds"] for r in rows if r["arm"] == a and r["memory"] == memory]
            for a in ("with", "without")}
    if not arms["with"] or not arms["without"]:
        sys.exit(f"no results for {memory}")
    w, wo = statistics.median(arms["with"]), statistics.median(arms["without"])
    ratio = w / wo
    worst = max(worst, ratio)
    gbps = float(count) * int(size_mib) * 2**20 / wo / 1e9
    print(f"  {memory:8s} without {wo:8.4f} s ({gbps:6.2f} GB/s)  with {w:8.4f} s"
          f"  slowdown {100 * (ratio - 1):+.2f}%")
print(f"worst slowdown {100 * (worst - 1):+.2f}% (target under 2%)")
sys.exit(0 if worst < 1.02 else 1)
PY
