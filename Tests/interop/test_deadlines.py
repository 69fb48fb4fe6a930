"""`limits.header_timeout` is an absolute deadline: a peer that sends a head (or a TLS
handshake) one byte at a time is cut off header_timeout after it began, however often a byte
arrives. Each test trickles a byte every 0.2 s with header_timeout at 1 s, and expects the
proxy to react within a small margin, where a timer that bytes restart would wait forever."""
import json
import socket
import ssl
import threading
import time

import pytest

from conftest_intercept import intercepted_host_entry
from harness.checks import assert_proxy_error
from harness.origin import wait_for_close
from harness.ports import wait_until
from harness.rawclient import RawConnection, Response, request_bytes
from harness.trickle import TricklingPeer, trickle
from harness.wire import parse_fields

pytestmark = pytest.mark.countersign_only

HEADER_TIMEOUT = 1.0
# What the proxy may take beyond the deadline on a loaded machine: still far below the time
# the trickles below would last (40 s and more).
MARGIN = 2.5
LIMITS = {"limits": {"header_timeout": "1s"}}
INTERVAL = 0.2
SLOW_HEAD = b"X-Slow: " + b"s" * 400


def _parse(raw: bytes) -> Response:
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, _, fields = head.partition(b"\r\n")
    version, status, reason = status_line.decode("latin-1").split(" ", 2)
    return Response(version, int(status), reason, parse_fields(fields.split(b"\r\n")) if fields else [], body)


@pytest.fixture
def trickling():
    peers = []

    def start(answer: bytes, **options) -> TricklingPeer:
        peer = TricklingPeer(answer, INTERVAL, **options)
        peers.append(peer)
        return peer
    yield start
    for peer in peers:
        peer.stop()


class MemoryTLS:
    """A TLS client over a raw socket through memory BIOs: the test decides how its bytes
    leave (one at a time)."""

    def __init__(self, sock, cafile):
        self.sock = sock
        context = ssl.create_default_context(cafile=str(cafile))
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = context.wrap_bio(self.incoming, self.outgoing, server_hostname="localhost")

    def client_hello(self) -> bytes:
        with pytest.raises(ssl.SSLWantReadError):
            self.tls.do_handshake()
        return self.outgoing.read()

    def handshake(self) -> None:
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.sock.sendall(self.outgoing.read())
                data = self.sock.recv(65536)
                assert data, "the proxy closed the connection during the handshake"
                self.incoming.write(data)
        self.sock.sendall(self.outgoing.read())

    def record(self, plaintext: bytes) -> bytes:
        """`plaintext` as the TLS record(s) it encrypts to, unsent."""
        self.tls.write(plaintext)
        return self.outgoing.read()

    def decrypt(self, raw: bytes) -> bytes:
        """What `raw` decrypts to (session tickets and the like decrypt to nothing)."""
        self.incoming.write(raw)
        plaintext = b""
        while True:
            try:
                data = self.tls.read(65536)
            except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
                return plaintext
            if not data:
                return plaintext
            plaintext += data


class DecryptedAnswer:
    """Collects what the proxy says inside the TLS session while the client trickles."""

    def __init__(self, client: MemoryTLS):
        self.client = client
        self.fed = 0
        self.plaintext = b""

    def arrived(self, piece: bytes) -> bool:
        self.fed += len(piece)
        self.plaintext += self.client.decrypt(piece)
        return bool(self.plaintext)


def _connect_intercepted(proxy, authority: str) -> RawConnection:
    connection = RawConnection("127.0.0.1", proxy.port)
    connection.send(request_bytes("CONNECT", authority, [("Host", authority)]))
    assert connection.read_response("CONNECT").status == 200
    return connection


