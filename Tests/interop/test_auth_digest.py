"""Digest answered by Countersign against Apache httpd mod_auth_digest (this Apache build
offers AuthDigestAlgorithm MD5 only; with AuthDigestNcCheck it demands each nonce count in turn) and httpbin (MD5, SHA-256,
auth-int; its non-standard "SHA-512" is not an RFC 7616 algorithm). Request bodies are
replayed intact: Apache's /upload CGI reports the SHA-256 of the body it received."""
import hashlib
import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest_auth import (SVC_PASSWORD, SVC_USER, assert_state_saved_privately, json_body, rule,
                           settle)
from harness.auth_peers import DigestApache

pytestmark = pytest.mark.countersign_only

REPLAY_LIMIT = 64 * 1024


def _host(server, *rules) -> dict:
    return {f"127.0.0.1:{server.port}": {"intercept": False, "auth": list(rules)}}


def _get_secret(proxy, server, times: int = 1):
    for attempt in range(times):
        result = proxy.fetch(server.url())
        assert result.status == 200, \
            f"request {attempt + 1}: expected Apache's 200, got {result.status} {result.body[:200]!r}"
        assert result.body == DigestApache.SECRET_BODY


def _body_file(directory, size: int):
    data = os.urandom(size)
    path = directory / f"body-{size}.bin"
    path.write_bytes(data)
    return path, f"{hashlib.sha256(data).hexdigest()} {size}"


def test_apache_digest_answered_once_then_preemptive_with_counted_nonce(auth_proxy, digest_apache):
    proxy = auth_proxy(_host(digest_apache, rule("svc", ["digest"], allow_plaintext=True)))
    _get_secret(proxy, digest_apache, 4)
    settle()
    assert digest_apache.statuses() == [401, 200, 200, 200, 200], \
        f"Apache (which checks nonce counts) should challenge once only:\n{digest_apache.error_text()}"
    assert {entry.user for entry in digest_apache.entries() if entry.status == 200} == {SVC_USER}
    assert proxy.auth_outcomes(4) == ["digest:answered"] + ["digest:preemptive"] * 3
    proxy.assert_no_secrets_in_output()


def test_apache_digest_needs_no_allow_plaintext(auth_proxy, digest_apache):
    """Digest is not password-equivalent, so it is answered over http:// by default."""
    proxy = auth_proxy(_host(digest_apache, rule("svc", ["digest"])))
    _get_secret(proxy, digest_apache, 1)


def test_apache_persistence_none_answers_every_challenge(auth_proxy, digest_apache):
    proxy = auth_proxy(_host(digest_apache, rule("svc", ["digest"], persistence="none")))
    _get_secret(proxy, digest_apache, 3)
    settle()
    assert digest_apache.statuses() == [401, 200] * 3
    assert proxy.auth_outcomes(3) == ["digest:answered"] * 3


@pytest.mark.parametrize("max_failures", [1, 2])
def test_apache_wrong_password_costs_at_most_one_plus_max_failures(auth_proxy, digest_apache, max_failures):
    proxy = auth_proxy(_host(digest_apache, rule("wrong", ["digest"], max_failures=max_failures)))
    result = proxy.fetch(digest_apache.url())
    assert result.status == 401, "the client gets the final 401"
    assert "digest" in result.header("WWW-Authenticate", "").lower()
    settle()
    attempts = len(digest_apache.entries())
    assert 1 < attempts <= 1 + max_failures, \
        f"{attempts} upstream requests for one client request (allowed: 2..{1 + max_failures})"
    assert proxy.auth_outcomes(1)[-1] == "digest:rejected"
    proxy.assert_no_secrets_in_output()


def test_parallel_clients_against_apache_checking_nonce_counts_all_get_200(auth_proxy, apache_digest_factory):
    """Apache with AuthDigestNcCheck On rejects any count but the next one of its client, so
    parallel exchanges must never race on one nonce: each holds a Digest session until its
    answer is in, and a concurrent exchange gets a challenge of its own."""
    apache = apache_digest_factory(nc_check=True)
    proxy = auth_proxy(_host(apache, rule("svc", ["digest"], allow_plaintext=True, max_failures=1)))
    clients, per_client = 16, 20
    with ThreadPoolExecutor(clients) as pool:
        statuses = list(pool.map(lambda _: proxy.fetch(apache.url()).status, range(clients * per_client)))
    assert statuses.count(200) == len(statuses), f"statuses seen by the clients: {sorted(set(statuses))} " \
                                                 f"({statuses.count(200)} of {len(statuses)} were 200)\n{apache.error_text()}"
    settle()
    assert "nonce-count check failed" not in apache.error_text(), apache.error_text()
    challenges = apache.statuses().count(401)
    assert challenges <= clients, f"{challenges} challenges for {clients} parallel clients: " \
                                  "after one per concurrent exchange every answer should be preemptive"


