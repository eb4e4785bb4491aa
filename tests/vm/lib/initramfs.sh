# shellcheck shell=bash
# shellcheck disable=SC2034 # VM_* globals are read by run.sh
# Building the guest's initramfs as concatenated cpio+gzip segments (the kernel
# unpacks them in order):
#   base     busybox, dash, kmod, iproute2, rpcbind, nfs-utils and their libraries  (cached)
#   modules  the kernel's NFS modules and their dependencies                          (cached per kernel)
#   project  ckptscope, ckptscope-workload and their libraries                        (per invocation)
#   conf     /init, the scenario scripts, the run's settings                           (per run)
# Every segment has the same usr-merged skeleton (bin -> usr/bin, ...), so a
# later segment never replaces a directory with a symlink or the reverse.

# The guest's library search path for ldd: unpacked userspace first, so a
# library the host lacks comes from the package; all others are the host's.
vm_skeleton() {
  local root=$1 d
  mkdir -p "$root"/usr/{bin,sbin,lib,lib64} "$root"/{etc,proc,sys,dev,tmp,run,var,mnt,root}
  for d in bin sbin lib lib64; do
    ln -sfn "usr/$d" "$root/$d"
  done
}

# vm_copy_libs ROOT FILE: the shared libraries FILE needs (ldd), into ROOT at
# the same paths (the unpacked userspace's prefix removed).
vm_copy_libs() {
  local root=$1 file=$2 out lib dest
  if ! out=$(LD_LIBRARY_PATH="$(vm_userspace_libpath)" ldd "$file" 2>&1); then
    case $out in
      *"not a dynamic executable"* | *"statically linked"*) return 0 ;;
    esac
    vm_die "ldd $file failed: $out"
  fi
  if grep -q 'not found' <<<"$out"; then
    vm_die "ldd $file: $(grep 'not found' <<<"$out" | tr -s ' \t' ' ') -- a guest library is missing (try --refresh)"
  fi
  while read -r lib; do
    [ -n "$lib" ] || continue
    dest=${lib#"$VM_USERSPACE"}
    [ -e "$root$dest" ] && continue
    mkdir -p "$(dirname "$root$dest")"
    cp -L "$lib" "$root$dest"
  done < <(awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"$out")
}

# vm_install ROOT SRC DEST: a program (and its libraries) at DEST in ROOT.
vm_install() {
  local root=$1 src=$2 dest=$3
  [ -f "$src" ] || vm_die "missing $src"
  mkdir -p "$(dirname "$root$dest")"
  cp -L "$src" "$root$dest"
  chmod 0755 "$root$dest"
  vm_copy_libs "$root" "$src"
}

