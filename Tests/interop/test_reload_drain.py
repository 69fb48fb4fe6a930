"""Operations: SIGHUP applies a good configuration and keeps the old one on a bad one;
SIGTERM reports not-ready, lets open tunnels finish and exits within drain_timeout."""
import signal
import time

import pytest

from harness.checks import assert_proxy_error
from harness.ports import port_accepts, wait_until
from harness.proxies import merge
from harness.rawclient import RawConnection, exchange, forward_request, request_bytes

pytestmark = pytest.mark.countersign_only


def _get(proxy, origin):
    return exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo")))


def test_sighup_applies_changed_config_to_new_requests(countersign, origin):
    proxy = countersign()
    assert _get(proxy, origin).status == 200
    # "deny" needs at least one listed host, or the configuration is refused.
    proxy.reload(merge(proxy.config, {"unlisted_hosts": "deny", "hosts": {"listed.example": {"intercept": False}}}))
    denied = wait_until(lambda: (r := _get(proxy, origin)).status == 403 and r, timeout=5)
    assert denied, f"unlisted_hosts: deny did not take effect within 5s of SIGHUP; complaints: {_complaints(proxy)[-3:]}"
    assert_proxy_error(denied, 403, proxy, "http_request_denied", "destination_ip_prohibited")


def test_sighup_moves_the_listener_to_a_new_address(countersign, origin):
    from harness.ports import free_port
    proxy = countersign()
    assert _get(proxy, origin).status == 200
    old_port, new_port = proxy.port, free_port()
    config = merge(proxy.config, {})
    config["listen"] = [{"address": f"127.0.0.1:{new_port}"}]
    proxy.reload(config)
    assert wait_until(lambda: port_accepts("127.0.0.1", new_port), timeout=5), "the new listen address never accepted"
    reply = exchange("127.0.0.1", new_port, forward_request(origin.url("/echo")))
    assert reply.status == 200
    assert wait_until(lambda: not port_accepts("127.0.0.1", old_port), timeout=5), "the removed listen address still accepts"


def test_sighup_with_broken_config_keeps_old_one_and_logs_why(countersign, origin):
    proxy = countersign()
    assert _get(proxy, origin).status == 200
    complaints_before = len(_complaints(proxy))
    proxy.reload_text('{ listen: [ { address: "127.0.0.1:1" ], oops }')
    logged = wait_until(lambda: len(_complaints(proxy)) > complaints_before, timeout=5)
    assert logged, "a failed reload was not logged as a warning or error"
    assert proxy.alive(), "a broken configuration on reload stopped the proxy"
    assert _get(proxy, origin).status == 200, "the old configuration was not kept"


def test_sighup_with_invalid_value_keeps_old_one(countersign, origin):
    proxy = countersign()
    complaints_before = len(_complaints(proxy))
    proxy.reload(merge(proxy.config, {"unlisted_hosts": "sometimes"}))
    assert wait_until(lambda: len(_complaints(proxy)) > complaints_before, timeout=5), \
        "a reload with an invalid value was not logged"
    assert proxy.alive()
    assert _get(proxy, origin).status == 200


def test_sigterm_with_nothing_open_exits_promptly(countersign, origin):
    proxy = countersign({"limits": {"drain_timeout": "10s"}})
    assert _get(proxy, origin).status == 200
    proxy.process.signal(signal.SIGTERM)
    code = proxy.wait_exit(timeout=3)
    assert code is not None, "with no connection open, draining still waited for drain_timeout"
    assert code == 0


@pytest.mark.slow
def test_sigterm_drains_open_tunnel_reports_not_ready_and_exits_in_time(countersign, origin):
    proxy = countersign({"limits": {"drain_timeout": "3s"}})
    assert proxy.admin_get("/readyz")[0] == 200
    assert proxy.admin_get("/healthz")[0] == 200
    tunnel = RawConnection("127.0.0.1", proxy.port)
    tunnel.send(request_bytes("CONNECT", origin.authority, [("Host", origin.authority)]))
    assert tunnel.read_response("CONNECT").status == 200

    sent = time.monotonic()
    proxy.process.signal(signal.SIGTERM)
    not_ready = wait_until(lambda: _admin_status(proxy, "/readyz") == 503, timeout=2)
    assert not_ready, "/readyz did not answer 503 while draining"
    assert wait_until(lambda: not port_accepts("127.0.0.1", proxy.port), timeout=2), \
        "the proxy still accepts new clients while draining"

    tunnel.send(request_bytes("GET", "/echo?during=drain", [("Host", origin.authority)]))
    assert tunnel.read_response().status == 200, "an open tunnel stopped working as soon as draining began"

    code = proxy.wait_exit(timeout=3 + 3)
    elapsed = time.monotonic() - sent
    assert code is not None, f"still running {elapsed:.1f}s after SIGTERM with drain_timeout 3s"
    assert code == 0, f"exit code {code} after a drain"
    tunnel.close()


def _admin_status(proxy, path):
    try:
        return proxy.admin_get(path, timeout=1)[0]
    except OSError:
        return None


def _complaints(proxy):
    return [entry for entry in proxy.logs() if entry.get("level") in ("warn", "warning", "error")]
