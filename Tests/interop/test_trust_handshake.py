"""SPEC "Trust evaluation" against hostile servers: `openssl s_server` serving chains with a
genuine, public, pinned certificate appended, reached through the proxy with curl. A pin is
satisfied only by the verified path (the chain validation built, or with
allow_invalid_certificates the served certificates that each signed the one before), and
trust is decided inside the handshake: a refused server gets an alert, never sees the
configured client certificate and never receives a request byte."""
import pytest

from harness.checks import parse_proxy_status
from harness.curl import curl
from harness.openssl_server import OpenSSLServer
from harness.pki import CLIENT_SUBJECT, file_pin
from harness.ports import wait_until

pytestmark = pytest.mark.countersign_only


@pytest.fixture
def s_server(tmp_path):
    """s_server(name, certificate, key, chain=None, extra=(), www=True) -> OpenSSLServer."""
    started = []

    def start(name, certificate, key, chain=None, extra=(), www=True):
        server = OpenSSLServer(tmp_path, name, certificate, key, chain, extra, www)
        started.append(server)
        return server
    yield start
    for server in started:
        server.stop()


def _appended(tmp_path, test_pki, *names):
    """A -cert_chain file: the named certificates of the test PKI, in order."""
    path = tmp_path / ("chain-" + "-".join(name.replace(".pem", "") for name in names) + ".pem")
    path.write_bytes(b"".join(test_pki.path(name).read_bytes() for name in names))
    return path


def _proxy(countersign, server, trust, identity=None, credentials=None, env=None):
    entry = {"upstream_tls": True, "intercept": False, "trust": trust}
    overrides = {"hosts": {f"localhost:{server.port}": entry}}
    if identity:
        entry["identity"] = identity
        overrides["credentials"] = credentials
    return countersign(overrides, env)


def _get(proxy, server, tmp_path, path="/pinned"):
    return curl(["-x", f"http://127.0.0.1:{proxy.port}", f"http://localhost:{server.port}{path}"],
                tmp_path, timeout=15, name=f"curl-{server.port}")


def _assert_accepted(result, server):
    assert result.status == 200, \
        f"expected s_server's 200, got {result.status} {result.header('Proxy-Status')}: {result.body[:300]!r}"
    assert b"s_server" in result.body, "the answer did not come from s_server"


def _assert_refused(result, *phrases) -> str:
    assert result.status == 502, f"expected 502, got {result.status}: {result.body[:300]!r}"
    name, parameters = parse_proxy_status(result.header("Proxy-Status") or "")
    assert parameters.get("error") == "tls_certificate_error", f"Proxy-Status: {result.header('Proxy-Status')}"
    details = parameters.get("details", "")
    for phrase in phrases:
        assert phrase in details, f"Proxy-Status details {details!r} do not mention {phrase!r}"
    return details


# --- (a) allow_invalid_certificates + public-key pins --------------------------------------------

def test_allow_invalid_refuses_a_self_signed_leaf_with_the_pinned_leaf_appended(countersign, s_server, test_pki, tmp_path):
    server = s_server("self-signed+leaf", test_pki.path("self-signed.pem"), test_pki.path("self-signed.key"),
                      chain=_appended(tmp_path, test_pki, "leaf.pem"))
    leaf_pin = file_pin(test_pki.path("leaf.pem"))
    proxy = _proxy(countersign, server, {"allow_invalid_certificates": True, "pinning": "public-key", "pins": [leaf_pin]})
    details = _assert_refused(_get(proxy, server, tmp_path), "pin mismatch", file_pin(test_pki.path("self-signed.pem")))
    # The appended pin is named as ignored, not as matching.
    assert details.endswith(f"not on the verified path, so not considered: {leaf_pin}"), details


