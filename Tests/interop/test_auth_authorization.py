"""A 401 for a path the account may not see is not a rejected password (issue 19 item 1).
Apache answers an authenticated user that `Require user` does not name with 401 in the same
realm: one client's request to such a path must not switch the credential off for everyone,
while a rotated password is still locked out after max_failures, and the lock-out is named in
the `Proxy-Status` of the response the client gets and on `/status` and `/status.json`."""
import json

import pytest

from conftest_auth import SVC_PASSWORD, SVC_USER, rule
from harness.auth_peers import DigestApache

pytestmark = pytest.mark.countersign_only


def _proxy(auth_proxy, apache):
    return auth_proxy({f"127.0.0.1:{apache.port}": {"intercept": False, "auth": [rule("svc", ["digest"], max_failures=1)]}})


def _locked_out(proxy) -> list:
    status, body = proxy.admin_get("/status.json")
    assert status == 200
    return json.loads(body)["locked_out_spaces"]


def _assert_served(proxy, apache, who: str):
    result = proxy.fetch(apache.url("/secret.txt"))
    assert result.status == 200, f"{who}: expected Apache's 200, got {result.status} {result.header('Proxy-Status')}"
    assert result.body == DigestApache.SECRET_BODY


def test_forbidden_path_goes_to_the_client_and_others_are_still_served(auth_proxy, digest_apache):
    proxy = _proxy(auth_proxy, digest_apache)
    _assert_served(proxy, digest_apache, "first client")
    for path in ["/forbidden/a", "/forbidden/b", "/forbidden/a"]:
        result = proxy.fetch(digest_apache.url(path))
        assert result.status == 401, f"{path}: the client gets Apache's 401, got {result.status}"
        assert "digest" in result.header("WWW-Authenticate", "").lower()
        assert result.header("Proxy-Status") is None, f"nothing is locked out: {result.header('Proxy-Status')}"
    for client in range(3):
        _assert_served(proxy, digest_apache, f"client {client} after the forbidden requests")
    assert proxy.auth_outcomes(7)[1:4] == ["digest:not-authorized"] * 3
    assert _locked_out(proxy) == []
    proxy.assert_no_secrets_in_output()


def test_forbidden_path_as_the_very_first_request_locks_nothing_out(auth_proxy, digest_apache):
    """Nothing accepted yet: one refused request may be a path the account may not see."""
    proxy = _proxy(auth_proxy, digest_apache)
    for _ in range(3):
        assert proxy.fetch(digest_apache.url("/forbidden/first")).status == 401
    _assert_served(proxy, digest_apache, "another client after a hostile first request")
    assert _locked_out(proxy) == []


def test_rotated_password_is_locked_out_and_says_so(auth_proxy, digest_apache):
    proxy = _proxy(auth_proxy, digest_apache)
    _assert_served(proxy, digest_apache, "before the rotation")
    digest_apache.set_users({SVC_USER: SVC_PASSWORD + "-rotated"})

    mark = digest_apache.mark()
    result = proxy.fetch(digest_apache.url("/secret.txt"))
    assert result.status == 401, "the client gets Apache's final 401"
    attempts = len(digest_apache.wait_for_entries(mark + 2)) - mark
    assert attempts == 2, f"{attempts} upstream requests: the preemptive answer and one fresh one (1 + max_failures)"
    notice = result.header("Proxy-Status") or ""
    for part in ["countersign", "credential svc", "locked out", f"127.0.0.1:{digest_apache.port} digest realm",
                 "GET /secret.txt", "until the configuration reloads"]:
        assert part in notice, f"Proxy-Status should say {part!r}: {notice!r}"

    mark = digest_apache.mark()
    again = proxy.fetch(digest_apache.url("/other"))
    assert again.status == 401
    assert "locked out" in (again.header("Proxy-Status") or ""), "a later client is told too"
    assert [entry.status for entry in digest_apache.wait_for_entries(mark + 1)[mark:]] == [401], \
        "a locked-out space is not answered: one bare request"

    spaces = _locked_out(proxy)
    assert len(spaces) == 1, spaces
    assert spaces[0]["credential"] == "svc"
    assert spaces[0]["protection_space"].startswith(f"127.0.0.1:{digest_apache.port} digest")
    assert "GET /secret.txt" in spaces[0]["reason"] and spaces[0]["since"]
    status, page = proxy.admin_get("/status")
    assert status == 200 and b'id="locked-out"' in page and b"svc" in page
    proxy.assert_no_secrets_in_output()
