#!/usr/bin/env python3
"""The exporter can be neither killed nor blocked by a local user (issues 22, 36; label exporter).

A real Prometheus (Debian's /usr/bin/prometheus) scrapes the exporter every
second, with a 1 s scrape timeout, while this test holds against it:

- 200 idle HTTP connections (half with a request begun and never finished),
  reopened as soon as the exporter closes one (its request timeout), so that
  200 are held for the whole run: issue 36's count, which delayed every
  scrape by about 10 s when the exporter served with civetweb's threads;
- a registration-socket client that registers and then floods: requests
  without pause, lines with bytes that are not UTF-8, lines cut inside a
  multi-byte character, a line that never ends; reconnecting each time it is
  cut off;
- the two reproducers of the issue (a non-UTF-8 line after registering, and a
  valid line whose first 200 bytes end inside a multi-byte character), which
  used to abort the exporter.

For --seconds (default 20) the test also scrapes /metrics itself every
0.2 s. It passes when every one of its own scrapes is a 200 within 1 s,
Prometheus saw the target up at every scrape of the window with every
scrape_duration_seconds under 1 s, the exporter counted the flood and the
malformed requests in ckptscope_registration_rejected_total{reason}, logged
rejections (a bounded number of lines), is still running, and exits 0 on
SIGTERM with its socket removed. It prints the scrape latencies (median,
max) of both.

Needs root: the exporter loads eBPF programs (every exporter test does; there
is no probe-less exporter mode). Exits 77 otherwise.

Usage: hostile_peers_test.py --ckptscope BIN [--seconds 20] [--idle 200] [--http-only] [--keep]
(--http-only: idle connections only, no socket client: how an exporter built
before issue 22, which the socket reproducers kill, fares on the HTTP side.)
"""
import argparse
import os
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exporter_harness as h  # noqa: E402


class IdleConnections:
    """`count` TCP connections to the exporter that never finish a request;
    one the exporter closes is opened again."""

    def __init__(self, host, port, count):
        self.addr = (host, port)
        self.count = count
        self.socks = []
        self.reopened = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self, i):
        s = socket.create_connection(self.addr, timeout=5)
        if i % 2 == 0:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never the blank line
        s.setblocking(False)
        return s

    def start(self):
        self.socks = [self._open(i) for i in range(self.count)]
        self.thread.start()
        return self

    def _run(self):
        while not self.stop.is_set():
            for i, s in enumerate(self.socks):
                try:
                    data = s.recv(4096)
                    closed = data == b""
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
                if closed:
                    s.close()
                    try:
                        self.socks[i] = self._open(i)
                        self.reopened += 1
                    except OSError:
                        pass
            self.stop.wait(0.05)

    def close(self):
        self.stop.set()
        self.thread.join(timeout=5)
        for s in self.socks:
            s.close()


REGISTER = ('{"op":"register","client":"hostile","tgids":[%d]}\n' % os.getpid()).encode()
PAD = b'{"op":"nope","pad":"' + b"a" * 179
CUT_IN_CHARACTER = PAD + b'\xc3\xa9 more"}\n'  # the 200th byte is inside the é


