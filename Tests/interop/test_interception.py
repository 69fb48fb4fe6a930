"""CONNECT interception: clients that trust only Countersign's CA (curl, Python requests,
openssl s_client) reach listed HTTPS hosts through it and see a leaf minted for exactly that
host; requests inside the tunnel go upstream with the host's trust policy, identity and
credentials; anything else (another Host, unlisted hosts, `intercept: false`) is refused or
tunnelled blind."""
import hashlib
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import time

import pytest

from conftest_intercept import (INTERCEPT_DIGEST_PASSWORD, INTERCEPT_DIGEST_USER, InterceptTlsOrigin,
                                intercepted_host_entry)
from harness import websocket
from harness.checks import assert_nothing_reached, assert_proxy_error
from harness.curl import PROXY_VARIABLES, curl
from harness.ports import wait_until
from harness.rawclient import RawConnection, request_bytes
from harness.wire import SocketReader

pytestmark = pytest.mark.countersign_only

END_CERTIFICATE = "-----END CERTIFICATE-----"


# ------------------------------------------------------------------------------------ helpers


def listed(pki, origin, **extra) -> dict:
    return {f"localhost:{origin.port}": intercepted_host_entry(pki, **extra)}


def open_tunnel(proxy, authority: str, cafile, server_name: str = "localhost") -> RawConnection:
    """CONNECT through the proxy, then a TLS handshake verified against `cafile`; the returned
    connection speaks HTTP inside the TLS."""
    connection = RawConnection("127.0.0.1", proxy.port)
    connection.send(request_bytes("CONNECT", authority, [("Host", authority)]))
    established = connection.read_response("CONNECT")
    assert established.status == 200, f"CONNECT {authority} answered {established.status}: {established.body!r}"
    context = ssl.create_default_context(cafile=str(cafile))
    connection.sock = context.wrap_socket(connection.sock, server_hostname=server_name)
    connection.reader = SocketReader(connection.sock)
    return connection


def served_leaf_pem(connection: RawConnection) -> bytes:
    return ssl.DER_cert_to_PEM_cert(connection.sock.getpeercert(binary_form=True)).encode()


def x509_text(pem: bytes) -> str:
    return subprocess.run(["openssl", "x509", "-noout", "-text"], input=pem, capture_output=True,
                          check=True).stdout.decode()


def x509_field(pem: bytes, option: str) -> str:
    """`openssl x509 -noout -subject` and the like, without the `name=` prefix."""
    line = subprocess.run(["openssl", "x509", "-noout", option, "-nameopt", "RFC2253"], input=pem,
                          capture_output=True, check=True).stdout.decode().strip()
    return line.split("=", 1)[1].strip()


def validity_days(pem: bytes) -> float:
    dates = subprocess.run(["openssl", "x509", "-noout", "-startdate", "-enddate"], input=pem,
                           capture_output=True, check=True).stdout.decode().splitlines()
    start, end = (ssl.cert_time_to_seconds(line.split("=", 1)[1].strip()) for line in dates)
    return (end - start) / 86400


def subject_alternative_names(pem: bytes) -> list:
    text = x509_text(pem)
    match = re.search(r"X509v3 Subject Alternative Name:.*?\n\s*(.+)\n", text)
    assert match, f"the leaf has no subjectAltName:\n{text}"
    return [name.strip() for name in match.group(1).split(",")]


def s_client(proxy, authority: str, cafile, *options) -> str:
    """`openssl s_client -proxy` to `authority` (sending nothing), its stdout and stderr together."""
    command = ["openssl", "s_client", "-proxy", f"127.0.0.1:{proxy.port}", "-connect", authority,
               "-servername", "localhost", "-CAfile", str(cafile), "-showcerts", *options]
    completed = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    return completed.stdout.decode(errors="replace") + completed.stderr.decode(errors="replace")


def first_certificate(s_client_output: str) -> bytes:
    begin = s_client_output.index("-----BEGIN CERTIFICATE-----")
    end = s_client_output.index(END_CERTIFICATE, begin) + len(END_CERTIFICATE)
    return (s_client_output[begin:end] + "\n").encode()


