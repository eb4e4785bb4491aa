#!/usr/bin/env bash
# The main job on its embedded default: installs dependencies, builds, and
# profiles the bundled synthetic checkpoint workload (a few hundred MiB saved
# and loaded on local disk), ending in the per-checkpoint summary.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default --target ckptscope ckptscope-workload
"${sudo_cmd[@]}" build/bin/ckptscope demo --trace build/demo.db "$@"
