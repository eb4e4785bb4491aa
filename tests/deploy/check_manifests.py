#!/usr/bin/env python3
"""Structural checks of deploy/ that need no cluster and no Grafana.

    check_manifests.py kubernetes [DIR]   every YAML under deploy/kubernetes
    check_manifests.py grafana [FILE]     deploy/grafana/ckptscope.json

kubernetes: every file parses (yaml.safe_load_all); every document has
apiVersion, kind and metadata.name (a Kustomization: apiVersion, kind, and
resources that exist); the DaemonSet is not privileged, uses hostPID and not
the host network, names port 9464 "metrics", probes /metrics, adds exactly the
systemd unit's capabilities less CAP_SYSLOG and drops ALL; the PodMonitor
scrapes port "metrics" and leaves honorLabels off (the exporter's `workload`
label never collides with the target's `job`); the ConfigMap's
config.json is JSON whose keys are all in docs/config.md.

grafana: the JSON parses; schemaVersion >= 36; a datasource variable
DS_PROMETHEUS that every panel and query uses; the variables workload,
instance and server; panels have unique ids, fit the 24-column grid and do not overlap;
every non-row panel has at least one query with an expression.
"""

import json
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
errors = []


def err(msg):
    errors.append(msg)


def unit_capabilities():
    unit = (ROOT / "deploy/systemd/ckptscope-exporter.service").read_text()
    m = re.search(r"^CapabilityBoundingSet=(.*)$", unit, re.M)
    return {c.removeprefix("CAP_") for c in m.group(1).split()} if m else set()


def flatten(obj, prefix=""):
    if isinstance(obj, dict) and obj and prefix != "notify.":
        out = set()
        for k, v in obj.items():
            out |= flatten(v, f"{prefix}{k}.")
        return out
    return {prefix.rstrip(".")}


def check_kubernetes(directory):
    directory = pathlib.Path(directory)
    files = sorted(directory.rglob("*.yaml")) + sorted(directory.rglob("*.yml"))
    if not files:
        err(f"{directory}: no YAML files")
    docs = []
    for path in files:
        try:
            loaded = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
        except yaml.YAMLError as e:
            err(f"{path}: does not parse: {e}")
            continue
        for doc in loaded:
            where = str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
            if not isinstance(doc, dict):
                err(f"{where}: a document that is not a mapping")
                continue
            if not doc.get("apiVersion") or not doc.get("kind"):
                err(f"{where}: no apiVersion or kind")
                continue
            if doc["kind"] == "Kustomization":
                for res in doc.get("resources", []):
                    if not (path.parent / res).exists():
                        err(f"{where}: resource {res} does not exist")
                continue
            name = (doc.get("metadata") or {}).get("name")
            if not name:
                err(f"{where}: {doc['kind']} without metadata.name")
                continue
            docs.append((where, doc))
    by_kind = {}
    for where, doc in docs:
        by_kind.setdefault(doc["kind"], []).append((where, doc))
    for kind in ("Namespace", "ServiceAccount", "ConfigMap", "DaemonSet", "Service", "PodMonitor"):
        if kind not in by_kind:
            err(f"{directory}: no {kind}")
    for where, doc in docs:
        if doc["kind"] != "Namespace" and doc["metadata"].get("namespace") != "ckptscope":
            err(f"{where}: {doc['kind']} {doc['metadata']['name']} not in namespace ckptscope")

    for where, ds in by_kind.get("DaemonSet", []):
        spec = ds["spec"]["template"]["spec"]
        if spec.get("hostPID") is not True:
            err(f"{where}: hostPID is not true")
        if spec.get("hostNetwork"):
            err(f"{where}: hostNetwork is on")
        if not any(t.get("key") == "nvidia.com/gpu" for t in spec.get("tolerations", [])):
            err(f"{where}: no toleration for nvidia.com/gpu")
        (c,) = spec["containers"]
        sc = c.get("securityContext", {})
        if sc.get("privileged"):
            err(f"{where}: the container is privileged")
        caps = sc.get("capabilities", {})
        if caps.get("drop") != ["ALL"]:
            err(f"{where}: capabilities.drop is not [ALL]")
        want = unit_capabilities() - {"SYSLOG"}
        if set(caps.get("add", [])) != want:
            err(f"{where}: capabilities.add {sorted(caps.get('add', []))} != the unit's less SYSLOG {sorted(want)}")
        ports = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
        if ports.get("metrics") != 9464:
            err(f"{where}: no port 9464 named metrics")
        probe = (c.get("readinessProbe") or {}).get("httpGet") or {}
        if probe.get("path") != "/metrics":
            err(f"{where}: the readiness probe does not GET /metrics")
        if "memory" not in (c.get("resources") or {}).get("limits", {}):
            err(f"{where}: no memory limit")
        mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
        for path in ("/sys/kernel/btf", "/sys/fs/cgroup", "/run/ckptscope", "/etc/ckptscope"):
            if path not in mounts:
                err(f"{where}: {path} is not mounted")
        if "--listen" not in c.get("command", []) or "exporter" not in c.get("command", []):
            err(f"{where}: the command is not `ckptscope exporter --listen ...`")

    for where, pm in by_kind.get("PodMonitor", []):
        if pm["apiVersion"] != "monitoring.coreos.com/v1":
            err(f"{where}: apiVersion is not monitoring.coreos.com/v1")
        (ep,) = pm["spec"]["podMetricsEndpoints"]
        if ep.get("port") != "metrics":
            err(f"{where}: the endpoint must scrape port metrics")
        if ep.get("honorLabels"):
            err(f"{where}: honorLabels is on: the exporter's labels (workload, ...) never collide "
                "with the target's, and job and instance must stay Prometheus's")

    for where, svc in by_kind.get("Service", []):
        if svc["spec"].get("clusterIP") != "None":
            err(f"{where}: the Service is not headless")

    documented = set(re.findall(r"^\| `([a-z_.]+)` \|", (ROOT / "docs/config.md").read_text(), re.M))
    for where, cm in by_kind.get("ConfigMap", []):
        try:
            config = json.loads(cm["data"]["config.json"])
        except (KeyError, json.JSONDecodeError) as e:
            err(f"{where}: data config.json is not JSON: {e}")
            continue
        for key in sorted(flatten(config)):
            if key not in documented:
                err(f"{where}: config key {key} is not in docs/config.md")
    return len(docs)