# vm_cpio ROOT OUT: ROOT as a gzip'd newc cpio archive, files owned by root.
vm_cpio() {
  local root=$1 out=$2
  (cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
    gzip -1 >"$out.tmp" || vm_die "cpio of $root failed"
  mv "$out.tmp" "$out"
}

# vm_tree_hash ROOT: a hash of the tree's names, modes, link targets and contents.
vm_tree_hash() {
  (
    cd "$1" || exit 1
    find . -mindepth 1 -printf '%p %y %m %l\n' | LC_ALL=C sort
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
  ) | sha256sum | cut -c1-16
}

# vm_cached_cpio ROOT NAME: prints $VM_CACHE/initramfs/NAME-<hash>.cpio.gz,
# made only when no archive of that content exists; older NAME-* are removed.
vm_cached_cpio() {
  local root=$1 name=$2 hash out f
  mkdir -p "$VM_CACHE/initramfs"
  hash=$(vm_tree_hash "$root")
  out="$VM_CACHE/initramfs/$name-$hash.cpio.gz"
  if [ ! -s "$out" ]; then
    vm_cpio "$root" "$out"
    for f in "$VM_CACHE/initramfs/$name"-*.cpio.gz; do
      [ "$f" = "$out" ] || rm -f "$f"
    done
  fi
  printf '%s\n' "$out"
}

# The base segment: the guest's tools. Sets VM_BASE_CPIO.
vm_base_segment() {
  local work=$1 root="$1/base" u=$VM_USERSPACE a f
  rm -rf "$root"
  vm_skeleton "$root"
  # A real shell for every script (busybox's own shell runs its applets ahead of PATH).
  vm_install "$root" "$u/bin/dash" /usr/bin/dash
  ln -s dash "$root/usr/bin/sh"
  vm_install "$root" "$u/bin/kmod" /usr/bin/kmod
  for a in modprobe insmod rmmod lsmod depmod modinfo; do ln -s ../bin/kmod "$root/usr/sbin/$a"; done
  # iproute2: the real tc (netem, tbf), ip and ss.
  vm_install "$root" "$u/sbin/tc" /usr/sbin/tc
  vm_install "$root" "$u/bin/ip" /usr/bin/ip
  vm_install "$root" "$u/bin/ss" /usr/bin/ss
  for d in usr/lib/tc etc/iproute2 usr/share/iproute2; do
    if [ -d "$u/$d" ]; then mkdir -p "$root/$d" && cp -a "$u/$d/." "$root/$d/"; fi
  done
  # RPC and NFS.
  vm_install "$root" "$u/sbin/rpcbind" /usr/sbin/rpcbind
  vm_install "$root" "$u/usr/bin/rpcinfo" /usr/bin/rpcinfo
  vm_install "$root" "$u/sbin/mount.nfs" /usr/sbin/mount.nfs
  for a in mount.nfs4 umount.nfs umount.nfs4; do ln -s mount.nfs "$root/usr/sbin/$a"; done
  vm_install "$root" "$u/sbin/showmount" /usr/sbin/showmount
  for f in rpc.nfsd rpc.mountd exportfs nfsstat nfsconf; do
    vm_install "$root" "$u/usr/sbin/$f" "/usr/sbin/$f"
  done
  # busybox for everything else; a real program of the same name wins.
  vm_install "$root" "$u/bin/busybox" /usr/bin/busybox
  for a in $("$u/bin/busybox" --list); do
    case $a in sh | ash | init | linuxrc | busybox) continue ;; esac
    [ -e "$root/usr/bin/$a" ] || [ -e "$root/usr/sbin/$a" ] || [ -L "$root/usr/sbin/$a" ] ||
      ln -s busybox "$root/usr/bin/$a"
  done
  # Configuration: libtirpc's netconfig, netbase's protocols/services/rpc, and
  # nfs.conf (which nfs-common's postinst would install from its conffiles).
  for f in etc/netconfig etc/protocols etc/services etc/rpc; do
    [ -f "$u/$f" ] || vm_die "guest packages lack /$f"
    cp "$u/$f" "$root/$f"
  done
  [ -f "$u/usr/share/nfs-common/conffiles/nfs.conf" ] || vm_die "nfs-common lacks its nfs.conf"
  cp "$u/usr/share/nfs-common/conffiles/nfs.conf" "$root/etc/nfs.conf"
  printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin' \
    '_rpc:x:100:65534::/run/rpcbind:/usr/sbin/nologin' 'statd:x:101:65534::/var/lib/nfs:/usr/sbin/nologin' \
    'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' >"$root/etc/passwd"
  printf '%s\n' 'root:x:0:' 'daemon:x:1:' 'nogroup:x:65534:' >"$root/etc/group"
  printf '%s\n' 'passwd: files' 'group: files' 'shadow: files' 'hosts: files' 'services: files' \
    'protocols: files' 'rpc: files' >"$root/etc/nsswitch.conf"
  printf '%s\n' '127.0.0.1 localhost ckptvm' >"$root/etc/hosts"
  VM_BASE_CPIO=$(vm_cached_cpio "$root" base)
  rm -rf "$root"
}

