# Scenario scale (issue 20): the same save/load on N = 1, 2, 4, 8 "nodes" at
# once, each node a network namespace with its own NFSv4.2 mount of the one
# kernel server (so its own NFS client and TCP connection), behind links shaped
# so that one node is limited by its own link and from N = 4 on the shared side
# (the server's link) is the limit. The traces feed `ckptscope project`
# (predict N = 4 and 8 from N = 1 and 2) and its host-side check.
#
# Topology (10.99.0.0/16):
#   root netns: the NFS server, up0 10.99.0.1/24, route 10.99.0.0/16 via 10.99.0.2
#   netns rtr:  up1 10.99.0.2/24 (up0's peer), ip_forward=1, r_i 10.99.i.1/24
#   netns ns_i: c_i 10.99.i.2/24 (r_i's peer), default route via 10.99.i.1
# Shaping (tbf, each on a device's egress):
#   shared   $VM_SCALE_SHARED_RATE on rtr's up1 (toward the server: saves) and
#            on up0 (toward the clients: loads), an fq_codel under each (fair shares)
#   per node $VM_SCALE_NODE_RATE on c_i (saves) and on rtr's r_i (loads)
# The clients' TCP send buffer is capped (tcp_wmem, as in scenario throttle),
# so checkpoint data waits in the RPC layer, not all in the socket.
# Two guest CPUs (`# vm-smp: 2`): every ckptscope run costs the emulated CPU
# ~4 % whatever the rates (eight of them ~35 %), and with nfsd and the NFS
# client's workers one CPU was 90-100 % busy at N = 8 (nN/cpu.txt says).
#
# Each node runs, in its namespace, `mount` of 10.99.0.1:/ on /mnt/ns_i and
# `ckptscope run --node-name sN-i --trace $VM_OUT/nN/sN-i.db` of one job whose
# command is the same on every node and every N (the report and project merge
# traces of one job and refuse different commands): its directory is its
# working directory (/mnt/ns_i/nN/sN-i), its name in the environment. The job:
# wait for go-save, a save of one 8 MiB shard with fsync, mark saved, wait for
# go-load, the load, mark loaded, wait for its go-exit. The scenario releases
# go-save once every node's job is waiting (all N saves start together), waits
# for all N saves, syncs, drops the page cache (global: every namespace's),
# sleeps 1.5 s (the quiet gap is 1 s) and releases go-load. The barriers are
# FIFOs the scenario holds open for writing: a job opens both before it says
# it is ready and blocks reading; closing the scenario's end wakes every
# reader at once (EOF). Once all N have loaded, the nodes are let go one at a
# time (each its own FIFO, go-exit.NODE, that its job holds open read-write
# and the scenario writes a line into), each after the last one's ckptscope
# run has exited. All the N instances share one kernel, as real nodes do not:
# one that exits detaches its programs from the VFS functions, and a call of
# another node sleeping in one of them then loses its exit program (bpf/
# jobio_file_layer.bpf.h, "A missed exit": the call is lost, counted
# jobio.exit_missed). With every instance attached before go-save and none
# detached before all have loaded, no checkpoint call is in flight then.
# The instances trace in syscall mode ($VM_SCALE_PROBE_MODE): in file-layer
# mode each one's attach and exit patch the call sites of some 40 kernel
# functions, N at a time, and in this 2-CPU TCG guest that crashed the kernel
# twice (Oops: int3 at vfs_read+0x5: the breakpoint text_poke_bp writes while
# it patches, run by the other vCPU after the patch was done, a stale
# translation). Since then the guest's vCPUs take turns on one host thread
# (run.sh: thread=single), which that race needs two of, and a syscall-mode
# instance no longer tries an fentry program on vfs_read (docs/probe-modes.md).
# The file layer beside other instances is what scenario trampoline-update
# tests (one CPU); the projection reads the NFS and RPC figures, the same in
# both modes.
#
# Output in $VM_OUT (the layout check_scale.py reads):
#   scale.json                    the settings, the job's command, per N its nodes, times, exit codes
#   nN/sN-i.db                    node i's trace of the run with N nodes
#   nN/sN-i.summary.json          `ckptscope summary --json` of it
#   nN/sN-i.truth-save.json, nN/sN-i.truth-load.json   the workload's ground truths
#   nN/sN-i.stdout, .stderr, .log, .rc   ckptscope run's output, job log, exit status
#   nN/qdisc.txt                  `tc -s qdisc` of every shaped device after the run (sent, dropped)
#   nN/netstat-before.txt, nN/netstat-after.txt   /proc/net/snmp and netstat of the
#                                 server's, rtr's and each node's netns around the run
#   nN/times.txt                  the guest's clock (ns): go_save, all_saved, go_load, all_loaded, end
#   nN/cpu.txt                    /proc/stat's cpu line at each of those, the busy share, the
#                                 save phase's CPU time by program
#   nN/meminfo.txt                /proc/meminfo once all N saved
# (Sourced by /bin/sh in the guest with /vm/lib.sh; see tests/vm/README.md.)
# vm-kernels: 6.12
# vm-smp: 2
# vm-nfs-versions: 4.2
# vm-modules: veth sch_tbf
# vm-mount: self
# vm-export-clients: 127.0.0.1 10.99.0.0/16
set -eu

