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

# The kernel NFS server exporting a tmpfs to 127.0.0.1.
vm_nfs_server_start() {
	mkdir -p /proc/fs/nfsd "$VM_EXPORT" /var/lib/nfs/v4recovery /run/rpcbind &&
		mount -t nfsd nfsd /proc/fs/nfsd &&
		# The NFSv4 grace period would hold the first write for ~100 s: shorten
		# it before nfsd starts, and end it right after.
		echo 10 >/proc/fs/nfsd/nfsv4gracetime &&
		echo 10 >/proc/fs/nfsd/nfsv4leasetime &&
		mount -t tmpfs -o "size=$VM_EXPORT_SIZE,mode=0777" export "$VM_EXPORT" &&
		: >/var/lib/nfs/etab && : >/var/lib/nfs/rmtab &&
		echo "$VM_EXPORT 127.0.0.1(rw,sync,no_subtree_check,no_root_squash,insecure,fsid=0)" >/etc/exports &&
		vm_step "rpcbind" rpcbind &&
		vm_step "exportfs" exportfs -ra &&
		vm_step "rpc.nfsd" rpc.nfsd 8 &&
		vm_step "rpc.mountd" rpc.mountd &&
		{ [ ! -e /proc/fs/nfsd/v4_end_grace ] || echo Y >/proc/fs/nfsd/v4_end_grace; }
}

vm_nfs_mount() {
	mkdir -p "$VM_MNT"
	case $VM_NFS in
	3) vm_step "mount NFSv3 $VM_SERVER:$VM_EXPORT on $VM_MNT" \
		mount.nfs "$VM_SERVER:$VM_EXPORT" "$VM_MNT" -o vers=3,proto=tcp,mountproto=tcp,nolock ;;
	4*) vm_step "mount NFSv$VM_NFS $VM_SERVER:/ on $VM_MNT" \
		mount.nfs "$VM_SERVER:/" "$VM_MNT" -o "vers=$VM_NFS" ;;
	*) vm_fail "unknown NFS version $VM_NFS" ;;
	esac || return 1
	grep " $VM_MNT " /proc/mounts
}
