#!/usr/bin/env bash
# The real-kernel NFS test harness: boots a Debian cloud kernel under QEMU
# (TCG, one CPU), with the kernel NFS server and client on the guest's
# loopback, runs a scenario under ckptscope, brings its results back and checks
# them on the host. See tests/vm/README.md.
set -euo pipefail

VM_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_REPO=$(cd "$VM_HERE/../.." && pwd)
# shellcheck source=lib/common.sh
. "$VM_HERE/lib/common.sh"
# shellcheck source=lib/fetch.sh
. "$VM_HERE/lib/fetch.sh"
# shellcheck source=lib/initramfs.sh
. "$VM_HERE/lib/initramfs.sh"

# Loaded in every guest, in this order (modprobe adds their dependencies).
VM_BASE_MODULES=(sunrpc grace lockd nfs_acl auth_rpcgss nfsd nfs nfsv3 nfsv4)

VM_SCENARIO_DIR="$VM_HERE/scenarios"
vm_scenarios() {
  local f
  for f in "$VM_SCENARIO_DIR"/*.sh; do
    [ -e "$f" ] && basename "$f" .sh
  done
}

usage() {
  cat <<USAGE
usage: tests/vm/run.sh --kernel 6.1|6.12|all --nfs 3|4.2|all --scenario NAME|all --out DIR [options]

  --kernel K       guest kernel series: 6.1 (bookworm), 6.12 (bookworm-backports), all; commas allowed
  --nfs V          NFS version: 3, 4.2, all; commas allowed
  --scenario S     $(vm_scenarios | tr '\n' ' ')or all; commas allowed
  --out DIR        results: DIR/<kernel>-nfs<ver>-<scenario>/ (summary.json, truth.json, guest.log, ...)
  --build DIR      the build with bin/ckptscope and bin/ckptscope-workload [$VM_REPO/build]
  --cache DIR      downloads, unpacked kernels, initramfs segments [\${CKPTSCOPE_VM_CACHE:-$VM_REPO/build-vm/cache}]
  --refresh        resolve the newest kernels and guest packages again (needs the network)
  --timeout S      wall-clock limit of one VM [${VM_TIMEOUT:-420}]
  --memory MIB     guest memory (NFS wsize/rsize depend on it) [${VM_MEMORY:-1024}]
  --smp N          guest CPUs (1 is as fast as 2 for the tests; benchmarks want 2) [${VM_SMP:-1},
                   or a scenario's \`# vm-smp:\`]
  --tcg-thread T   single: the vCPUs take turns on one host thread; multi: one each, in parallel,
                   where a vCPU can run code another just patched (an int3 Oops) [${VM_TCG_THREAD:-single}]
  --icount SHIFT   guest time from the instruction count (QEMU -icount shift=SHIFT,sleep=off: one
                   instruction is 2^SHIFT ns): timings inside the guest count instructions and do
                   not move with the host's load (benchmarks; one CPU only) [off]
  --verbose        stream the guest's console while it runs
  --keep           keep the work directory (initramfs segments) under DIR
  --scenario-dir D scenarios from D instead of tests/vm/scenarios (benchmarks: bench/vm)
  --list           print the scenarios and exit
Environment: VM_ENV_<NAME>=VALUE reaches the guest's scenario as VM_<NAME>.
USAGE
}

kernels='' nfsvers='' scenarios='' out='' build="$VM_REPO/build" verbose=0 keep=0
VM_CACHE=${CKPTSCOPE_VM_CACHE:-$VM_REPO/build-vm/cache}
export VM_REFRESH=0
smp_given=${VM_SMP:+1}
memory_given=${VM_MEMORY:+1}
VM_TIMEOUT=${VM_TIMEOUT:-420} VM_MEMORY=${VM_MEMORY:-1024} VM_SMP=${VM_SMP:-1} VM_ICOUNT=
# No CX16: QEMU 7.2's TCG corrupts EFLAGS on `cmpxchg16b %gs:(...)`, which 6.12's
# SLUB runs on every allocation (random double faults, spurious #DB, oopses).
VM_CPU=${CKPTSCOPE_VM_CPU:-qemu64,-cx16}
while [ $# -gt 0 ]; do
  case $1 in
    --kernel) kernels=${2:?--kernel needs a value}; shift 2 ;;
    --nfs) nfsvers=${2:?--nfs needs a value}; shift 2 ;;
    --scenario) scenarios=${2:?--scenario needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --build) build=${2:?--build needs a value}; shift 2 ;;
    --cache) VM_CACHE=${2:?--cache needs a value}; shift 2 ;;
    --refresh) VM_REFRESH=1; shift ;;
    --timeout) VM_TIMEOUT=${2:?--timeout needs a value}; shift 2 ;;
    --memory) VM_MEMORY=${2:?--memory needs a value} memory_given=1; shift 2 ;;
    --smp) VM_SMP=${2:?--smp needs a value} smp_given=1; shift 2 ;;
    --tcg-thread) VM_TCG_THREAD=${2:?--tcg-thread needs single or multi}; shift 2 ;;
    --icount) VM_ICOUNT=${2:?--icount needs a value}; shift 2 ;;
    --verbose) verbose=1; shift ;;
    --keep) keep=1; shift ;;
    --scenario-dir) VM_SCENARIO_DIR=$(cd "${2:?--scenario-dir needs a value}" && pwd) || vm_die "--scenario-dir: no such directory: $2"; shift 2 ;;
    --list) vm_scenarios; exit 0 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; vm_die "unknown argument: $1" ;;
  esac
done
if [ -z "$kernels" ] || [ -z "$nfsvers" ] || [ -z "$scenarios" ] || [ -z "$out" ]; then
  usage >&2
  vm_die "--kernel, --nfs, --scenario and --out are required"
fi
[[ $VM_TIMEOUT =~ ^[0-9]+$ ]] || vm_die "--timeout: not a number of seconds: $VM_TIMEOUT"
[[ $VM_MEMORY =~ ^[0-9]+$ ]] || vm_die "--memory: not a number of MiB: $VM_MEMORY"
[[ $VM_SMP =~ ^[1-8]$ ]] || vm_die "--smp: 1 to 8 CPUs, not $VM_SMP"
VM_TCG_THREAD=${VM_TCG_THREAD:-single}
[[ $VM_TCG_THREAD =~ ^(single|multi)$ ]] || vm_die "--tcg-thread: single or multi, not $VM_TCG_THREAD"
[ -z "$VM_ICOUNT" ] || [ "$VM_TCG_THREAD" = single ] || vm_die "--icount needs --tcg-thread single"
icount=()
if [ -n "$VM_ICOUNT" ]; then
  [[ $VM_ICOUNT =~ ^[0-9]$ ]] || vm_die "--icount: a shift of 0 to 9, not $VM_ICOUNT"
  [ "$VM_SMP" = 1 ] || vm_die "--icount counts one CPU's instructions: it needs --smp 1"
  icount=(-icount "shift=$VM_ICOUNT,sleep=off")
fi

# Expand "all" and comma lists; validate.
expand() { # NAME VALUE ALLOWED...
  local name=$1 value=$2 v a ok
  shift 2
  [ "$value" = all ] && { printf '%s\n' "$@"; return; }
  for v in ${value//,/ }; do
    ok=0
    for a in "$@"; do [ "$v" = "$a" ] && ok=1; done
    [ "$ok" = 1 ] || vm_die "$name: unknown '$v' (known: $* all)"
    printf '%s\n' "$v"
  done
}
mapfile -t all_scenarios < <(vm_scenarios)
[ "${#all_scenarios[@]}" -gt 0 ] || vm_die "no scenarios in $VM_SCENARIO_DIR"
# (Through a variable: an error inside `< <(...)` would not stop this script.)
list=$(expand --kernel "$kernels" 6.1 6.12)
mapfile -t kernels <<<"$list"
list=$(expand --nfs "$nfsvers" 3 4.2)
mapfile -t nfsvers <<<"$list"
list=$(expand --scenario "$scenarios" "${all_scenarios[@]}")
mapfile -t scenarios <<<"$list"

vm_check_host
build=$(cd "$build" 2>/dev/null && pwd) || vm_die "--build: no such directory"
for b in ckptscope ckptscope-workload; do
  [ -x "$build/bin/$b" ] || vm_die "no $build/bin/$b: build it (tests/vm/README.md) or pass --build DIR"
done
mkdir -p "$out" "$VM_CACHE"
out=$(cd "$out" && pwd)
VM_CACHE=$(cd "$VM_CACHE" && pwd)

# `# vm-KEY: VALUE` lines of a scenario: settings for the guest (VM_KEY=VALUE
# in /vm/env); `# vm-modules:` also adds kernel modules to the initramfs.
scenario_headers() {
  sed -nE 's/^# vm-([a-z-]+): *(.*[^ ]) *$/\1 \2/p' "$VM_SCENARIO_DIR/$1.sh"
}
scenario_modules() {
  scenario_headers "$1" | awk '$1 == "modules" {$1 = ""; print}'
}
# `# vm-clients: yes`: the scenario runs real clients (fio, GNU cp/dd, python3
# with numpy), an initramfs segment of their own that the others do without.
scenario_wants_clients() {
  scenario_headers "$1" | awk '$1 == "clients" && $2 == "yes" {found = 1} END {exit !found}'
}
# `# vm-kernels: 6.12` limits a scenario to those kernel series (`--kernel all`
# skips the others, saying so); `# vm-nfs-versions: 4.2` to those NFS versions.
scenario_header_allows() { # SCENARIO KEY VALUE: no such header, or VALUE is in its list
  local want
  want=$(scenario_headers "$1" | awk -v k="$2" '$1 == k {$1 = ""; print}')
  [ -z "$want" ] || [[ " ${want//,/ } " == *" $3 "* ]]
}
scenario_runs_on_kernel() { scenario_header_allows "$1" kernels "$2"; }
# `# vm-smp: 2`: the scenario's guest CPUs, unless --smp (or VM_SMP) says, or
# --icount needs one (scale: eight ckptscope runs at once saturated one CPU).
# `# vm-memory: 1536`: the scenario's guest memory in MiB, unless --memory (or
# VM_MEMORY) says (file-layer: its NFS server's files and its tmpfs
# directories all live in the guest's memory).
scenario_memory() {
  local want
  want=$(scenario_headers "$1" | awk '$1 == "memory" {print $2}')
  if [ -n "$memory_given" ] || ! [[ $want =~ ^[0-9]+$ ]]; then
    echo "$VM_MEMORY"
  else
    echo "$want"
  fi
}
scenario_smp() {
  local want
  want=$(scenario_headers "$1" | awk '$1 == "smp" {print $2}')
  if [ -n "$smp_given" ] || [ -n "$VM_ICOUNT" ] || ! [[ $want =~ ^[1-8]$ ]]; then
    echo "$VM_SMP"
  else
    echo "$want"
  fi
}
scenario_runs_on_nfs() { scenario_header_allows "$1" nfs-versions "$2"; }

work="$out/.work.$$"
mkdir -p "$work"
verbose_pid=
cleanup() {
  [ -n "$verbose_pid" ] && kill "$verbose_pid" 2>/dev/null
  [ "$keep" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

t_start=$SECONDS
# Downloads and cached segments are shared between concurrent runs: one at a time.
exec 9>"$VM_CACHE/.lock"
flock 9
vm_userspace
vm_base_segment "$work"
vm_project_segment "$work" "$build"
VM_CLIENTS_CPIO=
for s in "${scenarios[@]}"; do
  if scenario_wants_clients "$s"; then
    vm_clients_segment "$work"
    vm_log "clients segment: $(du -h "$VM_CLIENTS_CPIO" | cut -f1) gzip'd ($VM_CLIENTS_CPIO)"
    break
  fi
done
declare -A kinfo=()
for k in "${kernels[@]}"; do
  # The modules of the scenarios that run on this kernel.
  all_modules=("${VM_BASE_MODULES[@]}")
  wanted=0
  for s in "${scenarios[@]}"; do
    scenario_runs_on_kernel "$s" "$k" || continue
    wanted=1
    # shellcheck disable=SC2207
    all_modules+=($(scenario_modules "$s"))
  done
  [ "$wanted" = 1 ] || continue # every scenario asked for is skipped on this kernel
  vm_kernel "$k"
  vm_modules_segment "$work" "${all_modules[@]}"
  kinfo[$k]="$VM_VMLINUZ $VM_MODULES_CPIO $VM_KPKG"
done
flock -u 9
vm_log "prepared in $((SECONDS - t_start)) s (cache: $VM_CACHE)"

# vm_boot NAME KERNEL NFS SCENARIO: one VM; prints its verdict; returns 0 on success.
vm_boot() {
  local name=$1 k=$2 nfs=$3 scenario=$4 dir="$out/$1" vmlinuz modcpio kpkg key value rc=0 t0=$SECONDS smp
  local memory
  smp=$(scenario_smp "$scenario")
  memory=$(scenario_memory "$scenario")
  read -r vmlinuz modcpio kpkg <<<"${kinfo[$k]}"
  rm -rf "$dir"
  mkdir -p "$dir"
  VM_GUEST_MODULES=("${VM_BASE_MODULES[@]}")
  # shellcheck disable=SC2207
  VM_GUEST_MODULES+=($(scenario_modules "$scenario"))
  while read -r key value; do
    [ "$key" = modules ] && continue
    key=${key//-/_}
    printf 'VM_%s="%s"\n' "${key^^}" "$value"
  done < <(scenario_headers "$scenario") >"$work/env-$name"
  # Settings from the caller's environment: VM_ENV_ROUNDS=5 -> VM_ROUNDS="5".
  while IFS='=' read -r key value; do
    [[ $key =~ ^VM_ENV_[A-Z0-9_]+$ ]] || continue
    [[ $value =~ ^[A-Za-z0-9._:/,\ -]*$ ]] || vm_die "$key: only plain words can go to the guest: $value"
    printf 'VM_%s="%s"\n' "${key#VM_ENV_}" "$value"
  done < <(env) >>"$work/env-$name"
  vm_conf_segment "$work" "$name" "$scenario" "$nfs" "$work/env-$name"
  local clients=()
  scenario_wants_clients "$scenario" && clients=("$VM_CLIENTS_CPIO")
  cat "$VM_BASE_CPIO" "$modcpio" "$VM_PROJECT_CPIO" "${clients[@]}" "$VM_CONF_CPIO" >"$work/initrd-$name.img"
  printf '%s\n' "$kpkg" >"$dir/kernel-package.txt"
  : >"$dir/console.log"
  if [ "$verbose" = 1 ]; then
    tail -n +1 -F "$dir/console.log" >&2 2>/dev/null &
    verbose_pid=$!
  fi
  vm_log "$name: booting $kpkg (TCG, $smp CPU(s), timeout ${VM_TIMEOUT} s)"
  # thread=single (the default): the vCPUs take turns on one host thread.
  # With one thread each (multi, QEMU 7.2's default for -smp 2), a vCPU
  # sometimes ran code another had just patched from a stale translation: the
  # int3 that the kernel's text_poke_bp writes while it patches, executed
  # after the patch was done (`Oops: int3` at vfs_read+0x5 and
  # syscall_trace_enter+0x148 as ckptscope attached, and once at 2.8 s into
  # the boot, in 3 of 11 runs of scenario scale). Taking turns, a vCPU never
  # runs while another writes code.
  timeout -k 10 "$VM_TIMEOUT" qemu-system-x86_64 \
    -accel "tcg,thread=$VM_TCG_THREAD" "${icount[@]}" -cpu "$VM_CPU" -smp "$smp" -m "$memory" -nodefaults -no-user-config -display none -no-reboot \
    -kernel "$vmlinuz" -initrd "$work/initrd-$name.img" \
    -append "console=ttyS0 quiet panic=-1 oops=panic softlockup_panic=1 rdinit=/init" \
    -chardev "file,id=con,path=$dir/console.log" -serial chardev:con \
    -chardev "file,id=res,path=$dir/results.b64" -serial chardev:res \
    >"$dir/qemu.log" 2>&1 || rc=$?
  if [ -n "$verbose_pid" ]; then
    sleep 0.2
    kill "$verbose_pid" 2>/dev/null || true
    wait "$verbose_pid" 2>/dev/null || true
    verbose_pid=
  fi
  rm -f "$work/initrd-$name.img"
  tr -d '\r' <"$dir/console.log" >"$dir/guest.log"
  rm -f "$dir/console.log"
  local why=
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    why="the VM ran past --timeout $VM_TIMEOUT s"
  elif [ "$rc" -ne 0 ]; then
    why="qemu exited $rc: $(tail -n 5 "$dir/qemu.log" | tr '\n' ' ')"
  fi
  # Results: base64 of a tar.gz between markers, with its sha256 on the end marker.
  local sum
  sum=$(tr -d '\r' <"$dir/results.b64" | sed -nE 's/^=====CKPTSCOPE-RESULTS-END ([0-9a-f]{64})=====$/\1/p')
  if [ -n "$sum" ]; then
    tr -d '\r' <"$dir/results.b64" |
      sed -n '/^=====CKPTSCOPE-RESULTS-BEGIN=====$/,/^=====CKPTSCOPE-RESULTS-END/p' | sed '1d;$d' |
      base64 -d >"$dir/results.tar.gz" 2>/dev/null || true
    if [ "$(vm_sha256 "$dir/results.tar.gz")" = "$sum" ]; then
      tar -xzf "$dir/results.tar.gz" -C "$dir"
      rm -f "$dir/results.tar.gz" "$dir/results.b64"
    else
      why="${why:+$why; }the guest's results arrived damaged (sha256 mismatch)"
    fi
  else
    why="${why:+$why; }no results came back from the guest"
  fi
  local oops
  oops=$(grep -m1 -E 'Oops|Kernel panic|BUG: |traps: PANIC' "$dir/guest.log" || true)
  [ -z "$oops" ] || why="${why:+$why; }the guest kernel crashed: ${oops#\[*\] }"
  if [ -z "$why" ]; then
    local status
    status=$(cat "$dir/status" 2>/dev/null || echo "no status")
    [ "$status" = ok ] || why="guest: $status"
  fi
  if [ -z "$why" ]; then
    # A scenario's checker sits next to it, or (tests/vm) above its directory.
    local checker="$VM_SCENARIO_DIR/check_${scenario//-/_}.py"
    [ -f "$checker" ] || checker="$VM_HERE/check_${scenario//-/_}.py"
    if [ -f "$checker" ]; then
      # (PYTHONDONTWRITEBYTECODE: no __pycache__ for vmcheck.py in the source tree;
      # CKPTSCOPE_BIN: for checkers that analyse the traces on the host.)
      if ! PYTHONDONTWRITEBYTECODE=1 CKPTSCOPE_BIN="$build/bin/ckptscope" \
        python3 "$checker" "$dir" >"$dir/check.log" 2>&1; then
        why="checker $(basename "$checker") failed"
      fi
      sed 's/^/    /' "$dir/check.log" >&2
    fi
  fi
  local secs=$((SECONDS - t0))
  if [ -n "$why" ]; then
    {
      printf '\n%s FAILED: %s\n' "$name" "$why"
      [ -s "$dir/failures.txt" ] && { echo "--- guest failures:"; cat "$dir/failures.txt"; }
      echo "--- last 60 lines of $dir/guest.log:"
      tail -n 60 "$dir/guest.log"
      [ -s "$dir/check.log" ] && { echo "--- $dir/check.log:"; cat "$dir/check.log"; }
      echo
    } >&2
    printf '%-30s FAIL  %4d s  %s\n' "$name" "$secs" "$why" >>"$out/results.txt"
    vm_log "$name: FAIL after $secs s: $why"
    return 1
  fi
  printf '%-30s ok    %4d s\n' "$name" "$secs" >>"$out/results.txt"
  vm_log "$name: ok in $secs s"
}

: >"$out/results.txt"
failed=0
# A combination a scenario's `# vm-kernels:` or `# vm-nfs-versions:` rules out
# boots no VM: a `skip` line in results.txt, never a failure.
vm_skip() { # NAME WHY
  printf '%-30s skip        %s\n' "$1" "$2" >>"$out/results.txt"
  vm_log "$1: skipped: $2"
}
for k in "${kernels[@]}"; do
  for n in "${nfsvers[@]}"; do
    for s in "${scenarios[@]}"; do
      if ! scenario_runs_on_kernel "$s" "$k"; then
        vm_skip "$k-nfs$n-$s" "not on kernel $k (its vm-kernels: $(scenario_headers "$s" | awk '$1 == "kernels" {$1 = ""; print}' | sed 's/^ //'))"
        continue
      fi
      if ! scenario_runs_on_nfs "$s" "$n"; then
        vm_skip "$k-nfs$n-$s" "not on NFS $n (its vm-nfs-versions: $(scenario_headers "$s" | awk '$1 == "nfs-versions" {$1 = ""; print}' | sed 's/^ //'))"
        continue
      fi
      vm_boot "$k-nfs$n-$s" "$k" "$n" "$s" || failed=$((failed + 1))
    done
  done
done
vm_log "done in $((SECONDS - t_start)) s; results in $out"
cat "$out/results.txt" >&2
[ "$failed" -eq 0 ] || vm_die "$failed run(s) failed"
