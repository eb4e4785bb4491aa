"""A real Prometheus loaded with known series, for the `ckptscope fleet` tests.

Prometheus stays the store and the query engine in production, so the tests
use a real one (Debian's `prometheus` 2.42, installed by scripts/install-deps.sh)
loaded by backfilling: generated series are written as OpenMetrics text,
`promtool tsdb create-blocks-from openmetrics FILE DATADIR` turns them into TSDB
blocks, and `prometheus` serves DATADIR on a free loopback port with no scrape
targets. Stdlib only.

API
---
require_prometheus() -> None
    Exit 1 (a failure, not a skip: Prometheus is a declared dependency) with a
    message naming what is missing when `promtool` or `prometheus` is not on PATH.

past_start_s(duration_s, align_s=3600) -> int
    A start time (Unix seconds, a multiple of align_s) such that
    [start, start + duration_s] ends more than 3 hours before now: backfilled
    samples must lie behind the head block Prometheus will open on start.

series(labels, samples, suffix="") -> Series
    One series: a dict of labels, an iterable of (time_unix_s, value) in time
    order (a generator is fine: nothing is kept), and a suffix added to the
    family's name for this series' samples (histograms: "_bucket", "_sum",
    "_count"; counters get "_total" automatically).

family(name, type, series_iterable, help="") -> Family
    A metric family: name without "_total", type "gauge", "counter",
    "histogram" or "unknown", and an iterable of Series (a generator is fine).

write_openmetrics(path, families) -> int
    Streams the families to path as OpenMetrics text (timestamps in Unix
    seconds, "# EOF" last) and returns the number of samples written. Memory
    stays bounded by one sample whatever the input size, so a benchmark can
    write months of a large fleet.

class Prometheus (context manager)
    with Prometheus() as prom:
        prom.backfill(families)   # write + promtool into prom.data_dir
        prom.start()              # serve it; waits for /-/ready
        prom.url                  # "http://127.0.0.1:PORT"
        prom.query(promql, at_s)  # /api/v1/query's "data" (for checks)
    On exit the server is stopped (SIGTERM, then SIGKILL) and the temporary
    directory (data, config, OpenMetrics file, logs) removed. prom.log() gives
    the server's output for error messages.

backfilled_prometheus(families) -> Prometheus
    Shorthand: `with backfilled_prometheus(families) as prom:` backfills and
    starts.

free_port() -> int
    A TCP port free on 127.0.0.1 now (for "nothing listens here" tests too).
"""

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import namedtuple

Series = namedtuple("Series", ["labels", "samples", "suffix"])
Family = namedtuple("Family", ["name", "type", "series", "help"])

# Prometheus opens its head block at "now"; backfilled blocks must end before
# it (promtool's docs: "the last 3 hours" should not be backfilled while the
# head covers them).
HEAD_MARGIN_S = 3 * 3600


def require_prometheus():
    missing = [tool for tool in ("promtool", "prometheus") if shutil.which(tool) is None]
    if missing:
        sys.stderr.write(
            "FAIL: %s not found on PATH; the fleet tests need a real Prometheus "
            "(Debian package `prometheus`, installed by scripts/install-deps.sh)\n"
            % " and ".join(missing))
        sys.exit(1)


