"""HTTPS upstreams for the trust tests: one nginx process serving each certificate of the test
PKI on its own port (127.0.0.1 and ::1), every server with its own access log so a test can
tell that a refused upstream received no request. Stopped by PID."""
import itertools
import socket
import ssl
import time
from dataclasses import dataclass
from pathlib import Path

from .nginx import _port_free_on_both_families, start_nginx
from .pki import TestPKI

# Tab-separated; the client subject is logged to see which identity was presented.
LOG_FORMAT = ("$request\\t$status\\t$ssl_protocol\\t$ssl_session_reused\\t$ssl_server_name"
              "\\t$ssl_client_s_dn\\t$connection")


@dataclass(frozen=True)
class TlsSite:
    """One HTTPS server: the chain it serves and how it behaves."""
    name: str
    chain: str                      # a PEM file of the test PKI: the leaf first
    key: str
    require_client_certificate: bool = False
    requests_per_connection: int = 1000
    protocols: str = "TLSv1.2 TLSv1.3"


# What each site is for, by name.
SITES = (
    TlsSite("valid", "leaf-chain.pem", "leaf.key"),
    TlsSite("expired", "expired-chain.pem", "expired.key"),
    TlsSite("future", "future-chain.pem", "future.key"),
    TlsSite("wrong-name", "wrong-name-chain.pem", "wrong-name.key"),
    TlsSite("self-signed", "self-signed.pem", "self-signed.key"),
    TlsSite("evil", "evil-leaf-chain.pem", "evil-leaf.key"),
    TlsSite("ca-leaf", "ca-leaf.pem", "ca-leaf.key"),
    TlsSite("mtls", "leaf-chain.pem", "leaf.key", require_client_certificate=True),
    # nginx closes after every response, so each request needs a new upstream connection.
    TlsSite("one-shot", "leaf-chain.pem", "leaf.key", requests_per_connection=1),
    TlsSite("tls12-only", "leaf-chain.pem", "leaf.key", protocols="TLSv1.2"),
)


@dataclass
class TlsAccess:
    request_line: str
    status: int
    protocol: str
    session_reused: bool
    server_name: str
    client_subject: str
    connection: int


@dataclass
class RunningSite:
    site: TlsSite
    port: int
    access_log: Path

    @property
    def authority(self) -> str:
        return f"localhost:{self.port}"

    def url(self, path: str = "/") -> str:
        """The plain-http URL a client sends through the forward proxy for this upstream."""
        return f"http://localhost:{self.port}{path}"

    def access_entries(self) -> list:
        entries = []
        if not self.access_log.exists():
            return entries
        for line in self.access_log.read_text(errors="replace").splitlines():
            parts = line.split("\t")
            if len(parts) == 7:
                entries.append(TlsAccess(parts[0], int(parts[1]), parts[2], parts[3] == "r",
                                         parts[4], parts[5], int(parts[6])))
        return entries


    def logged(self, path: str, timeout: float = 3.0) -> TlsAccess:
        """The access entry of `GET path`, waiting for it: nginx writes its log line after the
        response has left, so a client can see the answer before the line exists."""
        deadline = time.monotonic() + timeout
        while True:
            found = [entry for entry in self.access_entries() if entry.request_line == f"GET {path} HTTP/1.1"]
            if found or time.monotonic() >= deadline:
                assert found, f"nginx logged no GET {path} within {timeout:.0f}s"
                return found[-1]
            time.sleep(0.02)

    def requests_since(self, count: int) -> list:
        """Entries after the first `count`, once a request of our own has been logged after
        them: nginx serves one connection at a time here, so anything the proxy sent earlier
        is in the log by then."""
        marker = f"/fence-{next(_fence_numbers)}"
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # a marker request, not a trust check
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                tls.sendall(f"GET {marker} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
                while tls.recv(65536):
                    pass
        self.logged(marker)
        return [entry for entry in self.access_entries()[count:] if not entry.request_line.startswith("GET /fence-")]


_fence_numbers = itertools.count()


class TlsUpstreams:
    """nginx with one HTTPS server per entry of SITES; `self[name]` is a RunningSite."""

    def __init__(self, workdir: Path, pki: TestPKI, sites=SITES):
        self.workdir = workdir
        self.pki = pki
        workdir.mkdir(parents=True, exist_ok=True)
        self.sites = {site.name: RunningSite(site, _port_free_on_both_families(),
                                             workdir / f"{site.name}.access.log") for site in sites}
        self.process = start_nginx(workdir, self._http(), [running.port for running in self.sites.values()],
                                   name="nginx-tls", worker_connections=512)

    def __getitem__(self, name: str) -> RunningSite:
        return self.sites[name]

    def stop(self) -> None:
        self.process.stop()

    def _server_block(self, running: RunningSite) -> str:
        site = running.site
        client_auth = ""
        answer = f'"served by {site.name}\\n"'
        if site.require_client_certificate:
            client_auth = (f"ssl_verify_client on;\n        ssl_verify_depth 3;\n"
                           f"        ssl_client_certificate {self.pki.path('root.pem')};")
            answer = '"$ssl_client_s_dn"'
        return f"""
    server {{
        listen 127.0.0.1:{running.port} ssl;
        listen [::1]:{running.port} ssl;
        access_log {running.access_log} tls;
        ssl_certificate {self.pki.path(site.chain)};
        ssl_certificate_key {self.pki.path(site.key)};
        ssl_protocols {site.protocols};
        keepalive_requests {site.requests_per_connection};
        {client_auth}
        location / {{ return 200 {answer}; }}
    }}"""

    def _http(self) -> str:
        servers = "".join(self._server_block(running) for running in self.sites.values())
        return f"""
    default_type text/plain;
    log_format tls "{LOG_FORMAT}";
    keepalive_timeout 60s;
    ssl_session_cache shared:tls_sessions:1m;
    ssl_session_timeout 10m;
    {servers}"""
