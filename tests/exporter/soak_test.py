#!/usr/bin/env python3
"""The exporter under sustained scraping while checkpoints close (root; label exporter).

4 threads GET /metrics (3000 scrapes in all by default) while
ckptscope-workload, as Slurm job 4243, saves then loads K=20 small
checkpoints (4 shards of 1 MiB, 200 ms apart; the exporter's quiet gap is
100 ms). The scrapers keep going until both the scrape count is reached and
the workload has ended. Checks:

- every scrape answered 200 with a parseable exposition;
- the exporter's VmRSS (/proc/PID/status) at the end is at most the warm-up
  sample x 1.05 + 1 MiB; the warm-up sample is taken once 300 scrapes are done
  and the first checkpoints have closed (every sample is printed);
- the final counts are exact: K saved, K loaded, and the bytes equal the
  workload's ground truth.

No timing is asserted. Usage: soak_test.py --ckptscope BIN --workload BIN
Exit: 0 pass, 1 fail, 77 skipped (not root).
"""
import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exporter_harness as h  # noqa: E402



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    h.add_binary_args(ap)
    ap.add_argument("--job-id", type=int, default=4243)
    ap.add_argument("--scrapes", type=int, default=3000)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--warmup-scrapes", type=int, default=300)
    ap.add_argument("--warmup-checkpoints", type=int, default=2,
                    help="checkpoints closed before the warm-up RSS sample")
    ap.add_argument("--checkpoints", type=int, default=20)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--shard-size", default="1MiB")
    ap.add_argument("--gap-ms", type=int, default=200)
    ap.add_argument("--quiet-gap-ms", type=int, default=100)
    ap.add_argument("--sample-every", type=int, default=250, help="an RSS sample every this many scrapes")
    ap.add_argument("--rss-ratio", type=float, default=1.05)
    ap.add_argument("--rss-slack-kib", type=int, default=1024)
    ap.add_argument("--deadline", type=float, default=60.0,
                    help="seconds after the workload ends for the counts to be exact")
    ap.add_argument("--max-seconds", type=float, default=300.0,
                    help="give up (fail) when the scraping and the workload take longer than this")
    args = ap.parse_args()
    h.need_root("soak_test")
    h.main_wrapper(lambda: run(args))


class Scrapers:
    def __init__(self, exporter, total, threads):
        self.exporter = exporter
        self.total = total
        self.lock = threading.Lock()
        self.started = 0
        self.done = 0
        self.errors = []          # (scrape number, status, body head)
        self.keep_going = threading.Event()  # set: scrape past `total` (the workload still runs)
        self.keep_going.set()
        self.last_text = None
        self.threads = [threading.Thread(target=self._loop, daemon=True) for _ in range(threads)]
        self.max_seconds = 0.0

    def start(self):
        for t in self.threads:
            t.start()

    def _loop(self):
        while True:
            with self.lock:
                if self.started >= self.total and not self.keep_going.is_set():
                    return
                self.started += 1
                n = self.started
            status, body, secs = h.http_get(self.exporter.metrics_url, timeout=30)
            err = None
            if status != 200:
                err = (n, status, body[:200])
            else:
                try:
                    text = body.decode("utf-8")
                    h.parse_exposition(text)
                except (UnicodeDecodeError, ValueError) as e:
                    err = (n, "unparseable", str(e)[:300])
            with self.lock:
                self.done += 1
                self.max_seconds = max(self.max_seconds, secs)
                if err:
                    self.errors.append(err)
                else:
                    self.last_text = text

    def join(self):
        for t in self.threads:
            t.join()


