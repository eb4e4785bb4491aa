# Benchmark scenario (not a test): what tracing costs an NFS save, inside the
# QEMU guest of tests/vm. Run by bench/nfs_vm.sh; the host side is
# bench/vm/check_nfs_overhead.py.
#
# Rounds alternate a bare save and a traced one (`ckptscope run`), in an order
# rotated every round; each save is 4 shards written and fsync'ed to the NFS
# mount, its duration taken from the workload's own ground truth
# (CLOCK_MONOTONIC). One more traced save runs with kernel BPF stats on, for
# the per-program, per-RPC cost (stats cost time themselves: kept apart).
# (Sourced by /bin/sh in the guest with /vm/lib.sh.)
set -eu

rounds=${VM_BENCH_ROUNDS:-7}
size=${VM_BENCH_SHARD_SIZE:-8M}
mkdir -p "$VM_OUT/rounds"
save() { # KIND ROUND
	rm -rf "$VM_MNT/bench"
	mkdir -p "$VM_MNT/bench"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	set -- "$1" "$2" ckptscope-workload --dir "$VM_MNT/bench" --shards 4 --shard-size "$size" \
		--checkpoints 1 --mode save --fsync --quiet --ground-truth "$VM_OUT/rounds/$1-$2.json"
	case $1 in
	bare) shift 2; "$@" ;;
	traced) k=$1 r=$2; shift 2; ckptscope run --quiet --trace "/tmp/t-$k-$r.db" -- "$@"; rm -f "/tmp/t-$k-$r.db" ;;
	esac
}
r=0
while [ "$r" -lt "$rounds" ]; do
	if [ $((r % 2)) -eq 0 ]; then order="bare traced"; else order="traced bare"; fi
	for kind in $order; do
		save "$kind" "$r" || vm_fail "round $r ($kind) failed"
	done
	r=$((r + 1))
done
vm_say "BPF stats run"
rm -rf "$VM_MNT/bench"
mkdir -p "$VM_MNT/bench"
ckptscope run --quiet --trace /tmp/stats.db --bpf-stats "$VM_OUT/bpf-stats.json" -- \
	ckptscope-workload --dir "$VM_MNT/bench" --shards 4 --shard-size "$size" --checkpoints 1 \
	--mode save --fsync --quiet || vm_fail "the BPF stats run failed"
ckptscope summary /tmp/stats.db --json >"$VM_OUT/stats-summary.json"
[ ! -s "$VM_OUT/failures.txt" ]
