#!/usr/bin/env python3
"""`ckptscope logwatch`, `logwatch train` and `eval-anomaly` end to end.

Trains a model on a synthetic node log with a known cycle, streams lines into
`logwatch --source -` through a pipe and reads each verdict before the next
line is written, follows a file through truncation and rotation as `tail -F`
does, checks the model's error paths, and runs the BGL_2k
evaluation against floors set just under the measured figures
(docs/logwatch.md). Exit 0 pass, 1 fail, 77 skip.
"""
import argparse
import json
import os
import select
import signal
import subprocess
import sys
import tempfile

FAILURES = []


# Every anomaly its own alarm, no budget, every fired reason reported (a new
# line without a level whose words say nothing is info, 0.45): for the tests
# of how lines are read and printed (following, formats), where every line of
# a fixture is new.
PER_LINE = ["--group-window", "0", "--max-alarm-rate", "0", "--threshold", "0"]


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, file=sys.stderr)


# The stream's other lines: a burst's end, a digest of what the budget held
# back, the final summary (docs/logwatch.md, "Output").
NOT_ALARMS = {"group_ended", "held_back", "summary"}


def alarms_of(stdout):
    """The alarms of a --json run: every line but the bookkeeping ones."""
    return [a for a in (json.loads(x) for x in stdout.splitlines())
            if a.get("reason") not in NOT_ALARMS]


def read_line(proc, timeout_s=10):
    ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
    if not ready:
        return None
    return proc.stdout.readline()