def request_with_the_finished(proxy, authority: str, version) -> str:
    """CONNECT, a handshake driven through memory BIOs, then the client's last handshake flight
    and a GET written to the socket in one send. Returns the response's status line, or what
    happened instead."""
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(request_bytes("CONNECT", authority, [("Host", authority)]))
        assert connection.read_response("CONNECT").status == 200
        context = ssl.create_default_context(cafile=str(proxy.ca_certificate))
        context.minimum_version = context.maximum_version = version
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")

        def receive() -> bool:
            data = connection.sock.recv(65536)
            incoming.write(data)
            return bool(data)

        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                connection.send(outgoing.read())
                if not receive():
                    return "a close during the handshake"
        tls.write(request_bytes("GET", "/echo", [("Host", authority)]))
        connection.send(outgoing.read())
        received = b""
        while b"\r\n" not in received:
            try:
                received += tls.read(65536)
            except ssl.SSLWantReadError:
                if not receive():
                    return "a close without a response"
            except ssl.SSLZeroReturnError:
                return "a TLS close without a response"
        return received.split(b"\r\n", 1)[0].decode("latin-1")


class MemoryTLSClient:
    """A TLS client driven through memory BIOs over a raw socket, so a test decides exactly
    which bytes go out in which segment (a ClientHello glued to the CONNECT, or trickled)."""

    def __init__(self, sock, cafile, server_name: str = "localhost"):
        self.sock = sock
        context = ssl.create_default_context(cafile=str(cafile))
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = context.wrap_bio(self.incoming, self.outgoing, server_hostname=server_name)

    def client_hello(self) -> bytes:
        with pytest.raises(ssl.SSLWantReadError):
            self.tls.do_handshake()
        return self.outgoing.read()

    def receive(self) -> bool:
        data = self.sock.recv(65536)
        self.incoming.write(data)
        return bool(data)

    def finish_handshake(self) -> None:
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.sock.sendall(self.outgoing.read())
                assert self.receive(), "the proxy closed the connection during the handshake"
        self.sock.sendall(self.outgoing.read())

    def get_status_line(self, authority: str, path: str = "/echo") -> str:
        self.tls.write(request_bytes("GET", path, [("Host", authority)]))
        self.sock.sendall(self.outgoing.read())
        received = b""
        while b"\r\n" not in received:
            try:
                received += self.tls.read(65536)
            except ssl.SSLWantReadError:
                assert self.receive(), "the proxy closed the connection without a response"
        return received.split(b"\r\n", 1)[0].decode("latin-1")


def closed_within(sock, timeout: float) -> bool:
    """True when the other side closes (after an alert, perhaps) within `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            if not sock.recv(65536):
                return True
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True
    return False


def read_plain_head(sock) -> tuple:
    """The proxy's plain answer to CONNECT, and whatever arrived behind it."""
    received = b""
    while b"\r\n\r\n" not in received:
        data = sock.recv(65536)
        assert data, f"the proxy closed the connection after {received!r}"
        received += data
    head, rest = received.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def wait_for_log(proxy, predicate, timeout: float = 5.0) -> list:
    return wait_until(lambda: [entry for entry in proxy.logs() if predicate(entry)], timeout)


# ----------------------------------------------------------------------- clients, certificate


def test_curl_with_https_proxy_and_ca_gets_the_body(intercepting_countersign, intercept_tls_origin,
                                                    intercept_pki, workdir):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    result = curl(["--cacert", str(proxy.ca_certificate), intercept_tls_origin.https_url("/echo?via=curl")],
                  workdir, env_proxy={"HTTPS_PROXY": proxy.url})
    assert result.returncode == 0, f"curl failed through interception: {result.stderr}"
    assert result.status == 200
    seen = json.loads(result.body)
    assert (seen["method"], seen["target"]) == ("GET", "/echo?via=curl")
    assert [request.path for request in intercept_tls_origin.requests] == ["/echo"], \
        "the request did not reach the HTTPS origin exactly once"


