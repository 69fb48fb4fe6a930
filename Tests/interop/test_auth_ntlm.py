"""NTLMv2 answered by Countersign against an HTTPS server built on pyspnego's acceptor that
enforces the tls-server-end-point channel binding (Extended Protection): negotiate,
challenge and authenticate on one upstream connection, legs without a body, then the
connection stays authenticated and is reused. Handshakes are counted in the server's log."""
import collections
import hashlib
import os
import re
import threading

import pytest

from harness.auth_peers import NtlmServer
from harness.ports import wait_until
from harness.proxies import merge
from conftest_auth import (CLIENT_PASSWORD, CLIENT_USER, NTLM_DOMAIN, NTLM_PASSWORD, NTLM_UPN_DOMAIN, NTLM_USER,
                           NTLM_WORKSTATION, CREDENTIALS, rule, settle, tls_host)

pytestmark = pytest.mark.countersign_only


def _hosts(server, auth_pki, *rules) -> dict:
    return {f"localhost:{server.port}": tls_host(auth_pki, list(rules))}


def _negotiates_per_connection(server) -> dict:
    counts = collections.Counter(entry.connection for entry in server.handshakes())
    return {connection: counts.get(connection, 0) for connection in {e.connection for e in server.entries()}}


def _assert_ok(result, who: str = f"{NTLM_DOMAIN}\\{NTLM_USER}"):
    assert result.status == 200, f"expected the NTLM server's 200, got {result.status} {result.body[:200]!r}"
    assert result.body.decode().startswith(f"ntlm ok for {who}"), result.body[:200]


def test_ntlm_one_handshake_then_connection_reused(auth_proxy, ntlm_server, auth_pki):
    proxy = auth_proxy(_hosts(ntlm_server, auth_pki, rule("corp", ["ntlm"])))
    for _ in range(4):
        _assert_ok(proxy.fetch(ntlm_server.url()))
    settle()
    assert len(ntlm_server.handshakes()) == 1, \
        f"expected one handshake for sequential requests, log: {[e.extra for e in ntlm_server.entries()]}"
    assert all(count <= 1 for count in _negotiates_per_connection(ntlm_server).values())
    [authenticate] = ntlm_server.authenticate_legs()
    assert authenticate.extra["ntlmv2"], "the answer must be NTLMv2"
    assert authenticate.extra["workstation"] == NTLM_WORKSTATION
    assert authenticate.extra["binding"], "the server enforces a channel binding; it must be present"
    assert proxy.auth_outcomes(4)[0] == "ntlm:answered"
    proxy.assert_no_secrets_in_output()


def test_ntlm_negotiate_carries_no_body_and_the_body_is_replayed(auth_proxy, ntlm_server, auth_pki, tmp_path):
    proxy = auth_proxy(_hosts(ntlm_server, auth_pki, rule("corp", ["ntlm"])))
    data = os.urandom(20_000)
    body = tmp_path / "ntlm-body.bin"
    body.write_bytes(data)
    result = proxy.fetch(ntlm_server.url("/upload"), "--data-binary", f"@{body}", "-H", "Expect:")
    _assert_ok(result)
    assert result.body.decode().strip().endswith(f"body sha256 {hashlib.sha256(data).hexdigest()}"), \
        "the body the NTLM server received differs from the one sent"
    settle()
    # The negotiate leg carries no body (IIS refuses one there); the authenticate leg is the
    # replayed request itself and carries the body, as curl and browsers send it.
    negotiates = ntlm_server.handshakes()
    assert negotiates and all(entry.extra["body_bytes"] == 0 for entry in negotiates), \
        f"a negotiate leg carried a body: {[e.extra for e in negotiates]}"
    served = [entry for entry in ntlm_server.entries() if entry.status == 200]
    assert [entry.extra["body_bytes"] for entry in served] == [len(data)]


def test_ntlm_wrong_password_costs_at_most_one_plus_max_failures(auth_proxy, ntlm_server, auth_pki):
    proxy = auth_proxy(_hosts(ntlm_server, auth_pki, rule("corp_wrong", ["ntlm"], max_failures=1)))
    result = proxy.fetch(ntlm_server.url())
    assert result.status == 401, "the client gets the final 401"
    settle()
    authenticates = ntlm_server.authenticate_legs()
    assert 1 <= len(authenticates) <= 2, f"{len(authenticates)} NTLM answers for one client request (at most 2)"
    assert proxy.auth_outcomes(1)[-1] == "ntlm:rejected"
    proxy.assert_no_secrets_in_output()


