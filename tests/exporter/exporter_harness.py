"""Shared helpers of the exporter tests (tests/exporter/README.md) and of
bench/exporter_bench.py. Python 3 standard library only.

- Exporter: start `ckptscope exporter` on a loopback port with its socket in a
  temp dir, wait until it says `serving http://.../metrics` and GET /metrics
  answers 200, read its stderr as it runs, stop it with SIGTERM (exit 0).
- Prometheus: a real `prometheus` on loopback with a temp config and storage
  dir, scraping the exporter every second; PromQL instant queries through its
  HTTP API (/api/v1/query).
- parse_exposition / series_sum: the Prometheus text format.
- JobCgroup / run_workload: ckptscope-workload as a process of a Slurm job
  (a cgroup v2 path with a `job_<N>` component), the cgroups removed after.

Exit status convention of the tests: 0 pass, 1 fail, 77 skipped (the reason
is printed).
"""
import atexit
import contextlib
import json
import os
import random
import re
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

SKIP = 77
CGROUP2_CANDIDATES = ("/sys/fs/cgroup/unified", "/sys/fs/cgroup")
PROMETHEUS_JOB = "ckptscope-exporter"


class TestFailure(Exception):
    """A check failed; the message says what was expected and what was seen."""


def log(msg):
    print(msg, flush=True)


def fail(msg):
    raise TestFailure(msg)


def skip(msg):
    log(f"SKIP: {msg}")
    sys.exit(SKIP)


def need_root(what):
    if os.geteuid() != 0:
        skip(f"{what} needs root (the exporter loads eBPF programs; the workload runs in a "
             f"cgroup it creates); run as root: sudo ctest -L exporter")


def main_wrapper(fn):
    """Runs fn(); a TestFailure prints FAIL and exits 1, anything else is a crash (exit 1)."""
    try:
        fn()
    except TestFailure as e:
        log(f"FAIL: {e}")
        sys.exit(1)
    log("PASS")
    sys.exit(0)


def add_binary_args(ap):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap.add_argument("--ckptscope", default=os.path.join(root, "build", "bin", "ckptscope"),
                    help="the ckptscope binary (default: build/bin/ckptscope)")
    ap.add_argument("--workload", default=os.path.join(root, "build", "bin", "ckptscope-workload"),
                    help="the ckptscope-workload binary (default: build/bin/ckptscope-workload)")
    ap.add_argument("--work-dir", default=None,
                    help="a local-disk directory for the workload's files and the temp dirs "
                         "(default: /var/tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dirs (their path is printed)")


def check_binaries(args, names=("ckptscope", "workload")):
    for n in names:
        p = getattr(args, n)
        if not os.access(p, os.X_OK):
            fail(f"--{n} {p}: not an executable file (build it: cmake --build --preset default)")


class TempDir:
    """A temp dir removed at exit (unless keep), also when the test fails."""

    def __init__(self, prefix, base=None, keep=False):
        base = base or "/var/tmp"
        self.path = tempfile.mkdtemp(prefix=prefix, dir=base)
        self.keep = keep
        atexit.register(self.cleanup)

    def cleanup(self):
        if self.keep:
            log(f"kept {self.path}")
            return
        shutil.rmtree(self.path, ignore_errors=True)


def free_port(host="127.0.0.1"):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def http_get(url, timeout=10.0):
    """(status, body bytes, seconds). status 0 and the error text as body when no answer."""
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            body = r.read()
            return r.status, body, time.monotonic() - t0
    except urllib.error.HTTPError as e:
        return e.code, e.read(), time.monotonic() - t0
    except (urllib.error.URLError, OSError) as e:
        return 0, str(e).encode(), time.monotonic() - t0