def test_s_client_sees_a_leaf_for_exactly_the_host_issued_by_the_ca(intercepting_countersign,
                                                                     intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    output = s_client(proxy, f"localhost:{intercept_tls_origin.port}", proxy.ca_certificate)
    assert "Verify return code: 0 (ok)" in output, f"s_client did not verify the minted leaf:\n{output[-3000:]}"
    leaf = first_certificate(output)
    ca = proxy.ca_certificate.read_bytes()
    assert x509_field(leaf, "-issuer") == x509_field(ca, "-subject"), "the leaf is not issued by Countersign's CA"
    assert subject_alternative_names(leaf) == ["DNS:localhost"], "the leaf names more or other than the host"
    text = x509_text(leaf)
    assert "TLS Web Server Authentication" in text, f"no serverAuth EKU:\n{text}"
    ca_key_id = re.search(r"Subject Key Identifier:\s*\n\s*(\S+)", x509_text(ca)).group(1)
    assert re.search(r"Authority Key Identifier:\s*\n\s*(keyid:)?" + re.escape(ca_key_id), text), \
        f"the leaf's authority key identifier is not the CA's key id {ca_key_id}:\n{text}"
    assert "Subject Key Identifier" in text
    assert validity_days(leaf) <= 30, f"a minted leaf should be short-lived, this one spans {validity_days(leaf)} days"


def test_ip_literal_hosts_get_a_leaf_with_an_ip_san(intercepting_countersign, intercept_tls_origin,
                                                    intercept_pki):
    host_entry = intercepted_host_entry(intercept_pki)
    proxy = intercepting_countersign({f"127.0.0.1:{intercept_tls_origin.port}": host_entry})
    with open_tunnel(proxy, f"127.0.0.1:{intercept_tls_origin.port}", proxy.ca_certificate,
                     server_name="127.0.0.1") as connection:
        leaf = served_leaf_pem(connection)
        connection.send(request_bytes("GET", "/echo", [("Host", f"127.0.0.1:{intercept_tls_origin.port}")]))
        assert connection.read_response().status == 200
    assert subject_alternative_names(leaf) == ["IP Address:127.0.0.1"]


def test_ipv6_literal_host_gets_a_leaf_with_an_ipv6_san(intercepting_countersign, intercept_pki, workdir):
    origin = InterceptTlsOrigin(intercept_pki, host="::1")
    try:
        proxy = intercepting_countersign({f"[::1]:{origin.port}": intercepted_host_entry(intercept_pki)})
        result = curl(["--cacert", str(proxy.ca_certificate), origin.https_url("/echo", host="[::1]")],
                      workdir, env_proxy={"HTTPS_PROXY": proxy.url})
        assert result.returncode == 0 and result.status == 200, f"curl to [::1] failed: {result.stderr}"
        with open_tunnel(proxy, f"[::1]:{origin.port}", proxy.ca_certificate, server_name="::1") as connection:
            leaf = served_leaf_pem(connection)
    finally:
        origin.stop()
    assert subject_alternative_names(leaf) == ["IP Address:0:0:0:0:0:0:0:1"]


def test_the_leaf_is_minted_once_per_host(intercepting_countersign, intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    leaves = []
    for _ in range(2):
        with open_tunnel(proxy, authority, proxy.ca_certificate) as connection:
            leaves.append(served_leaf_pem(connection))
    assert leaves[0] == leaves[1], "the second connection to the host got a freshly minted leaf"


def test_alpn_settles_on_h2_and_on_http11_for_a_host_without_http2(intercepting_countersign, intercept_tls_origin,
                                                                   intercept_pki, workdir):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    output = s_client(proxy, f"localhost:{intercept_tls_origin.port}", proxy.ca_certificate, "-alpn", "http/1.1,h2")
    assert "ALPN protocol: h2" in output, f"ALPN did not settle on h2:\n{output[-2000:]}"
    proxy.process.stop()
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin, http2=False))
    output = s_client(proxy, f"localhost:{intercept_tls_origin.port}", proxy.ca_certificate, "-alpn", "h2,http/1.1")
    assert "ALPN protocol: http/1.1" in output, f"ALPN did not settle on http/1.1:\n{output[-2000:]}"
    result = curl(["--http2", "--cacert", str(proxy.ca_certificate), intercept_tls_origin.https_url("/echo")],
                  workdir, env_proxy={"HTTPS_PROXY": proxy.url})
    assert result.returncode == 0 and result.status == 200, result.stderr


@pytest.mark.parametrize("version", ["-tls1_2", "-tls1_3"])
def test_client_side_offers_tls12_and_tls13(intercepting_countersign, intercept_tls_origin, intercept_pki, version):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    output = s_client(proxy, f"localhost:{intercept_tls_origin.port}", proxy.ca_certificate, version)
    assert "Verify return code: 0 (ok)" in output, f"no {version} handshake:\n{output[-2000:]}"


