"""OAuth2 client-credentials answered by Countersign (SPEC "Answering challenges" item 8): a
client without any credential asks an API that demands a Bearer token and gets its 200; the
token comes from a token endpoint over evaluated TLS, is reused, fetched anew once when the
API rejects it, never sent expired, and neither it nor the client secret is ever logged.
Fetches are counted at the token endpoint, tokens as the API received them."""
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest_auth import assert_state_saved_privately
from conftest_oauth2 import IDP_CLIENT_ID, IDP_SCOPE, secret_forms
from harness.oauth2_peers import BearerOrigin

pytestmark = pytest.mark.countersign_only

BAD_TOKEN_VERDICTS = ("unknown", "revoked", "expired", "not-bearer")


def _get_api(proxy, origin, times: int = 1) -> None:
    for attempt in range(times):
        result = proxy.fetch(origin.url())
        assert result.status == 200, \
            f"request {attempt + 1}: expected the API's 200, got {result.status} {result.body[:300]!r}"
        assert result.body == BearerOrigin.BODY


def _assert_nothing_leaked(proxy, endpoint) -> None:
    """Neither the client secret (in any encoding) nor any issued token is in the output."""
    output = proxy.stderr_text()
    stdout = proxy.process.process.stdout_path
    if stdout.exists():
        output += stdout.read_text(errors="replace")
    leaked = [name for name, value in secret_forms().items() if value in output]
    leaked += [f"access token {token}" for token in endpoint.ledger.issued() if token in output]
    assert not leaked, f"Countersign's output contains {leaked}"


def _proxy_status(result) -> str:
    status = result.header("Proxy-Status")
    assert status, f"no Proxy-Status on the {result.status}; headers: {result.headers}"
    return status


def test_client_gets_api_200_and_token_is_fetched_once(oauth2_proxy, token_endpoint, bearer_origin):
    proxy = oauth2_proxy(token_endpoint, bearer_origin)
    _get_api(proxy, bearer_origin, 3)

    assert token_endpoint.fetches() == 1, \
        f"one token should serve every request; the endpoint was asked {token_endpoint.fetches()} times"
    verdicts = bearer_origin.verdicts()
    assert verdicts in (["missing", "ok", "ok", "ok"], ["ok", "ok", "ok"]), \
        f"the API saw {verdicts}: after the first exchange every request should carry the token"
    presented = {request.token for request in bearer_origin.requests() if request.token}
    assert presented == set(token_endpoint.issued_tokens())
    outcomes = proxy.auth_outcomes(3)
    assert all(outcome != "-" and not outcome.endswith(":rejected") for outcome in outcomes), \
        f"the access log should record an auth outcome per exchange, got {outcomes}"
    _assert_nothing_leaked(proxy, token_endpoint)


@pytest.mark.parametrize("auth, placement", [("basic", "basic"), ("body", "body"), (None, "basic")],
                         ids=["basic", "body", "default-is-basic"])
def test_client_secret_goes_where_oauth2_auth_says(oauth2_proxy, token_endpoint, bearer_origin, auth, placement):
    proxy = oauth2_proxy(token_endpoint, bearer_origin, auth=auth)
    _get_api(proxy, bearer_origin)

    [request] = token_endpoint.requests()
    assert request.placement == placement, \
        f'with oauth2.auth {auth!r} the secret belongs in {placement}, but it was in {request.placement}'
    assert request.secret_matched and request.client_id == IDP_CLIENT_ID, \
        "the endpoint did not recognise the client: id and secret must be form-encoded before " \
        "they go into Basic (RFC 6749 §2.3.1) and form-encoded in a body"
    assert request.method == "POST"
    assert request.content_type.lower().startswith("application/x-www-form-urlencoded")
    assert (request.grant_type, request.scope) == ("client_credentials", IDP_SCOPE)
    _assert_nothing_leaked(proxy, token_endpoint)


def test_revoked_token_is_fetched_anew_once(oauth2_proxy, token_endpoint, bearer_origin):
    proxy = oauth2_proxy(token_endpoint, bearer_origin)
    _get_api(proxy, bearer_origin, 2)
    [first_token] = token_endpoint.issued_tokens()
    bearer_origin.revoke(first_token)

    mark = bearer_origin.mark()
    _get_api(proxy, bearer_origin)
    assert token_endpoint.fetches() == 2, "a rejected token is replaced by exactly one new fetch"
    assert bearer_origin.verdicts(mark) == ["revoked", "ok"], \
        "the API should see the revoked token once, then the new one on the replay"
    new_token = token_endpoint.issued_tokens()[-1]
    assert bearer_origin.since(mark)[-1].token == new_token != first_token

    mark = bearer_origin.mark()
    _get_api(proxy, bearer_origin)
    assert token_endpoint.fetches() == 2, "the new token is reused"
    assert [(request.verdict, request.token) for request in bearer_origin.since(mark)] == [("ok", new_token)]
    _assert_nothing_leaked(proxy, token_endpoint)


