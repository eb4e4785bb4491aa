#!/usr/bin/env python3
"""Render one HTML file in headless Chromium and prove it is clean.

    check_html.py --html FILE [--screenshot OUT.png] [--expect SELECTOR ...]
                  [--chromium PATH] [--timeout S]

Fails (exit 1, one "FAIL:" line per problem) when the page
  * logs a console message of level error or warning (console.error,
    console.warn, console.assert, an uncaught exception, or a message from the
    browser itself such as "Failed to load resource");
  * requests anything other than the file itself or a data:, blob: or about:
    URL (images, scripts, style sheets, fonts, fetch/XHR, iframes, workers...);
  * lacks an element for one of the --expect CSS selectors
    (document.querySelectorAll in the rendered page, after its scripts ran);
  * cannot be screenshotted to a valid PNG when --screenshot is given.
Exit 2 when Chromium is missing or does not start, naming the binary.

How: Chromium runs headless with a closed network (no DNS, a dead proxy, no
background services) and is driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: JSON messages ending in NUL on fds 3 and 4; Python's
standard library is enough, no port, no WebSocket). Requests are seen twice:
by the page's Network domain (every request the renderer makes, workers and
frames included through auto-attach; WebSockets too) and by Chromium's own
network log (--log-net-log: every URL request and socket group the network
service handled for the page's partition, preconnects included), so a request
one of them misses still fails the check. See README.md.
"""

import argparse
import base64
import fcntl
import json
import os
import pathlib
import queue
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import zlib

VIEWPORT_WIDTH = 1400
VIEWPORT_HEIGHT = 2000
MAX_SCREENSHOT_SIDE = 16000  # full page, but bounded (Chromium's own limit is 16384)
SETTLE_S = 1.0  # quiet time after the load event: late timers, fetches and errors
QUIET_MAX_S = 5.0  # stop waiting for a request that never ends after this long with no event
SETTLE_MAX_S = 10.0  # and for a page that never falls quiet (a timer that logs) after this long
ALLOWED_SCHEMES = ("data:", "blob:", "about:")
NET_ERRORS = {None: "no recorded end", 0: "success (it got out!)", -2: "net::ERR_FAILED", -3: "net::ERR_ABORTED",
              -105: "net::ERR_NAME_NOT_RESOLVED", -130: "net::ERR_PROXY_CONNECTION_FAILED"}


class Unavailable(Exception):
    """Chromium is missing, does not start, or dies: exit 2."""


def chromium_flags(user_data_dir, net_log):
    """Everything on Chromium's command line except the binary; README.md explains each."""
    return [
        "--headless",  # no display needed (new headless mode: the real browser, no window)
        "--no-sandbox",  # CI runs as root, where Chromium refuses to start sandboxed
        "--remote-debugging-pipe",  # DevTools protocol over fds 3/4, no TCP port
        f"--user-data-dir={user_data_dir}",  # throwaway profile, removed afterwards
        f"--log-net-log={net_log}",  # second, independent record of network activity
        "--net-log-capture-mode=Default",
        # A closed network: no name resolves (except localhost), and any request
        # that still goes out goes to a proxy that is not there (port 9, discard).
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
        "--proxy-server=http://127.0.0.1:9",
        "--proxy-bypass-list=<-loopback>",
        # As little of Chromium's own traffic as flags allow. What remains (network
        # time, an update check, an account check) is refused by the dead proxy and
        # told apart from the page's in the network log (read_net_log).
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--disable-domain-reliability",
        "--disable-client-side-phishing-detection",
        "--disable-breakpad",
        "--disable-crash-reporter",
        "--metrics-recording-only",
        "--no-pings",
        "--no-first-run",
        "--no-default-browser-check",
        "--no-service-autorun",
        "--password-store=basic",
        "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,"
        "AutofillServerCommunication,CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions",
        # Containers: a small /dev/shm must not crash the renderer; no GPU.
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--mute-audio",
        "--hide-scrollbars",
        f"--window-size={VIEWPORT_WIDTH},{VIEWPORT_HEIGHT}",
        "about:blank",
    ]


