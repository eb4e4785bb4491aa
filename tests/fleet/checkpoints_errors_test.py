"""`ckptscope fleet checkpoints` on bad input: each gets a clear message naming
what was wrong and the documented exit status (2: bad usage, 1: the server)."""

import argparse
import http.server
import os
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prom_harness as ph  # noqa: E402


class NotPrometheus(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        body = b"<html><body>404 page not found</body></html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckptscope", required=True)
    parser.add_argument("--source-dir")
    args = parser.parse_args()
    ph.require_prometheus()
    failures = []

    def expect(what, argv, code, *needles):
        result = subprocess.run([args.ckptscope, "fleet", "checkpoints", *argv],
                                capture_output=True, text=True, timeout=120)
        if result.returncode != code:
            failures.append("%s: exit %d, want %d (stderr: %s)" % (what, result.returncode, code,
                                                                  result.stderr.strip()))
        for needle in needles:
            if needle not in result.stderr:
                failures.append("%s: stderr lacks %r: %s" % (what, needle, result.stderr.strip()))

    dead = "http://127.0.0.1:%d" % ph.free_port()
    expect("unreachable", ["--prometheus", dead, "--from", "now-1h"], 1, dead,
           "connection refused")
    expect("not a URL", ["--prometheus", "localhost:9090"], 2, "http://")

    # A server that accepts connections and never answers: the request times out.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    mute = "http://127.0.0.1:%d" % silent.getsockname()[1]
    expect("timeout", ["--prometheus", mute, "--timeout", "1"], 1, mute, "timed out")
    silent.close()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotPrometheus)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    other = "http://127.0.0.1:%d" % server.server_address[1]
    expect("not a Prometheus", ["--prometheus", other], 1, other, "HTTP 404", "not JSON")
    server.shutdown()

    start = ph.past_start_s(3600)
    with ph.backfilled_prometheus([ph.family("unrelated_gauge", "gauge", iter(
            [ph.series({"instance": "n1"}, ((t, 1.0) for t in range(start, start + 3601, 60)))]))]) \
            as prom:
        url = prom.url
        span = ["--from", str(start), "--to", str(start + 3600)]
        expect("no matching metrics", ["--prometheus", url, *span], 1, "nothing to analyse",
               "ckptscope_checkpoint_bytes_total", "node_mountstats_nfs_total_read_bytes_total")
        expect("no mountstats", ["--prometheus", url, *span, "--source", "mountstats"], 1,
               "node_mountstats_nfs_total_read_bytes_total")
        expect("from after to", ["--prometheus", url, "--from", str(start + 3600), "--to",
                                 str(start)], 2, "--from", "not before --to")
        expect("from equals to", ["--prometheus", url, "--from", str(start), "--to", str(start)],
               2, "range is empty")
        expect("bad --from", ["--prometheus", url, "--from", "yesterday"], 2, '"yesterday"',
               "RFC 3339")
        expect("bad --to", ["--prometheus", url, "--to", "2026-13-40T00:00:00Z"], 2,
               '"2026-13-40T00:00:00Z"')
        expect("bad --step", ["--prometheus", url, *span, "--step", "0"], 2, "--step")
        # Finding 3: a step so fine the range would hold more than 10 million
        # evaluation times is bad usage naming --step and the range (it was cast
        # unchecked: 1e-300 overflowed, 1 ms over 7 days planned 604.8M steps).
        week = ["--from", str(start - 7 * 86400 + 3600), "--to", str(start + 3600)]
        expect("step too fine", ["--prometheus", url, *week, "--step", "0.001"], 2, "--step",
               "10000000 allowed", str(start + 3600))
        expect("step far too fine", ["--prometheus", url, *span, "--step", "1e-300"], 2,
               "--step", "10000000 allowed")
        # Finding 1: digit strings past a double's range are bad times, not an abort.
        nines = "9" * 400
        expect("huge --from", ["--prometheus", url, "--from", nines], 2, "finite", "RFC 3339")
        expect("huge now-N", ["--prometheus", url, "--from", "now-%sd" % nines], 2, "finite")
        # Finding 15: one duration form in every command; 1w is a step (here
        # longer than the hour, so the range is too short), 1y is not.
        expect("--step 1w parses", ["--prometheus", url, *span, "--step", "1w"], 2, "two steps",
               "604800")
        expect("--step 1y", ["--prometheus", url, *span, "--step", "1y"], 2, "--step",
               '"1y"', "unknown unit")
        expect("range shorter than a step", ["--prometheus", url, "--from", str(start), "--to",
                                             str(start + 30), "--step", "60"], 2, "two steps")
        expect("bad maximum", ["--prometheus", url, *span, "--storage-read-max", "fast"], 2,
               "--storage-read-max", "fast")
        expect("bad points per query", ["--prometheus", url, *span, "--points-per-query",
                                        "20000"], 2, "11000")
        expect("bad source", ["--prometheus", url, *span, "--source", "dcgm"], 2)

    if failures:
        print("FAIL (%d)\n  %s" % (len(failures), "\n  ".join(failures)))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