def reproducers(path):
    """The issue's two aborts, one after the other, on one connection."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    s.sendall(REGISTER)
    got = s.recv(4096)
    if b'"ok":true' not in got:
        h.fail(f"registering pid {os.getpid()} was refused: {got[:300]!r}")
    s.sendall(b'{"op":"x\xff\xfe"}\n')
    s.sendall(CUT_IN_CHARACTER)
    s.sendall(b'{"op":"sync","seq":77}\n')
    deadline = time.monotonic() + 10
    while b'{"sync":77}' not in got and time.monotonic() < deadline:
        chunk = s.recv(65536)
        if not chunk:
            h.fail(f"the exporter hung up on the reproducers; received {got[-300:]!r}")
        got += chunk
    s.close()
    if b'{"sync":77}' not in got:
        h.fail("the sync after the reproducers was never answered")
    if b"\xef\xbf\xbd" not in got:
        h.fail(f"the echo of the cut line has no U+FFFD: {got[-600:]!r}")


class Flooder:
    """Registers, then sends hostile requests as fast as it can; reconnects when cut off."""

    BURST = (b'{"op":"sync","seq":1}\n' * 200 + b"\xff\xfe not json\n" + CUT_IN_CHARACTER
             + b'{"op":1}\n')

    def __init__(self, path):
        self.path = path
        self.cut_off = 0
        self.sent = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def _run(self):
        endless = False
        while not self.stop.is_set():
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(2)
                s.connect(self.path)
                s.sendall(REGISTER)
                if endless:
                    s.sendall(b"x" * (1 << 17))  # a line past the 64 KiB limit, no newline
                while not self.stop.is_set():
                    s.sendall(self.BURST)
                    self.sent += len(self.BURST)
                    # The exporter's answers are never read: its buffer for us fills.
            except OSError:
                self.cut_off += 1
            finally:
                s.close()
            endless = not endless
            self.stop.wait(0.02)

    def close(self):
        self.stop.set()
        self.thread.join(timeout=10)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    h.add_binary_args(ap)
    ap.add_argument("--seconds", type=float, default=20.0, help="how long the load is held (default 20)")
    ap.add_argument("--idle", type=int, default=200, help="idle HTTP connections held (default 200)")
    ap.add_argument("--http-only", action="store_true",
                    help="no socket client: only the idle HTTP connections")
    args = ap.parse_args()
    h.need_root("the hostile-peers test")
    h.check_binaries(args, names=("ckptscope",))

    tmp = h.TempDir("ckptscope-hostile-", base=args.work_dir, keep=args.keep)
    port = h.free_port()
    exporter = h.Exporter(args.ckptscope, f"127.0.0.1:{port}", socket_dir=tmp.path, echo=False).start()
    exporter.wait_ready()
    exporter.wait_collected()
    sock_path = os.path.join(tmp.path, "exporter.sock")
    prom = h.Prometheus(tmp.path, [exporter.hostport], scrape_s=1).start()

    if not args.http_only:
        reproducers(sock_path)
    idle = IdleConnections("127.0.0.1", port, args.idle).start()
    flood = Flooder(sock_path)
    if not args.http_only:
        flood.start()
    h.log(f"holding {args.idle} idle connections"
          f"{'' if args.http_only else ' and a flooding socket client'} for {args.seconds:.0f} s")
    started = time.time()
    latencies, failures = [], []
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        status, body, secs = h.http_get(exporter.metrics_url, timeout=5)
        latencies.append(secs)
        if status != 200 or secs >= 1.0:
            failures.append(f"GET /metrics: {status} in {secs:.3f} s {body[:120]!r}")
        if exporter.proc.poll() is not None:
            h.fail(f"the exporter exited ({exporter.proc.returncode}) under load; its stderr:\n"
                   f"{exporter.stderr_tail()}")
        time.sleep(0.2)
    window = max(5, int(time.time() - started) - 2)
    prom_durations = [float(v) for _, v in prom_range(prom, "scrape_duration_seconds", window)]
    prom_up = [float(v) for _, v in prom_range(prom, "up", window)]
    rejected = {r["metric"].get("reason"): float(r["value"][1])
                for r in prom.query("ckptscope_registration_rejected_total")}
    if not args.http_only:
        flood.close()
    idle.close()

    h.log(f"direct scrapes: {len(latencies)}, median {statistics.median(latencies) * 1000:.1f} ms, "
          f"max {max(latencies) * 1000:.1f} ms")
    if prom_durations:
        h.log(f"Prometheus scrapes in the last {window} s: {len(prom_durations)}, median "
              f"{statistics.median(prom_durations) * 1000:.1f} ms, max {max(prom_durations) * 1000:.1f} ms")
    h.log(f"idle connections reopened after the exporter closed them: {idle.reopened}; flood client "
          f"cut off {flood.cut_off} times after {flood.sent / 1e6:.1f} MB; rejected by reason: {rejected}")
    if failures:
        h.fail(f"{len(failures)} of {len(latencies)} scrapes were not a 200 within 1 s: {failures[:5]}")
    if len(prom_up) < max(1, window // 3) or min(prom_up) != 1:
        h.fail(f"Prometheus: up over the last {window} s was {prom_up}, want 1 at every scrape")
    if not prom_durations or max(prom_durations) >= 1.0:
        h.fail(f"Prometheus: scrape_duration_seconds {prom_durations}, want every one under 1 s")
    if args.http_only:
        prom.stop()
        exporter.stop()
        return
    if rejected.get("flood", 0) < 1 or rejected.get("malformed", 0) < 2:
        h.fail(f"ckptscope_registration_rejected_total: {rejected}, want flood >= 1, malformed >= 2")
    if flood.cut_off < 1:
        h.fail("the flooding client was never cut off")
    text = exporter.stderr_text()
    notes = [line for line in text.splitlines() if "registration socket:" in line]
    if not notes:
        h.fail(f"the exporter logged no rejection; its stderr:\n{exporter.stderr_tail()}")
    if len(notes) > 60:
        h.fail(f"{len(notes)} log lines about rejections in {args.seconds:.0f} s: not rate-limited")
    h.log(f"rejection log lines: {len(notes)}, e.g. {notes[0]}")
    prom.stop()
    exporter.stop()
    if os.path.exists(sock_path):
        h.fail(f"the socket {sock_path} is left behind after SIGTERM")


def prom_range(prom, metric, seconds):
    """[(t, value)] of the target's samples of `metric` in the last `seconds`."""
    result = prom.query(f'{metric}{{job="{h.PROMETHEUS_JOB}"}}[{seconds}s]')
    if not result:
        return []
    return result[0]["values"]


if __name__ == "__main__":
    h.main_wrapper(main)
