"""Operations: SIGHUP applies a good configuration and keeps the old one on a bad one;
SIGTERM reports not-ready, keeps serving new connections until the drain is quiet, lets open
tunnels finish and exits within drain_timeout."""
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


def test_requests_made_during_the_drain_are_answered_then_it_exits_once_quiet(countersign, origin):
    """An application shutting down beside the sidecar makes its last requests after the
    proxy got SIGTERM: each is answered (never a refused connection), with Connection: close,
    while /readyz says 503; once nothing arrives for drain_quiet_period the process exits 0,
    long before drain_timeout."""
    proxy = countersign({"limits": {"drain_timeout": "20s", "drain_quiet_period": "1s"}})
    keep_alive = RawConnection("127.0.0.1", proxy.port)
    keep_alive.send(forward_request(origin.url("/echo?before=drain")))
    assert keep_alive.read_response().status == 200
    proxy.process.signal(signal.SIGTERM)
    assert wait_until(lambda: _admin_status(proxy, "/readyz") == 503, timeout=2), "/readyz did not turn 503 on SIGTERM"
    assert keep_alive.peer_closed(timeout=2), "an idle keep-alive connection was not closed when the drain began"

    # New connections for 2.5 s, each well within the quiet period of the one before.
    answered = []
    until = time.monotonic() + 2.5
    while time.monotonic() < until:
        reply = exchange("127.0.0.1", proxy.port, forward_request(origin.url(f"/echo?during=drain&n={len(answered)}")))
        assert reply.status == 200, f"request {len(answered)} during the drain got {reply.status}"
        assert (reply.header("connection") or "").lower() == "close", "a response during the drain did not say Connection: close"
        answered.append(reply)
        assert _admin_status(proxy, "/readyz") == 503
        time.sleep(0.3)  # the pace of an application stopping: a request every ~0.3 s (no condition to wait for)
    assert proxy.alive(), "the proxy stopped while requests kept arriving within the quiet period"

    last = time.monotonic()
    code = proxy.wait_exit(timeout=10)
    quiet_for = time.monotonic() - last
    assert code == 0, f"exit code {code} after a quiet drain"
    assert quiet_for < 8, f"exited {quiet_for:.1f}s after the last request: it waited for drain_timeout, not the quiet period"
    assert len(answered) >= 5


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
    # Still accepting: a client arriving now is served, not refused.
    assert exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo?new=client"))).status == 200

    tunnel.send(request_bytes("GET", "/echo?during=drain", [("Host", origin.authority)]))
    assert tunnel.read_response().status == 200, "an open tunnel stopped working as soon as draining began"

    # The tunnel stays open past drain_timeout: that must not keep the process alive.
    code = proxy.wait_exit(timeout=3 + 3)
    elapsed = time.monotonic() - sent
    assert code is not None, f"still running {elapsed:.1f}s after SIGTERM with drain_timeout 3s"
    assert code == 0, f"exit code {code} after a drain"
    assert elapsed >= 2.5, f"exited after {elapsed:.1f}s though a tunnel was open (drain_timeout 3s)"
    assert not port_accepts("127.0.0.1", proxy.port)
    tunnel.close()


def _admin_status(proxy, path):
    try:
        return proxy.admin_get(path, timeout=1)[0]
    except OSError:
        return None


def _complaints(proxy):
    return [entry for entry in proxy.logs() if entry.get("level") in ("warn", "warning", "error")]