def test_api_rejecting_every_token_costs_no_burst(oauth2_proxy, token_endpoint, bearer_origin):
    bearer_origin.reject_all = True
    proxy = oauth2_proxy(token_endpoint, bearer_origin)
    for attempt in range(2):
        result = proxy.fetch(bearer_origin.url())
        assert result.status == 401, f"request {attempt + 1}: the client should get the API's final 401"
        assert result.header("WWW-Authenticate", "").lower().startswith("bearer")
        assert token_endpoint.fetches() <= 2 * (attempt + 1), \
            f"{token_endpoint.fetches()} token fetches after {attempt + 1} client request(s); " \
            "one new fetch per rejection at most"
        assert len(bearer_origin.requests()) <= 3 * (attempt + 1), \
            f"{len(bearer_origin.requests())} API requests after {attempt + 1} client request(s)"
    _assert_nothing_leaked(proxy, token_endpoint)


@pytest.mark.parametrize("behaviour", ["error-500", "invalid-client", "garbage"])
def test_failing_token_endpoint_gives_502_naming_it(oauth2_proxy, token_endpoint_factory, bearer_origin,
                                                    behaviour):
    endpoint = token_endpoint_factory(behaviour=behaviour)
    proxy = oauth2_proxy(endpoint, bearer_origin)
    for attempt in range(2):
        result = proxy.fetch(bearer_origin.url())
        assert result.status == 502, \
            f"request {attempt + 1}: expected 502 when the token endpoint fails, got {result.status}"
        status = _proxy_status(result)
        assert endpoint.authority in status or endpoint.url in status, \
            f"Proxy-Status should name the token endpoint {endpoint.url}: {status}"
        assert 1 <= endpoint.fetches() <= 2 * (attempt + 1), \
            f"{endpoint.fetches()} token fetches after {attempt + 1} client request(s)"
    assert all(request.token is None for request in bearer_origin.requests()), \
        "no token was issued, so none may reach the API"
    _assert_nothing_leaked(proxy, endpoint)


@pytest.mark.parametrize("chain, key, trust_endpoint", [
    ("leaf-chain.pem", "leaf.key", False),        # no hosts entry: the system roots, which lack the test root
    ("evil-leaf-chain.pem", "evil-leaf.key", True),  # the entry trusts the test root; served by another CA
], ids=["system-roots", "anchors-of-hosts-entry"])
def test_untrusted_token_endpoint_gives_502_and_gets_no_secret(oauth2_proxy, token_endpoint_factory,
                                                              bearer_origin, chain, key, trust_endpoint):
    endpoint = token_endpoint_factory(chain=chain, key=key)
    proxy = oauth2_proxy(endpoint, bearer_origin, trust_endpoint=trust_endpoint)
    result = proxy.fetch(bearer_origin.url())

    assert result.status == 502, f"expected 502 for an untrusted token endpoint, got {result.status}"
    status = _proxy_status(result)
    assert "tls" in status.lower(), f"Proxy-Status should report a TLS error: {status}"
    assert endpoint.authority in status or endpoint.url in status, \
        f"Proxy-Status should name the token endpoint {endpoint.url}: {status}"
    assert endpoint.connections >= 1, "Countersign never even connected to the token endpoint"
    assert endpoint.requests() == [], "the token request (and the secret) went to an untrusted endpoint"
    assert all(request.token is None for request in bearer_origin.requests())
    _assert_nothing_leaked(proxy, endpoint)


def test_token_is_not_sent_after_expiry(oauth2_proxy, token_endpoint_factory, bearer_origin):
    endpoint = token_endpoint_factory(lifetime=2)
    proxy = oauth2_proxy(endpoint, bearer_origin)
    _get_api(proxy, bearer_origin)
    assert endpoint.fetches() == 1

    time.sleep(2.5)
    _get_api(proxy, bearer_origin)
    assert endpoint.fetches() == 2, "after expiry the next request needs a new token"
    verdicts = bearer_origin.verdicts()
    assert not set(verdicts) & set(BAD_TOKEN_VERDICTS), \
        f"the API received a token it had not issued or that had expired: {verdicts}"
    assert bearer_origin.requests()[-1].token == endpoint.issued_tokens()[-1]
    _assert_nothing_leaked(proxy, endpoint)


