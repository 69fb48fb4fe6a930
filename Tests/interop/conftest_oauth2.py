"""Fixtures for test_auth_oauth2.py: a token endpoint over HTTPS and a Bearer-protected origin
sharing one token ledger (harness/oauth2_peers.py), and a factory starting Countersign with an
`oauth2` credential whose client secret it gets from its environment."""
import base64
from urllib.parse import quote_plus

import pytest

from conftest_auth import AuthProxy
from harness.oauth2_peers import BearerOrigin, TokenEndpoint, TokenLedger

# What `from conftest_oauth2 import *` in conftest.py brings in: the fixtures only.
__all__ = ["token_ledger", "token_endpoint_factory", "token_endpoint", "bearer_origin", "oauth2_proxy"]

IDP_CLIENT_ID = "app"
# Distinctive, and with characters that must be form-encoded (RFC 6749 §2.3.1) both in Basic
# and in a form body: a space, ':', '+', '/', '&', '='.
IDP_SECRET = "idp-S3cret:+/ &=7f2c"
IDP_SCOPE = "read"


def secret_forms() -> dict:
    """Every way the client secret could leak into output."""
    encoded = quote_plus(IDP_SECRET)
    return {
        "the client secret": IDP_SECRET,
        "the form-encoded client secret": encoded,
        "the Basic token68 of the client": base64.b64encode(f"{IDP_CLIENT_ID}:{encoded}".encode()).decode(),
    }


@pytest.fixture
def token_ledger() -> TokenLedger:
    return TokenLedger()


@pytest.fixture
def token_endpoint_factory(token_ledger, auth_pki):
    """Factory: token_endpoint_factory(behaviour="ok", lifetime=300, rotate=True,
    chain="leaf-chain.pem", key="leaf.key") -> TokenEndpoint on the test PKI (localhost)."""
    started = []

    def start(chain: str = "leaf-chain.pem", key: str = "leaf.key", **options) -> TokenEndpoint:
        endpoint = TokenEndpoint(token_ledger, auth_pki / chain, auth_pki / key,
                                 IDP_CLIENT_ID, IDP_SECRET, **options)
        started.append(endpoint)
        return endpoint

    yield start
    for endpoint in started:
        endpoint.stop()


@pytest.fixture
def token_endpoint(token_endpoint_factory) -> TokenEndpoint:
    return token_endpoint_factory()


@pytest.fixture
def bearer_origin(token_ledger):
    origin = BearerOrigin(token_ledger)
    yield origin
    origin.stop()


@pytest.fixture
def oauth2_proxy(countersign, tmp_path, auth_pki):
    """Factory: oauth2_proxy(endpoint, origin, auth=None, trust_endpoint=True, log_level="info",
    scope=IDP_SCOPE, state_dir=None, workers=None, **rule_options) -> AuthProxy: Countersign with credential
    "idp" (oauth2 at `endpoint`, the secret placed as `auth` says, the key omitted when None)
    answering `origin`'s Bearer challenges over plain HTTP. With `trust_endpoint` the
    endpoint's host entry trusts the test PKI's root; without it there is no entry, so the
    system roots apply."""
    clients = tmp_path / "oauth2-client"
    clients.mkdir()

    def start(endpoint: TokenEndpoint, origin: BearerOrigin, auth: str = None, trust_endpoint: bool = True,
              log_level: str = "info", scope: str = IDP_SCOPE, state_dir=None, workers: int = None,
              **rule_options) -> AuthProxy:
        oauth2 = {"token_url": endpoint.url, "client_id": IDP_CLIENT_ID,
                  "client_secret_env": "IDP_SECRET", "scope": scope}
        if auth is not None:
            oauth2["auth"] = auth
        rule = {"credential": "idp", "schemes": ["oauth2"], "allow_plaintext": True, **rule_options}
        hosts = {origin.authority: {"intercept": False, "auth": [rule]}}
        if trust_endpoint:
            hosts[endpoint.authority] = {"intercept": False, "trust": {"anchors": [str(auth_pki / "root.pem")]}}
        overrides = {"credentials": {"idp": {"oauth2": oauth2}}, "hosts": hosts, "log": {"level": log_level}}
        if state_dir:
            overrides["state_dir"] = str(state_dir)
        if workers:
            overrides["workers"] = workers
        return AuthProxy(countersign(overrides, env={"IDP_SECRET": IDP_SECRET}), clients)

    return start
