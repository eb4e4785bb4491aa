# vm-export-size: 8m
# Scenario enospc: a save of 4 x 4 MiB with fsync to an export of 8 MiB (a
# tmpfs): the server runs out of space, the WRITEs fail with NOSPC, the
# job's fsync (or write, or close) with ENOSPC and the job exits non-zero.
# ckptscope must exit with the job's status and still write its trace.
# Host-side assertions: tests/vm/check_enospc.py.
# shellcheck disable=SC2154 # vm_rc: set by vm_ckptscope (guest/lib.sh)
set -eu

mkdir -p "$VM_MNT/ckpt"
df -k "$VM_EXPORT" | tail -n 1 >"$VM_OUT/export-df.txt"
vm_ckptscope run --storage-endpoint "$VM_SERVER:2049" -- \
	ckptscope-workload --dir "$VM_MNT/ckpt" --shards 4 --shard-size 4M --checkpoints 1 --mode save \
	--fsync --ground-truth /tmp/truth.json
echo "$vm_rc" >"$VM_OUT/run.rc"
[ "$vm_rc" -ne 0 ] || vm_fail "the job exited 0 although the save (16 MiB) does not fit the export ($VM_EXPORT_SIZE)"
if [ -s /tmp/truth.json ]; then
	cp /tmp/truth.json "$VM_OUT/truth.json"
else
	vm_say "the workload wrote no ground truth"
fi
ls -l "$VM_EXPORT/ckpt/checkpoint-1" || true
df -k "$VM_EXPORT" | tail -n 1 >>"$VM_OUT/export-df.txt"
vm_summary run summary.json
[ ! -s "$VM_OUT/failures.txt" ]
