"""Peers for the OAuth2 client-credentials interop tests, run as threads of the test process:

  TokenEndpoint   HTTPS (the test PKI's localhost leaf, or any other chain) answering the
                  client-credentials grant (RFC 6749 §4.4) with a Bearer token; it can fail
                  (500, invalid_client, garbage), issue short-lived tokens and rotate them
  BearerOrigin    plain HTTP demanding `Authorization: Bearer <token>` with a token the
                  endpoint issued, not revoked and not expired (RFC 6750 §3 challenges)

Both share a TokenLedger (what was issued, when it expires, what was revoked) and record every
request they receive, so a test can count fetches, see where the client secret was placed and
prove that no expired or revoked token reached the origin. Each listens on 127.0.0.1 on an
ephemeral port and is shut down by `stop()`."""
import base64
import itertools
import json
import secrets
import ssl
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote_plus

# The proxy can only time a token from the moment its answer arrived, a little after the
# endpoint stamped it; this much lateness on loopback is not counted as sending it expired.
EXPIRY_TOLERANCE_SECONDS = 0.1


@dataclass
class IssuedToken:
    value: str
    issued_at: float            # time.monotonic() when the endpoint answered
    lifetime: float = None      # expires_in; None = no expiry announced

    def expired(self, now: float) -> bool:
        return self.lifetime is not None and now > self.issued_at + self.lifetime + EXPIRY_TOLERANCE_SECONDS


class TokenLedger:
    """What the token endpoint issued and the origin revoked; shared by both peers."""

    def __init__(self):
        self._lock = threading.Lock()
        self._tokens = {}
        self._revoked = set()
        self._serial = itertools.count(1)

    def issue(self, lifetime: float = None) -> IssuedToken:
        with self._lock:
            # Distinctive, so a test can grep Countersign's output for any of them.
            value = f"oat-{next(self._serial)}-{secrets.token_hex(12)}"
            token = IssuedToken(value, time.monotonic(), lifetime)
            self._tokens[value] = token
            return token

    def newest_valid(self) -> IssuedToken:
        with self._lock:
            now = time.monotonic()
            valid = [token for value, token in self._tokens.items()
                     if value not in self._revoked and not token.expired(now)]
            return valid[-1] if valid else None

    def revoke(self, value: str) -> None:
        with self._lock:
            self._revoked.add(value)

    def verdict(self, value: str) -> str:
        """"ok", "unknown", "revoked" or "expired" for a token presented now."""
        with self._lock:
            token = self._tokens.get(value)
            if token is None:
                return "unknown"
            if value in self._revoked:
                return "revoked"
            return "expired" if token.expired(time.monotonic()) else "ok"

    def issued(self) -> list:
        with self._lock:
            return list(self._tokens)


class _TlsThreadingServer(ThreadingHTTPServer):
    """Does the TLS handshake in the request's own thread (not in the accept loop), and
    counts connections whose handshake failed: a refused endpoint was still reached."""
    daemon_threads = True

    def __init__(self, address, handler, context: ssl.SSLContext):
        self.tls_context = context
        self.failed_handshakes = 0
        self.connections = 0
        self._count_lock = threading.Lock()
        super().__init__(address, handler)

    def finish_request(self, request, client_address):
        with self._count_lock:
            self.connections += 1
        try:
            request = self.tls_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            with self._count_lock:
                self.failed_handshakes += 1
            return
        try:
            super().finish_request(request, client_address)
        finally:
            request.close()

    def handle_error(self, request, client_address):
        pass  # a client hanging up mid-answer is not the test's concern


def _serve(server) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return thread


# --------------------------------------------------------------------------------- token endpoint


@dataclass
class TokenRequest:
    """One request to the token endpoint, as received. The secret itself is not kept: only
    where it was found and whether it matched."""
    method: str
    path: str
    content_type: str
    grant_type: str
    scope: str
    placement: str              # "basic", "body", "both" or "none"
    client_id: str
    secret_matched: bool
    answered: int               # the status the endpoint sent back
    token: str = None           # the access_token it issued, if any


