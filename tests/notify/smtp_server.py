#!/usr/bin/python3
"""A real SMTP server on loopback for the notify integration tests.

Run with Debian's /usr/bin/python3 (python3-aiosmtpd 1.4.3). It listens on
127.0.0.1 on a free port, writes that port to --port-file once it accepts
connections, and saves every message it accepts in --out-dir as
msg-N.eml (the raw DATA) and msg-N.json: the envelope, whether the session
was TLS (and through STARTTLS), the AUTH credentials received, and the message as Python's email
package parses it (headers, text body, attachments decoded into
msg-N.att/NAME). The tests compare that independent reading with what they
sent.

--mode hang accepts TCP connections and never says a word; --stall-on-data
greets, takes the message and never answers it. Both are for timeouts: the
first ends in curl's connect phase, the second only by the total timeout.
"""

import argparse
import asyncio
import email
import email.policy
import email.utils
import json
import os
import signal
import socket
import ssl
import sys
import threading


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


def write_port(port_file, port):
    write_atomic(port_file, str(port).encode())


def hang(args):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    write_port(args.port_file, sock.getsockname()[1])
    held = []  # keep every connection open, silent
    while True:
        conn, _ = sock.accept()
        held.append(conn)


def serve(args):
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult, LoginPassword

    os.makedirs(args.out_dir, exist_ok=True)
    lock = threading.Lock()
    counter = [0]

    def describe_message(raw, base):
        msg = email.message_from_bytes(raw, policy=email.policy.default)
        out = {"headers": {}, "text": None, "attachments": [], "content_type": msg.get_content_type()}
        for name in ("From", "To", "Subject", "Date", "Message-ID", "MIME-Version"):
            if msg[name] is not None:
                out["headers"][name] = str(msg[name])
        try:
            out["date_parses"] = email.utils.parsedate_to_datetime(msg["Date"]) is not None
        except (TypeError, ValueError):
            out["date_parses"] = False
        att_dir = base + ".att"
        for part in msg.walk():
            if part.is_multipart():
                continue
            filename = part.get_filename()
            if filename is None and part.get_content_type() == "text/plain" and out["text"] is None:
                out["text"] = part.get_content().replace("\r\n", "\n")
                out["text_transfer_encoding"] = part.get("Content-Transfer-Encoding")
                continue
            os.makedirs(att_dir, exist_ok=True)
            data = part.get_payload(decode=True) or b""
            path = os.path.join(att_dir, str(len(out["attachments"])))
            with open(path, "wb") as f:
                f.write(data)
            out["attachments"].append({
                "filename": filename,
                "content_type": part.get_content_type(),
                "transfer_encoding": part.get("Content-Transfer-Encoding"),
                "file": path,
                "bytes": len(data),
            })
        return out

    class Handler:
        async def handle_QUIT(self, server, session, envelope):
            if args.stall_on_quit:
                await asyncio.sleep(3600)
            return "221 Bye"

        async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
            if address in args.reject_rcpt:
                return "550 5.1.1 <%s>: recipient address rejected: no such user" % address
            envelope.rcpt_tos.append(address)
            return "250 OK"

        async def handle_DATA(self, server, session, envelope):
            if args.stall_on_data:
                await asyncio.sleep(3600)  # took the message, never answers
            with lock:
                counter[0] += 1
                n = counter[0]
            base = os.path.join(args.out_dir, "msg-%d" % n)
            raw = envelope.original_content or envelope.content
            auth = session.auth_data
            ssl_object = server.transport.get_extra_info("ssl_object")
            record = {
                "mail_from": envelope.mail_from,
                "rcpt_tos": envelope.rcpt_tos,
                # session.ssl is only set by STARTTLS; implicit TLS shows on the transport.
                "starttls": session.ssl is not None,
                "tls": ssl_object is not None,
                "tls_version": ssl_object.version() if ssl_object is not None else None,
                "auth_login": auth.login.decode() if isinstance(auth, LoginPassword) else None,
                "auth_password": auth.password.decode() if isinstance(auth, LoginPassword) else None,
            }
            record.update(describe_message(raw, base))
            write_atomic(base + ".eml", raw)
            # The .json last: its presence means the message is complete.
            write_atomic(base + ".json", json.dumps(record, indent=1).encode())
            return "250 Message accepted for delivery"

    def authenticator(server, session, envelope, mechanism, auth_data):
        if not isinstance(auth_data, LoginPassword) or args.auth is None:
            return AuthResult(success=False, handled=False)
        user, password = args.auth.split(":", 1)
        ok = auth_data.login.decode() == user and auth_data.password.decode() == password
        return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)

    tls_context = None
    if args.cert:
        tls_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls_context.load_cert_chain(args.cert, args.key)

    kwargs = dict(
        hostname="127.0.0.1",
        port=0,
        server_hostname="ckptscope-test-relay",
        require_starttls=args.require_starttls,
        auth_require_tls=not args.auth_without_tls,
        ready_timeout=10,
    )
    if args.auth is not None:
        kwargs["authenticator"] = authenticator
        kwargs["auth_required"] = True
    if args.implicit_tls:
        kwargs["ssl_context"] = tls_context
    elif tls_context is not None:
        kwargs["tls_context"] = tls_context

    class PortZeroController(Controller):
        # Controller pokes its own port to start the protocol; with port 0
        # that is only known once the server socket exists.
        def _trigger_server(self):
            self.port = self.server.sockets[0].getsockname()[1]
            super()._trigger_server()

    controller = PortZeroController(Handler(), **kwargs)
    controller.start()
    write_port(args.port_file, controller.port)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    controller.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--port-file", required=True)
    p.add_argument("--out-dir", default=None)
    p.add_argument("--mode", choices=["serve", "hang"], default="serve")
    p.add_argument("--cert", help="PEM certificate: offer STARTTLS (or implicit TLS)")
    p.add_argument("--key", help="PEM key for --cert")
    p.add_argument("--implicit-tls", action="store_true", help="TLS from the first byte (smtps)")
    p.add_argument("--require-starttls", action="store_true")
    p.add_argument("--auth", help="USER:PASSWORD; AUTH PLAIN/LOGIN becomes required")
    p.add_argument("--auth-without-tls", action="store_true", help="allow AUTH in plain text")
    p.add_argument("--reject-rcpt", action="append", default=[], help="answer 550 to this RCPT")
    p.add_argument("--stall-on-data", action="store_true",
                   help="take the whole message, then never answer it")
    p.add_argument("--stall-on-quit", action="store_true",
                   help="accept the message, then never answer QUIT")
    args = p.parse_args()
    if args.mode == "hang":
        hang(args)
    else:
        if not args.out_dir:
            p.error("--out-dir is required to serve")
        serve(args)


if __name__ == "__main__":
    sys.exit(main())
