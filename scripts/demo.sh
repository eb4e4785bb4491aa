#!/usr/bin/env bash
# The main job on its embedded default: installs dependencies, builds, and
# profiles the bundled synthetic checkpoint workload (a few hundred MiB saved
# and loaded on local disk), ending in the per-checkpoint summary. `demo`
# calibrates the disk first (docs/calibrate.md), so host_io's fraction of
# the disk's maximum is a measured one.
set -euo pipefail
cd "$(dirname "$0")/.."
# Root runs everything itself; anyone else is elevated with sudo for the
# steps that need root (installing packages, loading eBPF), and only then.
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "demo.sh: run it as root, or install sudo: it installs packages and loads eBPF" >&2
    exit 1
  fi
  sudo_cmd=(sudo)
fi
"${sudo_cmd[@]}" scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default --target ckptscope ckptscope-workload
"${sudo_cmd[@]}" build/bin/ckptscope demo --trace build/demo.db "$@"