def past_start_s(duration_s, align_s=3600):
    latest_end = time.time() - HEAD_MARGIN_S - 600
    start = int((latest_end - duration_s) // align_s * align_s)
    return start


def series(labels, samples, suffix=""):
    return Series(dict(labels), samples, suffix)


def family(name, type, series_iterable, help=""):  # noqa: A002 (OpenMetrics word)
    if type not in ("gauge", "counter", "histogram", "unknown"):
        raise ValueError("unsupported metric type %r" % type)
    if type == "counter" and name.endswith("_total"):
        name = name[: -len("_total")]
    return Family(name, type, series_iterable, help)


def _escape_label_value(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _format_value(value):
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "+Inf" if value > 0 else "-Inf"
        return repr(value)
    return str(value)


def _format_labels(labels):
    if not labels:
        return ""
    return "{" + ",".join('%s="%s"' % (k, _escape_label_value(v))
                          for k, v in sorted(labels.items())) + "}"


def write_openmetrics(path, families):
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        for fam in families:
            out.write("# HELP %s %s\n" % (fam.name, fam.help or fam.name))
            out.write("# TYPE %s %s\n" % (fam.name, fam.type))
            for s in fam.series:
                suffix = s.suffix or ("_total" if fam.type == "counter" else "")
                prefix = fam.name + suffix + _format_labels(s.labels) + " "
                last_t = None
                for t, v in s.samples:
                    if last_t is not None and t <= last_t:
                        raise ValueError("series %s%s: samples out of time order at %r"
                                         % (fam.name, s.labels, t))
                    last_t = t
                    out.write("%s%s %s\n" % (prefix, _format_value(v), _format_value(t)))
                    count += 1
        out.write("# EOF\n")
    return count


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Prometheus:
    def __init__(self, startup_timeout_s=60):
        self.startup_timeout_s = startup_timeout_s
        self.dir = None
        self.data_dir = None
        self.url = None
        self._process = None
        self._log_path = None

    def __enter__(self):
        require_prometheus()
        self.dir = tempfile.mkdtemp(prefix="ckptscope-prom-")
        self.data_dir = os.path.join(self.dir, "data")
        os.mkdir(self.data_dir)
        return self

    def __exit__(self, *exc):
        self.stop()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        return False

    def backfill(self, families):
        """Writes families as OpenMetrics and turns them into blocks; returns the sample count."""
        om_path = os.path.join(self.dir, "backfill.om")
        count = write_openmetrics(om_path, families)
        result = subprocess.run(
            ["promtool", "tsdb", "create-blocks-from", "openmetrics", "--quiet", om_path,
             self.data_dir], capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError("promtool tsdb create-blocks-from openmetrics failed (%d): %s%s"
                               % (result.returncode, result.stdout, result.stderr))
        os.remove(om_path)
        return count

    def start(self):
        config_path = os.path.join(self.dir, "prometheus.yml")
        with open(config_path, "w", encoding="utf-8") as f:
            f.write("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
        last_error = None
        for _ in range(3):  # a port taken between free_port() and bind: try another
            port = free_port()
            self._log_path = os.path.join(self.dir, "prometheus.log")
            log = open(self._log_path, "w", encoding="utf-8")
            self._process = subprocess.Popen(
                ["prometheus", "--config.file=" + config_path,
                 "--storage.tsdb.path=" + self.data_dir,
                 "--storage.tsdb.retention.time=100y",
                 "--web.listen-address=127.0.0.1:%d" % port],
                stdout=log, stderr=subprocess.STDOUT, cwd=self.dir, start_new_session=True)
            log.close()
            self.url = "http://127.0.0.1:%d" % port
            last_error = self._wait_ready()
            if last_error is None:
                return self
            self.stop()
        raise RuntimeError("prometheus did not become ready: %s\n%s" % (last_error, self.log()))

    def _wait_ready(self):
        deadline = time.monotonic() + self.startup_timeout_s
        error = "timed out after %ds" % self.startup_timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                return "exited with %d" % self._process.returncode
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return None
            except (urllib.error.URLError, OSError) as e:
                error = str(e)
            time.sleep(0.2)
        return error

    def stop(self):
        if self._process is None:
            return
        if self._process.poll() is None:
            os.killpg(self._process.pid, signal.SIGTERM)
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait()
        self._process = None

    def log(self):
        if self._log_path and os.path.exists(self._log_path):
            with open(self._log_path, encoding="utf-8", errors="replace") as f:
                return f.read()[-4000:]
        return ""

    def query(self, promql, at_s):
        body = urllib.parse.urlencode({"query": promql, "time": repr(float(at_s))}).encode()
        with urllib.request.urlopen(self.url + "/api/v1/query", data=body, timeout=30) as r:
            answer = json.load(r)
        if answer.get("status") != "success":
            raise RuntimeError("query %r failed: %r" % (promql, answer))
        return answer["data"]


def backfilled_prometheus(families):
    """`with backfilled_prometheus(families) as prom:` — backfilled and started."""

    class _Backfilled(Prometheus):
        def __enter__(self):
            super().__enter__()
            try:
                self.backfill(families)
                self.start()
            except BaseException:
                self.__exit__(None, None, None)
                raise
            return self

    return _Backfilled()