def test_token_close_to_expiry_is_replaced_before_the_request_goes(oauth2_proxy, token_endpoint_factory,
                                                                   bearer_origin):
    """"Refreshed ahead of expiry": a request in the last moments of a token's life goes out
    with a freshly fetched token, not bare to collect a 401 first. 5 s tokens; the request at
    4.7 s is inside any sensible refresh margin (Countersign's: 10 % of the lifetime, at most
    60 s) yet before expiry."""
    endpoint = token_endpoint_factory(lifetime=5)
    proxy = oauth2_proxy(endpoint, bearer_origin)
    _get_api(proxy, bearer_origin)

    time.sleep(4.7)
    mark = bearer_origin.mark()
    _get_api(proxy, bearer_origin)
    assert endpoint.fetches() == 2, "a token about to expire should have been replaced"
    seen = [(request.verdict, request.token == endpoint.issued_tokens()[-1]) for request in bearer_origin.since(mark)]
    assert seen == [("ok", True)], \
        f"the API should get one request carrying the new token; it got (verdict, is-new-token) {seen}"


def test_short_lived_tokens_are_refreshed_without_ever_sending_one_expired(oauth2_proxy, token_endpoint_factory,
                                                                          bearer_origin):
    """A steady stream of requests across several expiries: every one succeeds and none
    carries an expired token, whatever the moment it arrives relative to the expiry."""
    endpoint = token_endpoint_factory(lifetime=1.5)
    proxy = oauth2_proxy(endpoint, bearer_origin)
    deadline = time.monotonic() + 4.0
    while time.monotonic() < deadline:
        _get_api(proxy, bearer_origin)
        time.sleep(0.1)

    verdicts = bearer_origin.verdicts()
    expired = [request for request in bearer_origin.requests() if request.verdict in BAD_TOKEN_VERDICTS]
    assert not expired, f"{len(expired)} of {len(verdicts)} API requests carried a bad token: " \
                        f"{[request.verdict for request in expired]}"
    assert endpoint.fetches() >= 3, \
        f"4 s of 1.5 s tokens need at least 3 fetches, the endpoint saw {endpoint.fetches()}"
    _assert_nothing_leaked(proxy, endpoint)


def test_debug_logs_hold_neither_secret_nor_tokens(oauth2_proxy, token_endpoint, bearer_origin):
    proxy = oauth2_proxy(token_endpoint, bearer_origin, log_level="debug", auth="body")
    _get_api(proxy, bearer_origin, 2)
    bearer_origin.revoke(token_endpoint.issued_tokens()[0])
    _get_api(proxy, bearer_origin)
    assert token_endpoint.fetches() == 2
    _assert_nothing_leaked(proxy, token_endpoint)


def _assert_token_state_private(state_dir) -> None:
    """The state file holds the token (SPEC: `permanent` keeps it) but never the client secret."""
    assert_state_saved_privately(state_dir)
    for path in state_dir.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            leaked = [name for name, value in secret_forms().items() if value in text]
            assert not leaked, f"state file {path.name} contains {leaked}"


def test_permanent_rule_keeps_its_token_across_restart(oauth2_proxy, token_endpoint, bearer_origin, tmp_path):
    state_dir = tmp_path / "oauth2-state"
    first = oauth2_proxy(token_endpoint, bearer_origin, persistence="permanent", state_dir=state_dir)
    _get_api(first, bearer_origin, 2)
    first.stop()
    assert token_endpoint.fetches() == 1
    _assert_token_state_private(state_dir)

    mark = bearer_origin.mark()
    second = oauth2_proxy(token_endpoint, bearer_origin, persistence="permanent", state_dir=state_dir)
    _get_api(second, bearer_origin)
    assert token_endpoint.fetches() == 1, "the restarted proxy should reuse the saved, unexpired token"
    seen = [(request.verdict, request.token) for request in bearer_origin.since(mark)]
    assert seen == [("ok", token_endpoint.issued_tokens()[0])], \
        f"the first request after a restart should carry the saved token, the API saw {seen}"