def write_config(directory, quiet_gap_ms=None, extra=None):
    cfg = {}
    if quiet_gap_ms is not None:
        cfg["checkpoint"] = {"quiet_gap_ms": int(quiet_gap_ms)}
    if extra:
        cfg.update(extra)
    path = os.path.join(directory, "exporter-config.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    return path


# --------------------------------------------------------------------------- exporter

_help_cache = {}


def exporter_help(binary):
    if binary not in _help_cache:
        try:
            p = subprocess.run([binary, "exporter", "--help"], stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=30)
            _help_cache[binary] = p.stdout + p.stderr
        except (OSError, subprocess.TimeoutExpired) as e:
            _help_cache[binary] = f"({binary} exporter --help: {e})"
    return _help_cache[binary]


class Exporter:
    """`ckptscope exporter` as a child process; its stderr is read by a thread
    (kept in memory and echoed with a prefix when echo is set)."""

    def __init__(self, binary, listen, config=None, socket_dir=None, extra_args=(), echo=True):
        self.binary = binary
        self.listen = listen
        self.args = [binary, "exporter", "--listen", listen]
        if config:
            self.args += ["--config", config]
        if socket_dir is not None:
            # The registration socket (default /run/ckptscope/exporter.sock) under a temp dir,
            # never the node's. An exporter built before --socket existed takes none.
            if "--socket" in exporter_help(binary):
                self.args += ["--socket", os.path.join(socket_dir, "exporter.sock")]
            else:
                log("note: this ckptscope exporter has no --socket option; not passing one")
        self.args += list(extra_args)
        self.echo = echo
        self.proc = None
        self._stderr = []
        self._lock = threading.Lock()
        self._reader = None

    # host:port to use in URLs
    @property
    def hostport(self):
        if self.listen.startswith(":"):
            return "127.0.0.1" + self.listen
        return self.listen

    @property
    def metrics_url(self):
        return f"http://{self.hostport}/metrics"

    @property
    def pid(self):
        return self.proc.pid

    def start(self):
        log("$ " + " ".join(self.args))
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, errors="replace")
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        atexit.register(self._kill_if_running)
        return self

    def _read_stderr(self):
        for line in self.proc.stderr:
            with self._lock:
                self._stderr.append(line)
            if self.echo:
                sys.stdout.write("  [exporter] " + line)
                sys.stdout.flush()

    def stderr_text(self):
        with self._lock:
            return "".join(self._stderr)

    def stderr_tail(self, lines=40):
        with self._lock:
            return "".join(self._stderr[-lines:])

    def wait_ready(self, timeout=60.0):
        """Waits for the `serving http://.../metrics` line and a 200 from /metrics."""
        deadline = time.monotonic() + timeout
        said = False
        last = None
        while time.monotonic() < deadline:
            rc = self.proc.poll()
            if rc is not None:
                self._reader.join(timeout=5)
                fail(f"the exporter exited with {rc} before serving; its stderr:\n{self.stderr_text()}")
            if not said:
                said = re.search(r"serving http://\S+/metrics", self.stderr_text()) is not None
            if said:
                status, body, _ = http_get(self.metrics_url, timeout=5)
                if status == 200:
                    return self
                last = (status, body[:200])
            time.sleep(0.1)
        fail(f"the exporter was not ready in {timeout:.0f} s (said 'serving http://...': {said}, "
             f"last GET /metrics: {last}); its stderr:\n{self.stderr_text()}")

    def wait_collected(self, timeout=30.0):
        """Waits until a scrape holds ckptscope_scrape_collector_success (a first collection ran)."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.scrape()
            if "\nckptscope_scrape_collector_success{" in text:
                return text
            if time.monotonic() > deadline:
                fail(f"no ckptscope_scrape_collector_success in /metrics {timeout:.0f} s after the exporter "
                     f"said it was serving; its stderr:\n{self.stderr_tail()}")
            time.sleep(0.1)

    def scrape(self, timeout=10.0):
        status, body, secs = http_get(self.metrics_url, timeout=timeout)
        if status != 200:
            fail(f"GET {self.metrics_url}: {status} {body[:300]!r}; exporter stderr:\n{self.stderr_tail()}")
        return body.decode("utf-8", "replace")

    def stop(self, timeout=30.0, expect_zero=True):
        """SIGTERM, wait; the exit status must be 0 (the contract)."""
        if self.proc is None or self.proc.poll() is not None:
            rc = None if self.proc is None else self.proc.returncode
            if expect_zero:
                fail(f"the exporter was already gone (exit {rc}) before SIGTERM; its stderr:\n"
                     f"{self.stderr_text()}")
            return rc
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            fail(f"the exporter did not exit within {timeout:.0f} s of SIGTERM; its stderr:\n"
                 f"{self.stderr_tail()}")
        self._reader.join(timeout=5)
        if expect_zero and rc != 0:
            fail(f"the exporter exited {rc} on SIGTERM, want 0; its stderr:\n{self.stderr_tail()}")
        return rc

    def _kill_if_running(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def proc_status_kib(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def proc_cpu_seconds(pid):
    """utime + stime of a process (its own threads; children not included)."""
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    fields = data[data.rindex(")") + 2:].split()
    # fields[0] is the state (field 3); utime and stime are fields 14 and 15.
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def proc_cpu_seconds_precise(pid):
    """On-CPU time of a process's live threads, in ns resolution (the sum of
    /proc/PID/task/*/schedstat's first field); threads that already exited are
    not in it. utime+stime (proc_cpu_seconds) only moves in clock ticks (10 ms)."""
    total = 0
    task_dir = f"/proc/{pid}/task"
    for tid in os.listdir(task_dir):
        try:
            with open(f"{task_dir}/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


# --------------------------------------------------------------------------- exposition

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?\s*$")


def _parse_labels(text):
    labels = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " ,":
            i += 1
        if i >= n:
            break
        eq = text.index("=", i)
        name = text[i:eq].strip()
        if eq + 1 >= n or text[eq + 1] != '"':
            raise ValueError(f"label {name}: value not quoted in {{{text}}}")
        j = eq + 2
        value = []
        while True:
            c = text[j]
            if c == "\\":
                nxt = text[j + 1]
                value.append({"n": "\n", "\\": "\\", '"': '"'}.get(nxt, "\\" + nxt))
                j += 2
            elif c == '"':
                j += 1
                break
            else:
                value.append(c)
                j += 1
        labels[name] = "".join(value)
        i = j
    return labels


def parse_exposition(text):
    """[(name, {label: value}, float)] of a Prometheus text-format exposition;
    raises ValueError naming the line that is not one."""
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if not m:
            raise ValueError(f"line {lineno} is not a sample: {line!r}")
        value = m.group(4)
        out.append((m.group(1), _parse_labels(m.group(3) or ""),
                    float(value.replace("Nan", "NaN"))))
    return out


def series_sum(samples, name, **labels):
    """The sum of the samples of `name` whose labels include `labels`; None when there is none."""
    values = [v for n, lab, v in samples
              if n == name and all(lab.get(k) == want for k, want in labels.items())]
    return sum(values) if values else None


def label_values(samples, name, label):
    return sorted({lab.get(label) for n, lab, _ in samples if n == name and label in lab})


# --------------------------------------------------------------------------- prometheus

class Prometheus:
    """Debian's prometheus on 127.0.0.1:<free port>, scraping `targets` every scrape_s."""

    def __init__(self, workdir, targets, binary="/usr/bin/prometheus", scrape_s=1, echo_log=False):
        self.binary = shutil.which(binary) or binary
        self.dir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = os.path.join(workdir, "prometheus.yml")
        self.storage = os.path.join(workdir, "tsdb")
        self.logfile = os.path.join(workdir, "prometheus.log")
        target_list = ", ".join(f"'{t}'" for t in targets)
        with open(self.config, "w") as f:
            f.write("global:\n"
                    f"  scrape_interval: {scrape_s}s\n"
                    f"  scrape_timeout: {scrape_s}s\n"
                    f"  evaluation_interval: {scrape_s}s\n"
                    "scrape_configs:\n"
                    f"  - job_name: {PROMETHEUS_JOB}\n"
                    "    static_configs:\n"
                    f"      - targets: [{target_list}]\n")
        self.proc = None
        self.echo_log = echo_log

    def start(self, timeout=60.0):
        if not os.access(self.binary, os.X_OK):
            fail(f"{self.binary} not found: install Debian's prometheus package (scripts/install-deps.sh)")
        args = [self.binary, f"--config.file={self.config}", f"--storage.tsdb.path={self.storage}",
                f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn",
                "--storage.tsdb.retention.time=1h"]
        log("$ " + " ".join(args))
        self._log = open(self.logfile, "w")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
                                     cwd=self.dir)
        atexit.register(self._kill_if_running)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                fail(f"prometheus exited with {self.proc.returncode} at start; its log:\n{self.log_text()}")
            status, _, _ = http_get(self.url + "/-/ready", timeout=2)
            if status == 200:
                return self
            time.sleep(0.2)
        fail(f"prometheus was not ready at {self.url}/-/ready in {timeout:.0f} s; its log:\n{self.log_text()}")

    def log_text(self, tail=4000):
        try:
            with open(self.logfile, errors="replace") as f:
                return f.read()[-tail:]
        except OSError:
            return ""

    def query(self, expr):
        """The result list of an instant query (vector results: [{'metric': {...}, 'value': [t, 'v']}])."""
        url = self.url + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        status, body, _ = http_get(url, timeout=10)
        if status != 200:
            fail(f"PromQL {expr!r}: HTTP {status}: {body[:500]!r}")
        data = json.loads(body)
        if data.get("status") != "success":
            fail(f"PromQL {expr!r}: {data}")
        return data["data"]["result"]

    def query_value(self, expr):
        """The value of a query that gives at most one series (e.g. a sum); None when empty."""
        result = self.query(expr)
        if not result:
            return None
        if len(result) > 1:
            fail(f"PromQL {expr!r} gave {len(result)} series, want 1: {result}")
        return float(result[0]["value"][1])

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "_log", None):
            self._log.close()

    def _kill_if_running(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def promtool_check_metrics(text):
    """(ok, output) of `promtool check metrics` on an exposition."""
    promtool = shutil.which("promtool") or "/usr/bin/promtool"
    if not os.access(promtool, os.X_OK):
        fail("promtool not found: install Debian's prometheus package (scripts/install-deps.sh)")
    p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True,
                       timeout=60)
    return p.returncode == 0, (p.stdout + p.stderr).strip()


# --------------------------------------------------------------------------- cgroups and the workload

def cgroup2_root():
    for d in CGROUP2_CANDIDATES:
        try:
            with open("/proc/self/mountinfo") as f:
                for line in f:
                    parts = line.split()
                    sep = parts.index("-")
                    if parts[4] == d and parts[sep + 1] == "cgroup2":
                        return d
        except (OSError, ValueError):
            pass
    # Not a skip (issue 40): a machine that runs the exporter has cgroup v2.
    fail("no cgroup2 mount at " + " or ".join(CGROUP2_CANDIDATES) +
         ": mount one (mount -t cgroup2 none /sys/fs/cgroup/unified)")


class JobCgroups:
    """<cgroup2>/ckptscope-test-<random>/job_<N> for each Slurm job id asked for;
    every directory removed at exit (its processes killed first)."""

    def __init__(self):
        root = cgroup2_root()
        suffix = "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(8))
        self.base = os.path.join(root, f"ckptscope-test-{suffix}")
        os.mkdir(self.base)
        self.jobs = {}
        atexit.register(self.cleanup)

    def job(self, job_id):
        if job_id not in self.jobs:
            d = os.path.join(self.base, f"job_{job_id}")
            os.mkdir(d)
            self.jobs[job_id] = d
        return self.jobs[job_id]

    def _procs(self, d):
        try:
            with open(os.path.join(d, "cgroup.procs")) as f:
                return [int(x) for x in f.read().split()]
        except OSError:
            return []

    def cleanup(self):
        if not os.path.isdir(self.base):
            return
        for d in list(self.jobs.values()):
            if self._procs(d):
                # Only our own workloads live here.
                try:
                    with open(os.path.join(d, "cgroup.kill"), "w") as f:
                        f.write("1")
                except OSError:
                    for pid in self._procs(d):
                        with contextlib.suppress(OSError):
                            os.kill(pid, signal.SIGKILL)
        for d in list(self.jobs.values()) + [self.base]:
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                log(f"warning: could not remove {d} (processes: {self._procs(d)})")


def workload_args(binary, directory, truth, shards, shard_size, checkpoints, gap_ms, mode="both",
                  extra=()):
    return [binary, "--dir", directory, "--shards", str(shards), "--shard-size", str(shard_size),
            "--checkpoints", str(checkpoints), "--mode", mode, "--gap-ms", str(gap_ms), "--fsync",
            "--ground-truth", truth, "--quiet"] + list(extra)


def start_in_cgroup(cgroup_dir, argv, **popen_kw):
    """Popen of argv moved into cgroup_dir before it execs (the pid stays)."""
    procs = os.path.join(cgroup_dir, "cgroup.procs")
    cmd = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', procs] + list(argv)
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, **popen_kw)


def wait_rusage(proc, timeout=None):
    """Waits for a Popen child with wait4: (exit status, its user+sys CPU seconds, wall s since now)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, ru.ru_utime + ru.ru_stime
        if deadline is not None and time.monotonic() > deadline:
            proc.kill()
            fail(f"the workload (pid {proc.pid}) ran past {timeout:.0f} s")
        time.sleep(0.01)


def run_workload_in_job(cgroups, job_id, argv, timeout=600):
    """Runs the workload in job_<job_id>; fails unless it exits 0. Returns (cpu s, wall s)."""
    d = cgroups.job(job_id)
    log(f"$ (in {d}) " + " ".join(argv))
    t0 = time.monotonic()
    p = start_in_cgroup(d, argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = []
    reader = threading.Thread(target=lambda: out.append(p.stdout.read()), daemon=True)
    reader.start()
    rc, cpu = wait_rusage(p, timeout)
    wall = time.monotonic() - t0
    reader.join(timeout=5)
    if rc != 0:
        fail(f"the workload exited {rc}: {b''.join(out).decode(errors='replace')[-2000:]}")
    return cpu, wall


def read_truth(path):
    with open(path) as f:
        g = json.load(f)
    if not g.get("ok"):
        fail(f"the workload's ground truth {path} says not ok: failures {g.get('failures')}")
    return g
