"""PARENT PROXY (`parent_proxy`): every upstream connection goes through a Squid that demands
Basic or Digest proxy authentication, and Countersign answers its 407s with
`parent_proxy.auth`: absolute-form requests, CONNECT for upstream TLS, and blind tunnels;
over plain TCP (Basic then needs `allow_plaintext`) or inside TLS to an https:// parent
(Squid's `https_port`), evaluated with `parent_proxy.trust`."""
import pytest

from conftest_auth import CREDENTIALS, PARENT_PASSWORD, PARENT_USER, json_body, rule, settle, tls_host
from harness.auth_peers import BasicNginx
from harness.certs import make_self_signed
from harness.curl import curl
from harness.proxies import TinyproxyProcess

pytestmark = pytest.mark.countersign_only

SCHEMES = ["basic", "digest"]


def _parent(squid, credential: str = "parent", trust: dict = None) -> dict:
    """Basic to a plain parent reveals the password: the tests accept that explicitly."""
    auth = {"credential": credential, "schemes": [squid.scheme]}
    if squid.scheme == "basic" and not squid.tls:
        auth["allow_plaintext"] = True
    parent = {"url": squid.url, "auth": auth}
    if trust:
        parent["trust"] = trust
    return parent


@pytest.fixture
def parent_certificate(tmp_path):
    """The https parent's certificate (localhost, 127.0.0.1), its own trust anchor."""
    return make_self_signed(tmp_path / "parent-cert")


@pytest.fixture
def tls_squid(squid_parent, parent_certificate):
    """Factory: a Squid reachable only over TLS (https_port), demanding `scheme`."""
    return lambda scheme: squid_parent(scheme, tls=(parent_certificate.certificate, parent_certificate.key))


def _assert_through_parent(squid, mark: int, request_start: str, expected_statuses: list):
    lines = [entry for entry in squid.since(mark) if entry.request_line.startswith(request_start)]
    assert [entry.status for entry in lines] == expected_statuses, \
        f"Squid saw {[(e.request_line, e.status) for e in lines]}"
    assert all(entry.user == PARENT_USER for entry in lines if entry.status == 200)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_parent_proxy_absolute_form(auth_proxy, squid_parent, origin, scheme):
    squid = squid_parent(scheme)
    proxy = auth_proxy({}, parent_proxy=_parent(squid))
    mark = squid.mark()
    for _ in range(2):
        result = proxy.fetch(origin.url("/echo"))
        assert result.status == 200, f"got {result.status} {result.body[:300]!r}"
        assert json_body(result)["method"] == "GET"
    settle()
    _assert_through_parent(squid, mark, "GET http://", [407, 200, 200])
    assert all(request.header("Proxy-Authorization") is None for request in origin.requests)
    proxy.assert_no_secrets_in_output()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_parent_proxy_connect_for_upstream_tls(auth_proxy, squid_parent, basic_nginx, auth_pki, scheme):
    """Two layers: Squid's 407 on the CONNECT, then nginx's 401 inside the TLS connection."""
    squid = squid_parent(scheme)
    hosts = {f"localhost:{basic_nginx.tls_port}": tls_host(auth_pki, [rule("svc", ["basic"])])}
    proxy = auth_proxy(hosts, parent_proxy=_parent(squid))
    mark = squid.mark()
    result = proxy.fetch(basic_nginx.tls_url(scheme="http"))
    assert result.status == 200, f"got {result.status} {result.body[:300]!r}"
    assert result.body == BasicNginx.SECRET_BODY
    proxy.stop()                   # Squid logs a CONNECT when its tunnel closes
    squid.wait_for_entries(mark + 2)
    _assert_through_parent(squid, mark, "CONNECT localhost:", [407, 200])
    assert basic_nginx.statuses() == [401, 200]


@pytest.mark.parametrize("over", ["tcp", "tls"])
def test_parent_proxy_blind_tunnel(auth_proxy, squid_parent, parent_certificate, basic_nginx, auth_pki, over):
    """An unlisted host: the client's CONNECT is relayed through Squid (inside TLS to an
    https parent), whose 407 Countersign answers; TLS and the client's own Authorization
    then pass end to end."""
    if over == "tls":
        squid = squid_parent("basic", tls=(parent_certificate.certificate, parent_certificate.key))
        parent = _parent(squid, trust={"anchors": [str(parent_certificate.certificate)]})
    else:
        squid = squid_parent("basic")
        parent = _parent(squid)
    proxy = auth_proxy({}, parent_proxy=parent)
    mark = squid.mark()
    result = proxy.fetch(basic_nginx.tls_url(), "-p", "--cacert", str(auth_pki / "root.pem"),
                         "-u", "client-user:Client-own-pass-5c1a")
    assert result.status == 200, f"got {result.status} ({result.stderr.strip()})"
    assert result.body == BasicNginx.SECRET_BODY
    squid.wait_for_entries(mark + 2)
    _assert_through_parent(squid, mark, "CONNECT localhost:", [407, 200])


