"""A hostile Digest origin that makes the proxy learn as much as it can: plain HTTP on an
ephemeral loopback port, keep-alive. A request without `Authorization` (or answering a realm it
no longer uses) gets `401 Digest` with a small nonce in the current realm; any answered request
gets `200` with `Authentication-Info: nextnonce` of `nextnonce_bytes` fresh random characters.
Every `realm_every` answered requests it moves to a new realm. It never checks the answer: it
is here to hand out state, not to authenticate. Counts what it served; `stop()` ends it."""
import re
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class DigestFloodOrigin:
    def __init__(self, nextnonce_bytes: int = 8192, realm_every: int = 50):
        self.nextnonce_bytes = nextnonce_bytes
        self.realm_every = realm_every
        self.realm_number = 0
        self.answered = 0
        self.challenged = 0
        self._lock = threading.Lock()
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                status, headers = origin._decide(self.headers.get("Authorization"))
                body = b"ok\n" if status == 200 else b"challenge\n"
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass   # a connection the proxy closed is not the test's concern

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def authority(self) -> str:
        return f"127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return f"http://{self.authority}{path}"

    def _realm(self) -> str:
        return f"flood-{self.realm_number}"

    def _decide(self, authorization):
        with self._lock:
            answered_realm = re.search(r'realm="([^"]*)"', authorization or "")
            if not answered_realm or answered_realm.group(1) != self._realm():
                self.challenged += 1
                return 401, [("WWW-Authenticate", f'Digest realm="{self._realm()}", nonce="{secrets.token_hex(16)}", '
                                                  f'opaque="{secrets.token_hex(8)}", qop="auth", algorithm=MD5')]
            self.answered += 1
            if self.answered % self.realm_every == 0:
                self.realm_number += 1
            nextnonce = secrets.token_urlsafe(self.nextnonce_bytes)[:self.nextnonce_bytes]
            return 200, [("Authentication-Info", f'nextnonce="{nextnonce}", qop=auth')]

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
