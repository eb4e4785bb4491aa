"""Self-check of tests/fleet/prom_harness.py: backfilled gauges, counters and a
histogram come back from a real Prometheus with the values written."""

import argparse
import math
import os
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prom_harness as ph  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckptscope")  # unused: the harness alone
    parser.add_argument("--source-dir")
    parser.parse_args()
    ph.require_prometheus()

    start = ph.past_start_s(4 * 3600)
    step = 60
    times = range(start, start + 4 * 3600 + 1, step)

    def gauge_series():
        for node in ("n1", "n2"):
            yield ph.series({"instance": node}, ((t, (t - start) / 60.0) for t in times))

    def counter_series():
        yield ph.series({"instance": "n1", "direction": "save"},
                        ((t, 1000.0 * (t - start)) for t in times))

    def histogram_series():
        for le in ("0.1", "1", "+Inf"):
            yield ph.series({"le": le}, ((t, 2.0 * (t - start) / 60) for t in times), "_bucket")
        yield ph.series({}, ((t, 0.5 * (t - start) / 60) for t in times), "_sum")
        yield ph.series({}, ((t, 2.0 * (t - start) / 60) for t in times), "_count")

    families = [
        ph.family("harness_gauge", "gauge", gauge_series()),
        ph.family("harness_bytes_total", "counter", counter_series()),
        ph.family("harness_seconds", "histogram", histogram_series()),
    ]
    failures = []

    def check(what, got, want):
        if not (got == want or (isinstance(want, float) and math.isclose(got, want))):
            failures.append("%s: got %r, want %r" % (what, got, want))

    with ph.backfilled_prometheus(families) as prom:
        with urllib.request.urlopen(prom.url + "/-/ready", timeout=5) as r:
            check("/-/ready status", r.status, 200)
        at = start + 3600
        data = prom.query("harness_gauge", at)
        check("gauge result type", data["resultType"], "vector")
        values = {s["metric"]["instance"]: float(s["value"][1]) for s in data["result"]}
        check("gauge values", values, {"n1": 60.0, "n2": 60.0})
        data = prom.query("rate(harness_bytes_total[5m])", at)
        check("counter rate", float(data["result"][0]["value"][1]), 1000.0)
        data = prom.query("increase(harness_seconds_count[1h])", start + 4 * 3600)
        check("histogram count increase", float(data["result"][0]["value"][1]), 120.0)
        data = prom.query("harness_gauge", start + 4 * 3600 + 3600)  # past the end + lookback
        check("nothing after the last sample", data["result"], [])
        data_dir = prom.data_dir
    check("temporary directory removed", os.path.exists(data_dir), False)

    if failures:
        print("FAIL\n  " + "\n  ".join(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
