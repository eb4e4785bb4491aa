#!/usr/bin/env python3
"""Real checkpoint clients, run one after the other with quiet gaps, each
writing down what it moved in its own words (the ground truth).

Shared by the host tests (tests/clients/, syscall mode) and the VM scenario
`file-layer` (tests/vm/scenarios/file-layer.sh, file-layer mode): the same
clients, the same ground truth, the same comparison (expect.py).

  real_clients.py prepare --plan PLAN.json CLIENT...   (outside `ckptscope run`)
  real_clients.py run --plan PLAN.json --truth TRUTH.json [--gap S]   (inside it)

CLIENT is NAME:DIR[:DIR2]; each gets its own checkpoint directory
DIR/checkpoints/step_K/ (K counts the clients, so no two share one):
  fio_uring:DIR    fio ioengine=io_uring, a write then a read of uring.bin
                   (truth: fio's JSON io_bytes)
  fio_psync:DIR    fio ioengine=psync, a write then a read of psync.bin
  fio_mmap:DIR[:MIB]  fio ioengine=mmap, a write of MIB MiB (default 256) through a
                   shared mapping of mmap.bin, sized beforehand so fio lays
                   nothing out (truth: fio's JSON io_bytes; via mmap)
  fio_libaio:DIR[:MIB]  fio ioengine=libaio direct=1 (DeepSpeed's async I/O and
                   FastPersist write this way): a write then a read of
                   libaio.bin in 1 MiB requests, 16 out at once, MIB MiB
                   (default 256; truth: fio's JSON io_bytes; via aio)
  cp:SRC:DST       `cp -r` of a checkpoint directory of 3 shards from SRC to DST:
                   a load of the sources and a save of the destinations
                   (truth: the shards' sizes; via as cp 9 copies there, probed
                   on two scratch files first: "reflink" where FICLONE works
                   (xfs), "server_copy" within one NFS 4.2 mount,
                   "copy_file_range" where the kernel copies, else "syscall")
  copytree:SRC:DST[:MIB] Python's shutil.copytree of a checkpoint directory of 3
                   shards (192 MiB + 7 B) from SRC to DST (sendfile on Linux):
                   a load of the sources and a save of the destinations
                   (truth: the shards' sizes; via sendfile)
  dd:SRC:DST       `dd oflag=direct bs=1M` of a non-checkpoint file in SRC to
                   DST/checkpoints/step_K/shard-0.bin (truth: dd's own report)
  numpy:DIR[:MIB[:warm]]  np.load(mmap_mode='r') of weights.npy (4 MiB, or MIB
                   MiB), then a full sum, page cache dropped (or, with warm,
                   filled by reading the file before the run)
                   (truth: mmap = the file's pages, clipped to its size; the
                   two header reads np.load makes, counted by the loader itself)
  torch:DIR        torch.save of a small model and its Adam state (a few MiB),
                   then torch.load of both (truth: the bytes the file objects
                   passed to torch wrote and read, counted by a wrapper)
The write-then-rename commit (docs/stitching.md, "Decided late"); truth: the
bytes each write(2) returned, summed by the client, equal to the files' sizes:
  atomic:DIR       safetensors' atomic save: DIR/export/model.safetensors.tmp
                   written (48 MiB), fsync'ed, os.replace'd to model.safetensors
  renamed:DIR      a plain name no rule matches (DIR/export/state.raw, 40 MiB),
                   closed, then renamed to ckpt-final.pt: the kernel summed its
                   calls (via "summed"; or "syscall" for calls whose path was
                   read after the rename)
  dirrename:DIR    two shards written in DIR/out/tmp_save_K/ (Orbax's and HF's
                   staging directory), the directory renamed to
                   DIR/checkpoints/step_K
  tar:DIR[:MIB]    GNU tar -cf of a checkpoint directory of 3 shards (33 MiB)
                   into DIR/transfer/step_K.tar (a load of the shards; the
                   archive is unrecognised I/O), then tar -xf of it into
                   DIR/restored (a save of the shards): truth, their sizes
  h5py:DIR[:MIB]   h5py (HDF5's sec2 driver) saving two datasets (7 MiB) to
                   DIR/checkpoints/step_K/model.weights.h5, then loading them:
                   truth, the bytes its calls moved (/proc/self/io wchar and
                   rchar around each)
  rsync:SRC:DST[:MIB]  `rsync -a` of a checkpoint directory of 4 shards (64 MiB):
                   each written as .NAME.XXXXXX, then renamed (truth: the
                   shards' sizes; a copy, like cp)

The prepare step writes the inputs (cp's and dd's sources, the .npy file)
and drops the page cache (root), so nothing of it is in the traced job. A
client that is missing is an error naming the package, never a skip.
Python 3 standard library only (numpy and torch only inside their clients).
"""
import argparse
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time