@pytest.mark.parametrize("offered, chosen", [
    ("TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"),
    ("TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256"),
    ("TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384"),
])
def test_tls13_suite_is_the_proxys_choice_unless_the_client_prefers_chacha(intercepting_countersign, intercept_tls_origin,
                                                                           intercept_pki, offered, chosen):
    """OpenSSL's default order puts AES-256 first; the proxy answers with AES-128-GCM (less work
    per record and handshake), except for a client that asks for ChaCha20 first (one without
    AES instructions), and takes what a client offers alone."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    output = s_client(proxy, f"localhost:{intercept_tls_origin.port}", proxy.ca_certificate, "-tls1_3", "-ciphersuites", offered)
    assert "Verify return code: 0 (ok)" in output, f"no TLS 1.3 handshake:\n{output[-2000:]}"
    assert re.search(r"Cipher is " + re.escape(chosen), output), f"expected {chosen}:\n{output[-2000:]}"


def test_python_requests_with_requests_ca_bundle(intercepting_countersign, intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    program = ("import os, requests\n"
               "reply = requests.get(os.environ['TARGET'], proxies={'https': os.environ['PROXY']}, timeout=10)\n"
               "print(reply.status_code)\nprint(reply.json()['target'])\n")
    env = {name: value for name, value in os.environ.items() if name not in PROXY_VARIABLES}
    env.update(REQUESTS_CA_BUNDLE=str(proxy.ca_certificate), PROXY=proxy.url,
               TARGET=intercept_tls_origin.https_url("/echo?client=requests"))
    completed = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=30)
    assert completed.returncode == 0, f"requests failed through interception: {completed.stderr[-2000:]}"
    assert completed.stdout.split() == ["200", "/echo?client=requests"]


def test_upstream_demanding_client_certificate_and_digest(intercepting_countersign, intercept_guarded_origin,
                                                          intercept_pki, workdir):
    """The client holds neither the key nor the password; Countersign answers both."""
    host = intercepted_host_entry(intercept_pki, identity="client",
                                  auth=[{"credential": "svc", "schemes": ["digest"]}])
    credentials = {
        "client": {"certificate": str(intercept_pki.path("client-chain.pem")),
                   "private_key": str(intercept_pki.path("client.key"))},
        "svc": {"user": INTERCEPT_DIGEST_USER, "password_env": "INTERCEPT_DIGEST_PASSWORD"},
    }
    proxy = intercepting_countersign({f"localhost:{intercept_guarded_origin.port}": host}, credentials=credentials,
                                     env={"INTERCEPT_DIGEST_PASSWORD": INTERCEPT_DIGEST_PASSWORD})
    result = curl(["--cacert", str(proxy.ca_certificate), intercept_guarded_origin.https_url("/echo?guarded=1")],
                  workdir, env_proxy={"HTTPS_PROXY": proxy.url})
    assert result.returncode == 0, result.stderr
    assert result.status == 200, f"expected 200 after Digest, got {result.status}: {result.body[:200]!r}"
    assert json.loads(result.body)["target"] == "/echo?guarded=1"
    assert intercept_guarded_origin.challenges >= 1, "the origin never challenged: the test proves nothing"
    assert any("CN=client" in subject or "commonName=client" in subject for subject in intercept_guarded_origin.client_subjects), \
        f"no connection presented the client certificate: {intercept_guarded_origin.client_subjects}"
    line = wait_for_log(proxy, lambda entry: entry.get("msg") == "access" and entry.get("scheme") == "https")
    assert line and line[-1].get("auth", "").startswith("digest"), f"the access line shows no Digest answer: {line}"


# ------------------------------------------------------------------------- inside the tunnel


def test_host_mismatch_inside_the_tunnel_is_421(intercepting_countersign, intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    before = intercept_tls_origin.snapshot()
    for other in ("other.example", f"localhost:{intercept_tls_origin.port + 1}"):
        with open_tunnel(proxy, authority, proxy.ca_certificate) as connection:
            connection.send(request_bytes("GET", "/echo", [("Host", other)]))
            response = connection.read_response()
        assert_proxy_error(response, 421, proxy.process, "http_request_denied")
    assert_nothing_reached(intercept_tls_origin, before)


def test_keep_alive_two_requests_on_one_connect(intercepting_countersign, intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    with open_tunnel(proxy, authority, proxy.ca_certificate) as connection:
        for path in ("/echo?n=1", "/echo?n=2"):
            connection.send(request_bytes("GET", path, [("Host", authority)]))
            response = connection.read_response()
            assert response.status == 200 and response.json()["target"] == path
    connects = [line for line in proxy.access_logs() if line["method"] == "CONNECT"]
    assert len(connects) == 1, f"expected one CONNECT, logged {len(connects)}"


def test_intercepted_connections_that_ended_leave_no_memory_behind(intercepting_countersign, intercept_tls_origin,
                                                                   intercept_pki):
    """Hundreds of intercepted connections, each one request then a close: once the first ones
    have warmed the caches (the minted leaf, sessions, the pools), the proxy's memory stays where
    it was. A connection kept alive by a reference cycle (its stream holding a callback that
    holds it) would keep at least its own objects, over 2 KiB each; what the proxy grows by
    without one (~1 KiB a connection here) is bounded caches filling, such as the sessions kept."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"

    def rss_kib():
        for line in open(f"/proc/{proxy.process.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def one_connection(n):
        with open_tunnel(proxy, authority, proxy.ca_certificate) as connection:
            connection.send(request_bytes("GET", f"/echo?n={n}", [("Host", authority)]))
            assert connection.read_response().status == 200

    for n in range(150):
        one_connection(n)
    before = rss_kib()
    for n in range(1000):
        one_connection(n)
    grown = rss_kib() - before
    assert grown < 2 * 1024, f"1000 intercepted connections that ended left {grown} KiB behind"


def test_request_asking_to_close_still_gets_its_response(intercepting_countersign, intercept_tls_origin,
                                                          intercept_pki, workdir):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    with open_tunnel(proxy, authority, proxy.ca_certificate) as connection:
        connection.send(request_bytes("GET", "/echo?last=1", [("Host", authority), ("Connection", "close")]))
        response = connection.read_response()
        assert response.status == 200 and response.complete
        assert response.json()["target"] == "/echo?last=1"
        assert connection.peer_closed(), "the proxy kept the connection open after Connection: close"
    result = curl(["-H", "Connection: close", "--cacert", str(proxy.ca_certificate),
                   intercept_tls_origin.https_url("/echo?by=curl")], workdir, env_proxy={"HTTPS_PROXY": proxy.url})
    assert (result.returncode, result.status) == (0, 200), f"curl with Connection: close: {result.stderr}"


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3], ids=["tls1.2", "tls1.3"])
def test_request_sent_right_behind_the_handshake_is_answered(intercepting_countersign, intercept_tls_origin,
                                                             intercept_pki, version):
    """Under TLS 1.3 a client may send its first request in the same segment as its Finished
    (curl often does); the proxy must read it like any other."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    status_line = request_with_the_finished(proxy, authority, version)
    assert status_line == "HTTP/1.1 200 OK", f"the request sent with the client's Finished got {status_line}; " \
                                              f"access lines: {proxy.access_logs()[-1:]}"


def test_client_hello_sent_with_the_connect_is_read(intercepting_countersign, intercept_tls_origin, intercept_pki):
    """A client may send its ClientHello in the same segment as its CONNECT, without waiting
    for the 200: the proxy has read it along with the CONNECT and must hand it to TLS first."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    with RawConnection("127.0.0.1", proxy.port) as connection:
        client = MemoryTLSClient(connection.sock, proxy.ca_certificate)
        connection.sock.sendall(request_bytes("CONNECT", authority, [("Host", authority)]) + client.client_hello())
        head, rest = read_plain_head(connection.sock)
        assert head.startswith("HTTP/1.1 200"), head
        client.incoming.write(rest)
        client.finish_handshake()
        assert client.get_status_line(authority) == "HTTP/1.1 200 OK"


