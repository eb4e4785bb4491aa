# Guest-side helpers, sourced by /init and by every scenario script (dash).
#
# A scenario runs after the NFS server is up and (unless it says
# `# vm-mount: self`) the export is mounted on $VM_MNT. It writes what the
# host needs into $VM_OUT and exits 0 when its guest side worked; a failure
# is reported with vm_fail (a reason the host prints).

VM_OUT=/out
VM_MNT=/mnt/nfs
VM_SERVER=127.0.0.1
VM_EXPORT=/export
: "${VM_EXPORT_SIZE:=512m}"
# Who may mount the export (`# vm-export-clients: 127.0.0.1 10.99.0.0/16`).
: "${VM_EXPORT_CLIENTS:=127.0.0.1}"

vm_say() {
	printf '[guest %8s] %s\n' "$(cut -d' ' -f1 /proc/uptime)" "$*"
}

# vm_fail REASON: recorded for the host (one line per failure) and printed.
vm_fail() {
	vm_say "FAIL: $*"
	printf '%s\n' "$*" >>"$VM_OUT/failures.txt"
	return 1
}

# vm_step DESCRIPTION COMMAND...: runs COMMAND, a failure names it and its status.
vm_step() {
	_desc=$1
	shift
	vm_say "$_desc"
	"$@" || {
		_rc=$?
		vm_fail "$_desc: '$*' exited $_rc"
		return 1
	}
}

vm_load_modules() {
	for _m in $VM_MODULES; do
		modprobe "$_m" || { vm_fail "modprobe $_m failed"; return 1; }
	done
}

# The kernel NFS server exporting a tmpfs to 127.0.0.1 (and $VM_EXPORT_CLIENTS).
vm_nfs_server_start() {
	_exports=$VM_EXPORT
	for _c in $VM_EXPORT_CLIENTS; do
		_exports="$_exports $_c(rw,sync,no_subtree_check,no_root_squash,insecure,fsid=0)"
	done
	mkdir -p /proc/fs/nfsd "$VM_EXPORT" /var/lib/nfs/v4recovery /run/rpcbind &&
		mount -t nfsd nfsd /proc/fs/nfsd &&
		# The NFSv4 grace period would hold the first write for ~100 s: shorten
		# it before nfsd starts, and end it right after.
		echo 10 >/proc/fs/nfsd/nfsv4gracetime &&
		echo 10 >/proc/fs/nfsd/nfsv4leasetime &&
		mount -t tmpfs -o "size=$VM_EXPORT_SIZE,mode=0777" export "$VM_EXPORT" &&
		: >/var/lib/nfs/etab && : >/var/lib/nfs/rmtab &&
		echo "$_exports" >/etc/exports &&
		vm_step "rpcbind" rpcbind &&
		vm_step "exportfs" exportfs -ra &&
		vm_step "rpc.nfsd" rpc.nfsd 8 &&
		vm_step "rpc.mountd" rpc.mountd &&
		{ [ ! -e /proc/fs/nfsd/v4_end_grace ] || echo Y >/proc/fs/nfsd/v4_end_grace; }
}

# vm_nfs_mount [OPTIONS]: the export on $VM_MNT, OPTIONS (e.g. timeo=10,retrans=2)
# added to the version's usual ones.
vm_nfs_mount() {
	mkdir -p "$VM_MNT"
	_extra=${1:+,$1}
	case $VM_NFS in
	3) vm_step "mount NFSv3 $VM_SERVER:$VM_EXPORT on $VM_MNT" \
		mount.nfs "$VM_SERVER:$VM_EXPORT" "$VM_MNT" -o "vers=3,proto=tcp,mountproto=tcp,nolock$_extra" ;;
	4*) vm_step "mount NFSv$VM_NFS $VM_SERVER:/ on $VM_MNT" \
		mount.nfs "$VM_SERVER:/" "$VM_MNT" -o "vers=$VM_NFS$_extra" ;;
	*) vm_fail "unknown NFS version $VM_NFS" ;;
	esac || return 1
	grep " $VM_MNT " /proc/mounts
}

# The time on the guest's clock in ns, as "S.CC" of /proc/uptime turned into
# nanoseconds. /proc/uptime is CLOCK_BOOTTIME at 10 ms resolution; nothing
# suspends in the VM, so it equals CLOCK_MONOTONIC (the clock of ckptscope's
# and the workload's *_ns) to within those 10 ms.
vm_now_ns() {
	_up=$(cut -d' ' -f1 /proc/uptime)
	echo "${_up%.*}${_up#*.}0000000"
}

# vm_ckptscope NAME CKPTSCOPE-RUN-ARGS... -- COMMAND...: `ckptscope run --trace
# /tmp/NAME.db ARGS...`, its stdout and stderr in $VM_OUT/NAME.stdout and
# NAME.stderr (and on the console). Sets vm_rc to its exit status (the job's);
# records a failure when ckptscope could not load its probes. Returns 0.
vm_ckptscope() {
	_name=$1
	shift
	vm_say "ckptscope run --trace /tmp/$_name.db $*"
	vm_rc=0
	ckptscope run --trace "/tmp/$_name.db" "$@" >"$VM_OUT/$_name.stdout" 2>"$VM_OUT/$_name.stderr" || vm_rc=$?
	cat "$VM_OUT/$_name.stdout" "$VM_OUT/$_name.stderr"
	vm_say "ckptscope run exited $vm_rc"
	if grep -q 'nothing will be traced' "$VM_OUT/$_name.stderr"; then
		# All of it: libbpf's log comes before the warning.
		vm_fail "ckptscope could not load its probes; its stderr: $(head -c 16000 "$VM_OUT/$_name.stderr")"
	fi
	return 0
}

# vm_summary NAME OUTFILE: `ckptscope summary /tmp/NAME.db --json` into
# $VM_OUT/OUTFILE, and the trace gzip'd next to it ($VM_OUT/NAME.db.gz).
vm_summary() {
	[ -s "/tmp/$1.db" ] || { vm_fail "ckptscope wrote no trace /tmp/$1.db"; return 1; }
	vm_step "ckptscope summary /tmp/$1.db --json" sh -c "ckptscope summary '/tmp/$1.db' --json >'$VM_OUT/$2'" || return 1
	gzip -c "/tmp/$1.db" >"$VM_OUT/$1.db.gz"
}

# vm_keep_truths NAME...: the workload's ground truths /tmp/truth-NAME.json
# into $VM_OUT, each missing one a failure.
vm_keep_truths() {
	for _t in "$@"; do
		if [ -s "/tmp/truth-$_t.json" ]; then
			cp "/tmp/truth-$_t.json" "$VM_OUT/truth-$_t.json"
		else
			vm_fail "the workload's $_t run wrote no ground truth"
		fi
	done
}

# vm_mountstats FILE: /proc/self/mountstats now, into $VM_OUT/FILE.
vm_mountstats() {
	cat /proc/self/mountstats >"$VM_OUT/$1"
}