@pytest.mark.parametrize("pinned", ["leaf.pem", "intermediate.pem"])
def test_allow_invalid_accepts_a_pin_on_the_signed_path(countersign, s_server, test_pki, tmp_path, pinned):
    server = s_server("genuine", test_pki.path("leaf.pem"), test_pki.path("leaf.key"),
                      chain=test_pki.path("intermediate.pem"))
    proxy = _proxy(countersign, server, {"allow_invalid_certificates": True, "pinning": "public-key",
                                         "pins": [file_pin(test_pki.path(pinned))]})
    _assert_accepted(_get(proxy, server, tmp_path), server)


# --- (b) a chain to another trusted anchor with the pinned intermediate appended ---------------

def _two_anchors_pinning_the_intermediate(test_pki):
    return {"anchors": [str(test_pki.path("root.pem")), str(test_pki.path("evil-root.pem"))],
            "pinning": "public-key", "pins": [file_pin(test_pki.path("intermediate.pem"))]}


def test_another_anchors_leaf_with_the_pinned_intermediate_appended_is_refused(countersign, s_server, test_pki, tmp_path):
    server = s_server("evil+intermediate", test_pki.path("evil-leaf.pem"), test_pki.path("evil-leaf.key"),
                      chain=test_pki.path("intermediate.pem"))
    proxy = _proxy(countersign, server, _two_anchors_pinning_the_intermediate(test_pki))
    _assert_refused(_get(proxy, server, tmp_path), "pin mismatch", file_pin(test_pki.path("evil-leaf.pem")),
                    file_pin(test_pki.path("evil-root.pem")))


def test_the_pinned_intermediates_own_chain_is_accepted(countersign, s_server, test_pki, tmp_path):
    server = s_server("genuine", test_pki.path("leaf.pem"), test_pki.path("leaf.key"),
                      chain=test_pki.path("intermediate.pem"))
    proxy = _proxy(countersign, server, _two_anchors_pinning_the_intermediate(test_pki))
    _assert_accepted(_get(proxy, server, tmp_path), server)


# --- (c) pinning "certificate" ---------------------------------------------------------------------

def test_certificate_pinning_with_allow_invalid_refuses_the_pinned_certificate_appended(countersign, s_server, test_pki, tmp_path):
    server = s_server("self-signed+leaf", test_pki.path("self-signed.pem"), test_pki.path("self-signed.key"),
                      chain=_appended(tmp_path, test_pki, "leaf.pem"))
    trust = {"allow_invalid_certificates": True, "pinning": "certificate",
             "pinned_certificates": [str(test_pki.path("leaf.pem"))]}
    proxy = _proxy(countersign, server, trust)
    _assert_refused(_get(proxy, server, tmp_path), "pin mismatch", "no certificate of the verified path equals a pinned one")


def test_certificate_pinning_with_system_roots_refuses_the_pinned_intermediate_appended(countersign, s_server, test_pki, tmp_path):
    # anchors_only false: the pinned certificates plus the system roots, where SSL_CERT_FILE
    # makes the evil CA a "system root" for this proxy process.
    server = s_server("evil+intermediate", test_pki.path("evil-leaf.pem"), test_pki.path("evil-leaf.key"),
                      chain=test_pki.path("intermediate.pem"))
    trust = {"pinning": "certificate", "anchors_only": False, "pinned_certificates": [str(test_pki.path("intermediate.pem"))]}
    proxy = _proxy(countersign, server, trust, env={"SSL_CERT_FILE": str(test_pki.path("evil-root.pem"))})
    _assert_refused(_get(proxy, server, tmp_path), "pin mismatch", "Evil CA")


def test_certificate_pinning_accepts_the_pinned_certificate_on_the_path(countersign, s_server, test_pki, tmp_path):
    server = s_server("genuine", test_pki.path("leaf.pem"), test_pki.path("leaf.key"),
                      chain=test_pki.path("intermediate.pem"))
    trust = {"pinning": "certificate", "pinned_certificates": [str(test_pki.path("intermediate.pem"))]}
    proxy = _proxy(countersign, server, trust)
    _assert_accepted(_get(proxy, server, tmp_path), server)


# --- trust is decided inside the handshake ---------------------------------------------------------

