# Scenario save-load: one checkpoint of 4 x 8 MiB saved to the NFS mount with
# fsync, the client's page cache dropped, then loaded back (so the load goes
# over the wire), by two runs of the synthetic workload inside one
# `ckptscope run`. Host-side assertions: tests/vm/check_save_load.py.
# (Sourced by /bin/sh in the guest with /vm/lib.sh; see tests/vm/README.md.)
# shellcheck disable=SC2154 # vm_rc: set by vm_ckptscope (guest/lib.sh)
set -eu

mkdir -p "$VM_MNT/ckpt"
w="ckptscope-workload --dir $VM_MNT/ckpt --shards 4 --shard-size 8M --checkpoints 1 --fsync"
# The quiet gap (1 s) ends the save before the load starts: sleep 1.5 s.
vm_ckptscope run --storage-endpoint "$VM_SERVER:2049" -- sh -c "
	$w --mode save --ground-truth /tmp/truth-save.json &&
	sync && echo 3 >/proc/sys/vm/drop_caches && sleep 1.5 &&
	$w --mode load --ground-truth /tmp/truth-load.json"
[ "$vm_rc" -eq 0 ] || vm_fail "ckptscope run (the job) exited $vm_rc"
vm_keep_truths save load
vm_summary run summary.json
[ ! -s "$VM_OUT/failures.txt" ]