class TokenEndpoint:
    """The client-credentials grant over HTTPS. `behaviour` is "ok", "error-500",
    "invalid-client" (401 + RFC 6749 §5.2 JSON) or "garbage" (200 with a non-JSON body);
    `lifetime` is the expires_in sent (None: omitted); with `rotate` every fetch gets a new
    token, without it the newest valid one is handed out again. Wrong client credentials
    always get invalid_client."""

    PATH = "/oauth/token"

    def __init__(self, ledger: TokenLedger, chain: Path, key: Path, client_id: str, client_secret: str,
                 behaviour: str = "ok", lifetime: float = 300, rotate: bool = True):
        self.ledger = ledger
        self.client_id = client_id
        self.client_secret = client_secret
        self.behaviour = behaviour
        self.lifetime = lifetime
        self.rotate = rotate
        self._requests = []
        self._lock = threading.Lock()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(chain), str(key))
        self._server = _TlsThreadingServer(("127.0.0.1", 0), _token_handler(self), context)
        self.port = self._server.server_address[1]
        self._thread = _serve(self._server)

    @property
    def authority(self) -> str:
        return f"localhost:{self.port}"

    @property
    def url(self) -> str:
        return f"https://{self.authority}{self.PATH}"

    def requests(self) -> list:
        with self._lock:
            return list(self._requests)

    def fetches(self) -> int:
        return len(self.requests())

    def issued_tokens(self) -> list:
        return [request.token for request in self.requests() if request.token]

    @property
    def failed_handshakes(self) -> int:
        return self._server.failed_handshakes

    @property
    def connections(self) -> int:
        return self._server.connections

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    # Called from the handler thread.
    def answer(self, method: str, path: str, headers, body: bytes) -> tuple:
        """(status, content type, body) for one request, after recording it."""
        form = {name: values[-1] for name, values in parse_qs(body.decode("utf-8", "replace"),
                                                              keep_blank_values=True).items()}
        basic = _basic_credentials(headers.get("Authorization", ""))
        in_body = "client_secret" in form
        placement = {(True, True): "both", (True, False): "basic",
                     (False, True): "body"}.get((basic is not None, in_body), "none")
        client_id, secret = basic if basic else (form.get("client_id", ""), form.get("client_secret"))
        matched = client_id == self.client_id and secret == self.client_secret
        status, content_type, payload, token = self._decide(method, path, form, matched, placement)
        with self._lock:
            self._requests.append(TokenRequest(method, path, headers.get("Content-Type", ""),
                                               form.get("grant_type", ""), form.get("scope"), placement,
                                               client_id, matched, status, token))
        return status, content_type, payload

    def _decide(self, method, path, form, matched, placement) -> tuple:
        if method != "POST" or path != self.PATH:
            return 404, "text/plain", b"no such endpoint\n", None
        if self.behaviour == "error-500":
            return 500, "text/plain", b"the identity provider is down\n", None
        if self.behaviour == "garbage":
            return 200, "application/json", b"<html>this is not a token</html>", None
        if self.behaviour == "invalid-client" or not matched or placement == "both":
            error = {"error": "invalid_client", "error_description": "client authentication failed"}
            return 401, "application/json", json.dumps(error).encode(), None
        if form.get("grant_type") != "client_credentials":
            return 400, "application/json", json.dumps({"error": "unsupported_grant_type"}).encode(), None
        token = None if self.rotate else self.ledger.newest_valid()
        token = token or self.ledger.issue(self.lifetime)
        answer = {"access_token": token.value, "token_type": "Bearer"}
        if self.lifetime is not None:
            answer["expires_in"] = self.lifetime
        return 200, "application/json", json.dumps(answer).encode(), token.value


def _basic_credentials(value: str):
    """(client_id, secret) from `Basic base64(urlencode(id):urlencode(secret))`, RFC 6749 §2.3.1."""
    scheme, _, token68 = value.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(token68.strip(), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return ("", None)
    user, _, password = decoded.partition(":")
    return unquote_plus(user), unquote_plus(password)


def _token_handler(endpoint: TokenEndpoint):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            self._answer()

        def do_GET(self):
            self._answer()

        def _answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            status, content_type, payload = endpoint.answer(self.command, self.path, self.headers, body)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    return Handler


# ----------------------------------------------------------------------------------- the origin


@dataclass
class OriginRequest:
    path: str
    token: str                  # the Bearer token presented, None when no Authorization
    verdict: str                # "ok", "missing", "unknown", "revoked", "expired", "not-bearer"
    status: int
    at: float = field(default_factory=time.monotonic)


class BearerOrigin:
    """Plain HTTP/1.1 (keep-alive) API: 200 + BODY for a good token, otherwise 401 with
    `WWW-Authenticate: Bearer realm="api"` (plus error="invalid_token" when a token was
    presented, RFC 6750 §3.1). `reject_all` turns every token down, even a fresh one."""

    BODY = b"api: hello, holder of a valid token\n"

    def __init__(self, ledger: TokenLedger, realm: str = "api"):
        self.ledger = ledger
        self.realm = realm
        self.reject_all = False
        self._requests = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _origin_handler(self))
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = _serve(self._server)

    def url(self, path: str = "/v1/items") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    @property
    def authority(self) -> str:
        return f"127.0.0.1:{self.port}"

    def revoke(self, token: str) -> None:
        self.ledger.revoke(token)

    def requests(self) -> list:
        with self._lock:
            return list(self._requests)

    def mark(self) -> int:
        return len(self.requests())

    def since(self, mark: int) -> list:
        return self.requests()[mark:]

    def verdicts(self, mark: int = 0) -> list:
        return [request.verdict for request in self.since(mark)]

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    # Called from the handler thread.
    def judge(self, path: str, authorization: str) -> tuple:
        """(status, challenge or None) for one request, after recording it."""
        token = None
        if authorization is None:
            verdict = "missing"
        else:
            scheme, _, credentials = authorization.strip().partition(" ")
            if scheme.lower() != "bearer":
                verdict = "not-bearer"
            else:
                token = credentials.strip()
                verdict = "revoked" if self.reject_all else self.ledger.verdict(token)
        status = 200 if verdict == "ok" else 401
        challenge = None
        if status == 401:
            challenge = f'Bearer realm="{self.realm}"'
            if token is not None:
                challenge += ', error="invalid_token"'
        with self._lock:
            self._requests.append(OriginRequest(path, token, verdict, status))
        return status, challenge


def _origin_handler(origin: BearerOrigin):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            self._answer()

        def do_POST(self):
            self._answer()

        def _answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            status, challenge = origin.judge(self.path, self.headers.get("Authorization"))
            payload = origin.BODY if status == 200 else b"bearer token required\n"
            self.send_response(status)
            if challenge:
                self.send_header("WWW-Authenticate", challenge)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    return Handler
