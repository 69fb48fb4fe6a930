"""Fixtures of the CONNECT-interception tests: the test PKI (made once per session by
Tests/fixtures/pki/make-pki.sh), the raw-socket Python origin behind TLS with that PKI's
localhost leaf (optionally demanding a client certificate and HTTP Digest), and a Countersign
started with an interception CA that it creates on first start.

Imported into conftest.py with `from conftest_intercept import *`; every public name here is
prefixed so it cannot shadow another fixture file's."""
import hashlib
import secrets
import ssl
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.origin import OriginServer
from harness.pki import TestPKI, make_test_pki

__all__ = ["intercept_pki", "intercept_tls_origin", "intercept_guarded_origin", "intercepting_countersign",
           "InterceptTlsOrigin", "InterceptingCountersign", "DigestGuard", "intercepted_host_entry",
           "INTERCEPT_DIGEST_USER", "INTERCEPT_DIGEST_PASSWORD"]

INTERCEPT_DIGEST_USER = "svc"
INTERCEPT_DIGEST_PASSWORD = "digest-pass-7f3a"

# Relative to the configuration file, as a user would write them.
CA_CERTIFICATE = "ca/ca.pem"
CA_KEY = "ca/ca.key"


@dataclass(frozen=True)
class DigestGuard:
    """RFC 7616 Digest with MD5 and qop=auth, the way the most common servers ask for it."""
    user: str
    password: str
    realm: str = "intercept-digest"

    def challenge(self, nonce: str) -> str:
        return f'Digest realm="{self.realm}", qop="auth", algorithm=MD5, nonce="{nonce}"'

    def accepts(self, method: str, authorization: str, nonces: set) -> bool:
        if not authorization or not authorization.lower().startswith("digest "):
            return False
        fields = _digest_fields(authorization[len("digest "):])
        if fields.get("username") != self.user or fields.get("nonce") not in nonces:
            return False
        md5 = lambda text: hashlib.md5(text.encode()).hexdigest()
        first = md5(f"{self.user}:{self.realm}:{self.password}")
        second = md5(f"{method}:{fields.get('uri', '')}")
        expected = md5(f"{first}:{fields['nonce']}:{fields.get('nc', '')}:{fields.get('cnonce', '')}:"
                       f"{fields.get('qop', '')}:{second}")
        return secrets.compare_digest(expected, fields.get("response", ""))


def _digest_fields(text: str) -> dict:
    """key=value and key="quoted value" pairs of a Digest credentials field (no escapes needed here)."""
    fields, rest = {}, text.strip()
    while rest:
        key, _, rest = rest.partition("=")
        rest = rest.lstrip()
        if rest.startswith('"'):
            value, _, rest = rest[1:].partition('"')
        else:
            value, _, rest = rest.partition(",")
            value = value.strip()
        fields[key.strip().lower()] = value
        rest = rest.lstrip().lstrip(",").lstrip()
    return fields


class InterceptTlsOrigin(OriginServer):
    """The raw-socket Python origin (same routes: /echo, /upload, /ws, ...) serving HTTPS with the
    test PKI's localhost chain. With `require_client_certificate` the handshake demands a
    certificate chaining to the PKI root; with `digest` every request must carry valid Digest
    credentials or gets a 401 challenge. `client_subjects` lists the certificate subject each
    connection presented, `sessions_reused` whether each resumed a TLS session; `challenges`
    counts the 401s sent. /then-drop answers as if the connection stayed, then closes it with no
    close_notify, as servers often end idle connections."""

    def __init__(self, pki: TestPKI, host: str = "127.0.0.1", require_client_certificate: bool = False,
                 digest: DigestGuard = None):
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(pki.path("leaf-chain.pem"), pki.path("leaf.key"))
        if require_client_certificate:
            self.context.verify_mode = ssl.CERT_REQUIRED
            self.context.load_verify_locations(pki.path("root.pem"))
        self.digest = digest
        self.nonces = set()
        self.client_subjects = []
        self.sessions_reused = []
        self.challenges = 0
        super().__init__(host)

    def https_url(self, path: str, host: str = "localhost") -> str:
        return f"https://{host}:{self.port}{path}"

    def _serve(self, sock, connection_id: int) -> None:
        sock.settimeout(10)
        try:
            tls = self.context.wrap_socket(sock, server_side=True)
        except (ssl.SSLError, OSError):
            sock.close()
            return
        with self.lock:
            self.open_sockets.discard(sock)
            self.open_sockets.add(tls)
            peer = tls.getpeercert()
            self.client_subjects.append(_subject_text(peer) if peer else "")
            self.sessions_reused.append(tls.session_reused)
        super()._serve(tls, connection_id)

    def _respond(self, sock, reader, request) -> bool:
        if self.digest and not self.digest.accepts(request.method, request.header("Authorization"), self.nonces):
            nonce = secrets.token_hex(16)
            with self.lock:
                self.nonces.add(nonce)
                self.challenges += 1
            body = b"digest credentials required\n"
            sock.sendall((f"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: {self.digest.challenge(nonce)}\r\n"
                          f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
            return True
        if request.path == "/then-drop":
            super()._respond(sock, reader, request)
            return False   # the socket is closed without unwrap(): no close_notify
        return super()._respond(sock, reader, request)


def _subject_text(peer: dict) -> str:
    return ",".join(f"{key}={value}" for rdn in peer.get("subject", ()) for key, value in rdn)


def intercepted_host_entry(pki: TestPKI, **extra) -> dict:
    """A `hosts` entry trusting only the test PKI's root (interception is on by default)."""
    entry = {"trust": {"anchors": [str(pki.path("root.pem"))]}}
    entry.update(extra)
    return entry


@dataclass
class InterceptingCountersign:
    """A running Countersign plus where its interception CA lives."""
    process: object  # harness.proxies.CountersignProcess

    @property
    def url(self) -> str:
        return self.process.url

    @property
    def port(self) -> int:
        return self.process.port

    @property
    def ca_certificate(self) -> Path:
        return self.process.workdir / CA_CERTIFICATE

    @property
    def ca_key(self) -> Path:
        return self.process.workdir / CA_KEY

    def logs(self) -> list:
        return self.process.logs()

    def access_logs(self) -> list:
        return self.process.access_logs()


@pytest.fixture(scope="session")
def intercept_pki(session_dir) -> TestPKI:
    return make_test_pki(session_dir / "intercept-pki")


@pytest.fixture
def intercept_tls_origin(intercept_pki):
    server = InterceptTlsOrigin(intercept_pki)
    yield server
    server.stop()


@pytest.fixture
def intercept_guarded_origin(intercept_pki):
    """An HTTPS origin that demands a client certificate and HTTP Digest."""
    server = InterceptTlsOrigin(intercept_pki, require_client_certificate=True,
                                digest=DigestGuard(INTERCEPT_DIGEST_USER, INTERCEPT_DIGEST_PASSWORD))
    yield server
    server.stop()


@pytest.fixture
def intercepting_countersign(countersign):
    """Factory: intercepting_countersign(hosts, **overrides) starts Countersign with
    `interception` naming ca/ca.pem and ca/ca.key next to its config file (created on first
    start) and the given `hosts` table."""
    def start(hosts: dict, env: dict = None, **overrides) -> InterceptingCountersign:
        config = {"interception": {"ca_certificate": CA_CERTIFICATE, "ca_key": CA_KEY}, "hosts": hosts}
        config.update(overrides)
        return InterceptingCountersign(countersign(config, env=env))
    return start
