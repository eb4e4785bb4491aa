# Benchmark scenario (not a test, issue 18): what the job-I/O probes cost per
# call in their two modes, inside the QEMU guest of tests/vm (6.12: fentry
# works there, unlike on this host). Run by bench/filelayer_vm.sh; the host
# side is bench/vm/check_filelayer_overhead.py.
#
# Part 1, per traced call: io_loop (bench/io_loop.cpp) does N 4 KiB writes
# then N reads of a checkpoint file on tmpfs, bare, under `ckptscope run
# --probe-mode file_layer`, under `--probe-mode syscall` and under
# bench/minimal_probe (one fexit on vfs_write/vfs_read: a verdict lookup and a
# per-inode counter, the floor issue 18 set its target against), the four
# alternated in an order rotated every round (io_loop times its own calls);
# once growing the file as a checkpoint does ("call-*"), once cycling over
# its first VM_BENCH_SPAN bytes ("span-*": no allocation, less spread).
# Part 2, the node exporter's cost on I/O that is no checkpoint's: a getppid
# loop and io_loop on a non-checkpoint file, bare and with `ckptscope
# exporter --probe-mode file_layer|syscall` running, rotated the same way.
# Under TCG every instruction is emulated: ratios, not bare-metal figures.
# (Sourced by /bin/sh in the guest with /vm/lib.sh.)
set -eu

rounds=${VM_BENCH_ROUNDS:-5}
calls=${VM_BENCH_CALLS:-20000}
ppid_calls=${VM_BENCH_PPID_CALLS:-200000}
span=${VM_BENCH_SPAN:-1048576}
for _b in io_loop getppid_loop minimal_probe; do
	command -v "$_b" >/dev/null || { vm_fail "$_b is not in the guest (build the bench targets)"; exit 1; }
done
mkdir -p "$VM_OUT/rounds" /tmp/bench/checkpoints /tmp/bench/plain
per_call_kinds="bare file_layer syscall minimal"
# VM_BENCH_BASELINE=1 (filelayer_vm.sh --baseline-build): another build's
# ckptscope, in the same rotation.
[ "${VM_BENCH_BASELINE:-}" = 1 ] && per_call_kinds="$per_call_kinds baseline"
ckpt_file=/tmp/bench/checkpoints/io.pt
plain_file=/tmp/bench/plain/io.dat

rotate() { # ROUND A B C [D]: the three or four rotated left by ROUND
	_r=$1
	shift
	_n=$#
	_i=0
	_out=
	while [ "$_i" -lt "$_n" ]; do
		_k=$(((_i + _r) % _n + 1))
		eval "_out=\"\$_out \${$_k}\""
		_i=$((_i + 1))
	done
	echo $_out
}

# VM_BENCH_NO_MODE=1 (filelayer_vm.sh --no-mode-flag): no --probe-mode, for a
# build from before issue 18 (both modes are then the same thing).
mode_flag() {
	[ "${VM_BENCH_NO_MODE:-0}" = 1 ] || echo "--probe-mode $1"
}

per_call() { # KIND ROUND PREFIX [SPAN]
	_f="$VM_OUT/rounds/$3-$1-$2.json"
	# shellcheck disable=SC2046 # the flag is two words or none
	case $1 in
	bare) io_loop "$ckpt_file" "$calls" 4096 ${4:-} >"$_f" 2>/tmp/call.err ;;
	minimal) minimal_probe -- io_loop "$ckpt_file" "$calls" 4096 ${4:-} >"$_f" 2>/tmp/call.err ;;
	baseline) ckptscope-baseline run --quiet --trace /tmp/t.db -- io_loop "$ckpt_file" "$calls" 4096 ${4:-} \
		>"$_f" 2>/tmp/call.err ;;
	*) ckptscope run --quiet --trace /tmp/t.db $(mode_flag "$1") -- io_loop "$ckpt_file" "$calls" 4096 ${4:-} \
		>"$_f" 2>/tmp/call.err ;;
	esac || {
		vm_fail "per-call round $2 ($1, $3) failed: $(tail -c 1500 /tmp/call.err)"
		return 1
	}
	rm -f /tmp/t.db
}

exporter_pid=
exporter_start() { # MODE
	# shellcheck disable=SC2046 # the flag is two words or none
	ckptscope exporter --listen 127.0.0.1:9477 $(mode_flag "$1") >"/tmp/exporter-$1.log" 2>&1 &
	exporter_pid=$!
	_i=0
	until wget -q -O /dev/null http://127.0.0.1:9477/metrics 2>/dev/null; do
		_i=$((_i + 1))
		if [ "$_i" -gt 300 ] || ! kill -0 "$exporter_pid" 2>/dev/null; then
			vm_fail "ckptscope exporter --probe-mode $1 did not serve: $(tail -c 2000 "/tmp/exporter-$1.log")"
			return 1
		fi
		sleep 0.1
	done
}
exporter_stop() {
	kill "$exporter_pid" 2>/dev/null || true
	wait "$exporter_pid" || true
	exporter_pid=
}

node() { # KIND ROUND: KIND bare, exporter-file_layer, exporter-syscall
	case $1 in exporter-*) exporter_start "${1#exporter-}" || return 1 ;; esac
	_rc=0
	getppid_loop "$ppid_calls" >"$VM_OUT/rounds/ppid-$1-$2.json" || _rc=$?
	io_loop "$plain_file" "$calls" 4096 >"$VM_OUT/rounds/plain-$1-$2.json" || _rc=$?
	case $1 in exporter-*) exporter_stop ;; esac
	[ "$_rc" -eq 0 ] || { vm_fail "node round $2 ($1): a loop exited $_rc"; return 1; }
}

# A warm-up, not recorded: the first run of each pays for cold caches.
if ! { io_loop "$ckpt_file" "$calls" 4096 && io_loop "$plain_file" "$calls" 4096 &&
	getppid_loop "$ppid_calls"; } >/dev/null; then
	vm_fail "the warm-up failed"
	exit 1
fi
r=0
while [ "$r" -lt "$rounds" ]; do
	vm_say "round $r"
	for kind in $(rotate "$r" $per_call_kinds); do per_call "$kind" "$r" call; done
	if [ "$span" -gt 0 ]; then
		for kind in $(rotate "$r" $per_call_kinds); do per_call "$kind" "$r" span "$span"; done
	fi
	for kind in $(rotate "$r" bare exporter-file_layer exporter-syscall); do node "$kind" "$r"; done
	r=$((r + 1))
done
for m in file_layer syscall; do cp "/tmp/exporter-$m.log" "$VM_OUT/" 2>/dev/null || true; done
[ ! -s "$VM_OUT/failures.txt" ]