def test_saved_token_is_not_reused_for_another_scope_or_after_expiry(oauth2_proxy, token_endpoint_factory,
                                                                     bearer_origin, tmp_path):
    endpoint = token_endpoint_factory(lifetime=3)
    state_dir = tmp_path / "oauth2-state"
    first = oauth2_proxy(endpoint, bearer_origin, persistence="permanent", state_dir=state_dir)
    _get_api(first, bearer_origin)
    first.stop()

    rescoped = oauth2_proxy(endpoint, bearer_origin, persistence="permanent", state_dir=state_dir, scope="write")
    _get_api(rescoped, bearer_origin)
    assert endpoint.fetches() == 2, "a token saved for scope 'read' must not serve scope 'write'"
    assert endpoint.requests()[-1].scope == "write"
    rescoped.stop()

    time.sleep(3.2)
    mark = bearer_origin.mark()
    later = oauth2_proxy(endpoint, bearer_origin, persistence="permanent", state_dir=state_dir, scope="write")
    _get_api(later, bearer_origin)
    assert endpoint.fetches() == 3, "a saved token that has expired is fetched anew"
    assert not {request.verdict for request in bearer_origin.since(mark)} & set(BAD_TOKEN_VERDICTS)


def test_session_rule_writes_no_token_to_state_dir(oauth2_proxy, token_endpoint, bearer_origin, tmp_path):
    state_dir = tmp_path / "oauth2-state"
    proxy = oauth2_proxy(token_endpoint, bearer_origin, persistence="session", state_dir=state_dir)
    _get_api(proxy, bearer_origin)
    proxy.stop()
    files = [path.name for path in state_dir.rglob("*") if path.is_file()] if state_dir.exists() else []
    assert files == [], f"a `session` rule must leave nothing in state_dir, found {files}"


@pytest.mark.parametrize("schemes", [["bearer"], ["oauth2"]])
def test_oauth2_credential_answers_bearer_challenges_by_either_name(oauth2_proxy, token_endpoint, bearer_origin, schemes):
    """The scheme names are the challenges': `bearer` names an OAuth2 credential; `oauth2` is
    kept as another name for it."""
    proxy = oauth2_proxy(token_endpoint, bearer_origin, schemes=schemes)
    _get_api(proxy, bearer_origin, 2)
    assert proxy.auth_outcomes(2) == ["bearer:answered", "bearer:preemptive"]
    assert token_endpoint.fetches() == 1
    _assert_nothing_leaked(proxy, token_endpoint)


CONCURRENT_CLIENTS = 16


def _get_api_concurrently(proxy, origin, clients: int = CONCURRENT_CLIENTS) -> list:
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(lambda _: proxy.fetch(origin.url()), range(clients)))
    statuses = [result.status for result in results]
    assert statuses == [200] * clients, f"every client should get the API's 200, got {statuses}"
    return results


def test_one_token_fetch_for_the_whole_process(oauth2_proxy, token_endpoint, bearer_origin):
    """Two workers, clients at once (connections spread over both by SO_REUSEPORT), then one
    after another: the token endpoint is asked once in all (single flight across workers)."""
    proxy = oauth2_proxy(token_endpoint, bearer_origin, workers=2)
    _get_api_concurrently(proxy, bearer_origin)
    assert token_endpoint.fetches() == 1, \
        f"{CONCURRENT_CLIENTS} concurrent clients on 2 workers made {token_endpoint.fetches()} token fetches"
    _get_api(proxy, bearer_origin, 8)
    assert token_endpoint.fetches() == 1, f"sequential requests on either worker made {token_endpoint.fetches()} fetches"
    _assert_nothing_leaked(proxy, token_endpoint)


def test_rejected_token_is_fetched_anew_once_however_many_requests_saw_it_rejected(oauth2_proxy, token_endpoint,
                                                                                     bearer_origin):
    proxy = oauth2_proxy(token_endpoint, bearer_origin, workers=2)
    _get_api(proxy, bearer_origin)
    [first_token] = token_endpoint.issued_tokens()
    bearer_origin.revoke(first_token)

    mark = bearer_origin.mark()
    _get_api_concurrently(proxy, bearer_origin)
    assert token_endpoint.fetches() == 2, \
        f"the revoked token was replaced by {token_endpoint.fetches() - 1} fetches for {CONCURRENT_CLIENTS} concurrent requests"
    new_token = token_endpoint.issued_tokens()[-1]
    assert {request.token for request in bearer_origin.since(mark) if request.verdict == "ok"} == {new_token}
    _get_api(proxy, bearer_origin, 4)
    assert token_endpoint.fetches() == 2, "the new token is reused on every worker"
    _assert_nothing_leaked(proxy, token_endpoint)
