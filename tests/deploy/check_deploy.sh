#!/usr/bin/env bash
# Checks of deploy/ (label deploy). One check per call, as CTest runs them
# (tests/deploy/CMakeLists.txt); `all` runs every one. No root, no network,
# no cluster, no build.
#
#   check_deploy.sh promtool-check       promtool check rules deploy/prometheus/ckptscope-rules.yml
#   check_deploy.sh promtool-test        promtool test rules deploy/prometheus/ckptscope-rules.test.yml
#   check_deploy.sh promtool-config      promtool check config on the example Prometheus configs
#                                        (scrape, federation, remote write)
#   check_deploy.sh systemd-verify       systemd-analyze verify on a copy whose ExecStart exists
#   check_deploy.sh systemd-security     systemd-analyze security --offline: prints the exposure
#                                        score, fails above SYSTEMD_MAX_EXPOSURE (default 3.0)
#   check_deploy.sh kubernetes           every YAML parses, apiVersion/kind/metadata.name, the
#                                        DaemonSet's privileges match the unit (check_manifests.py)
#   check_deploy.sh kustomize            kubectl kustomize renders both overlays (skips without kubectl)
#   check_deploy.sh grafana              the dashboard parses, its variables, grid and datasources
#   check_deploy.sh metric-names         rules and dashboard use only deploy/metrics.md's metrics,
#                                        `job` only as the scrape job (the workload is `workload`);
#                                        the exporter's golden exposition has exactly them
#   check_deploy.sh metric-names-self-test
#                                        the checker fails, naming the name, on misspellings
#
# Exit status: 0 pass, 1 fail (a declared dependency missing is a failure
# naming its package), 77 skipped (kustomize only: no kubectl or kustomize,
# which Debian does not package in a usable version).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
deploy=$root/deploy
SKIP=77
# Debian's python3 (python3-yaml), ahead of any pyenv/venv on PATH.
PYTHON3=${PYTHON3:-$(command -v /usr/bin/python3 || command -v python3)}

need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "check_deploy: $1 not found: $2" >&2
  exit 1
}

tmpdir() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/ckptscope-deploy.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
}

# The unit with ExecStart pointing at a binary that exists here (the real one,
# /usr/local/bin/ckptscope, need not be installed where the tests run).
unit_copy() {
  local unit=$deploy/systemd/ckptscope-exporter.service
  grep -qx 'ExecStart=/usr/local/bin/ckptscope exporter --listen 0.0.0.0:9464 --config /etc/ckptscope/config.json' "$unit" ||
    { echo "check_deploy: $unit: ExecStart is not the documented command line" >&2; exit 1; }
  tmpdir
  sed 's#^ExecStart=/usr/local/bin/ckptscope #ExecStart=/bin/true #' "$unit" >"$tmp/ckptscope-exporter.service"
}

check_promtool_check() {
  need promtool "install Debian's prometheus package (scripts/install-deps.sh)"
  promtool check rules "$deploy/prometheus/ckptscope-rules.yml"
}

check_promtool_test() {
  need promtool "install Debian's prometheus package (scripts/install-deps.sh)"
  # promtool resolves rule_files relative to the test file.
  promtool test rules "$deploy/prometheus/ckptscope-rules.test.yml"
}

check_promtool_config() {
  need promtool "install Debian's prometheus package (scripts/install-deps.sh)"
  local f
  for f in prometheus.yml federation-global.yml remote-write.yml; do
    promtool check config "$deploy/prometheus/$f"
  done
}

check_systemd_verify() {
  need systemd-analyze "install Debian's systemd (scripts/install-deps.sh)"
  unit_copy
  # Both capability lines must list the same set.
  local bounding ambient
  bounding=$(sed -n 's/^CapabilityBoundingSet=//p' "$tmp/ckptscope-exporter.service" | tr ' ' '\n' | sort | paste -sd' ')
  ambient=$(sed -n 's/^AmbientCapabilities=//p' "$tmp/ckptscope-exporter.service" | tr ' ' '\n' | sort | paste -sd' ')
  if [ "$bounding" != "$ambient" ]; then
    echo "check_deploy: CapabilityBoundingSet ($bounding) != AmbientCapabilities ($ambient)" >&2
    exit 1
  fi
  local out
  out=$(systemd-analyze verify "$tmp/ckptscope-exporter.service" 2>&1) || { echo "$out" >&2; exit 1; }
  # verify exits 0 on some warnings (an unknown key, a bad value): any output is a finding.
  if [ -n "$out" ]; then
    echo "$out" >&2
    echo "check_deploy: systemd-analyze verify printed the findings above" >&2
    exit 1
  fi
  echo "check_deploy: systemd-analyze verify: ckptscope-exporter.service OK (capabilities: $bounding)"
}