def test_client_hello_trickled_byte_by_byte_is_read(intercepting_countersign, intercept_tls_origin, intercept_pki):
    """A ClientHello that arrives one byte per segment still completes the handshake. (The
    bytes take seconds on a loaded machine: header_timeout, which bounds the handshake from its
    start, is made long enough; test_deadlines.py checks that it does bound it.)"""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin), limits={"header_timeout": "60s"})
    authority = f"localhost:{intercept_tls_origin.port}"
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection.sock.sendall(request_bytes("CONNECT", authority, [("Host", authority)]))
        head, rest = read_plain_head(connection.sock)
        assert head.startswith("HTTP/1.1 200") and rest == b"", (head, rest)
        client = MemoryTLSClient(connection.sock, proxy.ca_certificate)
        for byte in client.client_hello():
            connection.sock.sendall(bytes([byte]))
            time.sleep(0.002)
        client.finish_handshake()
        assert client.get_status_line(authority) == "HTTP/1.1 200 OK"


@pytest.mark.parametrize("garbage", [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"\x16\x03\x01\x00\x05hello"],
                         ids=["plain-http", "broken-record"])
def test_a_client_sending_no_tls_after_the_200_is_closed_and_logged(intercepting_countersign, intercept_tls_origin,
                                                                      intercept_pki, garbage):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.sock.sendall(request_bytes("CONNECT", authority, [("Host", authority)]))
        head, _ = read_plain_head(connection.sock)
        assert head.startswith("HTTP/1.1 200"), head
        connection.sock.sendall(garbage)
        assert closed_within(connection.sock, 5.0), "the proxy kept a connection that sent no TLS"
    expected = "the TLS handshake with the client for localhost failed"
    warnings = wait_for_log(proxy, lambda entry: entry.get("level") == "warn" and expected in json.dumps(entry))
    assert warnings, f"no warning saying {expected!r}; logs: {proxy.logs()[-5:]}"
    assert intercept_tls_origin.requests == []