def _fetch_through(parent, request_kind, auth_proxy, basic_nginx, origin, auth_pki, reading):
    """A proxy behind `parent` fetches either an upstream TLS origin (a CONNECT to the parent) or a
    plain origin (an absolute-form request to it), each answered 200 with its own body; returns the
    proxy and what `reading()` said just before the fetch (a log mark, a connection count)."""
    if request_kind == "connect":
        hosts = {f"localhost:{basic_nginx.tls_port}": tls_host(auth_pki, [rule("svc", ["basic"])])}
        proxy = auth_proxy(hosts, parent_proxy=_parent(parent))
        before = reading()
        result = proxy.fetch(basic_nginx.tls_url(scheme="http"))
        assert result.status == 200, f"got {result.status} {result.body[:300]!r}"
        assert result.body == BasicNginx.SECRET_BODY
    else:
        proxy = auth_proxy({}, parent_proxy=_parent(parent))
        before = reading()
        result = proxy.fetch(origin.url("/echo"))
        assert result.status == 200, f"got {result.status} {result.body[:300]!r}"
        assert json_body(result)["method"] == "GET"
    return proxy, before


@pytest.mark.parametrize("request_kind", ["absolute-form", "connect"])
def test_a_large_407_body_is_dropped_and_the_answer_goes_on_the_same_connection(auth_proxy, squid_parent, origin, basic_nginx,
                                                                                 auth_pki, request_kind):
    """One rule for a challenge's body, whoever challenges (ChallengeBody): Squid's 407 page,
    padded to ~300 KB with Content-Length and keep-alive, comes in many reads; it is read and
    dropped, and the answered request goes on the same connection to Squid, for a forwarded
    request (the exchange's 407) as for the CONNECT to an upstream TLS origin (the dial's)."""
    squid = squid_parent("basic", challenge_body_bytes=300_000)
    proxy, mark = _fetch_through(squid, request_kind, auth_proxy, basic_nginx, origin, auth_pki, squid.mark)
    if request_kind == "connect":
        proxy.stop()               # Squid logs a CONNECT when its tunnel closes
        start = "CONNECT localhost:"
    else:
        start = "GET http://"
    squid.wait_for_entries(mark + 2)
    _assert_through_parent(squid, mark, start, [407, 200])
    challenge, answered = [entry for entry in squid.since(mark) if entry.request_line.startswith(start)]
    assert challenge.connection == answered.connection, \
        f"the answer went on a new connection ({challenge.connection} then {answered.connection})"
    proxy.assert_no_secrets_in_output()


@pytest.fixture
def tinyproxy_parent():
    """tinyproxy demanding Basic from parent-user: its 407 closes the connection."""
    parent = TinyproxyProcess(basic_auth=(PARENT_USER, PARENT_PASSWORD))
    parent.scheme, parent.tls = "basic", False
    yield parent
    parent.stop()


@pytest.mark.parametrize("request_kind", ["absolute-form", "connect"])
def test_a_407_that_closes_its_connection_is_answered_on_a_new_one(auth_proxy, tinyproxy_parent, origin, basic_nginx, auth_pki,
                                                                     request_kind):
    """The same rule's other side: tinyproxy's 407 is HTTP/1.0 with `Connection: close` and a
    body that ends with the connection, so it cannot carry the answer; the answer goes on a
    new connection, for a forwarded request as for a CONNECT (as after an origin's 401)."""
    parent = tinyproxy_parent
    proxy, before = _fetch_through(parent, request_kind, auth_proxy, basic_nginx, origin, auth_pki, parent.connections)
    assert parent.connections() - before == 2, "the 407 on one connection, the answered request on a second"
    proxy.assert_no_secrets_in_output()


def test_parent_proxy_wrong_password_gives_the_client_the_407(auth_proxy, squid_parent, origin):
    squid = squid_parent("basic")
    credentials = dict(CREDENTIALS, parent_wrong={"user": PARENT_USER, "password_env": "WRONG_PASSWORD"})
    proxy = auth_proxy({}, parent_proxy=_parent(squid, "parent_wrong"), credentials=credentials)
    mark = squid.mark()
    result = proxy.fetch(origin.url("/echo"))
    assert result.status == 407, f"got {result.status} {result.body[:200]!r}"
    settle()
    attempts = [entry for entry in squid.since(mark) if entry.request_line.startswith("GET http://")]
    assert 1 < len(attempts) <= 2, f"{len(attempts)} attempts at Squid for one client request (at most 2)"
    assert origin.requests == [], "nothing may reach the origin"


