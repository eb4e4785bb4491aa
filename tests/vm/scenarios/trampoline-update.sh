# Scenario trampoline-update (issue 18): another tool attaches and detaches
# programs on the file-layer functions while a traced call sleeps in one of
# them. The kernel then skips that call's fexit programs (kernel/bpf/
# trampoline.c bpf_tramp_image_put(); bpf/jobio_file_layer.bpf.h, "A missed
# exit"). Until that was handled, the thread's trace stopped there, silently.
#
# Two runs, each one shell thread under `ckptscope run` that first blocks on
# a FIFO, then becomes the workload (exec: the same thread does the
# checkpoint I/O):
#   blocked_read: in read(2) on the FIFO (vfs_read). Not a file we report,
#     so nothing of ours is lost: jobio.exit_missed must stay 0.
#   blocked_open: in open(2) of the FIFO (do_sys_openat2, a path call we
#     record): that open is lost and counted, jobio.exit_missed 1.
# While the thread sleeps, a second `ckptscope run` loads, attaches its
# programs to the same functions and exits; then the FIFO is opened and
# written, the call returns without its exit program, and the workload saves
# (blocked_read) or loads (blocked_open) 8 MiB on NFS.
#   blocked_close: a third run saves one 4 MiB shard on NFS (no fsync) with
#     the loopback throttled, so the shard's close flushes for up to 32 s
#     (filp_flush); the second instance comes and goes meanwhile, the
#     throttle is lifted, and the same thread then sleeps 30 s with no file
#     call (--quiet, no ground truth: a record of the thread would end the
#     flush anyway), as a trainer does after its last close. The close's
#     record never comes: the flush must not become a stall (stall_s 20,
#     config.json), because /proc shows the thread in nanosleep, not in a
#     close (sources/flush_return.h). Exit missed: 1, at the thread's exit.
# check_trampoline_update.py: each checkpoint's bytes against ground truth.
# vm-nfs-versions: 4.2
# vm-modules: sch_netem
set -eu

mkdir -p "$VM_MNT/t"
w="ckptscope-workload --dir $VM_MNT/t --shards 2 --shard-size 4M --checkpoints 1 --block-size 256K"

# trampoline_round NAME SYSCALL_NR RELEASE JOB [RUN_ARG...]: JOB (sh -c)
# under ckptscope run (with RUN_ARGs); once JOB's shell sleeps in system
# call SYSCALL_NR, the second instance, then RELEASE (sh -c: what wakes the
# call up).
trampoline_round() {
	_name=$1 _nr=$2 _release=$3 _job=$4
	shift 4
	rm -f /tmp/job.pid
	vm_say "round $_name: the job starts under ckptscope run"
	ckptscope run --trace "/tmp/$_name.db" --quiet "$@" -- sh -c "echo \$\$ >/tmp/job.pid; $_job" \
		>"$VM_OUT/$_name.out" 2>&1 &
	_run=$!
	_tries=0
	until [ -s /tmp/job.pid ] && [ "$(cut -d' ' -f1 "/proc/$(cat /tmp/job.pid)/syscall" 2>/dev/null)" = "$_nr" ]; do
		_tries=$((_tries + 1))
		[ "$_tries" -lt 600 ] || { vm_fail "round $_name: the job never blocked in system call $_nr"; break; }
		sleep 0.1
	done
	vm_say "round $_name: the job sleeps in system call $_nr; a second ckptscope run attaches and exits"
	ckptscope run --trace "/tmp/$_name-second.db" --quiet -- true >"$VM_OUT/$_name-second.out" 2>&1 ||
		vm_fail "round $_name: the second ckptscope run exited $?"
	vm_step "round $_name: $_release" sh -c "$_release"
	wait "$_run" || vm_fail "round $_name: ckptscope run exited $?"
	vm_summary "$_name" "$_name.summary.json"
}

# x86_64 system call numbers: read 0, close 3, openat 257 (the guests are x86_64).
rm -f /tmp/gate && mkfifo /tmp/gate
trampoline_round blocked_read 0 "echo go >/tmp/gate" \
	"exec 3<>/tmp/gate; read -r line <&3; exec $w --mode save --fsync --ground-truth /tmp/truth-blocked_read.json"
sync && echo 3 >/proc/sys/vm/drop_caches
rm -f /tmp/gate && mkfifo /tmp/gate
trampoline_round blocked_open 257 "echo go >/tmp/gate" \
	"exec 3</tmp/gate; exec $w --mode load --ground-truth /tmp/truth-blocked_open.json"
vm_keep_truths blocked_read blocked_open

TC=/usr/sbin/tc # iproute2's: busybox's tc has no netem
[ -x "$TC" ] || { vm_fail "no iproute2 tc at $TC in the guest"; exit 1; }
mkdir -p "$VM_MNT/t/close"
printf '{"checkpoint": {"stall_s": 20}}\n' >"$VM_OUT/config.json"
vm_step "throttle lo to 1 Mbit/s: 4 MiB take 32 s to flush" "$TC" qdisc add dev lo root netem rate 1mbit limit 10000
trampoline_round blocked_close 3 "$TC qdisc del dev lo root" \
	"exec ckptscope-workload --dir $VM_MNT/t/close --shards 1 --shard-size 4M --checkpoints 1 --mode save --quiet --sleep-ms 30000" \
	--config "$VM_OUT/config.json"
[ ! -s "$VM_OUT/failures.txt" ]