# vm_modules_segment WORK MODULE...: the modules and their dependencies (from
# the modules.dep depmod made), plus depmod's indices, and the kernel's
# config in /boot as a Debian node has it (ckptscope reads CONFIG_HZ there:
# userspace/probes/kernel_hz.h). Sets VM_MODULES_CPIO.
vm_modules_segment() {
  local work=$1 root="$1/modules" mdir="$VM_KDIR/lib/modules/$VM_KVER" m rel f
  shift
  rm -rf "$root"
  vm_skeleton "$root"
  mkdir -p "$root/lib/modules/$VM_KVER"
  for f in "$mdir"/modules.*; do cp "$f" "$root/lib/modules/$VM_KVER/"; done
  local -A want=()
  for m in "$@"; do
    # modules.dep lines: "kernel/path/name.ko[.xz]: dep1 dep2 ..."; - and _ are the same.
    rel=$(awk -v m="${m//-/_}" -F: '{ n = $1; sub(/.*\//, "", n); sub(/\.ko(\.(xz|zst|gz))?$/, "", n);
                                      gsub(/-/, "_", n); if (n == m) { print $0; exit } }' "$mdir/modules.dep")
    if [ -z "$rel" ]; then
      grep -qE "/${m//[-_]/[-_]}\.ko" "$mdir/modules.builtin" ||
        vm_die "kernel $VM_KVER has no module $m (neither loadable nor built in)"
      continue
    fi
    for f in ${rel/:/ }; do want[$f]=1; done
  done
  # Inflated here, once (the segment is cached): the guest's modprobe would
  # otherwise undo xz under TCG at every boot (about 4 s of 6.12's 9 modules).
  # The name stays, so depmod's indices still find them: kmod tells a
  # module's compression from its first bytes, not its name (libkmod-file.c,
  # kmod_file_open).
  for f in "${!want[@]}"; do
    mkdir -p "$(dirname "$root/lib/modules/$VM_KVER/$f")"
    case $f in
    *.ko.xz) xz -dc "$mdir/$f" >"$root/lib/modules/$VM_KVER/$f" || vm_die "xz -d of $f failed" ;;
    *) cp "$mdir/$f" "$root/lib/modules/$VM_KVER/$f" ;;
    esac
  done
  if [ -f "$VM_KDIR/boot/config-$VM_KVER" ]; then
    mkdir -p "$root/boot"
    cp "$VM_KDIR/boot/config-$VM_KVER" "$root/boot/"
  fi
  VM_MODULES_CPIO=$(vm_cached_cpio "$root" "modules-$VM_KVER")
  rm -rf "$root"
}

# vm_project_segment WORK BUILD: the project's programs under /opt/ckptscope/bin.
vm_project_segment() {
  local work=$1 build=$2 root="$1/project" b
  rm -rf "$root"
  vm_skeleton "$root"
  for b in ckptscope ckptscope-workload; do
    [ -x "$build/bin/$b" ] || vm_die "no $build/bin/$b: build it first (see tests/vm/README.md) or pass --build DIR"
    vm_install "$root" "$build/bin/$b" "/opt/ckptscope/bin/$b"
  done
  # The benchmarks' subjects (bench/vm/), when the build has them.
  for b in io_loop getppid_loop minimal_probe; do
    [ -x "$build/bin/$b" ] && vm_install "$root" "$build/bin/$b" "/opt/ckptscope/bin/$b"
  done
  # VM_EXTRA_BINS="NAME=PATH ...": more programs for a benchmark (bench/filelayer_vm.sh
  # --baseline-build puts another build's ckptscope there as ckptscope-baseline).
  local extra
  for extra in ${VM_EXTRA_BINS:-}; do
    [ -x "${extra#*=}" ] || vm_die "VM_EXTRA_BINS: no program ${extra#*=}"
    vm_install "$root" "${extra#*=}" "/opt/ckptscope/bin/${extra%%=*}"
  done
  # Without their debug info: it is most of an unoptimised or -g build's
  # bytes (128 of 141 MiB at -O2 -g), which the guest kernel would inflate
  # under TCG on every boot and keep in its RAM. The host's build still has
  # it, for symbolising what the guest printed.
  strip --strip-debug "$root/opt/ckptscope/bin/"* || vm_die "strip of the project's programs failed"
  VM_PROJECT_CPIO="$work/project.cpio.gz"
  vm_cpio "$root" "$VM_PROJECT_CPIO"
  rm -rf "$root"
}

# vm_conf_segment WORK NAME SCENARIO NFS ENVFILE: /init, the guest scripts and
# the run's settings (/vm/env; ENVFILE's lines are the scenario's own).
vm_conf_segment() {
  local work=$1 name=$2 scenario=$3 nfs=$4 envfile=$5 root="$1/conf-$2"
  rm -rf "$root"
  vm_skeleton "$root"
  cp "$VM_HERE/guest/init" "$root/init"
  chmod 0755 "$root/init"
  mkdir -p "$root/vm/scenarios"
  cp "$VM_HERE/guest/lib.sh" "$root/vm/lib.sh"
  # The real clients' driver (scenario file-layer; the host's tests/clients/ run it too).
  cp "$VM_REPO/tests/clients/real_clients.py" "$root/vm/real_clients.py"
  cp "$VM_SCENARIO_DIR/$scenario.sh" "$root/vm/scenarios/$scenario.sh"
  {
    printf 'VM_SCENARIO=%s\n' "$scenario"
    printf 'VM_NFS=%s\n' "$nfs"
    printf 'VM_RUN=%s\n' "$name"
    printf 'VM_MODULES="%s"\n' "${VM_GUEST_MODULES[*]}"
    # The scenario gets the VM's time less a margin, so a hung one still reports.
    printf 'VM_SCENARIO_TIMEOUT=%s\n' "$((VM_TIMEOUT > 150 ? VM_TIMEOUT - 90 : VM_TIMEOUT * 2 / 3))"
    cat "$envfile"
  } >"$root/vm/env"
  VM_CONF_CPIO="$work/conf-$name.cpio.gz"
  vm_cpio "$root" "$VM_CONF_CPIO"
  rm -rf "$root"
}