: "${VM_SCALE_NODES:=1 2 4 8}"
: "${VM_SCALE_PROBE_MODE:=syscall}"
: "${VM_SCALE_SHARED_RATE:=64mbit}" "${VM_SCALE_NODE_RATE:=20mbit}"
: "${VM_SCALE_BURST:=128kb}" "${VM_SCALE_LIMIT:=4mb}"
# Under the shared tbf: its queue, one per connection served in turn (fq_codel,
# with codel's drops out of reach: target 1 s), so the nodes share the
# server's link evenly (in one FIFO, 8 TCP flows finished their 8 MiB up to
# 30 % apart, and the stragglers left the shared link idle). Empty: tbf's FIFO.
: "${VM_SCALE_SHARED_QUEUE=fq_codel limit 10000 target 1s interval 10s noecn}"
# The links' MTU (Ethernet's; 9000 cost the CPU as much).
: "${VM_SCALE_MTU:=1500}"
: "${VM_SCALE_SHARD_SIZE:=8M}"
# Each mount's readahead (KiB): 1 MiB keeps about 8 READs of 128 KiB in flight.
: "${VM_SCALE_READ_AHEAD_KB:=1024}"
: "${VM_SCALE_WMEM:=4096 65536 262144}"
# The page cache and its dirty limit are the one guest's, shared by all the
# "nodes" (real nodes each have their own): with the default limit, 8 x 8 MiB
# dirty throttled every node's write() 4-5 s. A limit far above N x the shard
# size keeps each node's writes in its page cache until its fsync, as on a node.
: "${VM_SCALE_DIRTY_BYTES:=402653184}" "${VM_SCALE_DIRTY_BACKGROUND_BYTES:=268435456}"
SERVER=10.99.0.1
TC=/usr/sbin/tc # iproute2's (busybox's tc has no tbf)
[ -x "$TC" ] || { vm_fail "no iproute2 tc at $TC in the guest"; exit 1; }

max=0
for n in $VM_SCALE_NODES; do [ "$n" -gt "$max" ] && max=$n; done
if [ "$max" -lt 1 ] || [ "$max" -gt 250 ]; then
	vm_fail "VM_SCALE_NODES: 1 to 250 nodes, not '$VM_SCALE_NODES'"
	exit 1
fi

# scale_Bps RATE: tc's rate (64mbit, 20Mbit, 500kbit, 1gbit: bits, SI) in bytes/s.
scale_Bps() {
	echo "$1" | awk '{ r = tolower($0); m = 1
		if (r ~ /gbit$/) m = 1e9; else if (r ~ /mbit$/) m = 1e6; else if (r ~ /kbit$/) m = 1e3
		sub(/[a-z]+$/, "", r); printf "%.0f\n", r * m / 8 }'
}