def test_upload_then_silence_arrives_whole(intercepting_countersign, intercept_tls_origin, intercept_pki):
    """A client that sends a large body in one go and then only waits: the last bytes of a TLS
    record the proxy had to leave inside the SSL while its input was full must still reach
    the origin once the input drains, with no further bytes from the client to wake it."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    body = os.urandom(1_000_003)
    with open_tunnel(proxy, authority, proxy.ca_certificate) as connection:
        connection.send(request_bytes("POST", "/upload", [("Host", authority), ("Content-Length", str(len(body)))], body))
        response = connection.read_response()
    assert response.status == 200
    seen = response.json()
    assert (seen["body_length"], seen["body_sha256"]) == (len(body), hashlib.sha256(body).hexdigest())


def test_pipelined_requests_answered_in_order(intercepting_countersign, intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    paths = ["/echo?p=1", "/status/204", "/echo?p=3"]
    with open_tunnel(proxy, authority, proxy.ca_certificate) as connection:
        connection.send(b"".join(request_bytes("GET", path, [("Host", authority)]) for path in paths))
        responses = [connection.read_response() for _ in paths]
    assert [response.status for response in responses] == [200, 204, 200]
    assert [responses[0].json()["target"], responses[2].json()["target"]] == ["/echo?p=1", "/echo?p=3"]


def test_chunked_upload_arrives_whole(intercepting_countersign, intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    pieces = [os.urandom(3000), os.urandom(70_000), b"tail"]
    body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"
    with open_tunnel(proxy, authority, proxy.ca_certificate) as connection:
        connection.send(request_bytes("POST", "/upload", [("Host", authority), ("Transfer-Encoding", "chunked")], body))
        response = connection.read_response()
    assert response.status == 200
    seen = response.json()
    assert seen["body_sha256"] == hashlib.sha256(b"".join(pieces)).hexdigest()
    assert seen["body_length"] == sum(map(len, pieces))


def test_expect_100_continue_waits_for_the_go_ahead(intercepting_countersign, intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    body = os.urandom(20_000)
    with open_tunnel(proxy, authority, proxy.ca_certificate) as connection:
        connection.send(request_bytes("POST", "/upload", [("Host", authority), ("Expect", "100-continue"),
                                                          ("Content-Length", str(len(body)))]))
        interim = connection.read_response(skip_interim=False)
        assert interim.status == 100, f"expected 100 Continue before sending the body, got {interim.status}"
        connection.send(body)
        final = connection.read_response()
    assert final.status == 200
    assert final.json()["body_sha256"] == hashlib.sha256(body).hexdigest()


def test_websocket_upgrade_inside_the_tunnel(intercepting_countersign, intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    key = websocket.new_key()
    message = os.urandom(40_000)
    with open_tunnel(proxy, authority, proxy.ca_certificate) as connection:
        connection.send(request_bytes("GET", "/ws", [
            ("Host", authority), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13")]))
        switched = connection.read_response()
        assert switched.status == 101, f"no protocol switch: {switched.status} {switched.body[:200]!r}"
        assert switched.header("Sec-WebSocket-Accept") == websocket.accept_for(key)
        connection.send(websocket.encode_frame(websocket.OPCODE_TEXT, b"inside the intercepted tunnel", masked=True))
        assert websocket.read_frame(connection.reader) == (websocket.OPCODE_TEXT, b"inside the intercepted tunnel")
        connection.send(websocket.encode_frame(websocket.OPCODE_BINARY, message, masked=True))
        assert websocket.read_frame(connection.reader) == (websocket.OPCODE_BINARY, message)
        connection.send(websocket.encode_frame(websocket.OPCODE_CLOSE, b"\x03\xe8", masked=True))
        assert websocket.read_frame(connection.reader)[0] == websocket.OPCODE_CLOSE


def test_access_line_of_an_intercepted_request_has_scheme_https(intercepting_countersign, intercept_tls_origin,
                                                                intercept_pki, workdir):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    result = curl(["--cacert", str(proxy.ca_certificate), intercept_tls_origin.https_url("/echo?q=secret")],
                  workdir, env_proxy={"HTTPS_PROXY": proxy.url})
    assert result.status == 200, result.stderr
    lines = wait_until(lambda: [line for line in proxy.access_logs() if line["method"] == "GET"], timeout=5)
    assert lines, f"no access line for the request inside the tunnel: {proxy.access_logs()}"
    line = lines[0]
    assert (line["scheme"], line["host"], line["port"], line["status"]) == \
        ("https", "localhost", intercept_tls_origin.port, 200), line
    assert line["path"].startswith("/echo") and "secret" not in line["path"]


def test_client_rejecting_our_certificate_is_logged_with_what_to_do(intercepting_countersign, intercept_tls_origin,
                                                                    intercept_pki, workdir):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    # Trusting only the test PKI's root, curl cannot verify a leaf from Countersign's CA.
    result = curl(["--cacert", str(intercept_pki.path("root.pem")), intercept_tls_origin.https_url("/echo")],
                  workdir, env_proxy={"HTTPS_PROXY": proxy.url})
    assert result.returncode == 60, f"curl should have refused the certificate: rc={result.returncode} {result.stderr}"
    expected = "the client does not trust Countersign's CA for localhost; see `countersign ca show`"
    warnings = wait_for_log(proxy, lambda entry: entry.get("level") == "warn" and expected in json.dumps(entry))
    assert warnings, f"no warning saying {expected!r}; logs: {proxy.logs()[-5:]}"
    assert intercept_tls_origin.requests == [], "a request reached the origin although the client gave up"


# --------------------------------------------------------------------- everything else untouched


def test_unlisted_host_is_tunnelled_blind(intercepting_countersign, intercept_tls_origin, intercept_pki):
    unlisted = InterceptTlsOrigin(intercept_pki)
    try:
        proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
        with open_tunnel(proxy, f"localhost:{unlisted.port}", intercept_pki.path("root.pem")) as connection:
            served = connection.sock.getpeercert(binary_form=True)
    finally:
        unlisted.stop()
    assert served == ssl.PEM_cert_to_DER_cert(intercept_pki.path("leaf.pem").read_text()), \
        "the client did not see the upstream's own certificate"


def test_listed_host_with_intercept_false_is_tunnelled_blind(intercepting_countersign, intercept_tls_origin,
                                                             intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin, intercept=False))
    authority = f"localhost:{intercept_tls_origin.port}"
    with open_tunnel(proxy, authority, intercept_pki.path("root.pem")) as connection:
        served = connection.sock.getpeercert(binary_form=True)
        connection.send(request_bytes("GET", "/echo", [("Host", authority)]))
        assert connection.read_response().status == 200
    assert served == ssl.PEM_cert_to_DER_cert(intercept_pki.path("leaf.pem").read_text())
    assert intercept_tls_origin.requests[0].header("Via") is None, "a blind tunnel must not touch the bytes inside"


def test_unlisted_host_under_deny_is_403(intercepting_countersign, intercept_tls_origin, intercept_pki):
    unlisted = InterceptTlsOrigin(intercept_pki)
    try:
        proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin), unlisted_hosts="deny")
        before = unlisted.snapshot()
        authority = f"localhost:{unlisted.port}"
        with RawConnection("127.0.0.1", proxy.port) as connection:
            connection.send(request_bytes("CONNECT", authority, [("Host", authority)]))
            response = connection.read_response("CONNECT")
        assert_proxy_error(response, 403, proxy.process)
        assert unlisted.snapshot()[0] == before[0], "the proxy connected to a denied host"
    finally:
        unlisted.stop()
