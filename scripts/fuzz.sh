#!/usr/bin/env bash
# The fuzz stage (tests/fuzz/README.md): builds the libFuzzer targets with
# clang-14 (`cmake --preset fuzz`, build-fuzz/) and runs each for a bounded
# time, two at a time, seeded from the repository's test data. Fails on any
# crash, leak, timeout or out-of-memory, naming the input that caused it.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET [TARGET...]]
#
# SECONDS_PER_TARGET: 25 by default (CI: 17 targets, two at a time, fit the
# stage's budget of about 8 minutes with the build). CKPT_FUZZ_JOBS targets
# run at once (2); CKPT_FUZZ_WORK is where corpora, logs and crashes go
# (build-fuzz/fuzz-run; the corpus found is kept there for the next run);
# CKPT_FUZZ_NO_BUILD=1 runs what build-fuzz/ holds without building.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-25}
shift || true
jobs=${CKPT_FUZZ_JOBS:-2}
work=${CKPT_FUZZ_WORK:-build-fuzz/fuzz-run}
# Per input: an input that runs this long is a hang; a process past this RSS
# is a memory blow-up. Both are failures, like a crash.
timeout_s=${CKPT_FUZZ_TIMEOUT_S:-10}
rss_limit_mb=${CKPT_FUZZ_RSS_MB:-2048}

[ -n "${CKPT_FUZZ_NO_BUILD:-}" ] || cmake --preset fuzz >/dev/null
targets_file=build-fuzz/tests/fuzz/targets.txt
if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets <"$targets_file"
fi
if [ -z "${CKPT_FUZZ_NO_BUILD:-}" ]; then
  build_start=$(date +%s)
  cmake --build --preset fuzz -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
  echo "fuzz.sh: built ${#targets[@]} targets in $(($(date +%s) - build_start)) s"
fi

# Seeds: tests/fuzz/seeds.txt's globs and tests/fuzz/corpus/TARGET, copied
# into one read-only corpus per target (libFuzzer writes new inputs into the
# first corpus directory only).
gather_seeds() {
  local target=$1 dir=$2 name pattern file
  rm -rf "$dir" && mkdir -p "$dir"
  while read -r name pattern; do
    [ "$name" = "$target" ] || continue
    for file in $pattern; do [ -f "$file" ] && cp "$file" "$dir/"; done
  done < <(grep -v '^#' tests/fuzz/seeds.txt)
  if [ -d "tests/fuzz/corpus/$target" ]; then cp tests/fuzz/corpus/"$target"/* "$dir/" 2>/dev/null || true; fi
}

run_target() {
  local target=$1
  local corpus="$work/corpus/$target" seeds="$work/seeds/$target" crashes="$work/crashes/$target"
  mkdir -p "$corpus" "$crashes"
  gather_seeds "$target" "$seeds"
  local corpora=("$corpus" "$seeds")
  [ -d "tests/fuzz/regressions/$target" ] && corpora+=("tests/fuzz/regressions/$target")
  # -max_len: at least the largest seed (traces are ~160 kB), else 64 kB.
  local status=0
  TMPDIR="$work/tmp" build-fuzz/bin/fuzz_"$target" -max_total_time="$seconds" -timeout="$timeout_s" \
    -rss_limit_mb="$rss_limit_mb" -max_len=262144 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "${corpora[@]}" >"$work/logs/$target.log" 2>&1 || status=$?
  echo "$status" >"$work/logs/$target.status"
}

rm -rf "$work/logs" "$work/crashes"
mkdir -p "$work/logs" "$work/tmp"
echo "fuzz.sh: ${#targets[@]} targets, ${seconds} s each, ${jobs} at a time (logs in $work/logs)"
running=0
for target in "${targets[@]}"; do
  run_target "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

# A table of what each target did, then every crash with its input.
failed=0
printf '%-24s %12s %10s %8s %8s %s\n' target executions exec/s cov corpus result
for target in "${targets[@]}"; do
  log="$work/logs/$target.log"
  status=$(cat "$work/logs/$target.status" 2>/dev/null || echo missing)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  corp=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  result=ok
  if [ "$status" != 0 ]; then
    result="FAILED (exit $status)"
    failed=1
  fi
  printf '%-24s %12s %10s %8s %8s %s\n' "$target" "${execs:--}" "${rate:--}" "${cov:--}" "${corp:--}" "$result"
done
if [ "$failed" -ne 0 ]; then
  for target in "${targets[@]}"; do
    [ "$(cat "$work/logs/$target.status" 2>/dev/null)" = 0 ] && continue
    echo
    echo "fuzz.sh: $target failed; the end of its log ($work/logs/$target.log):"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$work/logs/$target.log" | head -5 || true
    tail -n 30 "$work/logs/$target.log"
    for input in "$work/crashes/$target"/*; do
      [ -f "$input" ] && echo "fuzz.sh: reproducer: $input (build-fuzz/bin/fuzz_$target $input;" \
        "keep it as tests/fuzz/regressions/$target/ once fixed)"
    done
  done
  exit 1
fi
echo "fuzz.sh: no crashes"