check_systemd_security() {
  need systemd-analyze "install Debian's systemd (scripts/install-deps.sh)"
  if ! systemd-analyze security --help 2>/dev/null | grep -q -- '--offline'; then
    echo "check_deploy: this systemd-analyze has no security --offline (systemd < 250; Debian 12 has 252)" >&2
    exit 1
  fi
  unit_copy
  local max=${SYSTEMD_MAX_EXPOSURE:-3.0} out score
  out=$(cd "$tmp" && systemd-analyze security --offline=true --no-pager ./ckptscope-exporter.service 2>&1) || true
  echo "$out" | grep '✗' || true
  score=$(echo "$out" | sed -n 's/.*Overall exposure level for ckptscope-exporter.service: \([0-9.]*\).*/\1/p')
  if [ -z "$score" ]; then
    echo "$out" >&2
    echo "check_deploy: no exposure level in systemd-analyze security's output" >&2
    exit 1
  fi
  echo "check_deploy: systemd-analyze security: exposure $score (at most $max)"
  awk -v s="$score" -v m="$max" 'BEGIN { exit !(s <= m) }'
}

check_kubernetes() {
  "$PYTHON3" "$here/check_manifests.py" kubernetes "$deploy/kubernetes"
}

check_kustomize() {
  local kustomize
  if command -v kubectl >/dev/null 2>&1; then
    kustomize="kubectl kustomize"
  elif command -v kustomize >/dev/null 2>&1; then
    kustomize="kustomize build"
  else
    # Not a declared dependency: Debian has no kubectl able to render these
    # overlays (bookworm's kubernetes-client 1.20 embeds kustomize 2.0.3,
    # which predates `labels:`). tests/allowed_skips.txt lists this reason.
    echo "check_deploy: SKIP: no kubectl or kustomize on this machine (not a Debian package)"
    exit $SKIP
  fi
  tmpdir
  local overlay
  for overlay in "$deploy/kubernetes" "$deploy/kubernetes/privileged"; do
    $kustomize "$overlay" >"$tmp/out.yaml"
    "$PYTHON3" - "$tmp/out.yaml" "$overlay" <<'EOF'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kinds = sorted(d["kind"] for d in docs)
want = sorted(["Namespace", "ServiceAccount", "ConfigMap", "DaemonSet", "Service", "PodMonitor"])
assert kinds == want, f"{sys.argv[2]}: rendered {kinds}, want {want}"
for d in docs:
    if d["kind"] != "Namespace":
        assert d["metadata"]["namespace"] == "ckptscope", d["metadata"]
ds = next(d for d in docs if d["kind"] == "DaemonSet")
(c,) = ds["spec"]["template"]["spec"]["containers"]
privileged = c["securityContext"].get("privileged", False)
assert privileged == sys.argv[2].endswith("/privileged"), f"{sys.argv[2]}: privileged={privileged}"
print(f"check_deploy: kustomize {sys.argv[2]}: {len(docs)} objects, privileged={privileged}")
EOF
  done
}

check_grafana() {
  "$PYTHON3" "$here/check_manifests.py" grafana "$deploy/grafana/ckptscope.json"
}

# The exporter's golden exposition (its unit test's known output), held
# against the contract too. It is committed: missing is a failure.
golden=$root/tests/data/exporter/known.prom

check_metric_names() {
  [ -f "$golden" ] || { echo "check_deploy: FAIL: no golden exposition $golden" >&2; return 1; }
  "$PYTHON3" "$here/check_metric_names.py" --metrics "$deploy/metrics.md" \
    --rules "$deploy/prometheus/ckptscope-rules.yml" --dashboard "$deploy/grafana/ckptscope.json" \
    --exposition "$golden"
}

# The checker must fail on each misspelling, and name it. Each case: file
# (rules|dashboard), the sed expression that breaks it, the text the
# checker's output must contain.
check_metric_names_self_test() {
  tmpdir
  local failures=0 n=0
  while IFS='|' read -r which sedexpr expect; do
    [ -z "$which" ] && continue
    n=$((n + 1))
    local rules=$deploy/prometheus/ckptscope-rules.yml dash=$deploy/grafana/ckptscope.json
    local extra=() src dst
    case $which in
      rules) src=$rules dst=$tmp/rules.yml rules=$dst ;;
      dashboard) src=$dash dst=$tmp/dash.json dash=$dst ;;
      exposition)
        if [ ! -f "$golden" ]; then
          echo "self-test $n FAILED: no golden exposition $golden" >&2
          failures=$((failures + 1))
          continue
        fi
        src=$golden dst=$tmp/known.prom extra=(--exposition "$dst")
        ;;
    esac
    sed "$sedexpr" "$src" >"$dst"
    if cmp -s "$src" "$dst"; then
      echo "self-test $n: sed '$sedexpr' changed nothing in $src" >&2
      failures=$((failures + 1))
      continue
    fi
    local out rc=0
    out=$("$PYTHON3" "$here/check_metric_names.py" --metrics "$deploy/metrics.md" --rules "$rules" \
      --dashboard "$dash" "${extra[@]}" 2>&1) || rc=$?
    if [ "$rc" -eq 1 ] && grep -qF -- "$expect" <<<"$out"; then
      echo "self-test $n ok: $which broken -> $(grep -F -- "$expect" <<<"$out" | head -1 | sed "s#$tmp/##")"
    else
      echo "self-test $n FAILED: $which, sed '$sedexpr': exit $rc, want 1 and output containing '$expect'; got:" >&2
      echo "$out" >&2
      failures=$((failures + 1))
    fi
  done <<'EOF'
