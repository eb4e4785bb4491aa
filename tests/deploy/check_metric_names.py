#!/usr/bin/env python3
"""Checks that the Prometheus rules and the Grafana dashboard use only the
metric contract of deploy/metrics.md.

- Every `ckptscope_*` name in a PromQL expression (rules, dashboard targets,
  template variable queries) is a metric of the contract; a histogram only as
  its `_bucket`, `_sum` or `_count` series (a bare histogram name selects
  nothing), any other type only by its own name.
- Every name with a colon is a recording rule the rules file defines.
- Every label in a selector `{...}` of a metric or recording rule is one that
  series has (the contract's labels plus `instance` and `job`, which
  Prometheus adds, and `le` on `_bucket`); every label of a `by (...)`,
  `without (...)`, `on (...)`, `ignoring (...)`, `group_left/right (...)` and
  every `{{label}}` of a panel's legend is a label of some series the
  expression reads.
- `job` is Prometheus's scrape job, never the workload (that is `workload`):
  a selector matches it only as job="ckptscope-exporter", and no `by (...)`,
  `on (...)`, ... or legend uses it. The contract gives no metric a label
  Prometheus sets itself (`job`, `instance`).
- Metric names in the rules' annotations (prose) are contract names too, and
  every dashboard panel an annotation names ("dashboard's \"X\" panel") exists.
- With --exposition FILE (the exporter's golden output,
  tests/data/exporter/known.prom): the exposition has exactly the contract's
  families, each with the contract's type and label names.

Exit status 0 when all hold, 1 with one line per problem otherwise.

    check_metric_names.py [--metrics deploy/metrics.md]
                          [--rules deploy/prometheus/ckptscope-rules.yml]
                          [--dashboard deploy/grafana/ckptscope.json]
                          [--exposition tests/data/exporter/known.prom]
"""

import argparse
import json
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
TARGET_LABELS = {"instance", "job"}  # added by Prometheus to every series
SCRAPE_JOB = "ckptscope-exporter"  # the scrape configurations' job name
GRAFANA_NAMES = {"up"}  # other metric names the files may use
PROMQL_WORDS = {
    "sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk", "bottomk", "quantile",
    "count_values", "group", "by", "without", "on", "ignoring", "group_left", "group_right",
    "and", "or", "unless", "offset", "bool", "atan2", "inf", "nan",
}


class Contract:
    def __init__(self, path):
        self.metrics = {}  # name -> (type, set of labels)
        row = re.compile(r"^\|\s*`(ckptscope_[a-z0-9_]+)`\s*\|\s*([a-z]+)\s*\|([^|]*)\|")
        for line in pathlib.Path(path).read_text().splitlines():
            m = row.match(line)
            if m:
                labels = set(re.findall(r"`([a-z_][a-z0-9_]*)`", m.group(3)))
                self.metrics[m.group(1)] = (m.group(2), labels)
        if not self.metrics:
            raise SystemExit(f"{path}: no metric table rows (| `ckptscope_...` | type | labels | ...)")
        self.errors = [
            f"{path}: {name} has label {label}, which Prometheus sets itself (the workload is `workload`)"
            for name, (_, labels) in sorted(self.metrics.items()) for label in sorted(labels & TARGET_LABELS)]

    def series(self, name):
        """The contract's view of a series name: (family, labels) or None."""
        if name in self.metrics:
            mtype, labels = self.metrics[name]
            if mtype == "histogram":
                return None  # a histogram family has no series of its own name
            return name, labels | TARGET_LABELS
        for suffix in HISTOGRAM_SUFFIXES:
            base = name[: -len(suffix)] if name.endswith(suffix) else None
            if base and base in self.metrics and self.metrics[base][0] == "histogram":
                extra = {"le"} if suffix == "_bucket" else set()
                return base, self.metrics[base][1] | TARGET_LABELS | extra
        return None

    def family(self, name):
        """A name as prose may use it: a family or one of its series."""
        return name in self.metrics or self.series(name) is not None


