#!/usr/bin/env bash
# Installs everything ckptscope needs to build and test, from Debian 12
# packages only. Safe to run again. Needs root (apt-get).
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps.sh: run as root (it calls apt-get)" >&2
  exit 1
fi

packages=(
  # build
  build-essential cmake ninja-build pkg-config git
  # eBPF: clang compiles the probes, bpftool makes skeletons, libbpf loads them
  clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
  # userspace libraries
  libsqlite3-dev sqlite3 libfmt-dev nlohmann-json3-dev libcli11-dev
  # the failure classifier's rule engine (RE2::Set) and --notify's SMTP/HTTPS client
  libre2-dev libcurl4-openssl-dev
  # the node exporter's metrics (exporters/prometheus/)
  prometheus-cpp-dev
  # tests, benchmarks, lint
  googletest libgtest-dev libgmock-dev libbenchmark-dev clang-format clang-tidy
  # the fuzz targets (tests/fuzz/, scripts/fuzz.sh): clang-14 and its libFuzzer and
  # sanitizer runtimes (libclang_rt.fuzzer-x86_64.a)
  clang-14 libclang-rt-14-dev
  # test helpers: iproute2 (namespaces), nftables (a lossy link), util-linux (setpriv, mount),
  # procps, python3,
  # FUSE (a file system that fails with EIO), e2fsprogs
  iproute2 nftables util-linux procps python3 libfuse3-dev fuse3 e2fsprogs
  # --notify tests: a real SMTP server (aiosmtpd) and certificates for STARTTLS
  python3-aiosmtpd openssl ca-certificates
  # the real-kernel NFS tests under QEMU (tests/vm/; run.sh adds bookworm-backports
  # to apt's sources itself for the 6.12 guest kernel, and fetches guest packages
  # with apt-get download without installing them here)
  qemu-system-x86 cpio
  # real checkpoint clients (issue 18): tests/clients/ runs them on this host and the
  # tests/vm scenario file-layer packs fio, cp, dd, python3 and numpy into its guest
  # (coreutils' cp 9.1 copies with copy_file_range); torch runs on the host only
  fio coreutils python3-numpy python3-torch
  # tar and h5py: the clients group formats (GNU tar -cf/-xf of a checkpoint, an HDF5 save)
  tar python3-h5py
  # rsync: a write-then-rename client of tests/clients (group renames)
  rsync
  # xfsprogs: an XFS file system on a loop device, where GNU cp's ioctl(FICLONE)
  # succeeds (tests/bpf reflink records, tests/clients group cp)
  xfsprogs
  # the HTML report test (tests/html/): headless Chromium renders `ckptscope report`'s
  # page and proves it makes no network request and logs no error; no display needed
  chromium
  # deploy/ tests (tests/deploy/): promtool from Debian's prometheus package checks and
  # unit-tests the rules; python3-yaml parses the Kubernetes manifests. On a host where
  # systemd is PID 1 the package enables and starts prometheus.service (:9090), which no
  # test needs: `systemctl disable --now prometheus` (no effect in a container without it)
  prometheus python3-yaml
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "install-deps.sh: all ${#packages[@]} packages present"