rules|s/ckptscope_tcp_backlog_bytes > 4194304/ckptscope_tcp_backlog_byte > 4194304/|ckptscope_tcp_backlog_byte: not a metric of deploy/metrics.md
rules|s/rate(ckptscope_rpc_rtt_seconds_bucket/rate(ckptscope_rpc_rtt_second_bucket/|ckptscope_rpc_rtt_second_bucket: not a metric
rules|s/rate(ckptscope_rpc_rtt_seconds_bucket/rate(ckptscope_rpc_rtt_seconds/|ckptscope_rpc_rtt_seconds: a histogram
rules|s/increase(ckptscope_dropped_events_total\[10m\])/increase(ckptscope_dropped_event_total[10m])/|ckptscope_dropped_event_total: not a metric
rules|s/{outcome="failed"}\[15m\]/{outcom="failed"}[15m]/|has no label outcom
rules|s/max by (direction) (increase(ckptscope_checkpoint_duration_seconds_sum/max by (stage) (increase(ckptscope_checkpoint_duration_seconds_sum/|by (stage): no series in the expression has label stage
rules|s/^          direction:ckptscope_checkpoint_host_io_bytes:increase15m > 1e9/          direction:ckptscope_checkpoint_host_io_byte:increase15m > 1e9/|direction:ckptscope_checkpoint_host_io_byte:increase15m: not a recording rule
rules|s/(retransmits, zero window: ckptscope_tcp_zero_window_seconds_total)/(retransmits, zero window: ckptscope_tcp_zero_windows_seconds_total)/|ckptscope_tcp_zero_windows_seconds_total: not a metric
rules|s/"TCP retransmits" panels/"TCP retransmit" panels/|no dashboard panel titled 'TCP retransmit'
dashboard|s/ckptscope_rpc_execute_seconds_bucket/ckptscope_rpc_exec_seconds_bucket/|ckptscope_rpc_exec_seconds_bucket: not a metric
dashboard|s/ckptscope_stage_last_max_fraction{/ckptscope_stage_last_max_fractions{/|ckptscope_stage_last_max_fractions: not a metric
dashboard|s/"{{instance}} {{source}} {{cause}}"/"{{instance}} {{source}} {{reason}}"/|legend {{reason}}
dashboard|s/direction:ckptscope_storage_max_bytes_per_second:max/direction:ckptscope_storage_max_bytes_per_sec:max/|direction:ckptscope_storage_max_bytes_per_sec:max: not a recording rule
exposition|s/^ckptscope_rpc_backlog_depth{server=/ckptscope_rpc_backlog_depth{srv=/|ckptscope_rpc_backlog_depth has labels ['srv']
exposition|s/ckptscope_tcp_retransmits_total/ckptscope_tcp_retransmissions_total/g|family ckptscope_tcp_retransmissions_total (counter) is not in deploy/metrics.md
exposition|s/workload=/job=/g|ckptscope_checkpoints_total has labels ['direction', 'job', 'outcome']
rules|s/sum by (instance, workload, direction)/sum by (instance, job, direction)/g|by (job): job is Prometheus's scrape job
rules|s/up{job="ckptscope-exporter"} == 0/up{job="ckptscope"} == 0/|job="ckptscope": job is Prometheus's scrape job
dashboard|s/ckptscope_failures_total{workload=~/ckptscope_failures_total{job=~/|job=~"$workload": job is Prometheus's scrape job
dashboard|s/"{{workload}} {{direction}}"/"{{job}} {{direction}}"/|legend {{job}}: job is Prometheus's scrape job
EOF
  if [ "$failures" -ne 0 ]; then
    echo "check_deploy: metric-names self-test: $failures of $n cases failed" >&2
    exit 1
  fi
  echo "check_deploy: metric-names self-test: all $n misspellings caught"
}

run_all() {
  local c rc failed=0
  for c in promtool-check promtool-test promtool-config systemd-verify systemd-security kubernetes kustomize grafana \
    metric-names metric-names-self-test; do
    echo "== $c"
    rc=0
    "${BASH_SOURCE[0]}" "$c" || rc=$?
    case $rc in
      0) ;;
      "$SKIP") echo "(skipped)" ;;
      *) failed=$((failed + 1)) ;;
    esac
  done
  [ "$failed" -eq 0 ]
}

case ${1:-} in
  promtool-check) check_promtool_check ;;
  promtool-test) check_promtool_test ;;
  promtool-config) check_promtool_config ;;
  systemd-verify) check_systemd_verify ;;
  systemd-security) check_systemd_security ;;
  kubernetes) check_kubernetes ;;
  kustomize) check_kustomize ;;
  grafana) check_grafana ;;
  metric-names) check_metric_names ;;
  metric-names-self-test) check_metric_names_self_test ;;
  all) run_all ;;
  *)
    sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