# What to install when a client is missing (scripts/install-deps.sh has them).
PACKAGES = {"fio": "fio", "cp": "coreutils", "dd": "coreutils", "numpy": "python3-numpy",
            "tar": "tar", "h5py": "python3-h5py",
            "torch": "python3-torch"}
# The guest keeps GNU cp, dd and tar apart from busybox's (tests/vm/lib/initramfs.sh).
GNU_DIRS = ["/opt/clients/bin", "/usr/bin", "/bin"]
SIZES = {"fio": 8 << 20, "fio_libaio": 256 << 20, "fio_mmap": 256 << 20, "cp_shards": [3 << 20, 1 << 20, (2 << 20) + 12345], "dd": 4 << 20,
         "numpy_elems": (1 << 20) + 3, "atomic": 48 << 20, "renamed": 40 << 20,
         "dirrename": [(24 << 20) + 4321, 16 << 20],
         "copytree_shards": [64 << 20, 64 << 20, (64 << 20) + 7], "rsync_shards": [16 << 20] * 4,
         "tar_shards": [(24 << 20) + 513, 8 << 20, 1000001], "h5py_datasets": [(4 << 20) + 3, 3 << 20]}


def die(msg):
    sys.exit(f"real_clients.py: {msg}")


def program(name):
    for d in GNU_DIRS if name in ("cp", "dd", "tar") else []:
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    found = shutil.which(name)
    if not found:
        die(f"client {name} is missing: install {PACKAGES[name]} (scripts/install-deps.sh)")
    return found


