# Scenario mountstats: the kernel's own per-op RPC counters (/proc/self/mountstats)
# against ckptscope's eBPF figures. A save of 4 shards of uneven sizes (not
# page multiples) by 2 processes with fsync, the page cache dropped, then the
# load; mountstats is snapshot in the guest right before and right after the
# `ckptscope run`, so the difference is exactly the job's RPCs.
# Host-side assertions: tests/vm/check_mountstats.py.
# shellcheck disable=SC2154 # vm_rc: set by vm_ckptscope (guest/lib.sh)
set -eu

mkdir -p "$VM_MNT/ckpt"
w="ckptscope-workload --dir $VM_MNT/ckpt --shard-sizes 5M,3000001,7M,999999 --checkpoints 1 --processes 2 --fsync"
cp /proc/mounts "$VM_OUT/mounts.txt"
vm_mountstats mountstats-before.txt
vm_ckptscope run --storage-endpoint "$VM_SERVER:2049" -- sh -c "
	$w --mode save --ground-truth /tmp/truth-save.json &&
	sync && echo 3 >/proc/sys/vm/drop_caches && sleep 1.5 &&
	$w --mode load --ground-truth /tmp/truth-load.json"
vm_mountstats mountstats-after.txt
[ "$vm_rc" -eq 0 ] || vm_fail "ckptscope run (the job) exited $vm_rc"
vm_keep_truths save load
vm_summary run summary.json
[ ! -s "$VM_OUT/failures.txt" ]