def test_stream_from_pipe(ckpt, fixture, model):
    proc = subprocess.Popen(
        [ckpt, "logwatch", "--source", "-", "--model", model, "--format", "syslog", "--json",
         "--no-exporter"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        bufsize=1)
    normal = open(fixture).read().splitlines()
    # Known lines in their trained order: no verdict lines.
    for line in normal[:9]:
        proc.stdin.write(line + "\n")
    xid = ("2026-11-30T11:00:00+0000 gpu-node-17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, "
           "pid=4242, GPU has fallen off the bus.")
    proc.stdin.write(xid + "\n")
    proc.stdin.flush()
    # The verdict arrives while the pipe is still open (streaming, not batch).
    got = read_line(proc)
    check(got is not None, "no verdict for the Xid line while the pipe was open")
    if got:
        a = json.loads(got)
        check(set(a) == {"line", "text", "template", "score", "reason", "rank", "level", "kind",
                         "fault"}, f"keys {sorted(a)}")
        check(a["line"] == 10, f"line {a['line']} != 10")
        # A known fault (analysis/logwatch/known_faults.json), and new besides.
        check(a["reason"] == "known_fault+new_template", f"reason {a['reason']}")
        check((a["kind"], a["fault"], a["rank"]) == ("gpu_xid", "xid-gpu-lost", "known_fault"),
              f"kind {a.get('kind')} fault {a.get('fault')} rank {a.get('rank')}")
        check(a["score"] == 1.0, f"score {a['score']}")
        check(a["text"] == xid.split(" ", 2)[2], f"text {a['text']!r}")
        check("Xid (<*>): <*>," in a["template"] and "pid=<*>" in a["template"],
              f"template {a['template']!r}")
    proc.stdin.close()
    rest = proc.stdout.read()
    err = proc.stderr.read()
    check(proc.wait(timeout=10) == 0, "logwatch exit code")
    # Nothing but the final summary: no verdict on the known lines.
    summary = [json.loads(x) for x in rest.splitlines()]
    check(len(summary) == 1 and summary[0]["reason"] == "summary" and summary[0]["line"] == 10,
          f"unexpected verdicts on known lines: {rest!r}")
    if summary:
        check((summary[0]["lines"], summary[0]["alarms"], summary[0]["held_back"]) == (10, 1, 0),
              f"summary {summary[0]}")
    check("10 lines, 1 anomalies" in err, f"summary on stderr: {err!r}")


def test_human_output_and_out_of_order(ckpt, fixture, model):
    normal = open(fixture).read().splitlines()
    # The NIC's line twice in a row: out of the fixture's cycle, but each
    # subsystem (nfs, systemd, mlx5_core) is its own sequence, and the NIC's
    # own order is "link up" after "link up": no anomaly. A line the node never
    # printed is one, in the human format.
    xid = ("2026-11-30T10:09:00+0000 gpu-node-17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, "
           "pid=1234, GPU has fallen off the bus.")
    text = "\n".join(normal[:3] + [normal[2], normal[3], xid]) + "\n"
    r = subprocess.run([ckpt, "logwatch", "--source", "-", "--model", model, "--format",
                        "syslog", "--no-learn", "--no-exporter"], input=text,
                       capture_output=True, text=True)
    check(r.returncode == 0, f"human run rc {r.returncode}: {r.stderr}")
    check(r.stdout.startswith("line 6: ") and "new_template" in r.stdout
          and r.stdout.count("\n") == 1, f"human output {r.stdout!r}")


def test_follow_a_growing_file(ckpt, tmp):
    path = os.path.join(tmp, "growing.log")
    open(path, "w").close()
    proc = subprocess.Popen([ckpt, "logwatch", "--source", path, "--follow", "--json"] + PER_LINE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with open(path, "a") as f:
        f.write("kernel: nvme nvme0: I/O 12 QID 3 timeout, aborting\n")
    got = read_line(proc)
    check(got is not None and json.loads(got)["line"] == 1, f"--follow verdict {got!r}")
    proc.send_signal(signal.SIGINT)
    check(proc.wait(timeout=10) == 0, "--follow ends cleanly on SIGINT")
    proc.stdout.close()
    proc.stderr.close()


class LineReader:
    """Lines from a pipe as they arrive: select() on the descriptor, never on
    a buffered file, which may already hold the next line."""

    def __init__(self, pipe):
        self.fd = pipe.fileno()
        self.buf = b""
        self.lines = []  # every line read, for messages

    def next(self, timeout_s=10):
        while b"\n" not in self.buf:
            ready, _, _ = select.select([self.fd], [], [], timeout_s)
            chunk = os.read(self.fd, 65536) if ready else b""
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        self.lines.append(line.decode())
        return self.lines[-1]

    def wait_for(self, needle, timeout_s=10):
        while True:
            line = self.next(timeout_s)
            if line is None:
                return False
            if needle in line:
                return True

    def rest(self):
        """Everything up to the end, once the process has exited."""
        while self.next(1) is not None:
            pass
        tail = self.buf.decode()
        self.buf = b""
        return tail


def test_follow_like_tail_F(ckpt, tmp):
    # `--follow` is `tail -F`: a file that does not exist yet, logrotate's
    # rename-and-create (with a line the writer adds to the renamed file),
    # its copytruncate, and a delete-and-recreate. Every line is a new
    # template without a model, so each line read prints one verdict.
    log = os.path.join(tmp, "rotating.log")
    proc = subprocess.Popen([ckpt, "logwatch", "--source", log, "--follow", "--json"] + PER_LINE + [
                             "--no-exporter"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = LineReader(proc.stdout)
    err = LineReader(proc.stderr)

    def expect(texts, what):
        for text in texts:
            got = out.next()
            a = json.loads(got) if got else None
            check(a is not None and a["text"] == text, f"--follow, {what}: {got!r}, want {text!r}")

    check(err.wait_for("does not exist yet"), f"no word of the missing file: {err.lines}")
    with open(log, "a") as f:
        f.write("alpha appeared later\n")
    expect(["alpha appeared later"], "a file that appears later")
    with open(log, "a") as f:
        f.write("bravo appended\n")
    expect(["bravo appended"], "appended")
    # logrotate (create): mv, the writer still adds one line to the old file, a new file.
    os.rename(log, log + ".1")
    with open(log + ".1", "a") as f:
        f.write("charlie written to the rotated file\n")
    with open(log, "w") as f:
        f.write("delta in the new file\n")
    expect(["charlie written to the rotated file", "delta in the new file"], "rename + create")
    # logrotate copytruncate: copy, then truncate in place; the writer goes on.
    with open(log, "rb") as src, open(log + ".2", "wb") as dst:
        dst.write(src.read())
    os.truncate(log, 0)
    check(err.wait_for("truncated"), f"no word of the truncation: {err.lines}")
    with open(log, "a") as f:
        f.write("echo\n")
    expect(["echo"], "copytruncate")
    # Deleted, then recreated.
    os.unlink(log)
    check(err.wait_for("No such file or directory"), f"no word of the delete: {err.lines}")
    with open(log, "w") as f:
        f.write("foxtrot in the recreated file\n")
    expect(["foxtrot in the recreated file"], "deleted then recreated")
    proc.send_signal(signal.SIGINT)
    rc = proc.wait(timeout=10)
    check(rc == 0, f"--follow across rotations ends cleanly on SIGINT: rc {rc}")
    err.rest()
    text = "\n".join(err.lines)
    check("6 lines, 6 anomalies" in text, f"--follow summary: {text!r}")
    check(text.count("truncated") == 1, f"the truncation said once: {text!r}")
    rest = out.rest()
    verdicts = [x for x in out.lines + rest.splitlines() if x]
    check(len(verdicts) == 7 and json.loads(verdicts[-1])["reason"] == "summary",
          f"lines read twice or out of order: {verdicts}")
    proc.stdout.close()
    proc.stderr.close()


def test_blank_lines_are_not_anomalies(ckpt, fixture, model):
    normal = open(fixture).read().splitlines()
    # Blank and whitespace-only lines between lines of the trained cycle: no
    # verdict, and the cycle's order still holds across them.
    text = "\n".join([normal[0], "", "   ", normal[1], "\t", normal[2]]) + "\n\n"
    r = subprocess.run([ckpt, "logwatch", "--source", "-", "--model", model, "--format",
                        "syslog", "--json", "--no-exporter", "--threshold", "0"],
                       input=text, capture_output=True, text=True)
    check(r.returncode == 0, f"blank lines: rc {r.returncode}: {r.stderr}")
    check(alarms_of(r.stdout) == [], f"blank lines reported as anomalies: {r.stdout!r}")
    check("7 lines, 0 anomalies" in r.stderr, f"blank lines: summary {r.stderr!r}")


def test_model_errors(ckpt, fixture, tmp):
    bad = os.path.join(tmp, "bad.model")
    good = os.path.join(tmp, "good.model")
    subprocess.run([ckpt, "logwatch", "train", fixture, "-o", good, "--format", "syslog"],
                   check=True, capture_output=True)
    text = open(good).read()
    for name, content, needle in [("truncated", text[: len(text) // 2], "truncated"),
                                  ("edited", text.replace("nfs:", "nfz:", 1), "checksum"),
                                  ("version", text.replace('"version":2', '"version":9'),
                                   "version 9")]:
        with open(bad, "w") as f:
            f.write(content)
        r = subprocess.run([ckpt, "logwatch", "--source", fixture, "--model", bad],
                           capture_output=True, text=True)
        check(r.returncode == 2, f"{name} model: rc {r.returncode}")
        check(bad in r.stderr and needle in r.stderr, f"{name} model: stderr {r.stderr!r}")
    r = subprocess.run([ckpt, "logwatch", "--source", fixture, "--format", "xml"],
                       capture_output=True, text=True)
    check(r.returncode == 2 and "'xml'" in r.stderr, f"bad format: {r.returncode} {r.stderr!r}")
    r = subprocess.run([ckpt, "logwatch", "--source", "/nonexistent.log", "--model", good],
                       capture_output=True, text=True)
    check(r.returncode == 2 and "/nonexistent.log" in r.stderr, f"missing source: {r.stderr!r}")


def test_severity_from_pri(ckpt, fixture, model):
    # <PRI> & 7 is the level: a new info line alone scores 0.45 (< 0.5, not
    # reported), a new notice line 0.8, a new err line 1.0; --threshold 0
    # reports the info line too.
    lines = ["<6>Dec  1 01:47:21 node17 kernel: eth0: renamed from veth7f3a",
             "<5>Dec  1 01:47:22 node17 kernel: nvme nvme3: pci function 0000:c1:00.0",
             "<3>Dec  1 01:47:23 node17 smartd[811]: Device /dev/sdb, unable to read SMART data",
             # A known fault at info still alarms, at its own severity (crit: 1.0).
             "<6>Dec  1 01:47:24 node17 kernel: NVRM: Xid (PCI:0000:3b:00): 48, DBE (0x1)"]
    base = [ckpt, "logwatch", "--source", "-", "--model", model, "--format", "syslog", "--json",
            "--no-exporter"]
    r = subprocess.run(base, input="\n".join(lines) + "\n", capture_output=True, text=True)
    check(r.returncode == 0, f"severity run rc {r.returncode}: {r.stderr}")
    got = alarms_of(r.stdout)
    check([a["line"] for a in got] == [2, 3, 4], f"severity: reported lines {got}")
    check([a["score"] for a in got] == [0.8, 1.0, 1.0], f"severity: scores {got}")
    check([a["rank"] for a in got] == ["benign", "error", "known_fault"], f"ranks {got}")
    check(got and got[-1].get("kind") == "gpu_xid", f"the Xid's kind: {got}")
    r = subprocess.run(base + ["--threshold", "0"], input="\n".join(lines) + "\n",
                       capture_output=True, text=True)
    got = alarms_of(r.stdout)
    check([a["line"] for a in got] == [1, 2, 3, 4] and got[0]["score"] == 0.45,
          f"--threshold 0: {got}")


def healthy_node_lines(n, seed):
    """A GPU node's kernel log and journal of independent subsystems, raw."""
    import random
    rnd = random.Random(seed)
    out = []
    while len(out) < n:
        r = rnd.randrange(100)
        if r < 25:
            sid = rnd.randrange(100, 9000)
            out += [f"systemd-logind[812]: New session {sid} of user root.",
                    f"systemd[1]: Started Session {sid} of User root.",
                    f"systemd-logind[812]: Removed session {sid}."]
        elif r < 45:
            dev = "veth%07x" % rnd.randrange(1 << 28)
            port = rnd.randrange(1, 30)
            out += [f"cni0: port {port}({dev}) entered blocking state",
                    f"IPv6: ADDRCONF(NETDEV_CHANGE): {dev}: link becomes ready",
                    f"cni0: port {port}({dev}) entered forwarding state"]
        elif r < 60:
            out.append(f"nvidia-peermem nv_mem_get_pages: pid={rnd.randrange(60000)} "
                       f"addr=0x7f{rnd.randrange(1 << 40):010x} size={2097152 * rnd.randrange(1, 8)}")
        elif r < 75:
            pid = rnd.randrange(2000, 60000)
            out += [f"sshd[{pid}]: Accepted publickey for root from 10.0.{rnd.randrange(255)}."
                    f"{rnd.randrange(255)} port {rnd.randrange(30000, 60000)} ssh2",
                    f"sshd[{pid}]: pam_unix(sshd:session): session opened for user root(uid=0) "
                    "by (uid=0)"]
        elif r < 90:
            out.append(f"mlx5_core 0000:3b:00.{rnd.randrange(2)} ens1f{rnd.randrange(2)}np0: "
                       "Link up")
        else:
            out.append(f"perf: interrupt took too long ({2500 + rnd.randrange(500)} > 2500), "
                       f"lowering kernel.perf_event_max_sample_rate to {79000 + rnd.randrange(999)}")
    return out[:n]


# The seven faults of issue 37, as their drivers print them.
SEVEN_FAULTS = [
    ("filesystem_error", "EXT4-fs error (device nvme0n1p2): ext4_find_entry:1455: inode #2: "
                         "comm python3: reading directory lblock 0"),
    ("gpu_xid", "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the "
                "bus."),
    ("gpu_xid", "NVRM: Xid (PCI:0000:cb:00): 74, pid=4242, name=python3, NVLink: fatal error "
                "detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)"),
    ("machine_check", "mce: [Hardware Error]: Machine check events logged"),
    ("nic_link_down", "mlx5_core 0000:ca:00.0 ibp202s0: Link down"),
    ("kernel_nfs_not_responding", "nfs: server fs01 not responding, still trying"),
    ("pcie_aer_uncorrectable", "pcieport 0000:00:01.0: AER: Uncorrectable (Non-Fatal) error "
                               "message received from 0000:3b:00.0"),
]


def test_known_faults_are_never_held_back(ckpt, tmp):
    """Issue 37's log: a model of a healthy node; later a benign systemd unit
    starts 45 times and seven real faults follow it. Every fault is in the
    JSON stream with its kind, whatever came before it and whatever the
    budget had left."""
    healthy = os.path.join(tmp, "healthy.log")
    with open(healthy, "w") as f:
        f.write("\n".join(healthy_node_lines(5000, 1)) + "\n")
    model = os.path.join(tmp, "healthy.model")
    r = subprocess.run([ckpt, "logwatch", "train", healthy, "-o", model], capture_output=True,
                       text=True)
    check(r.returncode == 0, f"train: {r.stderr}")
    later = healthy_node_lines(3000, 2)
    unit = "systemd[1]: Started Nightly scrub of the scratch pool."
    for i in range(45):
        later.insert(20 + i * 60, unit)
    # Two error-level novelties first, so the budget (2 per 1000) is spent
    # before the first fault arrives.
    later.insert(1000, "smartd[811]: Device /dev/sdb, unable to read SMART data")
    later.insert(1010, "zfs: pool scratch0 vdev nvme7n1 failed to open")
    for i, (_, text) in enumerate(SEVEN_FAULTS):
        later.insert(1100 + i * 40, text)
    test = os.path.join(tmp, "later.log")
    with open(test, "w") as f:
        f.write("\n".join(later) + "\n")
    r = subprocess.run([ckpt, "logwatch", "--source", test, "--model", model, "--json",
                        "--no-exporter"], capture_output=True, text=True)
    check(r.returncode == 0, f"watch: rc {r.returncode} {r.stderr}")
    alarms = alarms_of(r.stdout)
    by_text = {a["text"]: a for a in alarms}
    for kind, text in SEVEN_FAULTS:
        a = by_text.get(text)
        check(a is not None, f"fault not alarmed: {text}")
        if a:
            check(a.get("kind") == kind and a["rank"] == "known_fault", f"{text}: {a}")
    check(unit not in by_text, f"the benign unit start was an alarm: {by_text.get(unit)}")
    summary = [json.loads(x) for x in r.stdout.splitlines()
               if json.loads(x).get("reason") == "summary"]
    check(len(summary) == 1, f"no final summary: {r.stdout[-400:]!r}")


def test_held_back_is_never_lost(ckpt, tmp):
    """Past the budget, what is held back is counted per template: in a
    digest line each 1000 lines and in the final summary, with count, first
    and last line; the digests add up to the summary."""
    healthy = os.path.join(tmp, "healthy2.log")
    with open(healthy, "w") as f:
        f.write("\n".join(healthy_node_lines(3000, 3)) + "\n")
    model = os.path.join(tmp, "healthy2.model")
    r = subprocess.run([ckpt, "logwatch", "train", healthy, "-o", model], capture_output=True,
                       text=True)
    check(r.returncode == 0, f"train: {r.stderr}")
    later = healthy_node_lines(2500, 4)
    # Ten new error templates within 400 lines, each twice: the budget shows
    # two and holds back the rest, lines and repeats alike.
    errors = [f"svc{k}[9{k}]: reading the {w} table failed" for k, w in
              enumerate(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
                         "iota", "kappa"])]
    for k, text in enumerate(errors):
        later.insert(300 + k * 40, text)
        later.insert(310 + k * 40, text)
    test = os.path.join(tmp, "later2.log")
    with open(test, "w") as f:
        f.write("\n".join(later) + "\n")
    r = subprocess.run([ckpt, "logwatch", "--source", test, "--model", model, "--json",
                        "--no-exporter"], capture_output=True, text=True)
    check(r.returncode == 0, f"watch: rc {r.returncode} {r.stderr}")
    out = [json.loads(x) for x in r.stdout.splitlines()]
    shown = {a["template"] for a in alarms_of(r.stdout)}
    digests = [o for o in out if o["reason"] == "held_back"]
    summary = [o for o in out if o["reason"] == "summary"]
    check(len(summary) == 1, "one final summary")
    if not summary:
        return
    s = summary[0]
    held = {h["template"]: h for h in s["held"]}
    check(s["held_back"] == sum(h["count"] for h in s["held"]) + s["held_back_untracked"],
          f"the summary's templates do not add up: {s}")
    check(s["held_back"] >= 14, f"only {s['held_back']} lines held back")
    check(len(shown) + len(held) >= len(errors), f"a template neither shown nor held: {shown}, {held}")
    for t, h in held.items():
        check(h["count"] >= 1 and h["first_line"] <= h["last_line"], f"held {h}")
        check(h["rank"] == "error", f"rank of {t}: {h['rank']}")
    per_template = {}
    for d in digests:
        check(d["line"] % 1000 == 0 or d["line"] == s["lines"], f"digest at line {d['line']}")
        for h in d["held"]:
            per_template[h["template"]] = per_template.get(h["template"], 0) + h["count"]
    check(per_template == {t: h["count"] for t, h in held.items()},
          f"digests {per_template} != summary {held}")
    check("held back:" in r.stderr, f"stderr does not list what was held back: {r.stderr!r}")


def test_usage_errors(ckpt, fixture, model):
    for args, rc, needle in [
            (["--model", model, "--history", "3"], 2, "--history"),
            (["--model", model, "--similarity", "0.7"], 2, "--similarity"),
            (["--exporter-socket", "/nonexistent/exporter.sock"], 1, "/nonexistent/exporter.sock"),
            (["--exporter-socket", "/x.sock", "--no-exporter"], 2, "--no-exporter"),
            (["--source", "journal", "--format", "syslog"], 2, "--format syslog"),
            (["--max-alarm-rate", "-1"], 2, "--max-alarm-rate"),
            (["--max-alarm-rate", "nan"], 2, "--max-alarm-rate"),
            (["--group-window", "x"], 2, "--group-window"),
            (["--sequence-quantile", "2"], 2, "--sequence-quantile"),
            (["--format", "hdfs4"], 2, "'hdfs4'")]:
        r = subprocess.run([ckpt, "logwatch"] + (args if "--source" in args else
                                                 ["--source", fixture] + args),
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == rc and needle in r.stderr,
              f"logwatch {args}: rc {r.returncode} (want {rc}), stderr {r.stderr!r}")
    # Without --model the tree flags are taken.
    r = subprocess.run([ckpt, "logwatch", "--source", fixture, "--history", "3", "--no-exporter"],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"--history without --model: rc {r.returncode} {r.stderr!r}")


def test_eval(ckpt, data):
    # The floors (docs/logwatch.md): on BGL_2k's chronological split the
    # detector's F1 is above 0.60 and above every baseline's (severity-only
    # included); on the healthy logs (Thunderbird_2k, HDFS_2k, second halves
    # after their first) at most 8 false alarms per 1,000 lines before the
    # budget (measured 7.0 and 0.0); grouping 0.970. --min-f1 applies to the
    # lower of split and folds.
    r = subprocess.run([ckpt, "eval-anomaly", "--data", data, "--json", "--min-f1", "0.60",
                        "--min-grouping", "0.95", "--above-baselines",
                        "--max-false-alarm-rate", "8"], capture_output=True, text=True)
    check(r.returncode == 0, f"eval-anomaly rc {r.returncode}: {r.stderr}")
    if r.returncode != 0 and not r.stdout:
        return
    j = json.loads(r.stdout)
    check(j["lines"] == 2000 and j["anomalies"] == 143, "BGL_2k counts")
    check(j["split"]["test_anomalies"] == 47, "test anomalies")
    check(j["kfold"]["chronological"] is True, "folds are chronological")
    # Folds 1..4 score lines 400..1999 only: the 143 anomalies less the first 400 lines' 94.
    for part, labelled in (("split", 47), ("kfold", 49)):
        for method in ("detector", "new_template", "count_outlier", "severity"):
            m = j[part]["methods"][method]
            check(m["tp"] + m["fn"] == labelled,
                  f"{part} {method}: tp+fn {m['tp'] + m['fn']} is not the labelled {labelled}")
    split = j["split"]["methods"]
    for method in ("new_template", "count_outlier", "severity"):
        check(split["detector"]["f1"] > split[method]["f1"],
              f"split: detector {split['detector']['f1']:.3f} not above {method}")
    check(split["detector"]["f1"] > 0.60, f"split F1 {split['detector']['f1']:.3f}")
    # The new-template baseline misses no test anomaly: each has a template
    # the training part never showed (checked against the ground truth).
    check(split["new_template"]["recall"] == 1.0, "new_template recall")
    # The severity baseline against the Level field: every labelled anomaly of
    # the second half is FATAL, and 82 of its normal lines are.
    sev = split["severity"]
    check((sev["tp"], sev["fp"], sev["fn"]) == (47, 82, 0), f"severity baseline {sev}")
    check(j["detector_uses_severity"] is True, "detector_uses_severity")
    # The detector's own false alarms on healthy logs, before the budget
    # (which caps them at its 2 per 1000): floors just above docs/logwatch.md's.
    for name, floor in (("Thunderbird_2k", 8.0), ("HDFS_2k", 1.0)):
        h = j["healthy"][name]
        check(h["test_lines"] >= 999, f"{name}: {h['test_lines']} lines scored")
        rate = h["detector_before_budget_per_1000_lines"]
        check(rate <= floor, f"{name}: {rate} false alarms per 1000 healthy lines before the budget")
        for method in ("new_template", "count_outlier", "severity"):
            check(method in h["methods"], f"{name}: baseline {method} printed")
    # Severity helps the detector: without it the split scores lower.
    r2 = subprocess.run([ckpt, "eval-anomaly", "--data", data, "--json", "--ignore-severity"],
                        capture_output=True, text=True)
    check(r2.returncode == 0, f"--ignore-severity rc {r2.returncode}: {r2.stderr}")
    if r2.returncode == 0:
        j2 = json.loads(r2.stdout)
        check(j2["split"]["methods"]["detector"]["f1"] < split["detector"]["f1"],
              "split: severity does not help the detector")
        check(j2["detector_uses_severity"] is False, "--ignore-severity in the JSON")
    # A floor that is not met fails the run, naming what.
    r = subprocess.run([ckpt, "eval-anomaly", "--data", data, "--min-f1", "0.99"],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "below" in r.stderr, f"--min-f1 0.99 rc {r.returncode}")
    # --max-false-alarm-rate is the detector's floor (before the budget):
    # Thunderbird's 7 per 1000 fail a floor of 2, budget or not.
    for budget in ("0", "2"):
        r = subprocess.run([ckpt, "eval-anomaly", "--data", data, "--max-alarm-rate", budget,
                            "--max-false-alarm-rate", "2"], capture_output=True, text=True)
        check(r.returncode == 1 and "Thunderbird_2k" in r.stderr and "before the budget" in r.stderr,
              f"--max-alarm-rate {budget}: rc {r.returncode} {r.stderr!r}")
    # The budget says so on stderr when it raises the threshold.
    lines = open(os.path.join(data, "Thunderbird", "Thunderbird_2k.log"), encoding="utf-8",
                 errors="replace").read().splitlines()
    with tempfile.TemporaryDirectory() as tmp:
        train = os.path.join(tmp, "first.log")
        test = os.path.join(tmp, "second.log")
        with open(train, "w", encoding="utf-8") as f:
            f.write("\n".join(lines[:1000]) + "\n")
        with open(test, "w", encoding="utf-8") as f:
            f.write("\n".join(lines[1000:]) + "\n")
        model = os.path.join(tmp, "tb.model")
        r = subprocess.run([ckpt, "logwatch", "train", train, "-o", model, "--format",
                            "thunderbird"], capture_output=True, text=True)
        check(r.returncode == 0, f"train on Thunderbird: {r.stderr}")
        r = subprocess.run([ckpt, "logwatch", "--source", test, "--model", model, "--format",
                            "thunderbird", "--no-exporter", "--json"],
                           capture_output=True, text=True)
        check(r.returncode == 0, f"watch Thunderbird: rc {r.returncode} {r.stderr}")
        raised = alarms_of(r.stdout)
        check(len(raised) <= 2, f"{len(raised)} alarms on 999 healthy lines")
        check("threshold raised" in r.stderr, f"the budget did not say so: {r.stderr!r}")
        check(f"{len(lines) - 1000} lines" in r.stderr and "held back by the budget" in r.stderr,
              f"summary: {r.stderr!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckptscope", required=True)
    ap.add_argument("--source-dir", required=True)
    args = ap.parse_args()
    fixture = os.path.join(args.source_dir, "tests/data/logwatch/node_normal.txt")
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "node.model")
        r = subprocess.run([args.ckptscope, "logwatch", "train", fixture, "-o", model,
                            "--format", "syslog"], capture_output=True, text=True)
        check(r.returncode == 0 and "learned 120 lines" in r.stdout, f"train: {r.stdout}{r.stderr}")
        test_stream_from_pipe(args.ckptscope, fixture, model)
        test_human_output_and_out_of_order(args.ckptscope, fixture, model)
        test_model_errors(args.ckptscope, fixture, tmp)
        test_severity_from_pri(args.ckptscope, fixture, model)
        test_usage_errors(args.ckptscope, fixture, model)
        test_follow_a_growing_file(args.ckptscope, tmp)
        test_follow_like_tail_F(args.ckptscope, tmp)
        test_blank_lines_are_not_anomalies(args.ckptscope, fixture, model)
        test_known_faults_are_never_held_back(args.ckptscope, tmp)
        test_held_back_is_never_lost(args.ckptscope, tmp)
    # The Loghub samples are part of the repository: missing, they fail the test.
    data = os.path.join(args.source_dir, "tests", "data", "third_party", "loghub")
    samples = [os.path.join(data, *p) for p in (("BGL", "BGL_2k.log"),
                                                 ("Thunderbird", "Thunderbird_2k.log"),
                                                 ("HDFS", "HDFS_2k.log"))]
    missing = [p for p in samples if not os.path.exists(p)]
    check(not missing, f"{missing} missing: the evaluation needs them")
    if not missing:
        test_eval(args.ckptscope, data)
    if FAILURES:
        print(f"{len(FAILURES)} checks failed", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
