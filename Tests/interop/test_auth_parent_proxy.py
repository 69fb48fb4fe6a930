"""PARENT PROXY (`parent_proxy`): every upstream connection goes through a Squid that demands
Basic or Digest proxy authentication, and Countersign answers its 407s with
`parent_proxy.auth`: absolute-form requests, CONNECT for upstream TLS, and blind tunnels.
This wiring lands after the origin-side auth; these tests say so when they fail."""
import pytest

from conftest_auth import CREDENTIALS, PARENT_USER, json_body, rule, settle, tls_host
from harness.auth_peers import BasicNginx

pytestmark = pytest.mark.countersign_only

SCHEMES = ["basic", "digest"]


def _parent(squid, credential: str = "parent") -> dict:
    return {"url": squid.url, "auth": {"credential": credential, "schemes": [squid.scheme]}}


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


def test_parent_proxy_blind_tunnel(auth_proxy, squid_parent, basic_nginx, auth_pki):
    """An unlisted host: the client's CONNECT is relayed through Squid, whose 407 Countersign
    answers; TLS and the client's own Authorization then pass end to end."""
    squid = squid_parent("basic")
    proxy = auth_proxy({}, parent_proxy=_parent(squid))
    mark = squid.mark()
    result = proxy.fetch(basic_nginx.tls_url(), "-p", "--cacert", str(auth_pki / "root.pem"),
                         "-u", "client-user:Client-own-pass-5c1a")
    assert result.status == 200, f"got {result.status} ({result.stderr.strip()})"
    assert result.body == BasicNginx.SECRET_BODY
    squid.wait_for_entries(mark + 2)
    _assert_through_parent(squid, mark, "CONNECT localhost:", [407, 200])


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
