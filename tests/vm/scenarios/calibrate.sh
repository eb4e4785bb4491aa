# Scenario calibrate: `ckptscope calibrate --storage` on the NFS mount (64 MiB
# in 4 streams, O_DIRECT, which NFS allows), then one checkpoint of 2 x 8 MiB
# saved there and loaded back under `ckptscope run`, whose storage and
# nfs_client maxima must be the calibration's. Host-side assertions:
# tests/vm/check_calibrate.py.
# (Sourced by /bin/sh in the guest with /vm/lib.sh; see tests/vm/README.md.)
# shellcheck disable=SC2154 # vm_rc: set by vm_ckptscope (guest/lib.sh)
set -eu

mkdir -p "$VM_MNT/cal" "$VM_MNT/ckpt"
cal_rc=0
ckptscope calibrate --storage "$VM_MNT/cal" --bytes 64M --seconds 60 \
	-o "$VM_OUT/calibrate.json" 2>"$VM_OUT/calibrate.stderr" || cal_rc=$?
cat "$VM_OUT/calibrate.stderr"
[ "$cal_rc" -eq 0 ] || vm_fail "ckptscope calibrate exited $cal_rc"
# What it left on the mount: nothing, the NFS client's silly-renamed
# (.nfsXXXX) files of its unlinked open files included.
ls -A "$VM_MNT/cal" >"$VM_OUT/left.txt"
cp /var/lib/ckptscope/maxima.json "$VM_OUT/maxima.json" || vm_fail "no /var/lib/ckptscope/maxima.json"
w="ckptscope-workload --dir $VM_MNT/ckpt --shards 2 --shard-size 8M --checkpoints 1 --fsync"
vm_ckptscope run --storage-endpoint "$VM_SERVER:2049" -- sh -c "
	$w --mode save --ground-truth /tmp/truth-save.json &&
	sync && echo 3 >/proc/sys/vm/drop_caches && sleep 1.5 &&
	$w --mode load --ground-truth /tmp/truth-load.json"
[ "$vm_rc" -eq 0 ] || vm_fail "ckptscope run (the job) exited $vm_rc"
vm_keep_truths save load
vm_summary run summary.json
[ ! -s "$VM_OUT/failures.txt" ]
