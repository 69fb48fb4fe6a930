"""The access log: one JSON line per exchange with the SPEC's fields; and no credential,
cookie or configured secret ever written to stderr."""
import base64

import pytest

from harness.origin import COOKIE_SECRET
from harness.ports import free_port, wait_until
from harness.rawclient import exchange, forward_request, request_bytes

pytestmark = pytest.mark.countersign_only

# Always present; `upstream_status`, `auth` and `error` appear when there is one to report.
ACCESS_FIELDS = {"client", "method", "host", "port", "path", "status", "bytes_in", "bytes_out", "duration_ms"}
PROXY_PASSWORD = "log-test-proxy-secret-4417"
ORIGIN_TOKEN = "origin-bearer-token-8d1e55"
CLIENT_COOKIE = "client-cookie-value-b6a9"


def test_one_access_line_per_exchange_with_spec_fields(countersign, origin):
    proxy = countersign()
    exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo?first=1")))
    exchange("127.0.0.1", proxy.port, forward_request(origin.url("/upload"), "POST", body=b"12345"))
    exchange("127.0.0.1", proxy.port, forward_request(f"http://127.0.0.1:{free_port()}/refused"))
    lines = wait_until(lambda: len(proxy.access_logs()) >= 3 and proxy.access_logs(), timeout=5)
    assert lines, f"expected 3 access lines, got {len(proxy.access_logs())}"
    assert len(lines) == 3, f"expected one line per exchange, got {len(lines)}: {lines}"
    for line in lines:
        missing = ACCESS_FIELDS - line.keys()
        assert not missing, f"access line lacks {sorted(missing)}: {line}"
    first, upload, refused = lines
    assert (first["method"], first["host"], int(first["port"])) == ("GET", "127.0.0.1", origin.port)
    assert first["path"].startswith("/echo")
    assert (first["status"], first.get("upstream_status")) == (200, 200)
    assert upload["method"] == "POST" and upload["bytes_in"] >= 5
    assert first["bytes_out"] > 0
    assert refused["status"] == 502 and refused.get("error"), f"a refused upstream logged no error: {refused}"


def test_secrets_never_reach_stderr(countersign, origin):
    listen = [{"proxy_auth": {"users": {"app": {"password_env": "CS_INTEROP_LOG_PASSWORD"}}}}]
    proxy = countersign({"listen": listen, "log": {"level": "debug"}},
                        env={"CS_INTEROP_LOG_PASSWORD": PROXY_PASSWORD})
    proxy_credentials = base64.b64encode(f"app:{PROXY_PASSWORD}".encode()).decode()
    wrong_credentials = base64.b64encode(b"app:wrong-password-0b77").decode()
    secret_fields = [("Proxy-Authorization", f"Basic {proxy_credentials}"),
                     ("Authorization", f"Bearer {ORIGIN_TOKEN}"),
                     ("Cookie", f"session={CLIENT_COOKIE}")]
    assert exchange("127.0.0.1", proxy.port, forward_request(origin.url("/cookie"), headers=secret_fields)).status == 200
    assert exchange("127.0.0.1", proxy.port, forward_request(
        origin.url("/echo"), headers=[("Proxy-Authorization", f"Basic {wrong_credentials}")])).status == 407
    tunnel = request_bytes("CONNECT", origin.authority, [("Host", origin.authority),
                                                         ("Proxy-Authorization", f"Basic {proxy_credentials}")])
    exchange("127.0.0.1", proxy.port, tunnel, method="CONNECT")
    assert origin.requests[0].header("Authorization") == f"Bearer {ORIGIN_TOKEN}", "the client's Authorization was altered"
    proxy.stop()
    stderr = proxy.stderr_text()
    assert stderr.strip(), "the proxy wrote nothing to stderr"
    for secret in (PROXY_PASSWORD, proxy_credentials, wrong_credentials, "wrong-password-0b77",
                   ORIGIN_TOKEN, CLIENT_COOKIE, COOKIE_SECRET):
        assert secret not in stderr, f"a secret ({secret[:6]}…) appears in the proxy's stderr"


USERINFO_PASSWORD = "userinfo-password-5c0e"


@pytest.mark.parametrize("log_format", ["json", "text"])
def test_a_password_in_the_target_userinfo_is_never_logged(countersign, origin, log_format):
    """`http://user:password@host/` is refused with 400, and the refusal is logged: without
    the userinfo. The same for a CONNECT target and for the Host of a request that the
    target does not name."""
    proxy = countersign({"log": {"format": log_format}})
    target = f"http://app:{USERINFO_PASSWORD}@127.0.0.1:{origin.port}/x?token=1"
    assert exchange("127.0.0.1", proxy.port, request_bytes("GET", target, [("Host", origin.authority)])).status == 400
    connect_target = f"app:{USERINFO_PASSWORD}@{origin.authority}"
    assert exchange("127.0.0.1", proxy.port, request_bytes("CONNECT", connect_target, [("Host", connect_target)]),
                    method="CONNECT").status == 400
    assert wait_until(lambda: proxy.stderr_text().count("access") >= 2, timeout=5), proxy.stderr_text()
    proxy.stop()
    stderr = proxy.stderr_text()
    assert USERINFO_PASSWORD not in stderr, f"the userinfo password reached the log: {stderr}"
    assert "127.0.0.1" in stderr, "the refused request's line names its host"

