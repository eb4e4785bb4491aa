#!/usr/bin/env python3
"""Real checkpoint clients under `ckptscope run --probe-mode syscall` on this
host: programs no one here wrote, against their own reports (issue 18).

  clients_test.py --ckptscope PATH --source-dir DIR --clients torch|numpy|fio|aio|mmap|cp|dd|formats|renames
                  [--probe-mode syscall] [--keep DIR]

Each --clients group is one `ckptscope run` of real_clients.py (its ground
truth: fio's JSON io_bytes, dd's report, the bytes torch's file objects
passed, the pages numpy's sum touched, the copied shards' sizes), compared
by expect.py with the summary (`summary --json`: bytes, direction,
bytes_by_via, probe_mode) and the trace's files table:
  torch  torch.save of a small model + its Adam state, then torch.load
  numpy  np.load(mmap_mode='r') of a 4 MiB .npy on local disk and a full sum,
         page cache dropped; then of 256 MiB, cold and warm
  fio    ioengine=io_uring then psync: a write and a read of 8 MiB each
  aio    ioengine=libaio direct=1 (DeepSpeed's async I/O): a write and a read
         of 256 MiB in 1 MiB requests, 16 out at once, on the local disk
  cp     `cp -r` of 3 shards within the local disk (copy_file_range), from
         tmpfs (/dev/shm) to the local disk (read/write: the kernel refuses
         copy_file_range across file systems) and within an XFS loop mount
         (ioctl FICLONE: via reflink, the file system's own copy), and
         shutil.copytree of 3 x 64 MiB within the local disk (sendfile): each
         a load and a save
  dd     `dd oflag=direct bs=1M` of 4 MiB onto the local disk
  formats  GNU tar -cf of a checkpoint directory (a load; the archive is
         unrecognised I/O) and tar -xf of it elsewhere (a save); h5py saving
         and loading model.weights.h5 (the bytes its calls moved, from
         /proc/self/io)
  renames  a safetensors-style atomic save (*.tmp, fsync, os.replace), a
         file renamed into a checkpoint's name, a staging directory renamed
         into checkpoints/step_K, and `rsync -a` of 4 shards (64 MiB; its
         receiver chdir()s and writes .NAME.XXXXXX, then renames)
A client that is missing fails the test (scripts/install-deps.sh installs
fio, coreutils, tar, rsync, xfsprogs, python3-numpy, python3-h5py, python3-torch). Needs root (eBPF): skips,
saying so, otherwise. Exit 0 pass, 1 fail, 77 skip.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import expect  # noqa: E402

GROUPS = {
    "torch": lambda disk, shm, xfs: [f"torch:{disk}"],
    # A 4 MiB memmap cold; 256 MiB cold and warm (large folios, mapped whole).
    "numpy": lambda disk, shm, xfs: [f"numpy:{disk}", f"numpy:{disk}:256", f"numpy:{disk}:256:warm"],
    "fio": lambda disk, shm, xfs: [f"fio_uring:{disk}", f"fio_psync:{disk}"],
    # libaio with O_DIRECT on the disk (tmpfs may refuse O_DIRECT): 256 MiB each way.
    "aio": lambda disk, shm, xfs: [f"fio_libaio:{disk}"],
    # Stores through a shared mapping: 256 MiB written by fio's mmap engine.
    "mmap": lambda disk, shm, xfs: [f"fio_mmap:{disk}"],
    # cp within an XFS file system shares extents (its FICLONE: via reflink).
    "cp": lambda disk, shm, xfs: [f"cp:{disk}:{disk}", f"cp:{shm}:{disk}", f"cp:{xfs}:{xfs}",
                                  f"copytree:{disk}:{disk}"],
    "dd": lambda disk, shm, xfs: [f"dd:{shm}:{disk}"],
    # rsync's receiver chdir()s into the destination, writes each shard as
    # .NAME.XXXXXX by its relative name, renames it, and exits within
    # milliseconds: the names resolve where the traced chdir put it.
    # Archives and HDF5: GNU tar (archive a checkpoint, extract it elsewhere), h5py.
    "formats": lambda disk, shm, xfs: [f"tar:{disk}", f"h5py:{disk}"],
    "renames": lambda disk, shm, xfs: [f"atomic:{disk}", f"renamed:{disk}", f"dirrename:{disk}",
                                  f"rsync:{disk}:{disk}"],
}

NEEDS_XFS = {"cp"}


class XfsMount:
    """An XFS file system (reflink=1, mkfs.xfs's default) on a loop device over
    a sparse 512 MiB file in DIR, mounted at DIR/xfs; close() unmounts it
    (the loop device goes with it). mkfs.xfs comes with xfsprogs
    (scripts/install-deps.sh); `error` says what failed."""

    def __init__(self, directory):
        self.image = os.path.join(directory, "xfs.img")
        self.point = os.path.join(directory, "xfs")
        self.mounted = False
        self.error = ""
        os.makedirs(self.point)
        with open(self.image, "wb") as f:
            f.truncate(512 << 20)
        mkfs = shutil.which("mkfs.xfs") or "/usr/sbin/mkfs.xfs"
        for cmd, what in (([mkfs, "-q", "-m", "reflink=1", self.image], "mkfs.xfs (xfsprogs)"),
                          (["mount", "-o", "loop", self.image, self.point], "mount -o loop")):
            try:
                p = subprocess.run(cmd, capture_output=True, text=True)
            except OSError as e:
                self.error = f"{what}: {e} (scripts/install-deps.sh installs xfsprogs)"
                return
            if p.returncode != 0:
                self.error = f"{what} failed: {p.stderr.strip()}"
                return
        self.mounted = True

    def close(self):
        if self.mounted:
            subprocess.run(["umount", self.point], capture_output=True)
            self.mounted = False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ckptscope", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--clients", required=True, choices=sorted(GROUPS))
    ap.add_argument("--probe-mode", default="syscall",
                    help="the mode to ask for and to expect in the summary (this host refuses fentry)")
    ap.add_argument("--keep", help="keep the trace, plan and truth here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: needs root: `ckptscope run` loads eBPF programs", file=sys.stderr)
        return 77
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    driver = os.path.join(HERE, "real_clients.py")
    # The checkpoint files on the local disk (the file system /var/tmp is on)
    # and a tmpfs source for the cross-file-system copy. No name above them
    # says checkpoint ("*ckpt*" would make every generic name below one, and
    # the renames group tests names that are not, until renamed).
    disk = tempfile.mkdtemp(prefix="real-clients-", dir="/var/tmp")
    shm = tempfile.mkdtemp(prefix="real-clients-", dir="/dev/shm")
    xfs = XfsMount(disk) if args.clients in NEEDS_XFS else None
    if xfs and xfs.error:
        print(f"FAIL: {xfs.error}", file=sys.stderr)
        xfs.close()
        shutil.rmtree(disk, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)
        return 1
    work = args.keep or tempfile.mkdtemp(prefix="real-clients-work-")
    os.makedirs(work, exist_ok=True)
    plan, truth_path, trace = (os.path.join(work, n) for n in ("plan.json", "truth.json", "run.db"))
    errors, lines = [], []
    try:
        p = subprocess.run([py, driver, "prepare", "--plan", plan] + GROUPS[args.clients](disk, shm, xfs.point if xfs else None),
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL: preparing the clients: {p.stderr.strip()}", file=sys.stderr)
            return 1
        if os.path.exists(trace):
            os.unlink(trace)
        try:
            run = subprocess.run([args.ckptscope, "run", "--trace", trace, "--probe-mode", args.probe_mode,
                                  "--", py, driver, "run", "--plan", plan, "--truth", truth_path],
                                 capture_output=True, text=True, timeout=240)
        except subprocess.TimeoutExpired as e:
            print(f"FAIL: ckptscope run -- real_clients.py ran past 240 s; its stderr: "
                  f"{(e.stderr or b'')[-4000:]!r}", file=sys.stderr)
            return 1
        print(run.stdout, end="")
        if run.returncode != 0 or not os.path.exists(truth_path):
            print(f"FAIL: ckptscope run --probe-mode {args.probe_mode} -- real_clients.py exited "
                  f"{run.returncode}:\n{run.stderr.strip()[-4000:]}", file=sys.stderr)
            return 1
        summ = subprocess.run([args.ckptscope, "summary", "--json", trace], capture_output=True, text=True)
        if summ.returncode != 0:
            print(f"FAIL: ckptscope summary --json exited {summ.returncode}: {summ.stderr.strip()}",
                  file=sys.stderr)
            return 1
        summary = json.loads(summ.stdout)
        with open(truth_path) as f:
            truth = json.load(f)

        def check(cond, msg):
            if not cond:
                errors.append(msg)
            return bool(cond)

        expect.compare(check, lines.append, summary, truth, expect.trace_files(trace), args.probe_mode)
    finally:
        if xfs:
            xfs.close()
        shutil.rmtree(disk, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    for line in lines:
        print(line)
    for e in errors:
        print("FAIL: " + e, file=sys.stderr)
    if not errors:
        print(f"clients {args.clients}: all checks passed")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
