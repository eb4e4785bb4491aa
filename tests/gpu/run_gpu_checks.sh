#!/usr/bin/env bash
# The gpu_copy stage on a real GPU: checkpoint_like.cu (saves through
# pageable and pinned memory, loads both back) under `ckptscope run` with
# libckptscope_cupti.so injected, then check_gpu.py compares the summary
# with the program's own ground truth. Needs an NVIDIA GPU and driver, the
# CUDA toolkit (nvcc, CUPTI) and root (eBPF, for host_io).
#
#   sudo tests/gpu/run_gpu_checks.sh [WORKDIR]
#
# Environment: BUILD (default build/), NVCC (default /usr/local/cuda/bin/nvcc
# or the one on PATH), NVCC_ARCH (default native), SIZES_MIB (default
# 16,48,96,160), GAP_MS (default 3500), TOLERANCE_US (default 2000).
# Exit 0 all passed, 1 a check failed, 2 could not run, 77 no GPU here.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
arch=${NVCC_ARCH:-native}
work=${1:-$(mktemp -d /tmp/ckptscope-gpu-XXXXXX)}
mkdir -p "$work"

say() { echo "run_gpu_checks: $*" >&2; }

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  say "SKIP: no NVIDIA GPU or driver here (nvidia-smi -L failed): nothing to check"
  exit 77
fi
nvidia-smi -L >&2
[ "$(id -u)" -eq 0 ] || { say "run as root: host_io is traced with eBPF"; exit 2; }
[ -x "$nvcc" ] || { say "no nvcc (set NVCC)"; exit 2; }

# ckptscope and the library, built if missing (a CPU-only build has no library).
if [ ! -x "$build/bin/ckptscope" ] || [ ! -f "$build/lib/libckptscope_cupti.so" ]; then
  say "building ckptscope and libckptscope_cupti.so in $build"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
  cmake --build "$build" --target ckptscope ckptscope_cupti >&2
fi
[ -f "$build/lib/libckptscope_cupti.so" ] || {
  say "$build/lib/libckptscope_cupti.so was not built: is CUPTI found? (cmake says why)"
  exit 2
}

say "compiling checkpoint_like.cu for $arch"
"$nvcc" -std=c++17 -O2 -arch="$arch" -o "$work/checkpoint_like" "$root/tests/gpu/checkpoint_like.cu"

rm -rf "$work/data" "$work/T.db"
say "running it under ckptscope run (work dir $work)"
set +e
"$build/bin/ckptscope" run --trace "$work/T.db" --json --log "$work/job.log" -- \
  "$work/checkpoint_like" --dir "$work/data" --truth "$work/truth.json" \
  --sizes-mib "${SIZES_MIB:-16,48,96,160}" --gap-ms "${GAP_MS:-3500}" \
  >"$work/run.json" 2>"$work/run.err"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
  say "the run exited $rc:"
  tail -n 30 "$work/run.err" >&2
  exit 1
fi
# The library's own lines (HELLO problems, drops) land in the job's stderr.
grep -h "ckptscope-cupti:" "$work/job.log" "$work/run.err" >&2 || true

"$build/bin/ckptscope" summary "$work/T.db" --json >"$work/summary.json"
"$build/bin/ckptscope" summary "$work/T.db" >&2 || true
python3 "$root/tests/gpu/check_gpu.py" --truth "$work/truth.json" --summary "$work/summary.json" \
  --tolerance-us "${TOLERANCE_US:-2000}"