def test_parent_proxy_ntlm_handshake_for_absolute_form_and_connect(auth_proxy, squid_parent, origin, basic_nginx, auth_pki):
    """NTLM to the parent: three legs on one connection, then that connection carries later
    requests without a new handshake; each CONNECT (a new connection) does its own."""
    squid = squid_parent("ntlm")
    proxy = auth_proxy({}, parent_proxy={"url": squid.url, "auth": {"credential": "corp", "schemes": ["ntlm"]}})
    mark = squid.mark()
    for _ in range(2):
        result = proxy.fetch(origin.url("/echo"))
        assert result.status == 200, f"got {result.status} {result.body[:300]!r}"
    settle()
    plain = [entry.status for entry in squid.since(mark) if entry.request_line.startswith("GET http://")]
    assert plain == [407, 407, 200, 200], f"Squid saw {plain}"
    assert all(request.header("Proxy-Authorization") is None for request in origin.requests)
    proxy.assert_no_secrets_in_output()



# ------------------------------------------------------------------ plain parent, allow_plaintext


def test_basic_to_a_plain_parent_is_withheld_without_allow_plaintext(auth_proxy, squid_parent, origin):
    """Schemes left to their default include Basic, but without allow_plaintext the password
    never goes to an http:// parent: Squid's 407 reaches the client and Squid never saw it."""
    squid = squid_parent("basic")
    proxy = auth_proxy({}, parent_proxy={"url": squid.url, "auth": {"credential": "parent"}})
    mark = squid.mark()
    result = proxy.fetch(origin.url("/echo"))
    assert result.status == 407, f"got {result.status} {result.body[:200]!r}"
    settle()
    assert [entry.status for entry in squid.since(mark)] == [407], "Countersign answered Basic over plain TCP"
    assert all(entry.user == "-" for entry in squid.since(mark))
    assert origin.requests == []


# ------------------------------------------------------------------ https parent (Squid https_port)


@pytest.mark.parametrize("scheme", ["basic", "digest", "ntlm"])
def test_https_parent_absolute_form(auth_proxy, tls_squid, parent_certificate, origin, scheme):
    """Absolute-form requests travel inside TLS to the parent: Squid listens on nothing
    else, and Basic needs no allow_plaintext there."""
    squid = tls_squid(scheme)
    credential = "corp" if scheme == "ntlm" else "parent"
    proxy = auth_proxy({}, parent_proxy=_parent(squid, credential, trust={"anchors": [str(parent_certificate.certificate)]}))
    mark = squid.mark()
    for _ in range(2):
        result = proxy.fetch(origin.url("/echo"))
        assert result.status == 200, f"got {result.status} {result.body[:300]!r}"
    settle()
    lines = [entry for entry in squid.since(mark) if entry.request_line.startswith("GET http://")]
    assert [entry.status for entry in lines][-2:] == [200, 200], f"Squid saw {[(e.request_line, e.status) for e in lines]}"
    assert all(entry.extra["local_port"] == str(squid.port) for entry in lines)
    assert all(request.header("Proxy-Authorization") is None for request in origin.requests)
    proxy.assert_no_secrets_in_output()


def test_https_parent_connect_with_origin_tls_inside(auth_proxy, tls_squid, parent_certificate, basic_nginx, auth_pki):
    """CONNECT inside the parent's TLS, then the origin's TLS (and nginx's 401 answered)
    inside that: TLS over TLS."""
    squid = tls_squid("basic")
    hosts = {f"localhost:{basic_nginx.tls_port}": tls_host(auth_pki, [rule("svc", ["basic"])])}
    proxy = auth_proxy(hosts, parent_proxy=_parent(squid, trust={"anchors": [str(parent_certificate.certificate)]}))
    mark = squid.mark()
    for _ in range(2):
        result = proxy.fetch(basic_nginx.tls_url(scheme="http"))
        assert result.status == 200, f"got {result.status} {result.body[:300]!r}"
        assert result.body == BasicNginx.SECRET_BODY
    proxy.stop()
    squid.wait_for_entries(mark + 2)
    connects = [entry for entry in squid.since(mark) if entry.request_line.startswith("CONNECT localhost:")]
    assert [entry.status for entry in connects][0] == 407 and 200 in [entry.status for entry in connects]
    assert all(entry.user == PARENT_USER for entry in connects if entry.status == 200)
    assert basic_nginx.statuses()[:2] == [401, 200]


