# Scenario local-disk (issue 38): the storage stage on a block device in the
# file layer (the default --probe-mode auto picks it on 6.1 and 6.12), which
# this project's CI host cannot load. An ext2 file system (busybox mke2fs;
# the kernel's ext4 driver) on a loop device over a file in /tmp: a request-
# based device, whose requests complete their bios (block_rq_complete). One
# `ckptscope run` of ckptscope-workload, 2 checkpoints of 2 x 24 MiB:
#   save 1 with fsync: its writeback is the storage stage's (the bytes that
#     reached the device), nothing left dirty;
#   save 2 buffered: nothing reached the device inside it, 48 MiB left dirty;
#   load 1 cold (its files dropped from the page cache first): every byte
#     read from the device;
#   load 2 warm (save 2's pages still cached): nothing from the device, and
#     the verdict is not the storage.
# Host-side assertions: tests/vm/check_local_disk.py.
# (Sourced by /bin/sh in the guest with /vm/lib.sh; see tests/vm/README.md.)
# vm-modules: loop
# vm-nfs-versions: 4.2
# shellcheck disable=SC2154 # vm_rc: set by vm_ckptscope (guest/lib.sh)
set -eu

img=/tmp/disk.img
disk=/mnt/disk
dd if=/dev/zero of="$img" bs=1M count=160 2>/dev/null || vm_fail "cannot make $img"
mkdir -p "$disk"
loopdev=$(losetup -f) || vm_fail "no free loop device"
losetup "$loopdev" "$img" || vm_fail "losetup $loopdev $img failed"
# busybox's mke2fs wants the block device, not the image.
mke2fs -q "$loopdev" || vm_fail "mke2fs $loopdev failed"
mount -t ext2 "$loopdev" "$disk" || vm_fail "mounting $loopdev (ext2) on $disk failed"
stat -c '%d %D' "$disk" >"$VM_OUT/device.txt"
vm_ckptscope run -- ckptscope-workload --dir "$disk/ckpt" --shards 2 --shard-size 24M \
	--checkpoints 2 --fsync --buffered-checkpoints 2 --cold-checkpoints 1 \
	--ground-truth /tmp/truth-both.json
[ "$vm_rc" -eq 0 ] || vm_fail "ckptscope run (the job) exited $vm_rc"
vm_keep_truths both
vm_summary run summary.json
umount "$disk" || true
losetup -d "$loopdev" || true
