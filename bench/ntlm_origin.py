#!/usr/bin/env python3
"""An origin for the NTLM benchmark: plain HTTP/1.1 with keep-alive, where every connection must
complete NTLM (negotiate, challenge, authenticate; pyspnego's acceptor) before it is served and
stays authenticated afterwards, as IIS does. Users come from the file named by NTLM_USER_FILE
(`DOMAIN:user:password` lines, read by pyspnego).

Each request appends one tab-separated line to --log:

    CONNECTION_NUMBER  LEG  STATUS

LEG is `negotiate` (a handshake starts), `authenticate`, or `-` for a request without NTLM
token. Handshakes per connection = negotiate lines / distinct connection numbers.

usage: ntlm_origin.py --port PORT --log FILE
"""
import argparse
import base64
import itertools
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BODY = b"x" * 1024


class NtlmOriginHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.connection_number = next(self.server.connection_numbers)
        self.acceptor = None
        self.authenticated = False

    def log_message(self, *args):  # the tab-separated log replaces the stderr one
        pass

    def do_GET(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() == "ntlm" and token.strip():
            leg, status = self.handshake_leg(base64.b64decode(token.strip()))
        elif self.authenticated:
            leg, status = "-", self.serve()
        else:
            leg, status = "-", self.challenge(None)
        self.server.log(self.connection_number, leg, status)

    def handshake_leg(self, message):
        import spnego  # only the NTLM benchmark needs it
        message_type = message[8] if len(message) > 8 else 0
        if message_type == 1:
            self.authenticated = False
            self.acceptor = spnego.server(protocol="ntlm")
            return "negotiate", self.challenge(self.acceptor.step(message))
        if message_type != 3 or self.acceptor is None:
            return "authenticate", self.challenge(None)
        try:
            self.acceptor.step(message)
        except Exception:  # pyspnego has its own error types for a wrong answer
            self.acceptor = None
            return "authenticate", self.challenge(None)
        self.authenticated = True
        return "authenticate", self.serve()

    def challenge(self, token):
        self.send_response(401)
        self.send_header("WWW-Authenticate", "NTLM" if token is None else "NTLM " + base64.b64encode(token).decode())
        self.send_header("Content-Length", "0")
        self.end_headers()
        return 401

    def serve(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)
        return 200


class NtlmOrigin(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024

    def __init__(self, port, log_path):
        super().__init__(("127.0.0.1", port), NtlmOriginHandler)
        self.connection_numbers = itertools.count(1)
        self.log_file = open(log_path, "a", buffering=1)
        self.log_lock = threading.Lock()

    def log(self, connection, leg, status):
        with self.log_lock:
            self.log_file.write(f"{connection}\t{leg}\t{status}\n")


def main():
    parser = argparse.ArgumentParser(description="NTLM-protected origin for bench/run.sh")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", required=True)
    options = parser.parse_args()
    NtlmOrigin(options.port, options.log).serve_forever()


if __name__ == "__main__":
    main()