# The job: the same command on every node and for every N.
# Programs by their full path: a PATH search stats /opt/ckptscope/bin/NAME, and a
# directory matching `*ckpt*` makes that a checkpoint path (a stat then moved
# the save's start before go-save).
w="/opt/ckptscope/bin/ckptscope-workload --shards 1 --shard-size $VM_SCALE_SHARD_SIZE --checkpoints 1 --processes 1 --threads 1 --fsync --dir ."
# shellcheck disable=SC2016 # expanded by the job's shell
job='exec 3<"$SCALE_SYNC/go-save" 4<"$SCALE_SYNC/go-load" 5<>"$SCALE_SYNC/go-exit.$SCALE_NODE" && /usr/bin/touch "$SCALE_SYNC/ready.$SCALE_NODE" && { read -r _ <&3 || :; } && '"$w"' --mode save --ground-truth "$SCALE_SYNC/$SCALE_NODE.truth-save.json" 3<&- 4<&- 5<&- && /usr/bin/touch "$SCALE_SYNC/saved.$SCALE_NODE" && { read -r _ <&4 || :; } && '"$w"' --mode load --ground-truth "$SCALE_SYNC/$SCALE_NODE.truth-load.json" 3<&- 4<&- 5<&- && /usr/bin/touch "$SCALE_SYNC/loaded.$SCALE_NODE" && read -r _ <&5'

# --- topology ---------------------------------------------------------------
scale_topology() {
	ip link add up0 mtu "$VM_SCALE_MTU" type veth peer name up1 mtu "$VM_SCALE_MTU" &&
		ip netns add rtr &&
		ip link set up1 netns rtr &&
		ip addr add "$SERVER/24" dev up0 &&
		ip link set up0 up &&
		ip -n rtr link set lo up &&
		ip -n rtr addr add 10.99.0.2/24 dev up1 &&
		ip -n rtr link set up1 up &&
		ip netns exec rtr sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward' &&
		ip route add 10.99.0.0/16 via 10.99.0.2 || return 1
	_i=1
	while [ "$_i" -le "$max" ]; do
		ip netns add "ns_$_i" &&
			ip link add "r_$_i" mtu "$VM_SCALE_MTU" type veth peer name "c_$_i" mtu "$VM_SCALE_MTU" &&
			ip link set "r_$_i" netns rtr &&
			ip link set "c_$_i" netns "ns_$_i" &&
			ip -n rtr addr add "10.99.$_i.1/24" dev "r_$_i" &&
			ip -n rtr link set "r_$_i" up &&
			ip -n "ns_$_i" link set lo up &&
			ip -n "ns_$_i" addr add "10.99.$_i.2/24" dev "c_$_i" &&
			ip -n "ns_$_i" link set "c_$_i" up &&
			ip -n "ns_$_i" route add default via "10.99.$_i.1" &&
			mkdir -p "/mnt/ns_$_i" || return 1
		# Each node's NFSv4 client its own identity (EXCHANGE_ID's owner: the
		# hostname is the same in every namespace), and a busy client's send buffer.
		ip netns exec "ns_$_i" sh -c "echo ckptscope-scale-ns_$_i >/sys/fs/nfs/net/nfs_client/identifier &&
			echo '$VM_SCALE_WMEM' >/proc/sys/net/ipv4/tcp_wmem" || return 1
		_i=$((_i + 1))
	done
}
if ! { echo "$VM_SCALE_DIRTY_BACKGROUND_BYTES" >/proc/sys/vm/dirty_background_bytes &&
	echo "$VM_SCALE_DIRTY_BYTES" >/proc/sys/vm/dirty_bytes; }; then
	vm_fail "cannot set vm.dirty_bytes"
	exit 1
fi
vm_step "topology: server $SERVER, router rtr, $max client namespaces" scale_topology || exit 1
_i=1
while [ "$_i" -le "$max" ]; do
	ip netns exec "ns_$_i" ping -c 1 -W 5 "$SERVER" >/dev/null ||
		{ vm_fail "ns_$_i cannot reach the server $SERVER"; exit 1; }
	_i=$((_i + 1))