@pytest.mark.parametrize("kind", ["absolute-form", "connect"])
def test_https_parent_failing_trust_is_refused_before_any_request(auth_proxy, tls_squid, tmp_path, origin,
                                                                   basic_nginx, auth_pki, kind):
    """A parent whose certificate the configured anchors do not vouch for gets nothing: 502
    tls_certificate_error naming the parent, and no request (so no password) reached Squid."""
    squid = tls_squid("basic")
    stranger = make_self_signed(tmp_path / "stranger")
    hosts = {f"localhost:{basic_nginx.tls_port}": tls_host(auth_pki, [rule("svc", ["basic"])])}
    proxy = auth_proxy(hosts, parent_proxy=_parent(squid, trust={"anchors": [str(stranger.certificate)]}))
    url = origin.url("/echo") if kind == "absolute-form" else basic_nginx.tls_url(scheme="http")
    result = proxy.fetch(url)
    assert result.status == 502, f"got {result.status} {result.body[:300]!r}"
    status = result.header("Proxy-Status") or ""
    assert "tls_certificate_error" in status and f"parent proxy 127.0.0.1:{squid.port}" in status, status
    settle(0.5)
    assert not [entry for entry in squid.entries() if entry.status in (200, 407)], \
        f"a request reached the untrusted parent: {squid.entries()}"
    assert origin.requests == []
    assert PARENT_PASSWORD not in proxy.stderr_text()


def test_https_parent_is_spoken_to_in_tls(auth_proxy, tls_squid, parent_certificate, origin):
    """curl's --proxy https:// is the reference client for the same Squid: both succeed,
    and a plain-TCP parent URL for a TLS-only Squid does not."""
    squid = tls_squid("basic")
    reference = curl(["--proxy", squid.url, "--proxy-cacert", str(parent_certificate.certificate),
                      "--proxy-user", f"{PARENT_USER}:{PARENT_PASSWORD}", origin.url("/echo")], squid.workdir)
    assert reference.status == 200, reference.stderr
    plain = auth_proxy({}, parent_proxy={"url": squid.url.replace("https://", "http://"),
                                         "auth": {"credential": "parent", "schemes": ["digest"]}})
    assert plain.fetch(origin.url("/echo")).status == 502
    proxy = auth_proxy({}, parent_proxy=_parent(squid, trust={"anchors": [str(parent_certificate.certificate)]}))
    assert proxy.fetch(origin.url("/echo")).status == 200


# ------------------------------------------------------------------ https parent demanding a client certificate


class _CertificateDemandingParent:
    """A minimal https:// parent (Python ssl) that requires a client certificate from the
    test root and answers every absolute-form request with the subject it was shown."""

    def __init__(self, certificate, key, client_roots):
        import socket as socketlib
        import ssl
        import threading
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(certificate), str(key))
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(str(client_roots))
        self.listener = socketlib.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.context = context
        self.requests = []
        self.handshake_failures = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        import ssl
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return
            try:
                with self.context.wrap_socket(raw, server_side=True) as tls:
                    subject = dict(item[0] for item in tls.getpeercert()["subject"])
                    head = b""
                    while b"\r\n\r\n" not in head:
                        data = tls.recv(4096)
                        if not data:
                            break
                        head += data
                    self.requests.append(head.split(b"\r\n", 1)[0].decode())
                    body = f"client {subject.get('commonName')}\n".encode()
                    tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
            except (ssl.SSLError, OSError):
                self.handshake_failures += 1

    def stop(self):
        self.listener.close()


def test_https_parent_gets_the_configured_identity(auth_proxy, parent_certificate, auth_pki):
    parent = _CertificateDemandingParent(parent_certificate.certificate, parent_certificate.key, auth_pki / "root.pem")
    try:
        credentials = dict(CREDENTIALS, mtls={"certificate": str(auth_pki / "client-chain.pem"),
                                              "private_key": str(auth_pki / "client.key")})
        trust = {"anchors": [str(parent_certificate.certificate)]}
        proxy = auth_proxy({}, credentials=credentials,
                           parent_proxy={"url": f"https://127.0.0.1:{parent.port}", "trust": trust, "identity": "mtls"})
        result = proxy.fetch("http://upstream.invalid/x")
        assert result.status == 200, f"got {result.status} {result.body[:300]!r}"
        assert result.body.startswith(b"client "), result.body
        assert parent.requests == ["GET http://upstream.invalid/x HTTP/1.1"]

        without = auth_proxy({}, parent_proxy={"url": f"https://127.0.0.1:{parent.port}", "trust": trust})
        refused = without.fetch("http://upstream.invalid/y")
        assert refused.status == 502, f"got {refused.status} {refused.body[:300]!r}"
        # TLS 1.3: the parent refuses the missing certificate after our side finished the handshake.
        assert f"127.0.0.1:{parent.port}" in (refused.header("Proxy-Status") or "")
        assert parent.requests == ["GET http://upstream.invalid/x HTTP/1.1"]
    finally:
        parent.stop()