def test_apache_stale_nonce_is_renewed_without_counting_a_failure(auth_proxy, apache_digest_factory):
    apache = apache_digest_factory(nonce_lifetime=2)
    proxy = auth_proxy(_host(apache, rule("svc", ["digest"], max_failures=1)))
    _get_secret(proxy, apache, 1)
    time.sleep(3)                                   # the remembered nonce is now stale
    mark = apache.mark()
    _get_secret(proxy, apache, 1)
    settle()
    assert apache.statuses(mark) == [401, 200], \
        "the stale nonce should cost one 401 (stale=true) and be answered with the new nonce"
    assert proxy.auth_outcomes(2)[-1] != "digest:rejected"
    mark = apache.mark()
    _get_secret(proxy, apache, 1)
    settle()
    assert apache.statuses(mark) == [200], "the renewed nonce is used preemptively"


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_small_post_body_is_replayed_intact(auth_proxy, digest_apache, tmp_path, chunked):
    proxy = auth_proxy(_host(digest_apache, rule("svc", ["digest"])), limits={"replay_body_bytes": REPLAY_LIMIT})
    body, expected = _body_file(tmp_path, 20_000)
    framing = ["-H", "Transfer-Encoding: chunked"] if chunked else []
    result = proxy.fetch(digest_apache.url("/upload"), "--data-binary", f"@{body}", "-H", "Expect:", *framing)
    assert result.status == 200, f"got {result.status} {result.body[:300]!r}"
    assert result.body.decode().strip() == expected, "the body Apache received differs from the one sent"
    settle()
    assert digest_apache.statuses() == [401, 200]


def test_large_post_body_goes_behind_expect_100_continue(auth_proxy, digest_apache, tmp_path):
    """Larger than replay_body_bytes and no credential known yet: the challenge must come
    before the body, so the body is sent once, to the answered request."""
    proxy = auth_proxy(_host(digest_apache, rule("svc", ["digest"])), limits={"replay_body_bytes": REPLAY_LIMIT})
    body, expected = _body_file(tmp_path, 1024 * 1024)
    # "Expect:" stops curl adding its own 100-continue: Countersign must decide.
    result = proxy.fetch(digest_apache.url("/upload"), "--data-binary", f"@{body}", "-H", "Expect:")
    assert result.status == 200, f"got {result.status} {result.body[:300]!r}"
    assert result.body.decode().strip() == expected
    settle()
    assert digest_apache.statuses() == [401, 200]

    # Now the space is known: the next large body goes preemptively, in one request.
    mark = digest_apache.mark()
    result = proxy.fetch(digest_apache.url("/upload"), "--data-binary", f"@{body}", "-H", "Expect:")
    assert result.status == 200 and result.body.decode().strip() == expected
    settle()
    assert digest_apache.statuses(mark) == [200]


def test_apache_digest_state_is_permanent_across_restart(auth_proxy, digest_apache, tmp_path):
    state_dir = tmp_path / "auth-state"
    hosts = _host(digest_apache, rule("svc", ["digest"], persistence="permanent"))
    first = auth_proxy(hosts, state_dir=state_dir)
    _get_secret(first, digest_apache, 2)
    first.stop()
    assert_state_saved_privately(state_dir)

    mark = digest_apache.mark()
    second = auth_proxy(hosts, state_dir=state_dir)
    _get_secret(second, digest_apache, 1)
    settle()
    assert digest_apache.statuses(mark) == [200], \
        f"the first request after a restart should reuse the saved nonce and next count:\n{digest_apache.error_text()}"


def _httpbin_path(qop: str, algorithm: str) -> str:
    # httpbin takes the expected user and password from the path (no query string: it breaks
    # httpbin's Digest), so this test's password is in a URL and Countersign logs the path.
    return f"/digest-auth/{qop}/{SVC_USER}/{SVC_PASSWORD}/{algorithm}"


@pytest.mark.parametrize("qop,algorithm", [("auth", "MD5"), ("auth", "SHA-256"), ("auth-int", "MD5"),
                                           ("auth-int", "SHA-256")])
def test_httpbin_digest(auth_proxy, httpbin, qop, algorithm):
    proxy = auth_proxy(_host(httpbin, rule("svc", ["digest"])))
    mark = httpbin.mark()
    for _ in range(2):
        result = proxy.fetch(httpbin.url(_httpbin_path(qop, algorithm)))
        assert result.status == 200, f"got {result.status} {result.body[:200]!r}"
        assert json_body(result) == {"authenticated": True, "user": SVC_USER}
    settle()
    # httpbin keeps no nonces, so the remembered one is accepted with the next count.
    assert httpbin.statuses(mark) == [401, 200, 200]


def test_httpbin_sha512_is_not_rfc7616_and_goes_to_the_client_unanswered(auth_proxy, httpbin):
    """httpbin's "SHA-512" is full SHA-512, not RFC 7616's SHA-512-256: nothing answers it."""
    proxy = auth_proxy(_host(httpbin, rule("svc", ["digest"])))
    mark = httpbin.mark()
    result = proxy.fetch(httpbin.url(_httpbin_path("auth", "SHA-512")))
    assert result.status == 401
    assert "sha-512" in result.header("WWW-Authenticate", "").lower()
    settle()
    assert httpbin.statuses(mark) == [401], "an unanswerable challenge must not be retried"


def test_httpbin_endless_stale_nonces_cause_no_burst(auth_proxy, httpbin):
    """The client's cookie stale_after=0 makes httpbin call every answer stale: Countersign
    must give up after a bounded number of attempts and hand over the 401."""
    proxy = auth_proxy(_host(httpbin, rule("svc", ["digest"], max_failures=1)))
    mark = httpbin.mark()
    result = proxy.fetch(httpbin.url(_httpbin_path("auth", "MD5")), "-H", "Cookie: stale_after=0",
                         timeout=10)
    settle()
    attempts = len(httpbin.since(mark))
    assert 2 <= attempts <= 4, f"{attempts} upstream requests for one client request against endless stale nonces"
    assert result.status == 401, f"the client should get the last 401, got {result.status} ({result.stderr.strip()})"