done

# --- shaping (again for every N: each run's qdisc counters start at 0) --------
scale_tbf() { # NETNS|- DEV RATE [CHILD-QDISC...]
	if [ "$1" = - ]; then _tc=$TC; else _tc="$TC -n $1"; fi
	_dev=$2 _rate=$3
	shift 3
	$_tc qdisc del dev "$_dev" root 2>/dev/null || true
	$_tc qdisc add dev "$_dev" root handle 1: tbf rate "$_rate" burst "$VM_SCALE_BURST" limit "$VM_SCALE_LIMIT" || return 1
	[ $# -eq 0 ] || $_tc qdisc add dev "$_dev" parent 1:1 handle 10: "$@"
}
scale_shape() {
	# shellcheck disable=SC2086 # the child qdisc's words
	scale_tbf - up0 "$VM_SCALE_SHARED_RATE" $VM_SCALE_SHARED_QUEUE &&
		scale_tbf rtr up1 "$VM_SCALE_SHARED_RATE" $VM_SCALE_SHARED_QUEUE || return 1
	_i=1
	while [ "$_i" -le "$max" ]; do
		scale_tbf rtr "r_$_i" "$VM_SCALE_NODE_RATE" &&
			scale_tbf "ns_$_i" "c_$_i" "$VM_SCALE_NODE_RATE" || return 1
		_i=$((_i + 1))
	done
}
scale_qdisc_stats() { # FILE
	{
		echo "# root netns up0 (shared, loads)"
		$TC -s qdisc show dev up0
		echo "# rtr up1 (shared, saves)"
		$TC -n rtr -s qdisc show dev up1
		_i=1
		while [ "$_i" -le "$max" ]; do
			echo "# rtr r_$_i (node $_i, loads)"
			$TC -n rtr -s qdisc show dev "r_$_i"
			echo "# ns_$_i c_$_i (node $_i, saves)"
			$TC -n "ns_$_i" -s qdisc show dev "c_$_i"
			_i=$((_i + 1))
		done
	} >"$1" 2>&1
}

# scale_cpu_busy FILE: the CPUs' busy share in the save and in the load phase.
scale_cpu_busy() {
	awk '{ t = 0; for (i = 2; i <= NF; i++) t += $i; tot[$1] = t; idle[$1] = $5 + $6 }
	     function busy(a, b) { return tot[b] > tot[a] ? 100 * (1 - (idle[b] - idle[a]) / (tot[b] - tot[a])) : 0 }
	     END { printf "cpu busy: save phase %.0f %%, load phase %.0f %%\n",
	           busy("cpu_go_save", "cpu_all_saved"), busy("cpu_go_load", "cpu_all_loaded") }' "$1" | tee -a "$1"
}

# scale_ps: "PID COMM UTIME STIME" of every process (USER_HZ ticks).
scale_ps() {
	cat /proc/[0-9]*/stat 2>/dev/null | awk '{ print $1, $2, $14, $15 }'
}
# scale_ps_top BEFORE AFTER: the CPU time between them by program, the top 10.
scale_ps_top() {
	echo "save phase CPU ticks by program (user+sys, user, sys):"
	awk 'NR == FNR { u[$1] = $3; s[$1] = $4; next }
	     { du = $3 - u[$1]; ds = $4 - s[$1]; U[$2] += du; S[$2] += ds }
	     END { for (c in U) if (U[c] + S[c] > 0) print U[c] + S[c], U[c], S[c], c }' "$1" "$2" |
		sort -rn | head -n 10 | sed 's/^/  /'
}

# scale_netstat N FILE: TCP's counters (/proc/net/snmp, /proc/net/netstat:
# retransmits, spurious timeouts, reordering, losses) of the server's netns,
# the router's and nodes 1..N's, each after a "# NETNS" line.
scale_netstat() {
	{
		echo "# root"
		cat /proc/net/snmp /proc/net/netstat
		for _ns in rtr $(seq 1 "$1" | sed 's/^/ns_/'); do
			echo "# $_ns"
			ip netns exec "$_ns" cat /proc/net/snmp /proc/net/netstat
		done
	} >"$2" 2>&1
}

# scale_count DIR PREFIX: how many DIR/PREFIX* files there are.
scale_count() {
	set -- "$1/$2"*
	if [ -e "$1" ]; then echo $#; else echo 0; fi
}

# scale_exited_early SYNC PREFIX: the nodes that ended (their $d/rc.NODE) without
# SYNC/PREFIXNODE, as "NODE=STATUS ...".
scale_exited_early() {
	for _f in "$d"/rc.*; do
		[ -e "$_f" ] || continue
		_node=${_f##*/rc.}
		[ -e "$1/$2$_node" ] || printf '%s=%s ' "$_node" "$(cat "$_f")"
	done
}

# scale_wait N SYNC PREFIX WHAT DEADLINE_S: until N SYNC/PREFIX* exist; a node that
# ended without its own or the deadline is a failure (returns 1).
scale_wait() {
	_t=0
	while [ "$(scale_count "$2" "$3")" -lt "$1" ]; do
		_early=$(scale_exited_early "$2" "$3")
		if [ -n "$_early" ]; then
			vm_fail "N=$1: node(s) ended before they were $4: $_early(see nN/NODE.stderr)"
			return 1
		fi
		if [ "$_t" -ge "$(($5 * 2))" ]; then
			vm_fail "N=$1: only $(scale_count "$2" "$3") of $1 nodes $4 after $5 s"
			return 1
		fi
		# (Each look forks 3 times: every 0.2 s cost one CPU 5 %.)
		sleep 0.5
		_t=$((_t + 1))
	done
}

# scale_wait_exit NODE DEADLINE_S: until NODE's ckptscope run has exited
# ($d/rc.NODE); past the deadline a failure (returns 1).
scale_wait_exit() {
	_t=0
	until [ -e "$d/rc.$1" ]; do
		if [ "$_t" -ge "$(($2 * 5))" ]; then
			vm_fail "N=$n: node $1: ckptscope run still running $2 s after its go-exit"
			return 1
		fi
		sleep 0.2
		_t=$((_t + 1))
	done
}

runs_json=
# scale_run N: the job on nodes 1..N at once.
scale_run() {
	n=$1
	d="$VM_OUT/n$n"
	sync_dir="/tmp/scale/n$n"
	mkdir -p "$d" "$sync_dir"
	vm_step "N=$n: shaping: shared $VM_SCALE_SHARED_RATE, per node $VM_SCALE_NODE_RATE" scale_shape || return 1
	mkfifo "$sync_dir/go-save" "$sync_dir/go-load"
	_i=1
	while [ "$_i" -le "$n" ]; do
		mkfifo "$sync_dir/go-exit.s$n-$_i"
		_i=$((_i + 1))
	done
	scale_netstat "$n" "$d/netstat-before.txt"
	# Held open for writing until the release (O_RDWR: never blocks).
	exec 8<>"$sync_dir/go-save" 9<>"$sync_dir/go-load"
	pids=
	_i=1
	while [ "$_i" -le "$n" ]; do
		node="s$n-$_i"
		mkdir -p "$VM_EXPORT/n$n/$node"
		(
			exec 8>&- 9>&-
			_rc=0
			# shellcheck disable=SC2016 # expanded by the namespace's shell
			SCALE_NODE=$node SCALE_SYNC=$sync_dir SCALE_JOB=$job ip netns exec "ns_$_i" sh -c '
				mount.nfs "$1:/" "$2" -o vers=4.2 || { echo "scale: mount of $1:/ on $2 failed" >&2; exit 90; }
				# The mount'"'"'s readahead (its bdi is the mount'"'"'s major:minor):
				# the default keeps about 2 READs in flight, and the reader'"'"'s
				# pauses (CPU, in one guest for N nodes) then move the wait.
				_bdi=$(awk -v m="$2" '"'"'$5 == m { print $3 }'"'"' /proc/self/mountinfo)
				echo "$5" >"/sys/class/bdi/$_bdi/read_ahead_kb" ||
					{ echo "scale: cannot set read_ahead_kb of $2 ($_bdi)" >&2; exit 92; }
				cd "$2/$3" || { echo "scale: no directory $2/$3 on the mount" >&2; exit 91; }
				exec ckptscope run --node-name "$SCALE_NODE" --trace "$4.db" --log "$4.log" \
					--storage-endpoint "$1:2049" --probe-mode "$6" -- sh -c "$SCALE_JOB"' \
				scale "$SERVER" "/mnt/ns_$_i" "n$n/$node" "$d/$node" "$VM_SCALE_READ_AHEAD_KB" "$VM_SCALE_PROBE_MODE" >"$d/$node.stdout" 2>"$d/$node.stderr" || _rc=$?
			echo "$_rc" >"$d/$node.rc"
			# (rc.NODE: the waits below notice a node that ended early.)
			echo "$_rc" >"$d/rc.$node"
		) &
		pids="$pids $!"
		_i=$((_i + 1))
	done
	vm_say "N=$n: $n ckptscope runs started; waiting until every job waits for go-save"
	_ok=1
	scale_wait "$n" "$sync_dir" ready. "waiting for go-save" $((60 + 20 * n)) || _ok=0
	t_go_save=$(vm_now_ns)
	cpu_go_save=$(head -n 1 /proc/stat)
	scale_ps >"$sync_dir/ps-go-save"
	exec 8>&-
	[ "$_ok" = 1 ] && vm_say "N=$n: go-save"
	[ "$_ok" = 0 ] || scale_wait "$n" "$sync_dir" saved. "saved" $((60 + 15 * n)) || _ok=0
	t_saved=$(vm_now_ns)
	cpu_saved=$(head -n 1 /proc/stat)
	scale_ps >"$sync_dir/ps-saved"
	cat /proc/meminfo >"$d/meminfo.txt"
	[ "$_ok" = 1 ] && vm_say "N=$n: all $n saved; sync, drop_caches, 1.5 s"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 1.5
	t_go_load=$(vm_now_ns)
	cpu_go_load=$(head -n 1 /proc/stat)
	exec 9>&-
	vm_say "N=$n: go-load"
	[ "$_ok" = 0 ] || scale_wait "$n" "$sync_dir" loaded. "loaded" $((60 + 15 * n)) || _ok=0
	t_loaded=$(vm_now_ns)
	cpu_loaded=$(head -n 1 /proc/stat)
	[ "$_ok" = 1 ] && vm_say "N=$n: all $n loaded; the nodes exit one at a time"
	_i=1
	while [ "$_i" -le "$n" ]; do
		node="s$n-$_i"
		if [ ! -e "$d/rc.$node" ]; then
			echo go 1<>"$sync_dir/go-exit.$node" # (read-write: never blocks)
			scale_wait_exit "$node" 120 || _ok=0
		fi
		_i=$((_i + 1))
	done
	# shellcheck disable=SC2086 # one word per pid
	wait $pids || true
	t_end=$(vm_now_ns)
	cpu_end=$(head -n 1 /proc/stat)
	rm -f "$d"/rc.*
	# The export is a tmpfs in the guest's memory: this run's files go.
	rm -rf "${VM_EXPORT:?}/n$n"
	vm_say "N=$n: done"
	printf 'go_save %s\nall_saved %s\ngo_load %s\nall_loaded %s\nend %s\n' "$t_go_save" "$t_saved" "$t_go_load" "$t_loaded" "$t_end" >"$d/times.txt"
	# The CPUs' time (/proc/stat's cpu line, USER_HZ) at each: is the CPU the limit?
	printf 'cpu_go_save %s\ncpu_all_saved %s\ncpu_go_load %s\ncpu_all_loaded %s\ncpu_end %s\n' \
		"$cpu_go_save" "$cpu_saved" "$cpu_go_load" "$cpu_loaded" "$cpu_end" |
		sed 's/ cpu  */ /' >"$d/cpu.txt"
	scale_cpu_busy "$d/cpu.txt"
	scale_ps_top "$sync_dir/ps-go-save" "$sync_dir/ps-saved" >>"$d/cpu.txt"
	scale_qdisc_stats "$d/qdisc.txt"
	scale_netstat "$n" "$d/netstat-after.txt"
	nodes_json=
	_i=1
	while [ "$_i" -le "$n" ]; do
		node="s$n-$_i"
		_rc=$(cat "$d/$node.rc" 2>/dev/null || echo none)
		sed "s/^/[$node] /" "$d/$node.stderr" 2>/dev/null || true
		[ "$_rc" = 0 ] || vm_fail "N=$n: node $node: ckptscope run (mount, job) exited $_rc: $(tail -n 5 "$d/$node.stderr" 2>/dev/null | tr '\n' ' ')"
		if grep -q 'nothing will be traced' "$d/$node.stderr" 2>/dev/null; then
			vm_fail "N=$n: node $node: ckptscope could not load its probes: $(head -c 4000 "$d/$node.stderr")"
		fi
		for _t in save load; do
			if [ -s "$sync_dir/$node.truth-$_t.json" ]; then
				cp "$sync_dir/$node.truth-$_t.json" "$d/$node.truth-$_t.json"
			else
				vm_fail "N=$n: node $node: the workload's $_t wrote no ground truth"
			fi
		done
		if [ -s "$d/$node.db" ]; then
			ckptscope summary "$d/$node.db" --json >"$d/$node.summary.json" ||
				vm_fail "N=$n: node $node: ckptscope summary of its trace failed"
		else
			vm_fail "N=$n: node $node: no trace $d/$node.db"
		fi
		nodes_json="$nodes_json${nodes_json:+, }{\"name\": \"$node\", \"namespace\": \"ns_$_i\", \"address\": \"10.99.$_i.2\", \"trace\": \"n$n/$node.db\", \"rc\": \"$_rc\"}"
		_i=$((_i + 1))
	done
	runs_json="$runs_json${runs_json:+, }{\"n\": $n, \"go_save_ns\": $t_go_save, \"all_saved_ns\": $t_saved, \"go_load_ns\": $t_go_load, \"all_loaded_ns\": $t_loaded, \"end_ns\": $t_end, \"ok\": $([ "$_ok" = 1 ] && echo true || echo false), \"nodes\": [$nodes_json]}"
}

for n in $VM_SCALE_NODES; do
	scale_run "$n" || vm_fail "N=$n: the run could not be set up"
done

# The job's command as JSON (it has quotes, no backslashes or newlines).
job_json=$(printf '%s' "$job" | sed 's/"/\\"/g')
printf '{"nodes": [%s], "server": "%s:2049", "shared_rate": "%s", "shared_Bps": %s, "node_rate": "%s", "node_Bps": %s, "burst": "%s", "limit": "%s", "shared_queue": "%s", "mtu": %s, "shard_size": "%s", "read_ahead_kb": %s, "tcp_wmem": "%s", "dirty_bytes": %s, "dirty_background_bytes": %s, "command": ["sh", "-c", "%s"], "runs": [%s]}\n' \
	"$(echo "$VM_SCALE_NODES" | tr -s ' ' ',' | sed 's/^,//;s/,$//')" "$SERVER" "$VM_SCALE_SHARED_RATE" "$(scale_Bps "$VM_SCALE_SHARED_RATE")" "$VM_SCALE_NODE_RATE" "$(scale_Bps "$VM_SCALE_NODE_RATE")" \
	"$VM_SCALE_BURST" "$VM_SCALE_LIMIT" "$VM_SCALE_SHARED_QUEUE" "$VM_SCALE_MTU" "$VM_SCALE_SHARD_SIZE" "$VM_SCALE_READ_AHEAD_KB" "$VM_SCALE_WMEM" "$VM_SCALE_DIRTY_BYTES" "$VM_SCALE_DIRTY_BACKGROUND_BYTES" "$job_json" "$runs_json" >"$VM_OUT/scale.json"
[ ! -s "$VM_OUT/failures.txt" ]
