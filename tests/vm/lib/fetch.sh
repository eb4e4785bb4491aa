# shellcheck shell=bash
# shellcheck disable=SC2034 # VM_* globals are read by run.sh
# Fetching and caching what the guest is made of: the Debian cloud kernels and
# the guest's userspace packages. Everything comes from apt (`apt-get
# download`: checked against the signed archive indices), is checked again
# against the index's SHA256 here, unpacked with `dpkg-deb -x` into the cache
# and never installed on the host. Needs: VM_CACHE, VM_REFRESH (0/1).

VM_BACKPORTS_LIST=/etc/apt/sources.list.d/ckptscope-bookworm-backports.sources
VM_APT_UPDATED=0

# The guest's userspace: these packages, plus whichever of their library
# dependencies the host lacks (the rest of the guest's libraries are the
# host's own, found with ldd: the host is Debian 12 too).
VM_GUEST_PACKAGES=(busybox-static dash kmod iproute2 rpcbind nfs-common nfs-kernel-server
  libtirpc-common netbase)

vm_need_root() {
  [ "$(id -u)" -eq 0 ] || vm_die "$1 needs root (apt's sources and index); rerun as root"
}

vm_apt_update() {
  [ "$VM_APT_UPDATED" = 1 ] && return 0
  vm_need_root "apt-get update"
  vm_log "apt-get update"
  apt-get update -qq || vm_die "apt-get update failed (is a Debian mirror reachable?)"
  VM_APT_UPDATED=1
}

# bookworm-backports carries the 6.12 cloud kernel. Added once, as its own
# file, so it is easy to see and to remove; apt's default pin (100) keeps it
# from upgrading anything on the host.
vm_ensure_backports() {
  if grep -rqsE '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    return 0
  fi
  vm_need_root "adding bookworm-backports to apt's sources"
  vm_log "adding bookworm-backports to apt's sources: $VM_BACKPORTS_LIST (remove it to undo)"
  cat >"$VM_BACKPORTS_LIST" <<'SRC'
# Added by ckptscope tests/vm/run.sh: the 6.12 cloud kernel for the NFS VM tests.
# Backports are pinned at 100 by default: nothing on this host is upgraded from here.
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  VM_APT_UPDATED=0
  vm_apt_update
}

vm_host_has_pkg() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

vm_candidate() {
  apt-cache policy "$1" 2>/dev/null | awk '/^  Candidate:/ {print $2; exit}'
}

# vm_fetch_deb PKG VERSION [RELEASE] -> prints the path of the verified .deb in the cache.
vm_fetch_deb() {
  local pkg=$1 ver=$2 rel=${3:-} dir="$VM_CACHE/debs" want got tmp f
  mkdir -p "$dir"
  # The cache's own name (apt's, with the architecture always amd64).
  local name="${pkg}_${ver//:/%3a}_amd64.deb"
  if [ -f "$dir/$name" ] && [ -f "$dir/$name.sha256" ]; then
    got=$(vm_sha256 "$dir/$name")
    if [ "$got" = "$(cat "$dir/$name.sha256")" ]; then
      printf '%s\n' "$dir/$name"
      return 0
    fi
    vm_log "cached $name does not match its recorded sha256; fetching it again"
    rm -f "$dir/$name" "$dir/$name.sha256"
  fi
  want=$(apt-cache show "$pkg=$ver" 2>/dev/null | awk '/^SHA256: / {print $2; exit}')
  [ -n "$want" ] || vm_die "apt knows no $pkg=$ver (apt-get update? --refresh?)"
  tmp=$(mktemp -d "$dir/.dl.XXXXXX")
  f=$(find "$dir/.prefetch" -maxdepth 1 -name "${pkg}_${ver//:/%3a}_*.deb" 2>/dev/null | head -n1)
  if [ -n "$f" ]; then
    mv "$f" "$tmp/"
  else
    vm_log "downloading $pkg=$ver${rel:+ from $rel}"
    if ! (cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root ${rel:+-t "$rel"} "$pkg=$ver" >&2); then
      rm -rf "$tmp"
      vm_die "apt-get download $pkg=$ver failed"
    fi
  fi
  f=$(find "$tmp" -maxdepth 1 -name '*.deb' | head -n1)
  [ -n "$f" ] || { rm -rf "$tmp"; vm_die "apt-get download $pkg=$ver left no .deb"; }
  got=$(vm_sha256 "$f")
  if [ "$got" != "$want" ]; then
    rm -rf "$tmp"
    vm_die "$pkg=$ver: sha256 $got does not match the archive index's $want"
  fi
  dpkg-deb --info "$f" >/dev/null || { rm -rf "$tmp"; vm_die "$pkg=$ver: not a valid .deb"; }
  mv "$f" "$dir/$name"
  printf '%s\n' "$got" >"$dir/$name.sha256"
  rm -rf "$tmp"
  printf '%s\n' "$dir/$name"
}