def test_ntlm_user_principal_name_form(auth_proxy, ntlm_server, auth_pki):
    credentials = dict(CREDENTIALS, upn={"user": f"{NTLM_USER}@{NTLM_UPN_DOMAIN}",
                                         "password_env": "NTLM_PASSWORD", "workstation": NTLM_WORKSTATION})
    proxy = auth_proxy(_hosts(ntlm_server, auth_pki, rule("upn", ["ntlm"])), credentials=credentials)
    result = proxy.fetch(ntlm_server.url())
    assert result.status == 200, f"got {result.status}; server log: {[e.extra for e in ntlm_server.entries()]}"


def test_ntlm_with_nt_hash_credential(auth_proxy, ntlm_server, auth_pki):
    from spnego._ntlm_raw.crypto import ntowfv1     # MD4 of the UTF-16LE password
    nt_hash = ntowfv1(NTLM_PASSWORD).hex()
    credentials = dict(CREDENTIALS, hashed={"user": f"{NTLM_DOMAIN}\\{NTLM_USER}", "nt_hash_env": "NT_HASH",
                                            "workstation": NTLM_WORKSTATION})
    proxy = auth_proxy(_hosts(ntlm_server, auth_pki, rule("hashed", ["ntlm"])), credentials=credentials,
                       env={"NT_HASH": nt_hash})
    _assert_ok(proxy.fetch(ntlm_server.url()))
    assert nt_hash not in proxy.stderr_text()


