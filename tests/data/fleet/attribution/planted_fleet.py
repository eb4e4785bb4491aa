"""A fleet's metrics with planted failures, for `ckptscope fleet attribute`'s
end-to-end test (tests/fleet/attribute_prometheus_test.py) and benchmark
(bench/fleet_attribute_bench.py). Stdlib only; series are generators, so a
large fleet streams through tests/fleet/prom_harness.write_openmetrics.

Every node has, per GPU (dcgm-exporter's labels: instance NODE:9400,
Hostname, gpu, UUID) and per node (node_exporter's: instance NODE:9100):

- six GRADED metrics, each with known noise. Before each failure, on the
  failing node (and GPU, for the per-GPU ones), all six shift from 10 minutes
  before the failure to 3 minutes after it, by 8 x 2.5^(5 - r) noise standard
  deviations for the metric the failure's type puts at rank r (0 = first). The
  factor 2.5 between ranks keeps the planted order whatever the sampling error
  of each metric's calibration; the planted ranking of each type is
  ORDERS[type].
- calm fillers (gauges, and counters scored through their rate) and noisy
  fillers (spikes of 40 standard deviations at random times, ~1 in 15 samples):
  no planted shift. Noisy ones have a large raw score in every window, so only
  calibration keeps them from ranking high.
- DCGM_FI_DEV_XID_ERRORS per GPU: 0, then the XID of each failure from its
  time on (a gauge of the last XID); an optional reset back to 0 (a reboot)
  is not a failure.
- ckptscope_failures_total{kind="gpu_xid"} (instance NODE:9464): one more at
  each failure.
"""

import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "fleet"))
import prom_harness  # noqa: E402

# name, type, per "gpu" or "node", direction of the planted shift, level, noise sd
GRADED = [
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "gpu", +1, 60.0, 1.0),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "gpu", +1, 400.0, 5.0),
    ("node_pcie_aer_errors", "counter", "node", +1, 100.0, 10.0),  # rate /s and its sd
    ("node_memory_MemAvailable_bytes", "gauge", "node", -1, 1e11, 1e8),
    ("node_load1", "gauge", "node", +1, 20.0, 1.0),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "gpu", -1, 2600.0, 10.0),
]
# What each type puts first: GRADED indices, rank 0 first.
ORDERS = {
    "79": [0, 1, 2, 3, 4, 5],
    "48": [2, 3, 0, 5, 4, 1],
    "13": [5, 4, 3, 2, 1, 0],
}
SHIFT_FROM_S = -600
SHIFT_TO_S = 180


def graded_name(i):
    name, kind = GRADED[i][0], GRADED[i][1]
    return name + "_total" if kind == "counter" else name


def shift_sds(rank):
    return 8.0 * 2.5 ** (5 - rank)


class Failure:
    def __init__(self, node, gpu, time_s, xid):
        self.node, self.gpu, self.time_s, self.xid = node, gpu, time_s, str(xid)


def _shift(failures, node, gpu, metric_index, t):
    """The planted shift (in sds, signed) of a metric at t, or 0."""
    for f in failures:
        if f.node != node or (gpu is not None and f.gpu != gpu):
            continue
        if f.time_s + SHIFT_FROM_S <= t <= f.time_s + SHIFT_TO_S:
            rank = ORDERS[f.xid].index(metric_index)
            return GRADED[metric_index][3] * shift_sds(rank)
    return 0.0


def _times(start_s, end_s, scrape_s):
    t = start_s
    while t <= end_s:
        yield t
        t += scrape_s


def _stable_hash(text):
    h = 1469598103934665603
    for c in text.encode():
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def _gauge_samples(start_s, end_s, scrape_s, level, sd, seed, shift=None, spikes=False):
    rng = random.Random(seed)
    for t in _times(start_s, end_s, scrape_s):
        v = level + sd * rng.gauss(0, 1)
        if spikes and rng.random() < 1 / 15:
            v += 40 * sd
        if shift is not None:
            v += sd * shift(t)
        yield (t, round(v, 6))


def _counter_samples(start_s, end_s, scrape_s, rate, sd, seed, shift=None):
    rng = random.Random(seed)
    total = 0.0
    for t in _times(start_s, end_s, scrape_s):
        per_s = rate + sd * rng.gauss(0, 1)
        if shift is not None:
            # The rate over a 2-sample window averages 2 increments: its sd is
            # sd / sqrt(2); shift that.
            per_s += sd / math.sqrt(2) * shift(t)
        total += max(per_s, 0) * scrape_s
        yield (t, round(total, 3))