# vm_prefetch_debs PKG=VER...: downloads them in one apt-get call into the
# cache's download area; vm_fetch_deb then verifies and files each one.
vm_prefetch_debs() {
  local dir="$VM_CACHE/debs/.prefetch"
  rm -rf "$dir"
  mkdir -p "$dir"
  vm_log "downloading $*"
  (cd "$dir" && apt-get download -qq -o APT::Sandbox::User=root "$@" >&2) ||
    vm_die "apt-get download $* failed"
}

# First-choice Depends/Pre-Depends of PKG, one per line (virtual names skipped).
vm_first_depends() {
  apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "$1" 2>/dev/null |
    awk '/^ \|(Pre)?Depends: / { if (!alt) { sub(/.*: /, ""); print } alt = 1; next }
         /^  (Pre)?Depends: /  { if (!alt) { sub(/.*: /, ""); print } alt = 0; next }' |
    grep -v '^<' || true
}

# Library packages the given packages need (recursively) that the host lacks.
vm_missing_libs() {
  local -A seen=()
  local queue=("$@") p d
  while [ "${#queue[@]}" -gt 0 ]; do
    p=${queue[0]}
    queue=("${queue[@]:1}")
    for d in $(vm_first_depends "$p"); do
      d=${d%%:*}
      case $d in lib*) ;; *) continue ;; esac
      [ -n "${seen[$d]:-}" ] && continue
      seen[$d]=1
      vm_host_has_pkg "$d" && continue
      printf '%s\n' "$d"
      queue+=("$d")
    done
  done
}

# Resolves the guest package set once ("pkg=version" lines in
# $VM_CACHE/userspace.resolved; --refresh resolves again), fetches the debs and
# unpacks them into one tree. Sets VM_USERSPACE to that tree.
vm_userspace() {
  local list="$VM_CACHE/userspace.resolved" p v key dir tmp deb
  mkdir -p "$VM_CACHE"
  if [ "$VM_REFRESH" = 1 ] || [ ! -s "$list" ]; then
    local pkgs=("${VM_GUEST_PACKAGES[@]}") missing
    case $(vm_candidate busybox-static) in "" | "(none)") vm_apt_update ;; esac
    mapfile -t missing < <(vm_missing_libs "${VM_GUEST_PACKAGES[@]}")
    pkgs+=("${missing[@]}")
    : >"$list.tmp"
    for p in "${pkgs[@]}"; do
      v=$(vm_candidate "$p")
      if [ -z "$v" ] || [ "$v" = "(none)" ]; then
        vm_apt_update
        v=$(vm_candidate "$p")
      fi
      case $v in "" | "(none)") vm_die "apt has no candidate for guest package $p" ;; esac
      printf '%s=%s\n' "$p" "$v" >>"$list.tmp"
    done
    sort -u "$list.tmp" >"$list"
    rm -f "$list.tmp"
    vm_log "guest packages: $(tr '\n' ' ' <"$list")"
  fi
  key=$(sha256sum "$list" | cut -c1-16)
  dir="$VM_CACHE/userspace/$key"
  if [ ! -f "$dir/.complete" ]; then
    rm -rf "$dir"
    tmp="$dir.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    # One apt-get call for whatever is not cached yet (each call costs ~1.5 s).
    local todo=()
    while IFS="=" read -r p v; do
      [ -f "$VM_CACHE/debs/${p}_${v//:/%3a}_amd64.deb" ] || todo+=("$p=$v")
    done <"$list"
    [ "${#todo[@]}" -eq 0 ] || vm_prefetch_debs "${todo[@]}"
    while IFS="=" read -r p v; do
      deb=$(vm_fetch_deb "$p" "$v")
      dpkg-deb -x "$deb" "$tmp" || vm_die "dpkg-deb -x $deb failed"
    done <"$list"
    cp "$list" "$tmp/.packages"
    touch "$tmp/.complete"
    mv "$tmp" "$dir"
  fi
  VM_USERSPACE=$dir
}