def run(args):
    h.check_binaries(args)
    tmp = h.TempDir("ckptscope-exptest-soak-", args.work_dir, args.keep)
    cgroups = h.JobCgroups()
    workload = f"slurm-{args.job_id}"
    config = h.write_config(tmp.path, quiet_gap_ms=args.quiet_gap_ms)
    exporter = h.Exporter(args.ckptscope, f"127.0.0.1:{h.free_port()}", config=config,
                          socket_dir=tmp.path).start().wait_ready()
    pid = exporter.pid
    samples = []  # (label, scrapes done, checkpoints closed, VmRSS KiB)

    def closed_now():
        s = h.parse_exposition(exporter.scrape())
        return h.series_sum(s, "ckptscope_checkpoints_total", workload=workload) or 0

    def sample(label, closed=None):
        with scrapers.lock:
            done = scrapers.done
        rss = h.proc_status_kib(pid)
        closed = None if closed is None else int(closed)
        samples.append((label, done, closed, rss))
        if label != "during":
            h.log(f"  VmRSS {label}: {rss} KiB after {done} scrapes, {closed} checkpoints closed")
        return rss

    sample_start_rss = h.proc_status_kib(pid)
    h.log(f"exporter pid {pid}, VmRSS at start {sample_start_rss} KiB")
    truth_path = os.path.join(tmp.path, "ground-truth.json")
    argv = h.workload_args(args.workload, os.path.join(tmp.path, "ckpt"), truth_path, args.shards,
                           args.shard_size, args.checkpoints, args.gap_ms)
    d = cgroups.job(args.job_id)
    h.log(f"$ (in {d}) " + " ".join(argv))
    wl = h.start_in_cgroup(d, argv)
    scrapers = Scrapers(exporter, args.scrapes, args.threads)
    t0 = time.monotonic()
    scrapers.start()

    warm = None
    next_sample = args.sample_every
    wl_rc = None
    while True:
        if wl_rc is None:
            wl_rc = wl.poll()
            if wl_rc is not None:
                h.log(f"workload exited {wl_rc} after {time.monotonic() - t0:.1f} s")
                scrapers.keep_going.clear()
        with scrapers.lock:
            done = scrapers.done
            finished = not any(t.is_alive() for t in scrapers.threads)
        if exporter.proc.poll() is not None:
            h.fail(f"the exporter exited {exporter.proc.returncode} during the soak; its stderr:\n"
                   f"{exporter.stderr_text()}")
        if warm is None and done >= args.warmup_scrapes:
            closed = closed_now()
            if closed >= args.warmup_checkpoints:
                warm = sample("warm-up", closed)
        if done >= next_sample:
            sample("during", closed_now())
            next_sample = (done // args.sample_every + 1) * args.sample_every
        if finished:
            break
        if time.monotonic() - t0 > args.max_seconds:
            scrapers.keep_going.clear()
            h.fail(f"the soak ran past {args.max_seconds:.0f} s ({done} scrapes done, workload exit {wl_rc})")
        time.sleep(0.05)
    scrapers.join()
    elapsed = time.monotonic() - t0
    if wl_rc != 0:
        h.fail(f"the workload exited {wl_rc}")
    if scrapers.errors:
        h.fail(f"{len(scrapers.errors)} of {scrapers.done} scrapes failed; the first: {scrapers.errors[:5]}\n"
               f"exporter stderr:\n{exporter.stderr_tail()}")
    h.log(f"{scrapers.done} scrapes from {args.threads} threads in {elapsed:.1f} s, all 200 "
          f"(slowest {scrapers.max_seconds * 1000:.0f} ms)")
    if warm is None:
        h.fail(f"no warm-up sample: {args.warmup_checkpoints} checkpoints were not closed by the end of "
               f"{scrapers.done} scrapes (the workload ended first?); samples {samples}\n"
               f"exporter stderr:\n{exporter.stderr_tail()}")

    # The exact counts (the last checkpoint closes a quiet gap after the workload's end).
    truth = h.read_truth(truth_path)["totals"]
    want = {("save", "checkpoints"): args.checkpoints, ("load", "checkpoints"): args.checkpoints,
            ("save", "bytes"): truth["bytes_written"], ("load", "bytes"): truth["bytes_read"]}
    deadline = time.monotonic() + args.deadline
    while True:
        s = h.parse_exposition(exporter.scrape())
        got = {}
        for direction in ("save", "load"):
            got[(direction, "checkpoints")] = h.series_sum(s, "ckptscope_checkpoints_total",
                                                           workload=workload, direction=direction)
            got[(direction, "bytes")] = h.series_sum(s, "ckptscope_checkpoint_bytes_total", workload=workload,
                                                     direction=direction, stage="host_io")
        if got == want or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    end_rss = sample("end", (got[("save", "checkpoints")] or 0) + (got[("load", "checkpoints")] or 0))
    if got != want:
        drops = {tuple(sorted(lab.items())): v for n, lab, v in s
                 if n == "ckptscope_dropped_events_total" and v}
        failed = h.series_sum(s, "ckptscope_checkpoints_total", workload=workload, outcome="failed")
        h.fail(f"final counts for {workload}: "
               f"{ {f'{d} {k}': f'{got[(d, k)]} (want {w})' for (d, k), w in want.items()} }; "
               f"failed checkpoints {failed}, nonzero drops {drops}\nexporter stderr:\n{exporter.stderr_tail()}")
    h.log(f"final counts exact: {args.checkpoints} saved ({truth['bytes_written']} B), "
          f"{args.checkpoints} loaded ({truth['bytes_read']} B)")

    limit = warm * args.rss_ratio + args.rss_slack_kib
    h.log("VmRSS samples (KiB; label@scrapes/checkpoints closed=RSS): " +
          " ".join(f"{lab}@{n}/{c}={rss}" for lab, n, c, rss in samples))
    h.log(f"VmRSS: start {sample_start_rss} KiB, warm-up {warm} KiB, end {end_rss} KiB "
          f"(limit {limit:.0f} = warm-up x {args.rss_ratio} + {args.rss_slack_kib} KiB; "
          f"end/warm-up {end_rss / warm:.4f})")
    if end_rss > limit:
        h.fail(f"the exporter's VmRSS grew from {warm} KiB (warm-up) to {end_rss} KiB after "
               f"{scrapers.done} scrapes, over the limit {limit:.0f} KiB")
    exporter.stop()


if __name__ == "__main__":
    main()