def _identity(test_pki):
    return {"mtls": {"certificate": str(test_pki.path("client-chain.pem")), "private_key": str(test_pki.path("client.key"))}}


CLIENT_VERIFY_LINE = "CN = client"  # s_server's verify callback prints each client certificate


@pytest.mark.parametrize("version", ["-tls1_2", "-tls1_3"])
def test_a_refused_server_never_sees_the_client_certificate_nor_a_request_byte(countersign, s_server, test_pki,
                                                                                tmp_path, version):
    # Echo mode (no -www): s_server prints every byte it receives.
    server = s_server(f"untrusted{version}", test_pki.path("evil-leaf.pem"), test_pki.path("evil-leaf.key"),
                      extra=["-Verify", "1", "-CAfile", str(test_pki.path("root.pem")), version], www=False)
    proxy = _proxy(countersign, server, {"anchors": [str(test_pki.path("root.pem"))]}, "mtls", _identity(test_pki))
    before = len(server.output())
    details = _assert_refused(_get(proxy, server, tmp_path, "/secret-path"))
    # The reason reaches Proxy-Status and the access log as when trust was judged after the handshake.
    assert details == "localhost: untrusted issuer: CN=Evil CA (not among the configured anchors)", details
    access = wait_until(lambda: [entry for entry in proxy.logs()
                                 if entry.get("msg") == "access" and entry.get("path") == "/secret-path"])
    assert access and access[-1].get("error") == "tls_certificate_error", f"access log: {access}"
    # s_server's stderr (verify lines, errors) and its echo of received bytes are unbuffered.
    server.wait_for("ERROR", after=before)
    seen = server.output()[before:]
    assert CLIENT_VERIFY_LINE not in seen and "Client certificate" not in seen, \
        f"the refused server received the client certificate:\n{seen}"
    assert "secret-path" not in seen, f"the refused server received the request:\n{seen}"
    assert "alert unknown ca" in seen, f"the refused server got no TLS alert:\n{seen}"


@pytest.mark.parametrize("version", ["-tls1_2", "-tls1_3"])
def test_a_trusted_server_that_asks_still_gets_the_client_certificate(countersign, s_server, test_pki, tmp_path, version):
    server = s_server(f"trusted{version}", test_pki.path("leaf.pem"), test_pki.path("leaf.key"),
                      chain=test_pki.path("intermediate.pem"),
                      extra=["-Verify", "1", "-CAfile", str(test_pki.path("root.pem")), version])
    proxy = _proxy(countersign, server, {"anchors": [str(test_pki.path("root.pem"))]}, "mtls", _identity(test_pki))
    _assert_accepted(_get(proxy, server, tmp_path), server)
    assert CLIENT_VERIFY_LINE in server.output(), f"s_server did not receive {CLIENT_SUBJECT}: {server.output()}"


# --- /status shows the pins of the verified path, never what was merely appended ---------------

def test_status_lists_only_the_verified_paths_pins(countersign, s_server, test_pki, tmp_path):
    import json
    # A genuine chain with an unrelated public certificate appended: trusted, but the appended
    # certificate's pin would never match, so /status must not offer it for copying.
    server = s_server("genuine+evil-root", test_pki.path("leaf.pem"), test_pki.path("leaf.key"),
                      chain=_appended(tmp_path, test_pki, "intermediate.pem", "evil-root.pem"))
    proxy = _proxy(countersign, server, {"anchors": [str(test_pki.path("root.pem"))]})
    _assert_accepted(_get(proxy, server, tmp_path), server)
    status, body = proxy.admin_get("/status.json")
    assert status == 200
    host = next(h for h in json.loads(body)["hosts"] if h["pattern"] == f"localhost:{server.port}")
    pins = host["served_pins"]
    assert file_pin(test_pki.path("leaf.pem")) in pins and file_pin(test_pki.path("intermediate.pem")) in pins, pins
    assert file_pin(test_pki.path("evil-root.pem")) not in pins, f"an appended certificate's pin is offered: {pins}"
