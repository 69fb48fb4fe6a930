"""curl as the client, the way applications point at the proxy: -x, http_proxy, HTTPS_PROXY,
and proxy credentials when the listener demands them."""
import base64

import pytest

from harness.checks import assert_nothing_reached, assert_proxy_error
from harness.curl import curl
from harness.rawclient import exchange, forward_request

PROXY_PASSWORD = "pr0xy-pass-7fe1"


def test_curl_with_proxy_option_reaches_origin_through_proxy(proxy, origin, workdir):
    result = curl(["-x", proxy.url, origin.url("/echo")], workdir)
    assert result.returncode == 0, result.stderr
    assert result.status == 200
    assert len(origin.requests) == 1
    assert origin.requests[0].header("Via"), "the origin saw no Via: the request did not go through a proxy"


def test_curl_reads_lower_case_http_proxy(proxy, origin, workdir):
    result = curl([origin.url("/echo")], workdir, env_proxy={"http_proxy": proxy.url})
    assert result.status == 200, result.stderr
    assert origin.requests[0].header("Via")


def test_curl_https_proxy_tunnels_to_tls_origin(proxy, nginx, small_file, tls_certificate, workdir):
    result = curl(["--cacert", str(tls_certificate.certificate), nginx.tls_url("/1k")], workdir,
                  env_proxy={"HTTPS_PROXY": proxy.url})
    assert result.returncode == 0, result.stderr
    assert result.status == 200
    assert result.body == small_file.path.read_bytes()


@pytest.fixture
def guarded_proxy(countersign):
    listen = [{"proxy_auth": {"users": {"app": {"password_env": "CS_INTEROP_PROXY_PASSWORD"}}}}]
    return countersign({"listen": listen}, env={"CS_INTEROP_PROXY_PASSWORD": PROXY_PASSWORD})


@pytest.mark.countersign_only
def test_proxy_auth_without_credentials_is_407(guarded_proxy, origin, workdir):
    result = curl(["-x", guarded_proxy.url, origin.url("/echo")], workdir)
    assert result.status == 407
    assert (result.header("Proxy-Authenticate") or "").lower().startswith("basic")
    assert result.header("Proxy-Status")
    assert origin.requests == []


@pytest.mark.countersign_only
def test_proxy_auth_with_right_credentials_is_served(guarded_proxy, origin, workdir):
    result = curl(["-x", guarded_proxy.url, "--proxy-user", f"app:{PROXY_PASSWORD}", origin.url("/echo")], workdir)
    assert result.status == 200, result.stderr
    assert len(origin.requests) == 1
    assert origin.requests[0].header("Proxy-Authorization") is None, "the client's proxy credentials were forwarded"


@pytest.mark.countersign_only
def test_proxy_auth_with_wrong_password_is_407_and_nothing_reaches_origin(guarded_proxy, origin, workdir):
    before = origin.snapshot()
    result = curl(["-x", guarded_proxy.url, "--proxy-user", "app:not-the-password", origin.url("/echo")], workdir)
    assert result.status == 407
    assert_nothing_reached(origin, before)


@pytest.mark.countersign_only
def test_proxy_auth_guards_connect_too(guarded_proxy, origin):
    request = (f"CONNECT {origin.authority} HTTP/1.1\r\nHost: {origin.authority}\r\n\r\n").encode()
    before = origin.snapshot()
    response = exchange("127.0.0.1", guarded_proxy.port, request, method="CONNECT")
    assert_proxy_error(response, 407, guarded_proxy, "http_request_denied")
    assert origin.snapshot()[0] == before[0], "the proxy opened a tunnel for an unauthenticated client"


@pytest.mark.countersign_only
def test_proxy_auth_for_another_user_name_is_407(guarded_proxy, origin):
    token = base64.b64encode(f"intruder:{PROXY_PASSWORD}".encode()).decode()
    request = forward_request(origin.url("/echo"), headers=[("Proxy-Authorization", f"Basic {token}")])
    response = exchange("127.0.0.1", guarded_proxy.port, request)
    assert_proxy_error(response, 407, guarded_proxy, "http_request_denied")
    assert origin.requests == []


@pytest.mark.countersign_only
@pytest.mark.parametrize("suffix", [b"\0" * 256, b"\0" * 512, b"x" * 256], ids=["nul256", "nul512", "x256"])
def test_proxy_auth_with_password_plus_suffix_is_407(guarded_proxy, origin, suffix):
    """A comparison that folds the length difference into 8 bits took the right password
    followed by 256 NUL bytes as equal; whole values must be compared."""
    token = base64.b64encode(b"app:" + PROXY_PASSWORD.encode() + suffix).decode()
    request = forward_request(origin.url("/echo"), headers=[("Proxy-Authorization", f"Basic {token}")])
    response = exchange("127.0.0.1", guarded_proxy.port, request)
    assert_proxy_error(response, 407, guarded_proxy, "http_request_denied")
    assert origin.requests == []
