"""A plain-HTTP origin whose 401s the tests script, to see how often Countersign answers and
what it stops answering (SPEC "Answering challenges" 5). Runs in a thread of the test process;
every request is recorded with whether it carried an `Authorization` field (never its value).

Routes (any method; a request body is read whole first):
  /flood          401 Basic with a new realm each time ("flood-1", "flood-2", ...)
  /flood-digest   401 Digest with a new realm and nonce each time, stale=true
  /unknown        401 Basic realm="unknown", whatever was sent
  /reject-upload  401 Basic realm="real", whatever was sent
  anything else   realm "real": 200 for the one user and password given, else 401
"""
import base64
import itertools
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Seen:
    path: str
    authorized: bool     # whether an Authorization field arrived
    status: int


class RealmOrigin:
    def __init__(self, user: str, password: str):
        self.expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.seen: list = []
        self._lock = threading.Lock()
        self._serial = itertools.count(1)
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                status, challenge = origin._decide(self.path, self.headers.get("Authorization"))
                with origin._lock:
                    origin.seen.append(Seen(self.path, self.headers.get("Authorization") is not None, status))
                body = b"realm origin ok\n" if status == 200 else b"unauthorized\n"
                self.send_response(status)
                if challenge:
                    self.send_header("WWW-Authenticate", challenge)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_PUT = do_GET

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def _decide(self, path: str, authorization):
        serial = next(self._serial)
        if path.startswith("/flood-digest"):
            return 401, f'Digest realm="flood-{serial}", nonce="n{serial}", qop="auth", stale=true'
        if path.startswith("/flood"):
            return 401, f'Basic realm="flood-{serial}"'
        if path.startswith("/unknown"):
            return 401, 'Basic realm="unknown"'
        if path.startswith("/reject-upload"):
            return 401, 'Basic realm="real"'
        if authorization == self.expected:
            return 200, None
        return 401, 'Basic realm="real"'

    @property
    def authority(self) -> str:
        return f"127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return f"http://{self.authority}{path}"

    def mark(self) -> int:
        with self._lock:
            return len(self.seen)

    def since(self, mark: int) -> list:
        with self._lock:
            return list(self.seen[mark:])

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
