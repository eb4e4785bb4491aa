# Scenario file-layer (issue 18): real clients no one here wrote, in one
# `ckptscope run` (the default --probe-mode auto, which must pick file_layer
# on 6.1 and 6.12), on the NFSv4.2 mount and on a local tmpfs directory, each
# client apart from the others by a 1.5 s quiet gap (the quiet gap is 1 s):
#   fio ioengine=io_uring: a write then a read of 8 MiB on NFS (via io_uring)
#   fio ioengine=psync: the same (via syscall)
#   fio ioengine=libaio direct=1: a write then a read of 64 MiB on NFS in
#     1 MiB requests, 16 out at once (DeepSpeed's async I/O; via aio: the
#     file layer's io_submit_one and do_io_getevents, issue 35)
#   fio ioengine=mmap: a write of 64 MiB through a shared mapping of a file
#     on NFS sized beforehand (via mmap: the folios its stores dirty,
#     writeback_dirty_folio, issue 35)
#   cp -r of 3 shards: tmpfs -> NFS (the kernel refuses to copy across file
#     systems: cp reads and writes), tmpfs -> tmpfs and NFS -> NFS (the
#     kernel copies: via copy_file_range; on NFSv4.2 a server-side COPY)
#   dd oflag=direct bs=1M of 4 MiB onto NFS
#   python3 numpy: np.load(mmap_mode='r') of a 4 MiB .npy on NFS, page cache
#     dropped, and a full sum (via mmap, page granular, plus the header reads);
#     the same of 64 MiB on NFS cold and warm (read into the page cache before
#     the run) and on tmpfs: every page the kernel installs (set_pte_range or
#     do_set_pte, do_set_pmd; issue 35), fault-around and large folios too,
#     and on a tmpfs mounted huge=always, whose 2 MiB folios are mapped by
#     one PMD entry each (do_set_pmd), no fault per page
#   the write-then-rename commit on NFS (issue 35, docs/stitching.md "Decided
#     late"): a safetensors-style atomic save (48 MiB), a plain name renamed
#     to a checkpoint's (40 MiB, the kernel's sums), a staging directory
#     renamed to checkpoints/step_K (40 MiB in two shards), and rsync -a of 4
#     shards (16 MiB: the server's files are in the guest's memory) within NFS: its receiver fchdir()s into the destination
#     (fentry on the syscall's own function) and writes .NAME.XXXXXX, then
#     renames
#   GNU tar -cf of a checkpoint directory on NFS (a load; the archive is
#     unrecognised I/O) and tar -xf of it (a save), 8 MiB; h5py saving and
#     loading model.weights.h5 (2 MiB; the bytes its calls moved);
#     shutil.copytree of 4 shards (16 MiB) within NFS (sendfile: the client
#     copies, via sendfile)
# The guest has 1.5 GiB (vm-memory) and its export 768 MiB (vm-export-size):
# the NFS server's files, the tmpfs directories and the clients' own
# libraries all live in its memory; at 1 GiB the OOM killer ended the run
# once tar and h5py joined, and copytree filled the default 512 MiB export.
# The clients and their ground truth: tests/clients/real_clients.py (also run
# on the host by tests/clients/); the host-side check: check_file_layer.py.
# (Sourced by /bin/sh in the guest with /vm/lib.sh; see tests/vm/README.md.)
# vm-clients: yes
# vm-memory: 1536
# vm-export-size: 768m
# vm-nfs-versions: 4.2
# shellcheck disable=SC2154 # vm_rc: set by vm_ckptscope (guest/lib.sh)
set -eu

local_dir=/tmp/local
mkdir -p "$local_dir"
huge_dir=/tmp/huge
mkdir -p "$huge_dir"
mount -t tmpfs -o huge=always,size=256m tmpfs "$huge_dir" || vm_fail "mounting a huge=always tmpfs failed"
clients="fio_uring:$VM_MNT fio_psync:$VM_MNT fio_libaio:$VM_MNT:64 fio_mmap:$VM_MNT:64"
clients="$clients cp:$local_dir:$VM_MNT cp:$local_dir:$local_dir"
clients="$clients cp:$VM_MNT:$VM_MNT dd:$local_dir:$VM_MNT numpy:$VM_MNT"
clients="$clients numpy:$VM_MNT:64 numpy:$VM_MNT:64:warm numpy:$local_dir:64:warm"
clients="$clients numpy:$huge_dir:64:warm"
clients="$clients atomic:$VM_MNT renamed:$VM_MNT dirrename:$VM_MNT rsync:$VM_MNT:$VM_MNT:16"
clients="$clients tar:$VM_MNT:8 h5py:$VM_MNT:2 copytree:$VM_MNT:$VM_MNT:16"
# shellcheck disable=SC2086 # one word per client
vm_step "real clients: prepare" python3 /vm/real_clients.py prepare --plan /tmp/plan.json $clients
cp /tmp/plan.json "$VM_OUT/plan.json"
vm_ckptscope run --storage-endpoint "$VM_SERVER:2049" -- \
	python3 /vm/real_clients.py run --plan /tmp/plan.json --truth /tmp/truth-clients.json
[ "$vm_rc" -eq 0 ] || vm_fail "ckptscope run (the clients) exited $vm_rc"
vm_keep_truths clients
vm_summary run summary.json
# The guest's memory back (1 GiB, tmpfs is memory): the clients' files are
# checked, the next run needs the room.
umount "$huge_dir"
rm -rf "$local_dir/checkpoints" "$local_dir/source"

# Issue 19, in a run of its own: 32 MiB written through a file no pattern
# recognises, then copied within tmpfs (GNU cp: copy_file_range). Once the
# file is ruled out the file-layer programs sum its calls in the kernel; the
# summary's unrecognised_io must name both files with their exact bytes.
mkdir -p "$local_dir/out"
vm_ckptscope unrecognised -- sh -c "dd if=/dev/zero of=$local_dir/out/model_state.dat bs=1M count=32 2>/dev/null && cp $local_dir/out/model_state.dat $local_dir/out/model_copy.dat"
[ "$vm_rc" -eq 0 ] || vm_fail "ckptscope run (unrecognised) exited $vm_rc"
vm_summary unrecognised unrecognised.json
[ ! -s "$VM_OUT/failures.txt" ]