def test_ntlm_parallel_clients_one_handshake_per_upstream_connection(auth_proxy, ntlm_server, auth_pki):
    proxy = auth_proxy(_hosts(ntlm_server, auth_pki, rule("corp", ["ntlm"])))
    results = []

    def client(index: int):
        for request in range(3):
            results.append(proxy.fetch(ntlm_server.url(f"/c{index}/{request}"), name=f"parallel-{index}-{request}"))

    threads = [threading.Thread(target=client, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [result.status for result in results] == [200] * 6
    settle()
    per_connection = _negotiates_per_connection(ntlm_server)
    assert all(count <= 1 for count in per_connection.values()), f"handshakes per connection: {per_connection}"
    assert len(ntlm_server.handshakes()) <= 2, "two clients need at most two authenticated upstream connections"


# A client's own NTLM (SPEC "Proxy behaviour"): it authenticates the upstream connection, which
# must then serve that client connection only -- never another client, never Countersign's own
# credential. The server is plain HTTP: a client cannot bind its answer to the TLS connection
# Countersign makes upstream, so Extended Protection would refuse it.


@pytest.fixture
def plain_ntlm_server(tmp_path):
    pytest.importorskip("spnego")
    users = [(NTLM_DOMAIN, NTLM_USER, NTLM_PASSWORD), (NTLM_DOMAIN, CLIENT_USER, CLIENT_PASSWORD)]
    server = NtlmServer(tmp_path / "plain-ntlm", users, require_binding=False)
    yield server
    server.stop()


def _plain_hosts(server, *rules) -> dict:
    return {f"localhost:{server.port}": {"intercept": False, "auth": list(rules)}}


CLIENT_NTLM = ("--ntlm", "-u", f"{NTLM_DOMAIN}\\{CLIENT_USER}:{CLIENT_PASSWORD}")
CLIENT_WHO = f"{NTLM_DOMAIN}\\{CLIENT_USER}"


def _served_connection(result) -> str:
    found = re.search(r"on connection (\d+);", result.body.decode(errors="replace"))
    assert found, f"not an NTLM server body: {result.body[:200]!r}"
    return found.group(1)


def test_client_own_ntlm_connection_never_serves_another_client(auth_proxy, plain_ntlm_server):
    proxy = auth_proxy(_plain_hosts(plain_ntlm_server))     # no rule: Countersign answers nothing here
    own = proxy.fetch(plain_ntlm_server.url(), *CLIENT_NTLM)
    _assert_ok(own, who=CLIENT_WHO)
    for attempt in range(3):
        other = proxy.fetch(plain_ntlm_server.url(f"/other/{attempt}"))
        assert other.status == 401, \
            f"a client without credentials was served on another client's NTLM connection: {other.status} {other.body[:200]!r}"
    settle()
    assert not [entry for entry in plain_ntlm_server.entries() if entry.path.startswith("/other") and entry.status == 200]


def test_client_own_ntlm_connection_never_carries_countersigns_credential(auth_proxy, plain_ntlm_server):
    proxy = auth_proxy(_plain_hosts(plain_ntlm_server, rule("corp", ["ntlm"], allow_plaintext=True)))
    own = proxy.fetch(plain_ntlm_server.url(), *CLIENT_NTLM)
    _assert_ok(own, who=CLIENT_WHO)
    clients_connection = _served_connection(own)
    for attempt in range(2):
        served = proxy.fetch(plain_ntlm_server.url(f"/svc/{attempt}"))
        _assert_ok(served)      # as Countersign's own CORP\ntsvc, never as the client
        assert _served_connection(served) != clients_connection, \
            "Countersign's credential rode the connection the client authenticated"
    settle()
    users = {entry.extra.get("user") for entry in plain_ntlm_server.entries()
             if entry.path.startswith("/svc") and entry.status == 200}
    assert users == {f"{NTLM_DOMAIN}\\{NTLM_USER}"}, users


def test_client_keeps_its_own_ntlm_connection_for_its_next_requests(auth_proxy, plain_ntlm_server, tmp_path):
    proxy = auth_proxy(_plain_hosts(plain_ntlm_server, rule("corp", ["ntlm"])))
    second = tmp_path / "second.body"
    # Two requests on one client connection: curl reuses it for the second URL.
    first = proxy.fetch(plain_ntlm_server.url("/again/2"), *CLIENT_NTLM, plain_ntlm_server.url("/again/1"), "-o", str(second))
    _assert_ok(first, who=CLIENT_WHO)
    body = second.read_text()
    assert body.startswith(f"ntlm ok for {CLIENT_WHO} "), body
    assert f"on connection {_served_connection(first)};" in body, "the client's second request left its connection"
    assert proxy.auth_outcomes(2)[-1] in ("-", "none"), "Countersign answered nothing for the client"


def test_countersigns_ntlm_connection_never_serves_a_client_with_its_own_authorization(auth_proxy, plain_ntlm_server):
    proxy = auth_proxy(_plain_hosts(plain_ntlm_server, rule("corp", ["ntlm"])))
    _assert_ok(proxy.fetch(plain_ntlm_server.url("/svc")))
    # A client that authenticates itself (here with a scheme the server ignores) is not
    # handed the connection Countersign's credential authenticated.
    result = proxy.fetch(plain_ntlm_server.url("/own"), "-H", "Authorization: Bearer not-for-this-server")
    assert result.status == 401, f"served on Countersign's NTLM connection: {result.status} {result.body[:200]!r}"


def test_reload_that_changes_the_credential_starts_a_new_ntlm_handshake(auth_proxy, plain_ntlm_server):
    """A connection is bound to a credential as configured: after a reload gives the name
    another user, the connections its old user authenticated serve nobody."""
    proxy = auth_proxy(_plain_hosts(plain_ntlm_server, rule("corp", ["ntlm"])), env={"CLIENT_NTLM_PASSWORD": CLIENT_PASSWORD})
    _assert_ok(proxy.fetch(plain_ntlm_server.url("/before")))
    proxy.reload(merge(proxy.config, {"credentials": {"corp": {"user": CLIENT_WHO, "password_env": "CLIENT_NTLM_PASSWORD"}}}))

    def served_as_new_user():
        result = proxy.fetch(plain_ntlm_server.url("/after"))
        return result.status == 200 and result.body.decode().startswith(f"ntlm ok for {CLIENT_WHO} ")

    assert wait_until(served_as_new_user, timeout=5), \
        f"still served as the old user after the reload: {[e.extra.get('user') for e in plain_ntlm_server.entries()][-3:]}"
    settle()
    after = [entry for entry in plain_ntlm_server.entries() if entry.path == "/after" and entry.status == 200]
    assert all(entry.extra.get("user") == CLIENT_WHO for entry in after), [entry.extra.get("user") for entry in after]