def resolve_chromium(requested):
    """The binary to run. Debian's /usr/bin/chromium is a shell wrapper that adds
    flags of its own from /etc/chromium.d (remote extensions, GPU rasterization);
    run the real binary behind it when it is there, so the flags are only ours."""
    path = requested or os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if os.sep not in path:
        found = shutil.which(path)
        if not found:
            raise Unavailable(f"chromium not found: {path!r} is not on PATH "
                              "(Debian: apt-get install --no-install-recommends chromium)")
        path = found
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise Unavailable(f"chromium not found: {path} is not an executable file "
                          "(Debian: apt-get install --no-install-recommends chromium)")
    real = "/usr/lib/chromium/chromium"
    wrapper = False
    if os.path.realpath(path) == "/usr/bin/chromium":
        try:
            with open(path, "rb") as f:
                wrapper = f.read(2) == b"#!"
        except OSError:
            pass
    if wrapper and os.access(real, os.X_OK):
        return real, f"{path} -> {real}"
    return path, path


class Browser:
    """Chromium with the DevTools protocol on a pipe: it reads commands from its
    fd 3 and writes replies and events to its fd 4, each a JSON text ending in NUL."""

    def __init__(self, binary, label, flags, log_path, home, startup_timeout):
        self.label = label
        # No display, ever; and a throwaway home, so that what Chromium keeps
        # outside --user-data-dir (crash-report settings, dconf, NSS) is thrown
        # away too, never the user's (root's) own.
        env = {k: v for k, v in os.environ.items()
               if k not in ("DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS")}
        env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
                   XDG_CACHE_HOME=os.path.join(home, ".cache"), XDG_DATA_HOME=os.path.join(home, ".local/share"),
                   XDG_RUNTIME_DIR=home)
        os.makedirs(home, mode=0o700, exist_ok=True)
        to_child_r, self._to_child = os.pipe()
        from_child_r, from_child_w = os.pipe()
        # Move the child's ends above 10 first, so dup2 onto 3 and 4 cannot
        # clobber (or no-op onto) one another.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_child_r, from_child_w)]
        os.close(to_child_r)
        os.close(from_child_w)
        child_in, child_out = high

        def wire_fds():  # in the child, before exec (no other thread exists yet)
            os.dup2(child_in, 3)  # dup2 clears close-on-exec on the copies
            os.dup2(child_out, 4)
            # Nothing else we inherited (e.g. ctest's pipes) goes to Chromium.
            for name in os.listdir("/proc/self/fd"):
                fd = int(name)
                if fd > 4:
                    try:
                        os.set_inheritable(fd, False)
                    except OSError:
                        pass

        self._log = open(log_path, "wb")
        try:
            self.proc = subprocess.Popen([binary] + flags, stdin=subprocess.DEVNULL, stdout=self._log,
                                         stderr=subprocess.STDOUT, preexec_fn=wire_fds, close_fds=False,
                                         start_new_session=True, env=env)
        except OSError as e:
            raise Unavailable(f"chromium ({label}) failed to start: {e}") from e
        finally:
            os.close(child_in)
            os.close(child_out)
        self._from_child = from_child_r
        self._inbox = queue.Queue()
        self._next_id = 0
        self._pending_events = []
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        try:
            self.version = self.call("Browser.getVersion", timeout=startup_timeout)
        except (Unavailable, ProtocolError) as e:
            self.close(graceful=False)
            raise Unavailable(f"chromium ({label}) did not start: {e}") from e

    def _read_loop(self):
        parts = []  # of the message being read (a screenshot's is megabytes)
        while True:
            try:
                data = os.read(self._from_child, 1 << 20)
            except OSError:
                data = b""
            if not data:
                self._inbox.put(None)
                return
            while (end := data.find(b"\0")) >= 0:
                parts.append(data[:end])
                data = data[end + 1:]
                try:
                    self._inbox.put(json.loads(b"".join(parts)))
                except ValueError:
                    pass
                parts = []
            if data:
                parts.append(data)

    def send(self, method, params=None, session=None):
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._to_child, data):]
        except OSError as e:
            raise Unavailable(f"pipe to chromium closed ({e}); exit status {self.proc.poll()}") from e
        return self._next_id

    def next_message(self, timeout):
        """The next message, or None after timeout. Raises Unavailable if Chromium is gone."""
        if self._pending_events:
            return self._pending_events.pop(0)
        try:
            msg = self._inbox.get(timeout=max(timeout, 0))
        except queue.Empty:
            return None
        if msg is None:
            self._inbox.put(None)  # stay closed for the next caller
            raise Unavailable(f"chromium closed the DevTools pipe (exit status {self.proc.poll()})")
        return msg

    def call(self, method, params=None, session=None, timeout=30.0):
        """Send a command, wait for its reply; events that arrive meanwhile are kept in order."""
        want = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        held = []
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Unavailable(f"no reply to {method} within {timeout:.0f} s")
                try:
                    msg = self._inbox.get(timeout=left)
                except queue.Empty:
                    continue
                if msg is None:
                    self._inbox.put(None)
                    raise Unavailable(f"chromium closed the DevTools pipe during {method} "
                                      f"(exit status {self.proc.poll()})")
                if msg.get("id") == want:
                    if "error" in msg:
                        raise ProtocolError(method, msg["error"])
                    return msg.get("result", {})
                held.append(msg)
        finally:
            self._pending_events.extend(held)

    def discard_pending(self):
        self._pending_events.clear()

    def close(self, graceful=True):
        try:
            if graceful and self.proc.poll() is None:
                self.send("Browser.close")
                self.proc.wait(timeout=10)
        except (Unavailable, subprocess.TimeoutExpired, OSError):
            pass
        # Chromium runs in a session of its own (start_new_session): whatever of
        # its process group is left (a hung browser, a stray renderer) goes too.
        try:
            os.killpg(self.proc.pid, 9)
        except OSError:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._reader.join(timeout=5)  # it ends at the pipe's EOF
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log.close()