def check_grafana(path):
    path = pathlib.Path(path)
    try:
        d = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        err(f"{path}: does not parse: {e}")
        return 0
    if d.get("schemaVersion", 0) < 36:
        err(f"{path}: schemaVersion {d.get('schemaVersion')} < 36")
    variables = {v["name"]: v for v in d.get("templating", {}).get("list", [])}
    ds = variables.get("DS_PROMETHEUS")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        err(f"{path}: no datasource variable DS_PROMETHEUS of type prometheus")
    for name in ("workload", "instance", "server"):
        if name not in variables:
            err(f"{path}: no template variable {name}")
    ids, cells = set(), {}
    n = 0

    def uses_var(obj, where):
        if obj != {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}:
            err(f"{where}: datasource is {obj!r}, not ${{DS_PROMETHEUS}}")

    for v in variables.values():
        if v.get("type") == "query":
            uses_var(v.get("datasource"), f"{path}: variable {v['name']}")
    for p in d.get("panels", []):
        n += 1
        where = f"{path}: panel {p.get('id')} {p.get('title')!r}"
        if p.get("id") in ids:
            err(f"{where}: duplicate id")
        ids.add(p.get("id"))
        g = p.get("gridPos", {})
        x, y, w, h = g.get("x", -1), g.get("y", -1), g.get("w", 0), g.get("h", 0)
        if x < 0 or y < 0 or w <= 0 or h <= 0 or x + w > 24:
            err(f"{where}: gridPos {g} is off the 24-column grid")
        for cx in range(max(x, 0), min(x + w, 24)):
            for cy in range(max(y, 0), max(y, 0) + h):
                if (cx, cy) in cells:
                    err(f"{where}: overlaps panel {cells[(cx, cy)]!r}")
                    break
                cells[(cx, cy)] = p.get("title")
            else:
                continue
            break
        if p.get("type") == "row":
            continue
        uses_var(p.get("datasource"), where)
        targets = p.get("targets") or []
        if not targets or not all(t.get("expr") for t in targets):
            err(f"{where}: a panel without a query expression")
        for t in targets:
            uses_var(t.get("datasource"), f"{where} query {t.get('refId')}")
    return n


def main(argv):
    if len(argv) < 2 or argv[1] not in ("kubernetes", "grafana"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == "kubernetes":
        n = check_kubernetes(argv[2] if len(argv) > 2 else ROOT / "deploy/kubernetes")
        what = f"{n} Kubernetes objects"
    else:
        n = check_grafana(argv[2] if len(argv) > 2 else ROOT / "deploy/grafana/ckptscope.json")
        what = f"{n} dashboard panels"
    for e in errors:
        print(e)
    if errors:
        print(f"check_manifests {argv[1]}: {len(errors)} problem(s)", file=sys.stderr)
        return 1
    print(f"check_manifests {argv[1]}: {what} OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