# The real clients a scenario with `# vm-clients: yes` runs (file-layer):
# fio, GNU coreutils' cp and dd and GNU tar (under /opt/clients/bin, so
# busybox's stay where they are), rsync and Debian's python3 with numpy and
# h5py, all from this host (Debian
# 12, the guest's release: `scripts/install-deps.sh` installs fio and
# python3-numpy). python3-torch is not here: with its libraries it is over 1 GiB,
# the guest's whole memory (torch runs in tests/clients/ on the host only).
# The standard library and numpy go without their tests, static library and
# build helpers. Sets VM_CLIENTS_CPIO (cached by content, like the base).
VM_PYTHON=python3.11
vm_clients_segment() {
  local work=$1 root="$1/clients" f so
  rm -rf "$root"
  vm_skeleton "$root"
  for f in /usr/bin/fio /usr/bin/cp /usr/bin/dd /usr/bin/tar /usr/bin/rsync "/usr/bin/$VM_PYTHON"; do
    [ -x "$f" ] || vm_die "the file-layer clients need $f on this host: run scripts/install-deps.sh (fio, coreutils, tar, rsync, python3-numpy)"
  done
  [ -f /usr/lib/python3/dist-packages/numpy/__init__.py ] ||
    vm_die "no numpy for /usr/bin/python3 on this host: run scripts/install-deps.sh (python3-numpy)"
  [ -f /usr/lib/python3/dist-packages/h5py/__init__.py ] ||
    vm_die "no h5py for /usr/bin/python3 on this host: run scripts/install-deps.sh (python3-h5py)"
  vm_install "$root" /usr/bin/fio /usr/bin/fio
  vm_install "$root" /usr/bin/cp /opt/clients/bin/cp
  vm_install "$root" /usr/bin/dd /opt/clients/bin/dd
  vm_install "$root" /usr/bin/rsync /usr/bin/rsync
  vm_install "$root" /usr/bin/tar /opt/clients/bin/tar
  vm_install "$root" "/usr/bin/$VM_PYTHON" "/usr/bin/$VM_PYTHON"
  ln -sfn "$VM_PYTHON" "$root/usr/bin/python3"
  mkdir -p "$root/usr/lib/$VM_PYTHON" "$root/usr/lib/python3/dist-packages"
  (cd "/usr/lib/$VM_PYTHON" && tar -cf - --exclude=./test --exclude=./idlelib --exclude=./tkinter \
    --exclude=./lib2to3 --exclude=./ensurepip --exclude=./pydoc_data --exclude=./distutils \
    --exclude='./config-*' --exclude=./dist-packages --exclude=./site-packages .) |
    (cd "$root/usr/lib/$VM_PYTHON" && tar -xf -) || vm_die "copying python's standard library failed"
  (cd /usr/lib/python3/dist-packages && tar -cf - --exclude=tests --exclude=numpy/f2py \
    --exclude=numpy/distutils --exclude='*.pyi' numpy) |
    (cd "$root/usr/lib/python3/dist-packages" && tar -xf -) || vm_die "copying numpy failed"
  # h5py whole: it imports its own tests package at import time.
  (cd /usr/lib/python3/dist-packages && tar -cf - h5py) |
    (cd "$root/usr/lib/python3/dist-packages" && tar -xf -) || vm_die "copying h5py failed"
  # The extension modules' own libraries (libblas, liblapack, libgfortran, libffi, ...).
  while IFS= read -r -d '' so; do
    vm_copy_libs "$root" "$so"
  done < <(find "$root/usr/lib/$VM_PYTHON/lib-dynload" "$root/usr/lib/python3/dist-packages/numpy" \
    "$root/usr/lib/python3/dist-packages/h5py" -name '*.so' -print0)
  VM_CLIENTS_CPIO=$(vm_cached_cpio "$root" clients)
  rm -rf "$root"
}