def test_trickled_client_hello_is_cut_at_the_deadline(intercepting_countersign, intercept_tls_origin, intercept_pki):
    authority = f"localhost:{intercept_tls_origin.port}"
    proxy = intercepting_countersign({authority: intercepted_host_entry(intercept_pki)}, **LIMITS)
    with _connect_intercepted(proxy, authority) as connection:
        hello = MemoryTLS(connection.sock, proxy.ca_certificate).client_hello()
        reacted, _ = trickle(connection.sock, hello, INTERVAL, HEADER_TIMEOUT + 10)
    assert reacted is not None and reacted < HEADER_TIMEOUT + MARGIN, \
        f"a ClientHello trickled byte by byte kept the connection for {reacted or '10+'} s"
    expected = "not completed within 1s"
    assert wait_until(lambda: [e for e in proxy.logs() if e.get("level") == "warn" and expected in json.dumps(e)]), \
        f"no warning saying {expected!r}: {proxy.logs()[-3:]}"
    assert intercept_tls_origin.requests == []


def _answered_in_full(proxy, connection: RawConnection, client: MemoryTLS, authority: str) -> None:
    """One request whose answer (a 204) is read whole and whose exchange has ended (its access
    record is written), so the next head is awaited afresh before any byte of it is sent."""
    connection.sock.sendall(client.record(request_bytes("GET", "/status/204", [("Host", authority)])))
    plaintext = b""
    connection.sock.settimeout(10)
    while b"\r\n\r\n" not in plaintext:
        piece = connection.sock.recv(65536)
        assert piece, f"the proxy closed before answering: {plaintext!r}"
        plaintext += client.decrypt(piece)
    assert plaintext.startswith(b"HTTP/1.1 204"), plaintext[:100]
    assert wait_until(lambda: any(entry.get("path") == "/status/204" for entry in proxy.logs())), \
        f"no access record for the first request: {proxy.logs()[-3:]}"


@pytest.mark.parametrize("second_request", [False, True], ids=["first", "after-keep-alive"])
def test_trickled_head_inside_one_tls_record_gets_408(intercepting_countersign, intercept_tls_origin, intercept_pki,
                                                      second_request):
    """The record cannot be decrypted until its last byte: the bytes still count as a head begun,
    for the first head after the handshake as for one after a response."""
    authority = f"localhost:{intercept_tls_origin.port}"
    proxy = intercepting_countersign({authority: intercepted_host_entry(intercept_pki)}, **LIMITS)
    with _connect_intercepted(proxy, authority) as connection:
        client = MemoryTLS(connection.sock, proxy.ca_certificate)
        client.handshake()
        if second_request:
            _answered_in_full(proxy, connection, client, authority)
        record = client.record(request_bytes("GET", "/echo", [("Host", authority), ("X-Slow", "s" * 400)]))
        answer = DecryptedAnswer(client)
        reacted, received = trickle(connection.sock, record, INTERVAL, HEADER_TIMEOUT + 10, answers=answer.arrived)
        answer.arrived(received[answer.fed:])
    assert reacted is not None and reacted < HEADER_TIMEOUT + MARGIN, \
        f"a request record trickled byte by byte kept the connection for {reacted or '10+'} s"
    assert_proxy_error(_parse(answer.plaintext), 408, proxy.process, "http_request_error")
    assert [seen.target for seen in intercept_tls_origin.requests] == (["/status/204"] if second_request else [])


@pytest.mark.parametrize("second_request", [False, True], ids=["first", "after-keep-alive"])
def test_trickled_plain_head_gets_408_at_the_deadline(countersign, origin, second_request):
    proxy = countersign(LIMITS)
    head = request_bytes("GET", origin.url("/echo"), [("Host", origin.authority), ("X-Slow", "s" * 400)])
    with RawConnection("127.0.0.1", proxy.port) as connection:
        if second_request:
            connection.send(request_bytes("GET", origin.url("/first"), [("Host", origin.authority)]))
            assert connection.read_response().status == 200
        reacted, raw = trickle(connection.sock, head, INTERVAL, HEADER_TIMEOUT + 10)
    assert reacted is not None and reacted < HEADER_TIMEOUT + MARGIN
    assert_proxy_error(_parse(raw), 408, proxy, "http_request_error")


