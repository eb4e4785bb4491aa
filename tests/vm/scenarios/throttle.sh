# vm-modules: sch_netem
# vm-mount: self
# Scenario throttle: the same save twice in one `ckptscope run`: first on the
# plain loopback (the baseline), then with the loopback throttled and lossy
# (netem: rate, delay, loss on lo's egress, which both directions cross).
# 8 shards x 2 MiB written by 2 processes x 4 threads with fsync. The config
# gives the transport its maximum: the throttle's rate.
# lo's MTU is set to 1500 before the mount, as on an Ethernet link (with lo's
# 64 KiB MTU a 1 MB/s-class link carries one segment every ~10 ms).
# Host-side assertions: tests/vm/check_throttle.py.
# shellcheck disable=SC2154 # vm_rc: set by vm_ckptscope (guest/lib.sh)
set -eu

# 64 Mbit/s = 8 MB/s: 16 MiB take ~2.1 s throttled (~0.4 s unthrottled here).
: "${VM_THROTTLE_RATE:=64mbit}" "${VM_THROTTLE_MAX:=64Mbit/s}"
: "${VM_THROTTLE_NETEM:=delay 10ms loss 0.1% limit 10000}"
: "${VM_THROTTLE_MTU:=1500}"
TC=/usr/sbin/tc # iproute2's: busybox's tc has no netem
[ -x "$TC" ] || { vm_fail "no iproute2 tc at $TC in the guest"; exit 1; }
vm_step "ip link set lo mtu $VM_THROTTLE_MTU" ip link set lo mtu "$VM_THROTTLE_MTU"
# A send buffer of at most 256 KiB (a busy client's, not the 4 MiB an idle
# guest autotunes to): more than that waiting makes RPCs queue before
# transmission, as on a congested link, instead of all sitting in the socket.
: "${VM_THROTTLE_WMEM:=4096 65536 262144}"
echo "$VM_THROTTLE_WMEM" >/proc/sys/net/ipv4/tcp_wmem || { vm_fail "cannot set tcp_wmem"; exit 1; }
vm_nfs_mount
mkdir -p "$VM_MNT/ckpt-base" "$VM_MNT/ckpt-throttled"
printf '{"checkpoint": {"quiet_gap_ms": 1000}, "maxima": {"transport_bandwidth": "%s"}}\n' \
	"$VM_THROTTLE_MAX" >"$VM_OUT/config.json"
printf 'mtu %s, tcp_wmem %s, netem rate %s %s, transport maximum %s\n' "$VM_THROTTLE_MTU" \
	"$VM_THROTTLE_WMEM" "$VM_THROTTLE_RATE" "$VM_THROTTLE_NETEM" "$VM_THROTTLE_MAX" >"$VM_OUT/throttle.txt"
w="ckptscope-workload --shards 8 --shard-size 2M --checkpoints 1 --processes 2 --threads 4 --fsync --mode save"
# Each save is its own checkpoint: 1.5 s apart (quiet gap 1 s). The qdisc
# statistics (sent, dropped) go to the job's stdout.
vm_ckptscope run --config "$VM_OUT/config.json" --storage-endpoint "$VM_SERVER:2049" -- sh -c "
	$w --dir $VM_MNT/ckpt-base --ground-truth /tmp/truth-base.json &&
	sleep 1.5 &&
	$TC qdisc add dev lo root netem rate $VM_THROTTLE_RATE $VM_THROTTLE_NETEM &&
	$w --dir $VM_MNT/ckpt-throttled --ground-truth /tmp/truth-throttled.json &&
	$TC -s qdisc show dev lo &&
	$TC qdisc del dev lo root"
[ "$vm_rc" -eq 0 ] || vm_fail "ckptscope run (the job) exited $vm_rc"
# Never leave the throttle behind (the job may have failed half-way).
$TC qdisc del dev lo root 2>/dev/null || true
vm_keep_truths base throttled
vm_summary run summary.json
[ ! -s "$VM_OUT/failures.txt" ]