def strip_strings(expr):
    """PromQL without its string literals (label values, e.g. "10.0.0.5:2049")."""
    return re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`', '""', expr)


def selectors(expr):
    """(name, [label names]) for each NAME{...} in expr (strings kept)."""
    out = []
    for m in re.finditer(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}", expr):
        body = strip_strings(m.group(2))
        labels = re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", body)
        out.append((m.group(1), labels))
    return out


class Checker:
    def __init__(self, contract, recording):
        self.contract = contract
        self.recording = recording  # name -> set of labels (from its level)
        self.errors = []

    def series_labels(self, name):
        if name in self.recording:
            return self.recording[name]
        if name == "up":
            return set(TARGET_LABELS)
        s = self.contract.series(name)
        return s[1] if s else None

    def expr(self, where, expr, legend=None):
        bare = strip_strings(expr)
        names = []
        for m in re.finditer(r"(?<![\w$.:])([a-zA-Z_:][a-zA-Z0-9_:]*)", bare):
            tok = m.group(1)
            after = bare[m.end():].lstrip()
            if after.startswith("(") and ":" not in tok:
                continue  # a function or an aggregation
            if ":" in tok:
                if tok not in self.recording:
                    self.errors.append(f"{where}: {tok}: not a recording rule of the rules file")
                names.append(tok)
            elif tok.startswith("ckptscope_"):
                if self.contract.series(tok) is None:
                    if tok in self.contract.metrics:
                        self.errors.append(
                            f"{where}: {tok}: a histogram; select its _bucket, _sum or _count")
                    else:
                        self.errors.append(f"{where}: {tok}: not a metric of deploy/metrics.md")
                names.append(tok)
            elif tok in GRAFANA_NAMES:
                names.append(tok)
        known = set()
        for n in names:
            labels = self.series_labels(n)
            if labels:
                known |= labels
        for m in re.finditer(r"(?<![\w])job\s*(=~|!~|!=|=)\s*(\"(?:\\.|[^\"\\])*\"|'[^']*')", expr):
            if m.group(1) != "=" or m.group(2)[1:-1] != SCRAPE_JOB:
                self.errors.append(
                    f"{where}: job{m.group(1)}{m.group(2)}: job is Prometheus's scrape job "
                    f"(select it only as job=\"{SCRAPE_JOB}\"); the workload is `workload`")
        for name, labels in selectors(expr):
            allowed = self.series_labels(name)
            if allowed is None:
                continue
            for label in labels:
                if label != "__name__" and label not in allowed:
                    self.errors.append(f"{where}: {name}{{{label}=...}}: {name} has no label {label}")
        if not known:
            return
        for m in re.finditer(
                r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", bare):
            for label in re.findall(r"[a-zA-Z_][a-zA-Z0-9_]*", m.group(2)):
                if label == "job":
                    self.errors.append(
                        f"{where}: {m.group(1)} (job): job is Prometheus's scrape job, the same on every "
                        "series; the workload is `workload`")
                elif label not in known:
                    self.errors.append(
                        f"{where}: {m.group(1)} ({label}): no series in the expression has label {label}")
        if legend:
            for label in re.findall(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}", legend):
                if label == "job":
                    self.errors.append(
                        f"{where}: legend {{{{job}}}}: job is Prometheus's scrape job; the workload is `workload`")
                elif label not in known:
                    self.errors.append(
                        f"{where}: legend {{{{{label}}}}}: no series in the expression has label {label}")

    def prose(self, where, text):
        for tok in re.findall(r"(?<![\w:])([a-z_]+:ckptscope_[a-z0-9_]+:[a-z0-9_]+)", text):
            if tok not in self.recording:
                self.errors.append(f"{where}: {tok}: not a recording rule of the rules file")
        for tok in re.findall(r"(?<![\w:])(ckptscope_[a-z0-9_]+)(?![\w:])", text):
            if not self.contract.family(tok):
                self.errors.append(f"{where}: {tok}: not a metric of deploy/metrics.md")


def walk_targets(node, path="dashboard"):
    """(where, expr, legend) for every query in the dashboard JSON."""
    if isinstance(node, dict):
        title = node.get("title")
        here = f"{path} > {title!r}" if title else path
        if isinstance(node.get("expr"), str):
            yield here, node["expr"], node.get("legendFormat")
        if node.get("type") == "query" and "name" in node:  # a template variable
            q = node.get("query")
            q = q.get("query") if isinstance(q, dict) else q
            if isinstance(q, str):
                yield f"{path} > variable {node['name']}", label_values_expr(q), None
        for key, value in node.items():
            if key in ("expr",):
                continue
            yield from walk_targets(value, here if key == "panels" or title else path)
    elif isinstance(node, list):
        for item in node:
            yield from walk_targets(item, path)


def label_values_expr(query):
    """label_values(SELECTOR, label) -> a PromQL expression that reads it."""
    m = re.fullmatch(r"\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*", query)
    if m:
        return f"group by ({m.group(2)}) ({m.group(1)})"
    return query


def panel_titles(node):
    titles = set()
    if isinstance(node, dict):
        if isinstance(node.get("title"), str) and "gridPos" in node:
            titles.add(node["title"])
        for value in node.values():
            titles |= panel_titles(value)
    elif isinstance(node, list):
        for item in node:
            titles |= panel_titles(item)
    return titles


def check_exposition(contract, path):
    """The exporter's text exposition against the contract: families, types, labels."""
    errors = []
    types, labels = {}, {}
    sample = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+")
    for line in pathlib.Path(path).read_text().splitlines():
        if line.startswith("# TYPE "):
            _, _, name, mtype = line.split()
            types[name] = mtype
        elif line and not line.startswith("#"):
            m = sample.match(line)
            if not m:
                errors.append(f"{path}: not a sample line: {line!r}")
                continue
            name = m.group(1)
            family = next((f for f in types if name == f or (
                types[f] == "histogram" and name in (f + x for x in HISTOGRAM_SUFFIXES))), name)
            names = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', strip_strings_keep_keys(m.group(2) or "")))
            labels.setdefault(family, set()).update(names - {"le"})
    for name, mtype in sorted(types.items()):
        if name not in contract.metrics:
            errors.append(f"{path}: family {name} ({mtype}) is not in deploy/metrics.md")
            continue
        want_type, want_labels = contract.metrics[name]
        if mtype != want_type:
            errors.append(f"{path}: {name} is a {mtype}; deploy/metrics.md says {want_type}")
        got = labels.get(name, set())
        if got and got != want_labels:
            errors.append(f"{path}: {name} has labels {sorted(got)}; deploy/metrics.md says {sorted(want_labels)}")
    for name in sorted(set(contract.metrics) - set(types)):
        errors.append(f"{path}: deploy/metrics.md's {name} is not in the exposition")
    return errors, len(types)


def strip_strings_keep_keys(body):
    """Label values emptied, keys and the opening quote kept: a="x,y" -> a="."""
    return re.sub(r'="(?:\\.|[^"\\])*"', '="', body)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--metrics", default=ROOT / "deploy/metrics.md")
    ap.add_argument("--rules", default=ROOT / "deploy/prometheus/ckptscope-rules.yml")
    ap.add_argument("--dashboard", default=ROOT / "deploy/grafana/ckptscope.json")
    ap.add_argument("--exposition", help="the exporter's text exposition to hold against the contract")
    args = ap.parse_args()

    contract = Contract(args.metrics)
    rules = yaml.safe_load(pathlib.Path(args.rules).read_text())
    dashboard = json.loads(pathlib.Path(args.dashboard).read_text())

    recording = {}
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "record" in rule:
                level = rule["record"].split(":")[0]
                recording[rule["record"]] = set(level.split("_")) if level else set()
    checker = Checker(contract, recording)
    checker.errors += contract.errors

    titles = panel_titles(dashboard)
    n_exprs = 0
    for group in rules["groups"]:
        for rule in group["rules"]:
            name = rule.get("record") or rule.get("alert")
            where = f"{args.rules}: {group['name']} > {name}"
            checker.expr(where, rule["expr"])
            n_exprs += 1
            for key, text in (rule.get("annotations") or {}).items():
                checker.prose(f"{where} annotation {key}", text)
                for m in re.finditer(r"dashboard's (.*?) panels?\b", text, re.S):
                    for title in re.findall(r'"([^"]+)"', m.group(1)):
                        if title not in titles:
                            checker.errors.append(
                                f"{where} annotation {key}: no dashboard panel titled {title!r}")

    for where, expr, legend in walk_targets(dashboard, str(args.dashboard)):
        checker.expr(where, expr, legend)
        n_exprs += 1

    exposition_note = ""
    if args.exposition:
        errs, n = check_exposition(contract, args.exposition)
        checker.errors += errs
        exposition_note = f"; {args.exposition} has exactly their {n} families, types and labels"
    if checker.errors:
        for e in checker.errors:
            print(e)
        print(f"check_metric_names: {len(checker.errors)} problem(s)", file=sys.stderr)
        return 1
    print(f"check_metric_names: {n_exprs} expressions use only the {len(contract.metrics)} metrics "
          f"of {args.metrics} and the {len(recording)} recording rules{exposition_note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