def test_the_deadline_starts_with_the_head_not_with_the_previous_response(countersign, origin):
    """An idle keep-alive connection is ruled by idle_timeout; the next head gets its whole
    header_timeout from its first byte."""
    proxy = countersign({"limits": {"header_timeout": "3s"}})
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection.send(request_bytes("GET", origin.url("/first"), [("Host", origin.authority)]))
        assert connection.read_response().status == 200
        time.sleep(2.0)  # the client's think time: idle, not a head in progress
        head = request_bytes("GET", origin.url("/second"), [("Host", origin.authority)])
        # Ten pieces over about 1.8 s: the head is whole 3.8 s after the first response, 1.8 s after it began.
        piece = -(-len(head) // 10)
        for offset in range(0, len(head), piece):
            time.sleep(0.2) if offset else None
            try:
                connection.send(head[offset:offset + piece])
            except OSError:
                break  # the proxy gave up on the head: its answer says why
        response = connection.read_response()
    assert response.status == 200, f"a head sent within 2 s after 2 s of idleness got {response.status}"


def test_trickled_upstream_response_head_gets_504(countersign, trickling):
    upstream = trickling(b"HTTP/1.1 200 OK\r\n" + SLOW_HEAD)
    proxy = countersign(LIMITS)
    with RawConnection("127.0.0.1", proxy.port) as connection:
        started = time.monotonic()
        connection.send(request_bytes("GET", f"http://{upstream.authority}/", [("Host", upstream.authority)]))
        response = connection.read_response()
    assert time.monotonic() - started < HEADER_TIMEOUT + MARGIN
    assert_proxy_error(response, 504, proxy, "http_response_timeout")


def _assert_cut_at_header_timeout(proxy, origin, what: str):
    """A request for an upstream TLS origin through a trickling parent: a 504 within header_timeout."""
    target = f"https://127.0.0.1:{origin.port}/"
    with RawConnection("127.0.0.1", proxy.port) as connection:
        started = time.monotonic()
        connection.send(request_bytes("GET", target, [("Host", f"127.0.0.1:{origin.port}")]))
        response = connection.read_response()
    assert time.monotonic() - started < HEADER_TIMEOUT + MARGIN, \
        f"a parent trickling {what} held the request for {time.monotonic() - started:.1f} s"
    assert_proxy_error(response, 504, proxy, "http_response_timeout")


def test_trickled_parent_connect_answer_gets_504(countersign, trickling, origin):
    parent = trickling(b"HTTP/1.1 200 Connection established\r\n" + SLOW_HEAD)
    proxy = countersign({**LIMITS, "parent_proxy": {"url": f"http://{parent.authority}"}})
    _assert_cut_at_header_timeout(proxy, origin, "its CONNECT answer")
    assert parent.request_heads[0].startswith(b"CONNECT 127.0.0.1:")


def test_trickled_407_body_from_the_parent_gets_504(countersign, trickling, origin):
    """An answered 407's body is read and dropped within the CONNECT's header_timeout, as an
    origin's 401 body within its response's (one rule, ChallengeBody): a parent trickling that
    body is cut off on its one connection, neither waited for nor asked again."""
    head = (b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"p\"\r\n"
            b"Content-Length: 5000\r\n\r\n")
    parent = trickling(b"x" * 5000, before=head)
    proxy = countersign({**LIMITS, "credentials": {"parent": {"user": "parent-user", "password_env": "PARENT_PASSWORD"}},
                         "parent_proxy": {"url": f"http://{parent.authority}",
                                          "auth": {"credential": "parent", "schemes": ["basic"], "allow_plaintext": True}}},
                        env={"PARENT_PASSWORD": "Trickle-parent-pw-41d0"})
    _assert_cut_at_header_timeout(proxy, origin, "its 407's body")
    assert len(parent.request_heads) == 1, "the CONNECT went once: the body was being read, not given up on"


def test_trickled_upstream_tls_handshake_is_cut_at_connect_timeout(countersign, trickling):
    """An origin that answers the ClientHello one byte at a time (a record that never ends)."""
    upstream = trickling(b"\x16\x03\x03\x40\x00" + b"\x02" * 2000, waits_for_head=False)
    proxy = countersign({"limits": {"connect_timeout": "1s"}})
    with RawConnection("127.0.0.1", proxy.port) as connection:
        started = time.monotonic()
        connection.send(request_bytes("GET", f"https://{upstream.authority}/", [("Host", upstream.authority)]))
        response = connection.read_response()
    assert time.monotonic() - started < 1.0 + MARGIN, \
        f"an origin trickling its handshake held the request for {time.monotonic() - started:.1f} s"
    assert_proxy_error(response, 504, proxy, "connection_timeout")


# `limits.idle_timeout` is the opposite kind of bound: the longest silence, restarted by every
# byte. Its timers are armed once and re-armed only when they fire (no timer operation per
# request or per read), so each test keeps a connection busy for longer than the timeout and
# then expects the cut about one timeout after the last byte, not after the first.
IDLE_TIMEOUT = 1.0


def test_idle_timeout_closes_a_quiet_client_and_its_pooled_upstream_not_a_busy_one(countersign, origin):
    proxy = countersign({"limits": {"idle_timeout": "1s"}})
    with RawConnection("127.0.0.1", proxy.port) as connection:
        for index in range(5):  # 2 s of requests, each within the idle timeout of the last
            time.sleep(0.4) if index else None
            connection.send(request_bytes("GET", origin.url(f"/busy{index}"), [("Host", origin.authority)]))
            assert connection.read_response().status == 200, "a connection in use was cut"
        quiet_since = time.monotonic()
        assert connection.peer_closed(timeout=IDLE_TIMEOUT + MARGIN), "the quiet client was kept past idle_timeout"
        quiet = time.monotonic() - quiet_since
    assert quiet > IDLE_TIMEOUT * 0.8, f"the client was closed after {quiet:.2f} s of quiet"
    assert {request.connection_id for request in origin.requests} == {1}, "the pooled upstream was not reused"
    assert wait_until(lambda: not origin.open_sockets, timeout=MARGIN), "the idle pooled upstream was kept"


class _SlowBodyOrigin:
    """Answers one request with a head and the start of a 100-byte body, then one byte every
    `interval` seconds `count` times, then silence (the connection stays open)."""

    def __init__(self, interval: float, count: int):
        self.interval, self.count = interval, count
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.last_byte_at = None
        self.closed = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        client, _ = self.listener.accept()
        with client:
            head = b""
            while b"\r\n\r\n" not in head:
                head += client.recv(65536)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            client.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nstart")
            for _ in range(self.count):
                time.sleep(self.interval)
                client.sendall(b".")
            self.last_byte_at = time.monotonic()
            wait_for_close(client, seconds=30)
            self.closed.set()

    def stop(self):
        self.listener.close()


def test_a_response_body_is_cut_after_idle_timeout_of_silence_not_of_slowness(countersign):
    origin = _SlowBodyOrigin(interval=0.4, count=5)
    try:
        proxy = countersign({"limits": {"idle_timeout": "1s"}})
        with RawConnection("127.0.0.1", proxy.port, timeout=15) as connection:
            authority = f"127.0.0.1:{origin.port}"
            connection.send(request_bytes("GET", f"http://{authority}/slow", [("Host", authority)]))
            assert b" 200 " in connection.reader.read_head().split(b"\r\n", 1)[0]
            assert connection.read_raw(10) == b"start....."
            assert origin.closed.wait(IDLE_TIMEOUT + MARGIN + 2), "the silent upstream was never cut"
            silence = time.monotonic() - origin.last_byte_at
            assert connection.peer_closed(timeout=MARGIN), "the client kept a body that can no longer complete"
    finally:
        origin.stop()
    assert silence > IDLE_TIMEOUT * 0.8, f"the body was cut after {silence:.2f} s of silence"
    assert silence < IDLE_TIMEOUT + MARGIN
