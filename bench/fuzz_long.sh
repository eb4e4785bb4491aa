#!/usr/bin/env bash
# A longer fuzz run than CI's (tests/fuzz/README.md): every target for
# SECONDS each (600 by default), CKPT_FUZZ_JOBS at a time (all cores but
# one by default). The corpus grows in build-fuzz/fuzz-run/corpus and is
# kept, so each run starts where the last one stopped; the table at the end
# is the one to quote (executions, exec/s, coverage per target).
#
#   bench/fuzz_long.sh [SECONDS [TARGET...]]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
cores=$(nproc)
export CKPT_FUZZ_JOBS=${CKPT_FUZZ_JOBS:-$((cores > 1 ? cores - 1 : 1))}
exec scripts/fuzz.sh "$seconds" "$@"
