#!/usr/bin/python3
"""A webhook receiver on loopback for the notify integration tests.

Listens on 127.0.0.1 on a free port, writes the port to --port-file, and saves
each POST as post-N.json (the body, as received) and post-N.meta.json (path,
headers). It answers --status (default 200), so a test can see how the sender
reports an error status.
"""

import argparse
import http.server
import json
import os
import signal
import sys
import threading


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--port-file", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--status", type=int, default=200)
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    lock = threading.Lock()
    counter = [0]

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            with lock:
                counter[0] += 1
                n = counter[0]
            base = os.path.join(args.out_dir, "post-%d" % n)
            meta = {"path": self.path, "headers": {k: v for k, v in self.headers.items()}}
            write_atomic(base + ".json", body)
            write_atomic(base + ".meta.json", json.dumps(meta).encode())
            reply = b"ok" if args.status < 400 else b"receiver failed on purpose"
            self.send_response(args.status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, fmt, *a):
            sys.stderr.write("webhook_server: " + (fmt % a) + "\n")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    write_atomic(args.port_file, str(server.server_address[1]).encode())
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    server.serve_forever()
    server.server_close()


if __name__ == "__main__":
    sys.exit(main())