def _gpu_labels(node, gpu):
    return {"instance": node + ":9400", "job": "dcgm", "Hostname": node, "gpu": str(gpu),
            "UUID": "GPU-%08x" % (_stable_hash(node + str(gpu)) & 0xFFFFFFFF)}


def _node_labels(node):
    return {"instance": node + ":9100", "job": "node"}


def families(start_s, end_s, nodes, gpus, failures, calm_gauges=10, calm_counters=4, noisy=5,
             scrape_s=60, resets=()):
    """The metric families (generators). resets: (node, gpu, time_s) where
    the XID gauge goes back to 0 (not a failure)."""
    out = []
    for i, (name, kind, scope, _, level, sd) in enumerate(GRADED):
        def series_of(i=i, kind=kind, scope=scope, level=level, sd=sd):
            for node in nodes:
                for gpu in (range(gpus) if scope == "gpu" else [None]):
                    shift = (lambda t, node=node, gpu=gpu: _shift(failures, node, gpu, i, t))
                    seed = _stable_hash("%s/%s/%s" % (GRADED[i][0], node, gpu))
                    if kind == "counter":
                        samples = _counter_samples(start_s, end_s, scrape_s, level, sd, seed, shift)
                    else:
                        samples = _gauge_samples(start_s, end_s, scrape_s, level, sd, seed, shift)
                    labels = _gpu_labels(node, gpu) if scope == "gpu" else _node_labels(node)
                    yield prom_harness.series(labels, samples)
        out.append(prom_harness.family(name, kind, series_of()))

    def filler(name, kind, spikes):
        def series_of():
            for node in nodes:
                seed = _stable_hash(name + "/" + node)
                if kind == "counter":
                    samples = _counter_samples(start_s, end_s, scrape_s, 50.0, 5.0, seed)
                else:
                    samples = _gauge_samples(start_s, end_s, scrape_s, 100.0, 3.0, seed,
                                             spikes=spikes)
                yield prom_harness.series(_node_labels(node), samples)
        return prom_harness.family(name, kind, series_of())

    for k in range(calm_gauges):
        out.append(filler("node_calm_gauge_%03d" % k, "gauge", False))
    for k in range(calm_counters):
        out.append(filler("node_calm_requests_%03d" % k, "counter", False))
    for k in range(noisy):
        out.append(filler("node_noisy_gauge_%03d" % k, "gauge", True))

    def xid_series():
        for node in nodes:
            for gpu in range(gpus):
                changes = sorted([(f.time_s, float(f.xid)) for f in failures
                                  if f.node == node and f.gpu == gpu] +
                                 [(t, 0.0) for n, g, t in resets if n == node and g == gpu])

                def samples(changes=changes):
                    value = 0.0
                    pending = list(changes)
                    for t in _times(start_s, end_s, scrape_s):
                        while pending and pending[0][0] <= t:
                            value = pending.pop(0)[1]
                        yield (t, value)
                yield prom_harness.series(_gpu_labels(node, gpu), samples())
    out.append(prom_harness.family("DCGM_FI_DEV_XID_ERRORS", "gauge", xid_series()))

    def ckptscope_series():
        for node in nodes:
            times = sorted(f.time_s for f in failures if f.node == node)

            def samples(times=times):
                for t in _times(start_s, end_s, scrape_s):
                    yield (t, float(sum(1 for f in times if f <= t)))
            yield prom_harness.series({"instance": node + ":9464", "job": "ckptscope",
                                       "workload": "other", "kind": "gpu_xid"}, samples())
    out.append(prom_harness.family("ckptscope_failures", "counter", ckptscope_series()))
    return out


def metric_names(calm_gauges=10, calm_counters=4, noisy=5):
    """Every metric name a node's window holds (the failure metrics excluded)."""
    names = [graded_name(i) for i in range(len(GRADED))]
    names += ["node_calm_gauge_%03d" % k for k in range(calm_gauges)]
    names += ["node_calm_requests_%03d_total" % k for k in range(calm_counters)]
    names += ["node_noisy_gauge_%03d" % k for k in range(noisy)]
    return names
