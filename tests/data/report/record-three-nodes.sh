#!/usr/bin/env bash
# Records node-a.db, node-b.db and node-c.db: one job's three "nodes", run at
# the same time on this machine under `ckptscope run --node-name`, each with
# its own workload ground truth (truth-node-*.json). node-c serializes each
# shard for 150 ms on one thread: the straggler. Needs root (eBPF).
#   tests/data/report/record-three-nodes.sh BUILD_DIR [OUT_DIR]
set -euo pipefail
build=${1:?usage: record-three-nodes.sh BUILD_DIR [OUT_DIR]}
out=${2:-$(dirname "$0")}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/config.json" <<'JSON'
{"storage": {"write_bandwidth": "2GB/s", "read_bandwidth": "4GB/s"}}
JSON
pids=()
for node in node-a node-b node-c; do
  extra=(--threads 2)
  [ "$node" = node-c ] && extra=(--threads 1 --serialize-ms 150)
  "$build/bin/ckptscope" run --quiet --node-name "$node" --config "$work/config.json" \
    --trace "$out/$node.db" --log "$work/$node.log" -- \
    "$build/bin/ckptscope-workload" --dir "$work/$node" --shards 4 --shard-size 8M \
    --checkpoints 2 --processes 2 "${extra[@]}" --fsync --gap-ms 1500 --quiet \
    --ground-truth "$out/truth-$node.json" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
echo "recorded: $out/node-a.db $out/node-b.db $out/node-c.db"
