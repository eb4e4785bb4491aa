# shellcheck shell=bash
# Shared helpers of tests/vm/run.sh (sourced, never run).

vm_log() { printf '[vm %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
vm_die() {
  printf 'tests/vm: error: %s\n' "$*" >&2
  exit 1
}

# Host packages the harness needs, as "command:package" pairs. Checked up front
# so a missing one fails with the package to install, never half-way.
VM_HOST_REQUIREMENTS=(
  qemu-system-x86_64:qemu-system-x86
  cpio:cpio
  strip:binutils
  gzip:gzip
  python3:python3
  apt-get:apt
  apt-cache:apt
  dpkg-deb:dpkg
  ldd:libc-bin
  sha256sum:coreutils
  timeout:coreutils
  flock:util-linux
  base64:coreutils
  tar:tar
)

vm_check_host() {
  local missing=() req cmd pkg
  for req in "${VM_HOST_REQUIREMENTS[@]}"; do
    cmd=${req%%:*}
    pkg=${req#*:}
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg (for $cmd)")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    printf 'tests/vm: error: missing host package(s): %s\n' "${missing[*]}" >&2
    printf 'tests/vm: install with: apt-get install --no-install-recommends %s\n' \
      "$(printf '%s\n' "${missing[@]}" | cut -d' ' -f1 | sort -u | tr '\n' ' ')" >&2
    exit 1
  fi
  # QEMU's x86 firmware: seabios (bios-256k.bin) and the linuxboot option ROM.
  local f
  for f in /usr/share/seabios/bios-256k.bin:seabios /usr/share/qemu/linuxboot_dma.bin:qemu-system-data; do
    [ -e "${f%%:*}" ] || vm_die "missing ${f%%:*}: install the host package ${f#*:}"
  done
}

# sha256 of a file's content.
vm_sha256() { sha256sum "$1" | cut -d' ' -f1; }
