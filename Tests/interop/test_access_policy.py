"""Who and what the proxy refuses: unlisted hosts under `unlisted_hosts: "deny"`, and clients
outside a listener's `allow` list."""
import pytest

from harness.checks import assert_nothing_reached, assert_proxy_error
from harness.rawclient import exchange, forward_request, request_bytes

pytestmark = pytest.mark.countersign_only

DENIED = ("http_request_denied", "destination_ip_prohibited")
# "deny" with no listed host would refuse everything, which the configuration rejects.
DENY_UNLISTED = {"unlisted_hosts": "deny", "hosts": {"listed.example": {"intercept": False}}}


def test_unlisted_host_denied_for_plain_request(countersign, origin):
    proxy = countersign(DENY_UNLISTED)
    before = origin.snapshot()
    response = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo")))
    assert_proxy_error(response, 403, proxy, *DENIED)
    assert_nothing_reached(origin, before)


def test_unlisted_host_denied_for_connect(countersign, origin):
    proxy = countersign(DENY_UNLISTED)
    response = exchange("127.0.0.1", proxy.port,
                        request_bytes("CONNECT", origin.authority, [("Host", origin.authority)]), method="CONNECT")
    assert_proxy_error(response, 403, proxy, *DENIED)
    assert origin.connections == 0, "the proxy connected to a denied host"


def test_client_outside_allow_list_is_refused(countersign, origin):
    # The listener is on loopback but admits only 10.0.0.0/8, so this client is outside it.
    proxy = countersign({"listen": [{"allow": ["10.0.0.0/8"]}]})
    before = origin.snapshot()
    response = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo")))
    assert_proxy_error(response, 403, proxy, *DENIED)
    assert_nothing_reached(origin, before)


def test_loopback_client_admitted_by_default(countersign, origin):
    proxy = countersign()
    response = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo")))
    assert response.status == 200