class ProtocolError(Exception):
    def __init__(self, method, error):
        super().__init__(f"{method}: {error.get('message', error)} {error.get('data', '')}".strip())


def describe_remote(arg):
    """A console argument (Runtime.RemoteObject) as text."""
    if "value" in arg:
        v = arg["value"]
        return v if isinstance(v, str) else json.dumps(v)
    return arg.get("description") or arg.get("unserializableValue") or arg.get("type", "?")


def oneline(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class PageWatch:
    """What the page did, from DevTools events: requests (page, frames, workers),
    console messages, uncaught exceptions and the browser's own log entries."""

    def __init__(self, page_url):
        self.page_url = page_url
        self.requests = []  # {"id", "url", "type", "failed"}, every redirect hop its own entry
        self._by_id = {}
        self.console = []  # (level, text, where)
        self.problems = []
        self.loaded = False
        self.inflight = set()  # request ids of network (not data:/blob:/file) requests
        self.last_activity = time.monotonic()
        self.targets = []  # (type, url) of attached workers/frames

    def allowed(self, url):
        if url.startswith(ALLOWED_SCHEMES):
            return True
        return url.split("#", 1)[0] == self.page_url

    def _request(self, rid, url, rtype):
        entry = {"id": rid, "url": url, "type": rtype, "failed": None}
        self.requests.append(entry)
        self._by_id[rid] = entry
        if not self.allowed(url):
            self.inflight.add(rid)

    def on_event(self, browser, msg):
        method = msg.get("method", "")
        p = msg.get("params", {})
        self.last_activity = time.monotonic()
        if method == "Network.requestWillBeSent":
            self._request(p["requestId"], p["request"]["url"], p.get("type", "Other"))
        elif method == "Network.webSocketCreated":
            # WebSockets never reach requestWillBeSent.
            self._request(p["requestId"], p["url"], "WebSocket")
        elif method == "Network.webTransportCreated":
            self._request(p["transportId"], p["url"], "WebTransport")
        elif method in ("Network.loadingFinished", "Network.loadingFailed", "Network.webSocketClosed",
                        "Network.webSocketHandshakeResponseReceived", "Network.webTransportClosed"):
            rid = p.get("requestId") or p.get("transportId")
            self.inflight.discard(rid)
            if method == "Network.loadingFailed" and rid in self._by_id:
                self._by_id[rid]["failed"] = p.get("blockedReason") or p.get("errorText")
        elif method == "Runtime.consoleAPICalled":
            level = p.get("type", "log")
            text = " ".join(describe_remote(a) for a in p.get("args", []))
            frames = (p.get("stackTrace") or {}).get("callFrames") or []
            where = f"{frames[0].get('url') or '(inline)'}:{frames[0]['lineNumber'] + 1}" if frames else ""
            self.console.append((f"console.{level}", text, where))
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            text = (d.get("exception") or {}).get("description") or d.get("text", "exception")
            where = f"{d.get('url') or '(inline)'}:{d.get('lineNumber', -1) + 1}"
            self.console.append(("uncaught exception", text.splitlines()[0] if text else text, where))
        elif method == "Log.entryAdded":
            e = p.get("entry", {})
            where = e.get("url", "")
            if e.get("lineNumber") is not None:
                where += f":{e['lineNumber'] + 1}"
            self.console.append((f"browser {e.get('source', '?')}.{e.get('level', '?')}",
                                 e.get("text", ""), where))
        elif method == "Page.loadEventFired":
            self.loaded = True
        elif method == "Target.attachedToTarget":
            # A worker or an out-of-process frame: watch it like the page, then let it run.
            child = p["sessionId"]
            info = p.get("targetInfo", {})
            self.targets.append((info.get("type", "?"), info.get("url", "")))
            for m in ("Network.enable", "Runtime.enable", "Log.enable"):
                browser.send(m, {}, child)
            browser.send("Target.setAutoAttach",
                         {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}, child)
            browser.send("Runtime.runIfWaitingForDebugger", {}, child)
        elif method in ("Inspector.targetCrashed", "Target.targetCrashed"):
            self.problems.append("the renderer crashed")

    def bad_console(self):
        return [(lvl, t, w) for lvl, t, w in self.console
                if lvl.endswith((".error", ".warning", ".assert")) or lvl == "uncaught exception"]


def read_net_log(path):
    """What Chromium's network service did for the page, from its network log.

    Returns (page_urls, page_sockets, chromium_own, error):
      page_urls     URLs of URL requests the page made: their network isolation
                    key names the page's site (file://) or their initiator is the
                    page's opaque file origin ("null");
      page_sockets  destinations (scheme://host:port) of socket groups in the
                    page's partition (file://): this includes <link rel=preconnect>,
                    which makes no request the page's Network domain reports;
      chromium_own  (URL, net error) of requests Chromium made for itself (initiator
                    "not an origin", another partition: network time, component
                    updater, account checks); not the page's, listed for the log only.
    The file is JSON when Chromium exits cleanly; after a kill it lacks its
    closing brackets, so then it is read line by line (one event a line)."""
    try:
        text = pathlib.Path(path).read_text(errors="replace")
    except OSError as e:
        return [], [], [], f"cannot read Chromium's network log {path}: {e}"
    constants, events = None, []
    try:
        doc = json.loads(text)
        constants, events = doc.get("constants", {}), doc.get("events", [])
    except ValueError:
        for line in text.splitlines():
            line = line.strip().rstrip(",")
            if line.startswith('{"constants":'):
                try:
                    constants = json.loads(line + "}")["constants"]
                except (ValueError, KeyError):
                    pass
            elif line.startswith("{") and '"type"' in line:
                try:
                    events.append(json.loads(line))
                except ValueError:
                    pass
    if not constants or "logEventTypes" not in constants:
        return [], [], [], f"Chromium's network log {path} has no constants (it was not written)"
    names = {v: k for k, v in constants["logEventTypes"].items()}
    requests = {}  # source id -> {"url", "initiator", "nik"}
    page_sockets = []
    for ev in events:
        name = names.get(ev.get("type"), "")
        params = ev.get("params") or {}
        src = (ev.get("source") or {}).get("id")
        if name == "REQUEST_ALIVE" and "net_error" in params and src in requests:
            requests[src]["net_error"] = params["net_error"]  # how it ended (0: it got through)
        if name in ("REQUEST_ALIVE", "URL_REQUEST_START_JOB") and params.get("url"):
            r = requests.setdefault(src, {"url": params["url"], "initiator": None, "nik": "", "net_error": None})
            if name == "URL_REQUEST_START_JOB":
                r["url"] = params["url"]  # the last hop of a redirect
                r["initiator"] = params.get("initiator")
                r["nik"] = params.get("network_isolation_key", "")
        group = params.get("group_id")
        if isinstance(group, str) and "<" in group:
            dest, _, partition = group.partition("<")
            m = re.search(r"[a-z][a-z0-9+.-]*://[^\s<]+", dest)  # past "pm/", "pmpsa/"... prefixes
            if "file://" in partition and m:
                dest = m.group(0)
                if dest not in page_sockets:
                    page_sockets.append(dest)
    page_urls, chromium_own = [], []
    for r in requests.values():
        init = r["initiator"] or ""
        if "file://" in r["nik"] or init == "null" or init.startswith("file:"):
            page_urls.append(r["url"])
        else:
            chromium_own.append((r["url"], r["net_error"]))
    return page_urls, page_sockets, chromium_own, None


def origin_of(url):
    """scheme://host:port, with ws/wss as the http/https they connect over."""
    u = urllib.parse.urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(u.scheme, u.scheme)
    port = u.port or {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{u.hostname}:{port}" if port else f"{scheme}://{u.hostname}"


def check_png(path):
    """A non-empty PNG: signature, IHDR with both sides > 0, and IDAT data that
    inflates to the size IHDR implies. Returns (width, height) or raises ValueError."""
    data = pathlib.Path(path).read_bytes()
    if len(data) < 67 or data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG ({len(data)} bytes)")
    pos, width, height, idat, depth, color = 8, 0, 0, b"", 0, 0
    while pos + 8 <= len(data):
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if ctype == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
        elif ctype == b"IDAT":
            idat += body
        elif ctype == b"IEND":
            break
        pos += 12 + length
    if width == 0 or height == 0:
        raise ValueError(f"{path}: PNG is {width}x{height}")
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(color, 4)
    expected = height * (1 + (width * channels * depth + 7) // 8)
    try:
        raw = zlib.decompress(idat)
    except zlib.error as e:
        raise ValueError(f"{path}: PNG image data is corrupt ({e})") from e
    if len(raw) != expected:
        raise ValueError(f"{path}: PNG image data is {len(raw)} bytes, expected {expected}")
    return width, height


def chromium_output_tail(path, lines=15):
    try:
        tail = pathlib.Path(path).read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return ""
    return "\n--- chromium output (last lines) ---\n" + "\n".join(tail) if tail else ""


def wait_for_page(browser, watch, nav_failed, deadline, timeout):
    """Until the load event, then until the page has been quiet (no request in
    flight, no event) for SETTLE_S, so late timers, fetches and errors count.
    Returns a problem, or None."""
    loaded_at = None
    while True:
        now = time.monotonic()
        if now >= deadline:
            if not watch.loaded and not nav_failed:
                return f"the page did not finish loading within {timeout:.0f} s"
            return None  # requests still in flight are reported as requests
        msg = browser.next_message(min(0.2, deadline - now))
        if msg is not None:
            if "method" in msg:
                watch.on_event(browser, msg)
            continue
        if not (watch.loaded or nav_failed):
            continue
        if loaded_at is None:
            loaded_at = time.monotonic()
        if time.monotonic() - loaded_at >= SETTLE_MAX_S:
            return None
        quiet = time.monotonic() - watch.last_activity
        if quiet >= SETTLE_S and not watch.inflight:
            return None
        if quiet >= QUIET_MAX_S:
            return None  # a request that never ends; it is listed (and fails) below


def take_screenshot(browser, session, out, timeout):
    """1400 wide, the full page tall (at least the 2000 px viewport, at most
    MAX_SCREENSHOT_SIDE). Returns a problem, or None."""
    metrics = browser.call("Page.getLayoutMetrics", {}, session)
    size = metrics.get("cssContentSize") or metrics.get("contentSize") or {}
    height = int(min(max(size.get("height", 0), VIEWPORT_HEIGHT), MAX_SCREENSHOT_SIDE))
    width = int(min(max(size.get("width", 0), VIEWPORT_WIDTH), MAX_SCREENSHOT_SIDE))
    shot = browser.call("Page.captureScreenshot",
                        {"format": "png", "captureBeyondViewport": True, "fromSurface": True,
                         "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}},
                        session, timeout=timeout)
    out = pathlib.Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(base64.b64decode(shot.get("data", "")))
    try:
        w, h = check_png(out)
    except ValueError as e:
        return f"screenshot: {e}"
    print(f"check_html: screenshot written: {out.resolve()} ({w}x{h} PNG, {out.stat().st_size} bytes)")
    return None


def check_selectors(browser, session, selectors):
    """document.querySelectorAll for each selector in the rendered page.
    Returns (found descriptions, problems)."""
    found, problems = [], []
    for sel in selectors:
        expr = ("(() => { try { return document.querySelectorAll(%s).length; }"
                " catch (e) { return 'invalid selector: ' + e.message; } })()" % json.dumps(sel))
        res = browser.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session)
        value = (res.get("result") or {}).get("value")
        if isinstance(value, int) and value > 0:
            found.append(f"{sel} ({value})")
        elif isinstance(value, int):
            problems.append(f"expected selector not found in the rendered page: {sel}")
        else:
            problems.append(f"expected selector {sel!r}: {value or res}")
    return found, problems


def run_check(args):
    html = pathlib.Path(args.html)
    if not html.is_file():
        print(f"check_html: FAIL: {html}: no such file")
        return 1
    page_url = html.resolve().as_uri()
    if args.screenshot:
        pathlib.Path(args.screenshot).unlink(missing_ok=True)  # never leave a previous run's
    binary, label = resolve_chromium(args.chromium)
    tmp = tempfile.mkdtemp(prefix="check_html.")
    net_log = os.path.join(tmp, "netlog.json")
    chrome_log = os.path.join(tmp, "chromium.log")
    problems = []
    started = time.monotonic()
    deadline = started + args.timeout
    browser = None
    try:
        try:
            browser = Browser(binary, label, chromium_flags(os.path.join(tmp, "profile"), net_log),
                              chrome_log, os.path.join(tmp, "home"), startup_timeout=args.timeout)
        except Unavailable as e:
            raise Unavailable(f"{e}{chromium_output_tail(chrome_log)}") from e
        print(f"check_html: chromium {browser.version.get('product', '?')} ({label}), headless, "
              f"started in {time.monotonic() - started:.1f} s")
        print(f"check_html: page {page_url}")
        watch = PageWatch(page_url)

        try:
            target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for m in ("Runtime.enable", "Log.enable", "Network.enable", "Page.enable"):
                browser.call(m, {}, session)
            browser.call("Network.setCacheDisabled", {"cacheDisabled": True}, session)
            browser.call("Target.setAutoAttach",
                         {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}, session)
            browser.call("Emulation.setDeviceMetricsOverride",
                         {"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT, "deviceScaleFactor": 1,
                          "mobile": False}, session)
            if args.color_scheme != "light":
                # The page's own prefers-color-scheme rules decide its colors.
                browser.call("Emulation.setEmulatedMedia",
                             {"features": [{"name": "prefers-color-scheme", "value": args.color_scheme}]},
                             session)
            # Whatever about:blank said so far is not the page's.
            browser.discard_pending()

            nav = browser.call("Page.navigate", {"url": page_url}, session,
                               timeout=max(deadline - time.monotonic(), 1))
            nav_failed = bool(nav.get("errorText"))
            if nav_failed:
                problems.append(f"navigation to {page_url} failed: {nav['errorText']}")
            stuck = wait_for_page(browser, watch, nav_failed, deadline, args.timeout)
            if stuck:
                problems.append(stuck)

            found_selectors, selector_problems = check_selectors(browser, session, args.expect or [])
            problems.extend(selector_problems)
            if args.screenshot:
                shot_problem = take_screenshot(browser, session, args.screenshot,
                                               timeout=max(deadline - time.monotonic(), 30))
                if shot_problem:
                    problems.append(shot_problem)
            # What arrived while we were asking still counts.
            while (msg := browser.next_message(0)) is not None:
                if "method" in msg:
                    watch.on_event(browser, msg)
        except Unavailable as e:
            problems.append(f"chromium went away while checking the page: {e}"
                            f"{chromium_output_tail(chrome_log)}")
            found_selectors = []
        problems.extend(watch.problems)
        browser.close()  # also completes the network log
        browser = None

        # Requests, as the page's DevTools Network domains reported them.
        bad_requests = [r for r in watch.requests if not watch.allowed(r["url"])]
        reported = {r["url"] for r in bad_requests}
        reported_origins = {origin_of(u) for u in reported}
        # ...and as Chromium's network service saw them: anything of the page's
        # partition that DevTools did not report (a preconnect, a request from a
        # context nobody attached to) fails too.
        page_urls, page_sockets, chromium_own, netlog_err = read_net_log(net_log)
        if netlog_err:
            problems.append(netlog_err)
        unreported = [u for u in page_urls if u not in reported and not watch.allowed(u)]
        unreported_sockets = [d for d in page_sockets if origin_of(d) not in reported_origins
                              and not any(origin_of(u) == origin_of(d) for u in unreported)]

        print(f"check_html: {len(watch.requests)} request(s) seen by the page: "
              + ", ".join(f"{r['type']} {oneline(r['url'], 100)}" for r in watch.requests))
        if watch.targets:
            print(f"check_html: {len(watch.targets)} frame/worker target(s) attached and watched: "
                  + ", ".join(f"{t} {oneline(u, 80)}" for t, u in watch.targets))
        print(f"check_html: network log: {len(page_urls)} network request(s) and {len(page_sockets)} "
              f"socket destination(s) from the page"
              + (": " + ", ".join(oneline(x, 100) for x in page_urls + page_sockets) if page_urls or page_sockets
                 else ""))
        if chromium_own:
            hosts = sorted({urllib.parse.urlsplit(u).hostname or u for u, _ in chromium_own})
            errors = sorted({NET_ERRORS.get(e, f"net error {e}") for _, e in chromium_own})
            print(f"check_html: network log: {len(chromium_own)} request(s) by Chromium itself, not the page's "
                  f"(no page initiator, not the page's partition): {', '.join(hosts)}; "
                  f"they ended with {', '.join(errors)}")
        print(f"check_html: {len(watch.console)} console message(s)"
              + "".join(f"\n    [{lvl}] {oneline(t)} {w}".rstrip() for lvl, t, w in watch.console))
        if args.expect:
            print(f"check_html: {len(found_selectors)}/{len(args.expect)} expected selector(s) found: "
                  + ", ".join(found_selectors))

        for r in bad_requests:
            why = f" ({r['failed']})" if r["failed"] else ""
            problems.append(f"network request to {r['url']} [{r['type']}]{why}: not self-contained "
                            "(only the file itself and data:, blob:, about: URLs are allowed)")
        for u in unreported:
            problems.append(f"network request to {u} in Chromium's network log (not reported by DevTools)")
        for d in unreported_sockets:
            problems.append(f"network connection to {d} in Chromium's network log (a preconnect?)")
        for level, text, where in watch.bad_console():
            problems.append(f"console {level}: {oneline(text)}" + (f" at {where}" if where else ""))
    finally:
        if browser is not None:
            browser.close()
        if os.environ.get("CHECK_HTML_KEEP_TMP"):
            print(f"check_html: kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    elapsed = time.monotonic() - started
    if problems:
        for p in problems:
            print(f"check_html: FAIL: {p}")
        print(f"check_html: {html}: NOT clean, {len(problems)} problem(s) ({elapsed:.1f} s)")
        return 1
    print(f"check_html: {html}: clean ({elapsed:.1f} s)")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html", required=True, help="the HTML file to check")
    ap.add_argument("--screenshot", metavar="OUT.png", help="write a full-page PNG screenshot here")
    ap.add_argument("--expect", metavar="SELECTOR", action="append",
                    help="a CSS selector that must match in the rendered DOM (repeatable)")
    ap.add_argument("--chromium", metavar="PATH",
                    help="the Chromium binary (default: $CHROMIUM, else chromium on PATH)")
    ap.add_argument("--timeout", type=float, default=60.0, metavar="S",
                    help="seconds for Chromium to start and for the page to load and settle (default 60)")
    ap.add_argument("--color-scheme", choices=("light", "dark"), default="light",
                    help="the reader's preferred color scheme the page is rendered for (default light)")
    args = ap.parse_args(argv)
    try:
        return run_check(args)
    except Unavailable as e:
        print(f"check_html: ERROR: {e}", file=sys.stderr)
        return 2
    except ProtocolError as e:
        print(f"check_html: ERROR: DevTools protocol: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
