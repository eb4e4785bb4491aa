# Scenario save-load: one checkpoint of 4 x 8 MiB saved to the NFS mount with
# fsync, then loaded back, by the synthetic workload under `ckptscope run`.
# Host-side assertions: tests/vm/check_save_load.py.
# (Sourced by /bin/sh in the guest with /vm/lib.sh; see tests/vm/README.md.)
set -eu

mkdir -p "$VM_MNT/ckpt"
vm_say "ckptscope run: workload save+load on $VM_MNT/ckpt"
rc=0
ckptscope run --trace /tmp/t.db --storage-endpoint "$VM_SERVER:2049" -- \
	ckptscope-workload --dir "$VM_MNT/ckpt" --shards 4 --shard-size 8M --checkpoints 1 \
	--fsync --ground-truth /tmp/truth.json >"$VM_OUT/run.stdout" 2>"$VM_OUT/run.stderr" || rc=$?
cat "$VM_OUT/run.stdout" "$VM_OUT/run.stderr"
if grep -q 'nothing will be traced' "$VM_OUT/run.stderr"; then
	# All of it: libbpf's log comes before the warning.
	vm_fail "ckptscope could not load its probes; its stderr: $(head -c 16000 "$VM_OUT/run.stderr")"
fi
[ "$rc" -eq 0 ] || vm_fail "ckptscope run exited $rc"
[ -s /tmp/truth.json ] || vm_fail "the workload wrote no ground truth"
cp /tmp/truth.json "$VM_OUT/truth.json"
vm_step "ckptscope summary --json" sh -c "ckptscope summary /tmp/t.db --json >'$VM_OUT/summary.json'"
gzip -c /tmp/t.db >"$VM_OUT/trace.db.gz"
[ ! -s "$VM_OUT/failures.txt" ]
