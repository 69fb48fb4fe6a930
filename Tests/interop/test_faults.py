"""Upstream and client failures: what the client sees, and that the proxy recovers."""
import socket
import threading
import time

import pytest

from harness.checks import assert_proxy_error, assert_vanishing_frees_descriptors
from harness.origin import RESET_ANNOUNCED, wait_for_close
from harness.ports import free_port
from harness.rawclient import RawConnection, exchange, forward_request


class _HalfClosingOrigin:
    """Answers one keep-alive request per connection, then, once the answer has long reached
    the proxy (its connection parked idle), sends FIN and waits for the proxy to close too."""

    def __init__(self, pause: float = 0.3):
        self.pause = pause
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.peer_closed = [threading.Event() for _ in range(8)]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            index = self.connections
            self.connections += 1
            threading.Thread(target=self._serve, args=(client, index), daemon=True).start()

    def _serve(self, client, index):
        with client:
            head = b""
            while b"\r\n\r\n" not in head:
                data = client.recv(65536)
                if not data:
                    return
                head += data
            client.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            time.sleep(self.pause)
            client.shutdown(socket.SHUT_WR)
            wait_for_close(client, seconds=30)
            self.peer_closed[index].set()

    def stop(self):
        self.listener.close()


@pytest.mark.countersign_only
def test_a_pooled_connection_its_origin_closes_is_closed_and_not_used_again(countersign):
    # Parked idle, the connection is watched: the origin's FIN closes it at once (not at
    # idle_timeout, 60 s here), and the next request goes on a new connection.
    origin = _HalfClosingOrigin()
    proxy = countersign({})
    try:
        with RawConnection("127.0.0.1", proxy.port) as connection:
            for index in range(3):
                connection.send(forward_request(f"http://127.0.0.1:{origin.port}/{index}"))
                response = connection.read_response()
                assert response.status == 200 and response.body == b"ok"
                assert origin.peer_closed[index].wait(timeout=5), "a pooled connection its origin closed was kept open"
        assert origin.connections == 3
    finally:
        origin.stop()


def test_upstream_refusing_connections_is_502(proxy):
    closed_port = free_port()
    response = exchange("127.0.0.1", proxy.port, forward_request(f"http://127.0.0.1:{closed_port}/x"))
    assert_proxy_error(response, 502, proxy, "connection_refused", "destination_unavailable")


def test_upstream_reset_mid_body_never_looks_complete(proxy, origin):
    with RawConnection("127.0.0.1", proxy.port, timeout=15) as connection:
        connection.send(forward_request(origin.url("/reset")))
        response = connection.read_response(keep_body=False)
        cut_short = not response.complete or response.body_length < RESET_ANNOUNCED
        assert response.status == 502 or cut_short, "a reset upstream body reached the client as if complete"
        if response.status == 200:
            assert connection.peer_closed(timeout=5), "the client connection stayed open after a truncated body"
    assert exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo"))).status == 200


@pytest.mark.countersign_only
def test_upstream_stalling_past_header_timeout_is_504(countersign, origin):
    proxy = countersign({"limits": {"header_timeout": "2s"}})
    started = time.monotonic()
    response = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/stall")), timeout=20)
    waited = time.monotonic() - started
    assert_proxy_error(response, 504, proxy, "http_response_timeout", "connection_read_timeout")
    assert 1.5 <= waited < 10, f"answered after {waited:.1f}s with a 2s header timeout"


@pytest.mark.slow
@pytest.mark.countersign_only
def test_client_vanishing_mid_download_frees_descriptors(countersign, nginx, big_file, origin):
    proxy = countersign()
    # Warm up against another upstream, so that lazily opened descriptors are counted in the
    # baseline while no pooled connection to nginx exists that the download could reuse.
    assert exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo"))).status == 200
    baseline = proxy.settled_fd_count()

    connection = RawConnection("127.0.0.1", proxy.port)
    connection.send(forward_request(nginx.url("/100m")))
    head = connection.reader.read_head()
    assert b" 200 " in head.split(b"\r\n", 1)[0]
    connection.read_raw(1 << 20)
    assert_vanishing_frees_descriptors(proxy, baseline, connection)
    assert exchange("127.0.0.1", proxy.port, forward_request(nginx.url("/1k"))).status == 200
