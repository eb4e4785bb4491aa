#!/usr/bin/env python3
"""A job that does what libckptscope_cupti.so reports on a GPU machine, for the
collector's side of the gpu_copy stage without a GPU: it sends the library's
messages (cupti/gpu_copy_record.h, packed here field by field) over the
socket `ckptscope run` names in CKPTSCOPE_CUPTI_SOCKET, and writes and reads
real checkpoint files between them. The copies' times are CLOCK_MONOTONIC,
as the library's.

  save: per shard, a D2H copy (pageable for shard 0 and 1, pinned after),
        then the shard's write;
  load: per shard, the shard's read, then an H2D copy.

Usage: fake_cupti_job.py DIR SHARDS SHARD_BYTES TRUTH.json
"""
import json
import os
import socket
import struct
import sys
import time

VERSION = 1
HELLO, COPY, DEVICE, DROPS = 1, 2, 3, 4
DTOH, HTOD = 2, 1
PAGEABLE, PINNED, DEVICE_MEM = 1, 2, 3
ASYNC = 1


def header(kind, size):
    return struct.pack("<IIII", kind, size, os.getpid(), VERSION)


def hello():
    body = struct.pack("<IIIIq", 0, 1, 130000, 0, 0) + b"\0" * 256
    return header(HELLO, 16 + len(body)) + body


def device():
    body = struct.pack("<IIIIQ", 0, 0, 0x3B, 0, 141 << 30) + b"NVIDIA H200".ljust(64, b"\0") + b"\1" * 16
    return header(DEVICE, 16 + len(body)) + body


def copy(kind, t0, t1, nbytes, host_kind, flags):
    src, dst = (DEVICE_MEM, host_kind) if kind == DTOH else (host_kind, DEVICE_MEM)
    body = struct.pack("<QQQQIIIIIIIIII", t0, t1, nbytes, 1, kind, src, dst, flags, 0, 0, 0, 1, 7, 1)
    return header(COPY, 16 + len(body)) + body


def drops(sent):
    body = struct.pack("<QQQQQ", 0, 0, 0, 0, sent)
    return header(DROPS, 16 + len(body)) + body


def timed_copy(sock, kind, nbytes, host_kind, flags, truth, label):
    t0 = time.monotonic_ns()
    time.sleep(0.004)  # the copy's duration
    t1 = time.monotonic_ns()
    sock.send(copy(kind, t0, t1, nbytes, host_kind, flags))
    truth.append({"phase": label, "bytes": nbytes, "start_ns": t0, "end_ns": t1,
                  "host": "pageable" if host_kind == PAGEABLE else "pinned"})


def main():
    root, shards, size, truth_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    path = os.environ.get("CKPTSCOPE_CUPTI_SOCKET")
    if not path:
        print("fake_cupti_job: no CKPTSCOPE_CUPTI_SOCKET in the environment", file=sys.stderr)
        return 3
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.connect(path)
    sock.send(hello() + device())
    truth = []
    ckpt = os.path.join(root, "checkpoint-1")
    os.makedirs(ckpt, exist_ok=True)
    data = os.urandom(size)
    for i in range(shards):
        timed_copy(sock, DTOH, size, PAGEABLE if i < 2 else PINNED, 0, truth, "save")
        with open(os.path.join(ckpt, f"shard-{i}.pt"), "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    time.sleep(2.0)  # past the quiet gap: the save closes, the load is another
    for i in range(shards):
        with open(os.path.join(ckpt, f"shard-{i}.pt"), "rb") as f:
            assert len(f.read()) == size
        timed_copy(sock, HTOD, size, PINNED, ASYNC, truth, "load")
    sock.send(drops(len(truth)))
    sock.close()
    with open(truth_path, "w") as f:
        json.dump({"copies": truth, "shards": shards, "shard_bytes": size}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
