"""OAuth2 access tokens as `inject` and placeholder values (SPEC "Injecting, signing and
verifying": "the value of credential NAME (its password, token, value or OAuth2 access token)").
An API that never challenges still gets a client-credentials token Countersign fetched, reused
and refreshed: the token endpoint over evaluated TLS and the Bearer API share one token ledger
(harness/oauth2_peers.py), so the API judges exactly the tokens the endpoint issued."""
import pytest

from conftest_auth import AuthProxy
from conftest_oauth2 import IDP_CLIENT_ID, IDP_SCOPE, IDP_SECRET, secret_forms
from harness.oauth2_peers import BearerOrigin

pytestmark = pytest.mark.countersign_only


@pytest.fixture
def injecting_proxy(countersign, tmp_path, auth_pki):
    """Factory: injecting_proxy(endpoint, origin, host) -> AuthProxy with credential "idp"
    (OAuth2 at `endpoint`) and `host` as the origin's entry (its inject / placeholders)."""
    clients = tmp_path / "clients"
    clients.mkdir()

    def start(endpoint, origin, host: dict) -> AuthProxy:
        oauth2 = {"token_url": endpoint.url, "client_id": IDP_CLIENT_ID, "client_secret_env": "IDP_SECRET", "scope": IDP_SCOPE}
        hosts = {origin.authority: {"intercept": False, **host},
                 endpoint.authority: {"intercept": False, "trust": {"anchors": [str(auth_pki / "root.pem")]}}}
        return AuthProxy(countersign({"credentials": {"idp": {"oauth2": oauth2}}, "hosts": hosts}, env={"IDP_SECRET": IDP_SECRET}), clients)

    return start


INJECT_BEARER = {"inject": [{"header": "Authorization", "prefix": "Bearer ", "credential": "idp"}]}


def _assert_nothing_leaked(proxy, endpoint) -> None:
    output = proxy.stderr_text()
    leaked = [name for name, value in secret_forms().items() if value in output]
    leaked += [f"access token {token}" for token in endpoint.ledger.issued() if token in output]
    assert not leaked, f"Countersign's output contains {leaked}"


def test_an_injected_access_token_is_fetched_once_and_reused(injecting_proxy, token_endpoint, bearer_origin):
    proxy = injecting_proxy(token_endpoint, bearer_origin, INJECT_BEARER)
    for attempt in range(3):
        result = proxy.fetch(bearer_origin.url(), "-H", "Authorization: Basic Y2xpZW50Om93bg==")
        assert (result.status, result.body) == (200, BearerOrigin.BODY), f"request {attempt + 1}: {result.status} {result.body[:300]!r}"
    # Injected from the first request on: the API never saw a request without the token, nor the client's own value.
    assert bearer_origin.verdicts() == ["ok", "ok", "ok"]
    assert token_endpoint.fetches() == 1, f"one token should serve every request; {token_endpoint.fetches()} fetches"
    _assert_nothing_leaked(proxy, token_endpoint)


def test_a_placeholder_for_an_oauth2_credential_becomes_its_access_token(injecting_proxy, token_endpoint, bearer_origin):
    proxy = injecting_proxy(token_endpoint, bearer_origin, {"placeholders": ["idp"]})
    result = proxy.fetch(bearer_origin.url(), "-H", "Authorization: Bearer countersign:idp")
    assert (result.status, result.body) == (200, BearerOrigin.BODY), f"{result.status} {result.body[:300]!r}"
    assert [request.token for request in bearer_origin.requests()] == token_endpoint.issued_tokens()
    # Without the placeholder there is nothing to resolve: no token is fetched for it.
    mark = bearer_origin.mark()
    assert proxy.fetch(bearer_origin.url()).status == 401
    assert bearer_origin.verdicts(mark) == ["missing"] and token_endpoint.fetches() == 1


def test_a_refused_token_goes_to_the_client_once_and_the_next_request_fetches_anew(injecting_proxy, token_endpoint, bearer_origin):
    proxy = injecting_proxy(token_endpoint, bearer_origin, INJECT_BEARER)
    assert proxy.fetch(bearer_origin.url()).status == 200
    bearer_origin.revoke(token_endpoint.issued_tokens()[0])
    mark = bearer_origin.mark()
    refused = proxy.fetch(bearer_origin.url())
    # No challenge was answered, so nothing is replayed: the API's 401 is the client's, once.
    assert refused.status == 401 and bearer_origin.verdicts(mark) == ["revoked"]
    again = proxy.fetch(bearer_origin.url())
    assert again.status == 200, f"{again.status} {again.body[:300]!r}"
    assert token_endpoint.fetches() == 2
    assert bearer_origin.verdicts(mark) == ["revoked", "ok"]


def test_a_failing_token_endpoint_is_a_502_naming_it_and_nothing_goes_upstream(injecting_proxy, token_endpoint_factory, bearer_origin):
    endpoint = token_endpoint_factory(behaviour="error-500")
    proxy = injecting_proxy(endpoint, bearer_origin, INJECT_BEARER)
    result = proxy.fetch(bearer_origin.url())
    assert result.status == 502
    status = result.header("Proxy-Status") or ""
    assert "OAuth2 token endpoint" in status and endpoint.url in status, status
    assert bearer_origin.requests() == []
    # The proxy serves the next request as well (the endpoint recovered).
    endpoint.behaviour = "ok"
    assert proxy.fetch(bearer_origin.url()).status == 200
