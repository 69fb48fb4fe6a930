"""One configuration generation serves a request from routing to its end: a reload that lands
while a CONNECT is being established does not change the tunnel it becomes."""
import json
import socket
import threading
import time

import pytest

from harness.ports import free_port, wait_until
from harness.proxies import merge

pytestmark = pytest.mark.countersign_only


class HeldParent:
    """A parent proxy that takes one CONNECT and answers 200 only when told to, then keeps the
    tunnel open and notes when Countersign closes it."""

    def __init__(self):
        self.port = free_port()
        self.server = socket.create_server(("127.0.0.1", self.port))
        self.connect_seen = threading.Event()
        self.answer = threading.Event()
        self.closed_at = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.server.settimeout(20)
        try:
            conn, _ = self.server.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(60)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            self.connect_seen.set()
            self.answer.wait(20)
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            try:
                while conn.recv(4096):
                    pass
            except OSError:
                pass
            self.closed_at = time.monotonic()

    def close(self):
        self.answer.set()
        self.server.close()


def _generation(proxy) -> int:
    status, body = proxy.admin_get("/status.json")
    return json.loads(body)["configuration_generation"] if status == 200 else -1


def test_a_tunnel_keeps_the_idle_timeout_of_the_generation_it_was_routed_with(countersign):
    parent = HeldParent()
    try:
        proxy = countersign({"parent_proxy": {"url": f"http://127.0.0.1:{parent.port}"}, "limits": {"tunnel_idle_timeout": "1s"}})
        assert wait_until(lambda: _generation(proxy) == 1, timeout=10)
        client = socket.create_connection(("127.0.0.1", proxy.port), timeout=30)
        with client:
            client.sendall(b"CONNECT held.example:443 HTTP/1.1\r\nHost: held.example:443\r\n\r\n")
            assert parent.connect_seen.wait(10), "the CONNECT never reached the parent"
            # While the parent holds its answer, a reload makes idle tunnels last a minute.
            proxy.reload(merge(proxy.config, {"limits": {"tunnel_idle_timeout": "60s"}}))
            assert wait_until(lambda: _generation(proxy) == 2, timeout=10), "the reload was not applied"
            parent.answer.set()
            answer = b""
            while b"\r\n\r\n" not in answer:
                chunk = client.recv(4096)
                assert chunk, f"the proxy closed before answering the CONNECT: {answer!r}"
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200 "), answer
            established = time.monotonic()
            # Idle: the tunnel routed under the 1 s generation ends after about 1 s.
            assert client.recv(4096) == b"", "the idle tunnel sent bytes"
            idle = time.monotonic() - established
        assert idle < 10, f"the tunnel lasted {idle:.1f} s idle: it took the reloaded 60 s tunnel_idle_timeout"
        assert idle > 0.5, f"the tunnel ended after {idle:.1f} s, before its idle timeout"
    finally:
        parent.close()