def python_with(module):
    """Debian's python3 if it has MODULE, else this one; an error naming the package if neither."""
    for py in ("/usr/bin/python3", sys.executable):
        if os.access(py, os.X_OK) and subprocess.run([py, "-c", f"import {module}"],
                                                     capture_output=True).returncode == 0:
            return py
    die(f"client {module} is missing: install {PACKAGES[module]} (scripts/install-deps.sh)")


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        die(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    return p


def write_random(path, size):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(os.urandom(size))


def write_shards(src, sizes):
    """shard-I.pt of each size in SRC, random bytes: the plan's list of them."""
    shards = []
    for i, size in enumerate(sizes):
        write_random(os.path.join(src, f"shard-{i}.pt"), size)
        shards.append({"name": f"shard-{i}.pt", "size": size})
    return shards


def drop_caches():
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


# ---- prepare ---------------------------------------------------------------------------

def prepare(args):
    plan = []
    for k, spec in enumerate(args.clients, start=1):
        name, *dirs = spec.split(":")
        step = f"checkpoints/step_{k}"
        if name in ("fio_uring", "fio_psync"):
            program("fio")
            engine = "io_uring" if name == "fio_uring" else "psync"
            plan.append({"client": name, "engine": engine, "size": SIZES["fio"],
                         "file": os.path.join(dirs[0], step, engine.replace("_", "") + ".bin")})
            os.makedirs(os.path.dirname(plan[-1]["file"]), exist_ok=True)
        elif name == "fio_mmap":
            program("fio")
            size = int(dirs[1]) << 20 if len(dirs) > 1 else SIZES["fio_mmap"]
            path = os.path.join(dirs[0], step, "mmap.bin")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.truncate(size)
            # Reads through a mapping are not exact yet (issue 35): stores only.
            plan.append({"client": name, "engine": "mmap", "size": size, "bs": "1M",
                         "file": path, "directions": ["write"]})
        elif name == "fio_libaio":
            program("fio")
            size = int(dirs[1]) << 20 if len(dirs) > 1 else SIZES["fio_libaio"]
            plan.append({"client": name, "engine": "libaio", "size": size, "direct": True,
                         "bs": "1M", "iodepth": 16,
                         "file": os.path.join(dirs[0], step, "libaio.bin")})
            os.makedirs(os.path.dirname(plan[-1]["file"]), exist_ok=True)
        elif name == "cp":
            program("cp")
            src_root, dst_root = dirs
            src = os.path.join(src_root, "source", step)
            shards = write_shards(src, SIZES["cp_shards"])
            dst_parent = os.path.join(dst_root, "checkpoints")
            os.makedirs(dst_parent, exist_ok=True)
            plan.append({"client": "cp", "src": src, "dst": os.path.join(dst_parent, f"step_{k}"),
                         "dst_parent": dst_parent, "shards": shards,
                         "via": copy_via(src_root, dst_root)})
        elif name in ("copytree", "rsync"):
            if name == "rsync":
                program("rsync")
            src_root, dst_root = dirs[:2]
            sizes = SIZES[f"{name}_shards"]
            if len(dirs) > 2:  # :MIB, the whole copy's size, in four shards
                sizes = [int(dirs[2]) << 18] * 4
            src = os.path.join(src_root, "source", step)
            dst = os.path.join(dst_root, step)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            plan.append({"client": name, "src": src, "dst": dst, "shards": write_shards(src, sizes)})
        elif name == "dd":
            program("dd")
            src_root, dst_root = dirs
            src = os.path.join(src_root, "dd-source.raw")  # not a checkpoint file
            write_random(src, SIZES["dd"])
            dst = os.path.join(dst_root, step, "shard-0.bin")
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            plan.append({"client": "dd", "src": src, "dst": dst})
        elif name == "numpy":
            py = python_with("numpy")
            path = os.path.join(dirs[0], step, "weights.npy")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            # 4-byte elements: float32 by default (4 MiB); int32 when sized,
            # whose sum stays exact in float64 far past float32's 2**24.
            elems = (int(dirs[1]) << 18) + 3 if len(dirs) > 1 else SIZES["numpy_elems"]
            dtype = "int32" if len(dirs) > 1 else "float32"
            sh([py, "-c", "import numpy as np, sys; "
                f"np.save(sys.argv[1], np.arange({elems}, dtype=np.{dtype}))", path])
            plan.append({"client": "numpy", "python": py, "file": path, "elems": elems,
                         "warm": len(dirs) > 2 and dirs[2] == "warm"})
        elif name == "torch":
            py = python_with("torch")
            d = os.path.join(dirs[0], step)
            os.makedirs(d, exist_ok=True)
            plan.append({"client": "torch", "python": py, "model": os.path.join(d, "model.pt"),
                         "optim": os.path.join(d, "optim.pt")})
        elif name in ("atomic", "renamed"):
            d = os.path.join(dirs[0], "export")
            os.makedirs(d, exist_ok=True)
            tmp, final = (("model.safetensors.tmp", "model.safetensors") if name == "atomic"
                          else ("state.raw", "ckpt-final.pt"))
            plan.append({"client": name, "size": SIZES[name], "tmp": os.path.join(d, tmp),
                         "final": os.path.join(d, final)})
        elif name == "dirrename":
            staging = os.path.join(dirs[0], "out", f"tmp_save_{k}")
            final = os.path.join(dirs[0], step)
            os.makedirs(os.path.dirname(final), exist_ok=True)
            plan.append({"client": name, "staging": staging, "final": final,
                         "shards": [{"name": f"shard-{i}.bin", "size": n}
                                    for i, n in enumerate(SIZES["dirrename"])]})
        elif name == "tar":
            program("tar")
            src = os.path.join(dirs[0], "source", step)
            sizes = SIZES["tar_shards"]
            if len(dirs) > 1:  # :MIB, the whole checkpoint's size, about
                mib = int(dirs[1]) << 20
                sizes = [mib // 2 + 513, mib // 4, 1000001]
            plan.append({"client": "tar", "src_parent": os.path.dirname(src),
                         "step": os.path.basename(src),
                         "archive": os.path.join(dirs[0], "transfer", f"step_{k}.tar"),
                         "restored": os.path.join(dirs[0], "restored"),
                         "shards": write_shards(src, sizes)})
            os.makedirs(os.path.join(dirs[0], "transfer"), exist_ok=True)
            os.makedirs(os.path.join(dirs[0], "restored"), exist_ok=True)
        elif name == "h5py":
            py = python_with("h5py")
            d = os.path.join(dirs[0], step)
            os.makedirs(d, exist_ok=True)
            sizes = SIZES["h5py_datasets"]
            if len(dirs) > 1:  # :MIB, the datasets' size
                sizes = [(int(dirs[1]) << 19) + 3, int(dirs[1]) << 19]
            plan.append({"client": "h5py", "python": py, "file": os.path.join(d, "model.weights.h5"),
                         "datasets": sizes})
        else:
            die(f"unknown client {spec!r} (fio_uring, fio_psync, fio_libaio, fio_mmap, cp, copytree, dd, numpy, torch, atomic, "
                "renamed, dirrename, rsync, tar, h5py)")
    dropped = drop_caches()
    # A warm client's file is read back into the page cache here, before the
    # run: its load is served by the cache, with no read of the job's own.
    for c in plan:
        if c.get("warm"):
            with open(c["file"], "rb") as f:
                while f.read(1 << 20):
                    pass
    with open(args.plan, "w") as f:
        json.dump({"clients": plan, "page_cache_dropped": dropped}, f, indent=1)


FICLONE = 0x40049409  # _IOW(0x94, 9, int), include/uapi/linux/fs.h


def mount_of(path):
    """(mount point, fstype, options) of the mount holding PATH (/proc/self/mounts)."""
    path = os.path.realpath(path)
    best = ("/", "", "")
    with open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            if len(fields) < 4:
                continue
            point = fields[1].replace("\\040", " ")
            inside = path == point or path.startswith(point.rstrip("/") + "/")
            if inside and len(point) >= len(best[0]):
                best = (point, fields[2], fields[3])
    return best


def copy_via(src_root, dst_root):
    """How GNU cp 9 copies a file between these two directories, as the trace
    should name it: it tries ioctl(FICLONE) first ("reflink": xfs, btrfs),
    then copy_file_range, which an NFS 4.2 server serves itself within one
    mount ("server_copy"), else the kernel copies ("copy_file_range"); where
    the kernel refuses (EXDEV across file systems) it reads and writes
    ("syscall"). Two scratch files with names no checkpoint glob matches."""
    a, b = os.path.join(src_root, ".cfr-probe-src"), os.path.join(dst_root, ".cfr-probe-dst")
    try:
        with open(a, "wb") as f:
            f.write(b"x" * 4096)
        with open(a, "rb") as fa, open(b, "wb") as fb:
            try:
                fcntl.ioctl(fb.fileno(), FICLONE, fa.fileno())
                return "reflink"
            except OSError:
                pass
            if os.copy_file_range(fa.fileno(), fb.fileno(), 4096) != 4096:
                return "syscall"
        src_mount, dst_mount = mount_of(src_root), mount_of(dst_root)
        if src_mount == dst_mount and dst_mount[1] == "nfs4" and "vers=4.2" in dst_mount[2]:
            return "server_copy"
        return "copy_file_range"
    except OSError:
        return "syscall"
    finally:
        for p in (a, b):
            if os.path.exists(p):
                os.unlink(p)


# ---- run -------------------------------------------------------------------------------

def checkpoint(client, direction, files, via, start_ns, end_ns, **extra):
    """One expected checkpoint: files = [(path, bytes_written, bytes_read)]."""
    total = sum(w + r for _, w, r in files)
    return dict({"client": client, "direction": direction, "bytes": total,
                 "bytes_by_via": {k: v for k, v in via.items() if v},
                 "files": [{"path": p, "bytes_written": w, "bytes_read": r} for p, w, r in files],
                 "start_ns": start_ns, "end_ns": end_ns}, **extra)


def run_fio(c, rw, out_json):
    cmd = [program("fio"), "--name=ckpt", f"--filename={c['file']}", f"--ioengine={c['engine']}",
           f"--rw={rw}", f"--bs={c.get('bs', '128k')}", f"--size={c['size']}",
           f"--iodepth={c.get('iodepth', 8)}", "--fallocate=none", "--invalidate=0",
           f"--direct={1 if c.get('direct') else 0}", "--output-format=json",
           f"--output={out_json}"]
    t0 = time.monotonic_ns()
    sh(cmd)
    t1 = time.monotonic_ns()
    with open(out_json) as f:
        job = json.load(f)["jobs"][0]
    return job[rw]["io_bytes"], t0, t1


def client_fio(c, gap, scratch):
    via = {"io_uring": "io_uring", "libaio": "aio", "mmap": "mmap"}.get(c["engine"], "syscall")
    out = []
    for rw, direction in (("write", "save"), ("read", "load")):
        if rw not in c.get("directions", ("write", "read")):
            continue
        if out:
            time.sleep(gap)
        n, t0, t1 = run_fio(c, rw, os.path.join(scratch, f"fio-{c['engine']}-{rw}.json"))
        files = [(c["file"], n, 0)] if rw == "write" else [(c["file"], 0, n)]
        direct = " direct=1" if c.get("direct") else ""
        out.append(checkpoint(c["client"], direction, files, {via: n}, t0, t1,
                              report=f"fio {c['engine']}{direct} {rw}: io_bytes {n}"))
    return out


def copy_sides(client, c, dst_dir, via, t0, t1, report):
    """A copy's truth: a load of its sources and a save of its destinations
    (docs/stitching.md, "Copies"), each shard's copy checked by size."""
    sources, dests = [], []
    for s in c["shards"]:
        dst = os.path.join(dst_dir, s["name"])
        if os.path.getsize(dst) != s["size"]:
            die(f"{client}: {dst} has {os.path.getsize(dst)} bytes, its source {s['size']}")
        sources.append((os.path.join(c["src"], s["name"]), 0, s["size"]))
        dests.append((dst, s["size"], 0))
    size = sum(s["size"] for s in c["shards"])
    return [checkpoint(client, "load", sources, {via: size}, t0, t1, copy_side=True, report=report),
            checkpoint(client, "save", dests, {via: size}, t0, t1, copy_side=True, report=report)]


def client_cp(c, gap, scratch):
    t0 = time.monotonic_ns()
    sh([program("cp"), "-r", c["src"], c["dst_parent"]])
    t1 = time.monotonic_ns()
    size = sum(s["size"] for s in c["shards"])
    return copy_sides("cp", c, c["dst"], c["via"], t0, t1,
                      f"cp -r: {len(c['shards'])} shards, {size} bytes, copied by: {c['via']}")


def client_copytree(c, gap, scratch):
    t0 = time.monotonic_ns()
    shutil.copytree(c["src"], c["dst"])
    t1 = time.monotonic_ns()
    size = sum(s["size"] for s in c["shards"])
    # Python 3.8+ copies a file's bytes with os.sendfile on Linux.
    return copy_sides("copytree", c, c["dst"], "sendfile", t0, t1,
                      f"shutil.copytree: {len(c['shards'])} shards, {size} bytes")


def client_dd(c, gap, scratch):
    t0 = time.monotonic_ns()
    p = sh([program("dd"), f"if={c['src']}", f"of={c['dst']}", "bs=1M", "oflag=direct"])
    t1 = time.monotonic_ns()
    m = re.search(r"^(\d+) bytes", p.stderr, re.M)
    if not m:
        die(f"dd printed no byte count: {p.stderr!r}")
    n = int(m.group(1))
    if n != os.path.getsize(c["dst"]):
        die(f"dd says {n} bytes, {c['dst']} has {os.path.getsize(c['dst'])}")
    return [checkpoint("dd", "save", [(c["dst"], n, 0)], {"syscall": n}, t0, t1,
                       report=f"dd oflag=direct: {n} bytes")]


# np.load(mmap_mode='r') opens the file twice (np.load, then format.open_memmap),
# each time through a buffered reader whose first read fills its buffer
# (st_blksize bytes, or the whole file if smaller); numpy.memmap maps it
# without reading. The loader counts those reads from the buffer size Python
# picked, and reports the pages the sum touched (all of the file's).
NUMPY_LOADER = r"""
import io, json, os, sys, numpy as np
path = sys.argv[1]
size = os.path.getsize(path)
blk = os.stat(path).st_blksize
buf = blk if blk > 1 else io.DEFAULT_BUFFER_SIZE
a = np.load(path, mmap_mode="r")
total = float(a.sum(dtype=np.float64))
page = os.sysconf("SC_PAGE_SIZE")
# How the kernel mapped it, while the mapping stands: kB mapped by PMD entries.
pmd_kb = 0
with open("/proc/self/smaps_rollup") as f:
    for line in f:
        if line.split(":")[0] in ("FilePmdMapped", "ShmemPmdMapped"):
            pmd_kb += int(line.split()[1])
print(json.dumps({"size": size, "st_blksize": blk, "header_read_bytes": 2 * min(buf, size),
                  "pages": (size + page - 1) // page, "page_size": page, "sum": total,
                  "pmd_mapped_kb": pmd_kb}))
"""


def client_numpy(c, gap, scratch):
    t0 = time.monotonic_ns()
    r = json.loads(sh([c["python"], "-c", NUMPY_LOADER, c["file"]]).stdout)
    t1 = time.monotonic_ns()
    n = c.get("elems", SIZES["numpy_elems"])
    if r["sum"] != float(n * (n - 1) // 2):
        die(f"numpy: sum {r['sum']}, want {n * (n - 1) // 2}")
    # Every page touched; the last clipped to the file's size.
    mmap_bytes = min(r["pages"] * r["page_size"], r["size"])
    return [checkpoint("numpy", "load", [(c["file"], 0, mmap_bytes + r["header_read_bytes"])],
                       {"mmap": mmap_bytes, "syscall": r["header_read_bytes"]}, t0, t1,
                       mmap_bytes=mmap_bytes,
                       report=f"numpy memmap{' (warm)' if c.get('warm') else ''}: {r['size']} bytes, "
                              f"{r['pages']} pages ({r['pmd_mapped_kb']} kB mapped by PMD entries); "
                              f"header reads {r['header_read_bytes']} (st_blksize {r['st_blksize']})")]


# torch.save / torch.load through file objects that count what passed: an
# unbuffered FileIO under a counter, so each counted write or read is one
# system call of that many bytes.
TORCH_SAVE = r"""
import io, json, os, sys, torch
class Counting(io.RawIOBase):
    def __init__(self, f): self.f, self.written, self.read_bytes = f, 0, 0
    def writable(self): return True
    def readable(self): return True
    def seekable(self): return True
    def write(self, b):
        n = self.f.write(b); self.written += n; return n
    def readinto(self, b):
        n = self.f.readinto(b); self.read_bytes += n; return n
    def seek(self, *a): return self.f.seek(*a)
    def tell(self): return self.f.tell()
    def flush(self): pass
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 512))
opt = torch.optim.Adam(model.parameters())
model(torch.randn(8, 512)).sum().backward()
opt.step()
out = {}
mode, model_path, optim_path = sys.argv[1:4]
for name, path, obj in (("model", model_path, model.state_dict()), ("optim", optim_path, opt.state_dict())):
    if mode == "save":
        with open(path, "wb", buffering=0) as raw:
            c = Counting(raw)
            torch.save(obj, c)
        out[name] = {"path": path, "written": c.written, "size": os.path.getsize(path)}
    else:
        with open(path, "rb", buffering=0) as raw:
            c = Counting(raw)
            torch.load(c)
        out[name] = {"path": path, "read": c.read_bytes, "size": os.path.getsize(path)}
print(json.dumps(out))
"""


def client_torch(c, gap, scratch):
    out = []
    for mode, direction in (("save", "save"), ("load", "load")):
        if out:
            time.sleep(gap)
        t0 = time.monotonic_ns()
        r = json.loads(sh([c["python"], "-c", TORCH_SAVE, mode, c["model"], c["optim"]]).stdout)
        t1 = time.monotonic_ns()
        files = []
        for f in r.values():
            if mode == "save":
                if f["written"] != f["size"]:
                    die(f"torch.save wrote {f['written']} bytes into {f['path']} of {f['size']}")
                files.append((f["path"], f["written"], 0))
            else:
                files.append((f["path"], 0, f["read"]))
        n = sum(w + rd for _, w, rd in files)
        out.append(checkpoint("torch", direction, files, {"syscall": n}, t0, t1,
                              report=f"torch.{mode}: {json.dumps(r)}"))
    return out


def write_counted(path, size, chunk=1 << 20, fsync=False):
    """Writes SIZE random bytes to PATH in CHUNK write(2) calls; returns the
    bytes the calls returned, summed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    written = 0
    try:
        block = os.urandom(chunk)
        while written < size:
            written += os.write(fd, block[:min(chunk, size - written)])
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    return written


def client_renamed(c, gap, scratch):
    """atomic and renamed: one file written under one name, renamed to another."""
    t0 = time.monotonic_ns()
    n = write_counted(c["tmp"], c["size"], fsync=c["client"] == "atomic")
    os.replace(c["tmp"], c["final"])
    t1 = time.monotonic_ns()
    if n != os.path.getsize(c["final"]):
        die(f"{c['client']}: wrote {n} bytes, {c['final']} has {os.path.getsize(c['final'])}")
    via = {"syscall": n} if c["client"] == "atomic" else {"summed": n}
    extra = {} if c["client"] == "atomic" else {"via_one_of": ["summed", "syscall"]}
    return [checkpoint(c["client"], "save", [(c["final"], n, 0)], via, t0, t1,
                       report=f"{os.path.basename(c['tmp'])} -> {os.path.basename(c['final'])}: "
                              f"{n} bytes written", **extra)]


def client_dirrename(c, gap, scratch):
    t0 = time.monotonic_ns()
    os.makedirs(c["staging"])
    written = [write_counted(os.path.join(c["staging"], s["name"]), s["size"]) for s in c["shards"]]
    os.rename(c["staging"], c["final"])
    t1 = time.monotonic_ns()
    files = [(os.path.join(c["final"], s["name"]), n, 0) for s, n in zip(c["shards"], written)]
    return [checkpoint("dirrename", "save", files, {"syscall": sum(written)}, t0, t1,
                       report=f"{len(files)} shards, {sum(written)} bytes in "
                              f"{os.path.basename(c['staging'])}, renamed to {c['final']}")]


def client_rsync(c, gap, scratch):
    t0 = time.monotonic_ns()
    sh([program("rsync"), "-a", "--whole-file", c["src"] + "/", c["dst"] + "/"])
    t1 = time.monotonic_ns()
    size = sum(s["size"] for s in c["shards"])
    return copy_sides("rsync", c, c["dst"], "syscall", t0, t1,
                      f"rsync -a: {len(c['shards'])} shards, {size} bytes")


def client_tar(c, gap, scratch):
    """GNU tar: the checkpoint directory archived (a load of its shards; the
    archive, a name no pattern knows, is unrecognised I/O), then, after a
    quiet gap, extracted elsewhere (a save of the shards)."""
    size = sum(s["size"] for s in c["shards"])
    t0 = time.monotonic_ns()
    sh([program("tar"), "-cf", c["archive"], "-C", c["src_parent"], c["step"]])
    t1 = time.monotonic_ns()
    sources = [(os.path.join(c["src_parent"], c["step"], s["name"]), 0, s["size"])
               for s in c["shards"]]
    out = [checkpoint("tar", "load", sources, {"syscall": size}, t0, t1,
                      report=f"tar -cf: {len(c['shards'])} shards, {size} bytes read")]
    time.sleep(gap)
    t2 = time.monotonic_ns()
    sh([program("tar"), "-xf", c["archive"], "-C", c["restored"]])
    t3 = time.monotonic_ns()
    dests = []
    for s in c["shards"]:
        path = os.path.join(c["restored"], c["step"], s["name"])
        if os.path.getsize(path) != s["size"]:
            die(f"tar: {path} has {os.path.getsize(path)} bytes, its source {s['size']}")
        dests.append((path, s["size"], 0))
    out.append(checkpoint("tar", "save", dests, {"syscall": size}, t2, t3,
                          report=f"tar -xf: {len(c['shards'])} shards, {size} bytes written"))
    return out


# h5py with HDF5's default (sec2) driver: its pread/pwrite calls counted from
# /proc/self/io around the save and the load (nothing else of the process
# moves data then): wchar is what its writes moved, rchar what its reads did,
# less the first snapshot's own read, which the kernel adds after it.
H5PY_CLIENT = r"""
import json, os, sys, h5py, numpy as np
mode, path = sys.argv[1], sys.argv[2]
sizes = [int(n) for n in sys.argv[3].split(",")]
fd = os.open("/proc/self/io", os.O_RDONLY)
def counters():
    text = os.pread(fd, 4096, 0)
    return {k: int(v) for k, v in (l.split(b": ") for l in text.splitlines())}, len(text)
before, before_len = counters()
if mode == "save":
    with h5py.File(path, "w") as f:
        for i, n in enumerate(sizes):
            f.create_dataset(f"layer{i}/weight", data=np.arange(n, dtype=np.uint8))
else:
    with h5py.File(path, "r") as f:
        total = sum(int(f[f"layer{i}/weight"][...].astype(np.uint64).sum()) for i in range(len(sizes)))
after, _ = counters()
print(json.dumps({"written": after[b"wchar"] - before[b"wchar"],
                  "read": after[b"rchar"] - before[b"rchar"] - before_len,
                  "size": os.path.getsize(path)}))
"""


def client_h5py(c, gap, scratch):
    datasets = c.get("datasets", SIZES["h5py_datasets"])
    sizes = ",".join(str(n) for n in datasets)
    out = []
    for mode in ("save", "load"):
        if out:
            time.sleep(gap)
        t0 = time.monotonic_ns()
        r = json.loads(sh([c["python"], "-c", H5PY_CLIENT, mode, c["file"], sizes]).stdout)
        t1 = time.monotonic_ns()
        if mode == "save" and r["written"] < sum(datasets):
            die(f"h5py: wrote {r['written']} bytes for {sum(datasets)} of data")
        moved = r["written"] + r["read"]
        out.append(checkpoint("h5py", mode, [(c["file"], r["written"], r["read"])],
                              {"syscall": moved}, t0, t1,
                              report=f"h5py {mode}: {r['written']} bytes written, {r['read']} read "
                                     f"(/proc/self/io), file {r['size']} bytes"))
    return out


CLIENTS = {"atomic": client_renamed, "renamed": client_renamed, "dirrename": client_dirrename,
           "rsync": client_rsync, "fio_uring": client_fio, "fio_psync": client_fio, "fio_libaio": client_fio, "fio_mmap": client_fio, "cp": client_cp, "copytree": client_copytree, "dd": client_dd,
           "numpy": client_numpy, "torch": client_torch, "tar": client_tar, "h5py": client_h5py}


def run(args):
    with open(args.plan) as f:
        plan = json.load(f)
    scratch = os.path.dirname(os.path.abspath(args.truth))
    truth = {"page_cache_dropped": plan["page_cache_dropped"], "gap_s": args.gap, "checkpoints": []}
    for i, c in enumerate(plan["clients"]):
        if i:
            time.sleep(args.gap)  # the quiet gap (1 s by default) ends the last checkpoint
        got = CLIENTS[c["client"]](c, args.gap, scratch)
        for cp in got:
            print(f"real_clients: {cp['report']}", flush=True)
        truth["checkpoints"].extend(got)
    with open(args.truth, "w") as f:
        json.dump(truth, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--plan", required=True)
    p.add_argument("clients", nargs="+")
    r = sub.add_parser("run")
    r.add_argument("--plan", required=True)
    r.add_argument("--truth", required=True)
    r.add_argument("--gap", type=float, default=1.5)
    args = ap.parse_args()
    prepare(args) if args.cmd == "prepare" else run(args)


if __name__ == "__main__":
    main()
