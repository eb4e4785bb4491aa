#!/usr/bin/env python3
"""`ckptscope exporter` refuses bad input before it traces anything (no root; label exporter).

Each case runs the exporter with one bad input and checks its exit status
and that stderr names what was wrong:

  listen_nonsense       --listen nonsense             exit 2, names --listen and 'nonsense'
  listen_five_octets    --listen 1.2.3.4.5:80         exit 2, names --listen and the value
  listen_port_too_big   --listen 127.0.0.1:99999      exit 2, names --listen and the value
  listen_v6_unbracketed --listen ::1:80               exit 2, names --listen and says "brackets"
  port_in_use           127.0.0.1:P held by this test exit 1, names 127.0.0.1:P, says "in use"
  port_in_use_any       --listen :P, 0.0.0.0:P held   exit 1, names :P, says "in use"
  config_bad_value      {"checkpoint": {"quiet_gap_ms": -1}}  exit 2, names checkpoint.quiet_gap_ms
  config_unknown_key    {"nope": 1}                   exit 2, names nope
  config_type_error     {"checkpoint": {"quiet_gap_ms": "soon"}}  exit 2, names checkpoint.quiet_gap_ms
  procfs_missing        --path.procfs <a dir that does not exist>  exit 2, names --path.procfs
  config_missing        --config <a path that does not exist>  non-zero, names the path

None needs root: flags and config are checked, and the port bound, before
the probes load. Run as root, the exporter is started as uid/gid 65534
(setpriv) so that the test shows it; a case that got past validation then
fails with exit 1 ("cannot trace") instead of hanging. An exporter that
starts serving instead of refusing is killed after --timeout seconds and the
case fails.

Usage: bad_input_test.py --ckptscope BIN [--case NAME] (every case when none)
Exit: 0 pass, 1 fail.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exporter_harness as h  # noqa: E402

NOBODY = 65534


def listen_case(value):
    def case(ctx):
        return {"args": ["--listen", value], "rc": 2, "expect": ["--listen", value]}
    return case


def port_in_use(ctx):
    port = ctx.hold_port(socket.AF_INET, "127.0.0.1")
    addr = f"127.0.0.1:{port}"
    return {"args": ["--listen", addr], "rc": 1, "expect": [addr, "in use"]}


def port_in_use_any(ctx):
    port = ctx.hold_port(socket.AF_INET, "0.0.0.0")
    return {"args": ["--listen", f":{port}"], "rc": 1, "expect": [f":{port}", "in use"]}


def config_case(content, field):
    def case(ctx):
        path = ctx.write("config.json", content)
        return {"args": ["--listen", ctx.free_listen(), "--config", path], "rc": 2,
                "expect": [field], "show": f"config {content}"}
    return case


def config_missing(ctx):
    path = os.path.join(ctx.dir, "no-such-dir", "exporter-config.json")
    return {"args": ["--listen", ctx.free_listen(), "--config", path], "rc": "nonzero", "expect": [path]}


CASES = {
    "listen_nonsense": listen_case("nonsense"),
    "listen_five_octets": listen_case("1.2.3.4.5:80"),
    "listen_port_too_big": listen_case("127.0.0.1:99999"),
    "listen_v6_unbracketed": lambda ctx: {"args": ["--listen", "::1:80"], "rc": 2,
                                          "expect": ["--listen", "::1:80", "brackets"]},
    "port_in_use": port_in_use,
    "port_in_use_any": port_in_use_any,
    "config_bad_value": config_case(json.dumps({"checkpoint": {"quiet_gap_ms": -1}}),
                                    "checkpoint.quiet_gap_ms"),
    "config_unknown_key": config_case(json.dumps({"nope": 1}), "nope"),
    # A wrong type in the config is the config error (exit 2, the field named), as
    # is an overflowing number (1e400: parse_config's part of issue 22).
    "config_type_error": config_case(json.dumps({"checkpoint": {"quiet_gap_ms": "soon"}}),
                                     "quiet_gap_ms"),
    "procfs_missing": lambda ctx: {"args": ["--listen", ctx.free_listen(), "--path.procfs",
                                            os.path.join(ctx.dir, "no-such-proc")],
                                   "rc": 2, "expect": ["--path.procfs", "no-such-proc"]},
    "config_missing": config_missing,
}


class Context:
    def __init__(self, directory):
        self.dir = directory
        self.held = []

    def write(self, name, content):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(content)
        os.chmod(path, 0o644)
        return path

    def free_listen(self):
        return f"127.0.0.1:{h.free_port()}"

    def hold_port(self, family, host):
        s = socket.socket(family, socket.SOCK_STREAM)
        s.bind((host, 0))
        s.listen(1)
        self.held.append(s)
        return s.getsockname()[1]

    def close(self):
        for s in self.held:
            s.close()


def unprivileged_prefix(binary):
    """setpriv to uid/gid 65534 when root and the binary is usable by it; else nothing."""
    if os.geteuid() != 0:
        return [], f"uid {os.geteuid()}"
    setpriv = shutil.which("setpriv")
    if not setpriv:
        return [], "root (no setpriv: not dropping privileges)"
    probe = subprocess.run([setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                            binary, "--version"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return [], f"root (uid {NOBODY} cannot run {binary}: {probe.stderr.strip()[:200]})"
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"], f"uid {NOBODY} (setpriv)"


def run_case(name, args, prefix, who, tmpdir):
    d = os.path.join(tmpdir, name)
    os.mkdir(d)
    os.chmod(d, 0o755)
    ctx = Context(d)
    try:
        spec = CASES[name](ctx)
        cmd = prefix + [args.ckptscope, "exporter"] + spec["args"]
        if "--socket" in h.exporter_help(args.ckptscope):
            cmd += ["--socket", os.path.join(d, "exporter.sock")]
        h.log(f"[{name}] as {who}: $ {' '.join(cmd)}")
        # Its own session: on a timeout the whole group is killed (nothing is left holding the pipes).
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, errors="replace", start_new_session=True)
        try:
            stdout, out = p.communicate(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            stdout, out = p.communicate()
            return (f"[{name}] the exporter was still running after {args.timeout:.0f} s instead of refusing "
                    f"{spec.get('show', spec['args'])}; its stderr:\n{out}")
    finally:
        ctx.close()
    problems = []
    if spec["rc"] == "nonzero":
        if p.returncode == 0:
            problems.append("exit 0, want non-zero")
    elif p.returncode != spec["rc"]:
        problems.append(f"exit {p.returncode}, want {spec['rc']}")
    for text in spec["expect"]:
        if text not in out:
            problems.append(f"stderr does not contain {text!r}")
    if "serving http://" in out:
        problems.append("it said 'serving http://' before refusing")
    if problems:
        return (f"[{name}] {'; '.join(problems)}\n  stderr: {out.strip()!r}\n  stdout: {stdout.strip()!r}")
    h.log(f"[{name}] ok: exit {p.returncode}: {out.strip().splitlines()[0] if out.strip() else ''}")
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--ckptscope", default=os.path.join(here, "..", "..", "build", "bin", "ckptscope"))
    ap.add_argument("--case", action="append", choices=sorted(CASES), help="run this case (repeatable)")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--as-caller", action="store_true",
                    help="run the exporter as the calling user even when root (no setpriv)")
    args = ap.parse_args()

    def run():
        if not os.access(args.ckptscope, os.X_OK):
            h.fail(f"--ckptscope {args.ckptscope}: not an executable file")
        prefix, who = ([], f"uid {os.geteuid()}") if args.as_caller else unprivileged_prefix(args.ckptscope)
        tmp = h.TempDir("ckptscope-exptest-bad-", None, False)
        os.chmod(tmp.path, 0o755)
        failures = [f for f in (run_case(c, args, prefix, who, tmp.path) for c in (args.case or CASES)) if f]
        if failures:
            h.fail(f"{len(failures)} case(s) failed:\n" + "\n".join(failures))

    h.main_wrapper(run)


if __name__ == "__main__":
    main()