# vm_resolve_kernel SERIES -> "package version" of the newest cloud kernel of
# that series apt knows: 6.1 from bookworm(-security), 6.12 from
# bookworm-backports (through the linux-image-cloud-amd64 metapackage's
# versions, so the ABI number N is never hard-coded).
vm_resolve_kernel_apt() {
  local series=$1
  apt-cache show linux-image-cloud-amd64 2>/dev/null |
    awk '/^Version: / {v = $2} /^Depends: / {split($2, d, " "); print v, d[1]}' |
    while read -r ver dep; do
      case $series in
        6.1) [[ $dep =~ ^linux-image-6\.1\.0-[0-9]+-cloud-amd64$ && $ver != *bpo* ]] || continue ;;
        6.12) [[ $dep =~ ^linux-image-6\.12\.[0-9]+.*-cloud-amd64$ && $ver == *bpo12* ]] || continue ;;
      esac
      printf '%s %s\n' "$dep" "$ver"
    done |
    {
      best_pkg='' best_ver=''
      while read -r pkg ver; do
        if [ -z "$best_ver" ] || dpkg --compare-versions "$ver" gt "$best_ver"; then
          best_pkg=$pkg best_ver=$ver
        fi
      done
      [ -n "$best_pkg" ] && printf '%s %s\n' "$best_pkg" "$best_ver"
    }
}

# vm_kernel SERIES: sets VM_KDIR (unpacked package), VM_KVER (uname -r),
# VM_KPKG ("package=version") and VM_VMLINUZ. The resolved package is kept in
# $VM_CACHE/kernels/SERIES.resolved and reused until --refresh.
vm_kernel() {
  local series=$1 resolved="$VM_CACHE/kernels/$1.resolved" line pkg ver rel='' deb dir tmp
  mkdir -p "$VM_CACHE/kernels"
  [ "$series" = 6.12 ] && rel=bookworm-backports
  if [ "$VM_REFRESH" = 1 ] || [ ! -s "$resolved" ]; then
    [ "$series" = 6.12 ] && vm_ensure_backports
    line=$(vm_resolve_kernel_apt "$series" || true)
    if [ -z "$line" ]; then
      vm_apt_update
      line=$(vm_resolve_kernel_apt "$series" || true)
    fi
    [ -n "$line" ] || vm_die "no linux-image-*-cloud-amd64 for $series in apt's index${rel:+ ($rel)}"
    printf '%s\n' "$line" >"$resolved"
  fi
  read -r pkg ver <"$resolved"
  dir="$VM_CACHE/kernels/${pkg}_${ver}"
  if [ ! -f "$dir/.complete" ]; then
    deb=$(vm_fetch_deb "$pkg" "$ver" "$rel")
    tmp="$dir.tmp.$$"
    rm -rf "$tmp" "$dir"
    mkdir -p "$tmp"
    vm_log "unpacking $pkg=$ver"
    dpkg-deb -x "$deb" "$tmp" || vm_die "dpkg-deb -x $deb failed"
    local kver
    kver=$(ls "$tmp/lib/modules")
    if [ -z "$kver" ] || [ "$(wc -w <<<"$kver")" != 1 ]; then
      vm_die "$pkg: expected one lib/modules/<version>, found '$kver'"
    fi
    # The deb ships no modules.dep: make it with the guest's own depmod.
    [ -n "${VM_USERSPACE:-}" ] || vm_die "internal: vm_userspace must run before vm_kernel"
    # kmod acts as depmod when called by that name.
    mkdir -p "$VM_CACHE/tools"
    ln -sfn "$VM_USERSPACE/bin/kmod" "$VM_CACHE/tools/depmod"
    LD_LIBRARY_PATH="$(vm_userspace_libpath)" \
      "$VM_CACHE/tools/depmod" -b "$tmp" "$kver" || vm_die "depmod for $kver failed"
    [ -s "$tmp/lib/modules/$kver/modules.dep" ] || vm_die "depmod for $kver wrote no modules.dep"
    touch "$tmp/.complete"
    mv "$tmp" "$dir"
  fi
  VM_KDIR=$dir
  VM_KVER=$(ls "$dir/lib/modules")
  VM_KPKG="$pkg=$ver"
  VM_VMLINUZ="$dir/boot/vmlinuz-$VM_KVER"
  [ -f "$VM_VMLINUZ" ] || vm_die "no $VM_VMLINUZ in $pkg"
}

# Library directories of the unpacked userspace, for ldd and the host-side depmod.
vm_userspace_libpath() {
  local d out=
  for d in lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu; do
    [ -d "$VM_USERSPACE/$d" ] && out="${out:+$out:}$VM_USERSPACE/$d"
  done
  printf '%s\n' "$out"
}
