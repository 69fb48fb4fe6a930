"""The admin listener is for loopback monitoring only: `admin.allow`, a connection cap,
bounded memory against a client that pipelines without reading; and no proxy listener
forwards or tunnels to one of Countersign's own listening addresses, however the address
is spelled (that would bypass admin.allow, or loop)."""
import socket
import threading
import time

import pytest

from harness.checks import assert_proxy_error
from harness.ports import free_port, wait_for_port, wait_until
from harness.rawclient import RawConnection, exchange, forward_request
from harness.trickle import trickle

pytestmark = pytest.mark.countersign_only


def _connect_from(source: str, port: int, timeout: float = 5.0) -> socket.socket:
    wait_for_port("127.0.0.1", port, timeout=10)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    except (socket.timeout, ConnectionResetError):
        pass
    return b"".join(chunks)


def _get(sock: socket.socket, path: str) -> bytes:
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n\r\n".encode())
    return _read_all(sock)


# ------------------------------------------------------------------------------ admin.allow


def test_admin_refuses_a_client_outside_admin_allow(countersign):
    proxy = countersign({"admin": {"allow": ["127.0.0.1/32"]}})
    with _connect_from("127.0.0.1", proxy.admin_port) as allowed:
        assert _get(allowed, "/healthz").startswith(b"HTTP/1.1 200")
    with _connect_from("127.0.0.2", proxy.admin_port) as outsider:
        answer = _get(outsider, "/metrics")
    assert answer.startswith(b"HTTP/1.1 403"), answer[:200]
    assert b"admin.allow" in answer and b"countersign_" not in answer


def test_admin_allows_all_of_loopback_by_default(countersign):
    proxy = countersign()
    with _connect_from("127.0.0.2", proxy.admin_port) as client:
        assert _get(client, "/healthz").startswith(b"HTTP/1.1 200")


# ------------------------------------------------------------------------------ connection cap


def _open_partial_heads(port: int, count: int) -> list:
    """`count` admin connections that each sent the start of a head and nothing more."""
    held = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=3)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
        held.append(sock)
    return held


def _closed_by_peer(sock, timeout: float = 3.0) -> bool:
    sock.settimeout(timeout)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def test_admin_connections_are_capped(countersign):
    """200 connections served and kept open: at most the cap (64) stay open, the oldest idle
    ones giving way to newcomers, and every newcomer is answered."""
    proxy = countersign()
    wait_for_port("127.0.0.1", proxy.admin_port, timeout=10)
    held = []
    try:
        for index in range(200):
            sock = socket.create_connection(("127.0.0.1", proxy.admin_port), timeout=3)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
            assert sock.recv(4096).startswith(b"HTTP/1.1 200"), f"connection {index} was not answered"
            held.append(sock)
        closed = [index for index, sock in enumerate(held) if _closed_by_peer(sock, timeout=0.1)]
        assert len(held) - len(closed) <= 64, f"{len(held) - len(closed)} admin connections stayed open: no cap"
        assert closed and max(closed) < len(held) - 1, f"the newest connections were closed, not the oldest: {closed[-5:]}"
    finally:
        for sock in held:
            sock.close()
    assert wait_until(lambda: proxy.admin_get("/healthz")[0] == 200, timeout=5), \
        "the admin listener did not recover once connections closed"


def test_healthz_answers_while_trickling_connections_flood_the_admin_port(countersign):
    """More connections than the cap, each sending a head one byte at a time: the oldest gives
    way to each newcomer, so a health check is answered at once while the flood goes on."""
    proxy = countersign()
    wait_for_port("127.0.0.1", proxy.admin_port, timeout=10)
    held = _open_partial_heads(proxy.admin_port, 100)
    stop = threading.Event()

    def keep_trickling():
        while not stop.is_set():
            for sock in list(held):
                try:
                    sock.send(b"x")
                except OSError:
                    pass
            stop.wait(0.5)

    trickler = threading.Thread(target=keep_trickling, daemon=True)
    trickler.start()
    try:
        for _ in range(5):
            held.extend(_open_partial_heads(proxy.admin_port, 20))
            started = time.monotonic()
            status, body = proxy.admin_get("/healthz", timeout=3)
            assert status == 200 and body == b"ok\n", (status, body)
            assert time.monotonic() - started < 2, "/healthz waited behind the flood"
    finally:
        stop.set()
        trickler.join()
        for sock in held:
            sock.close()


@pytest.mark.parametrize("page", ["/metrics", "/status", "/status?refresh={n}", "/status.json"])
def test_healthz_answers_while_every_slot_holds_answers_nobody_reads(countersign, page):
    """Connections that pipeline a page and never read hold answers in progress: at the cap
    the oldest of them gives way all the same, so the health check is answered (and the pages
    piled up are not rendered once per request, which kept the admin loop busy for seconds)."""
    proxy = countersign()
    wait_for_port("127.0.0.1", proxy.admin_port, timeout=10)
    held = []
    try:
        for _ in range(70):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", proxy.admin_port))
            sock.setblocking(False)
            held.append(sock)
        # Until no connection takes more: the proxy stopped reading them, its answers unsent.
        # `{n}`: each request asks another refresh period, so no two ask the very same page.
        request = b"".join(f"GET {page.format(n=n)} HTTP/1.1\r\nHost: a\r\n\r\n".encode() for n in range(1, 101))
        full = set()
        stop = time.monotonic() + 20
        while len(full) < len(held) and time.monotonic() < stop:
            for index, sock in enumerate(held):
                try:
                    sock.send(request)
                except BlockingIOError:
                    full.add(index)
                except OSError:
                    full.add(index)  # closed for a newcomer: it held an answer all the same
        for _ in range(3):
            started = time.monotonic()
            status, body = proxy.admin_get("/healthz", timeout=3)
            assert status == 200 and body == b"ok\n", (status, body)
            assert time.monotonic() - started < 2, "/healthz waited behind unread answers"
    finally:
        for sock in held:
            sock.close()


def test_an_admin_head_trickled_byte_by_byte_gets_408_at_header_timeout(countersign):
    proxy = countersign({"limits": {"header_timeout": "1s"}})
    wait_for_port("127.0.0.1", proxy.admin_port, timeout=10)
    with socket.create_connection(("127.0.0.1", proxy.admin_port), timeout=5) as sock:
        reacted, answer = trickle(sock, b"GET /healthz HTTP/1.1\r\nX-Slow: " + b"s" * 200, 0.2, 10)
    assert reacted is not None and reacted < 3.5, f"a trickled admin head was kept for {reacted or '10+'} s"
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]


# ------------------------------------------------------------------------------ back-pressure


def _rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_admin_pipelining_without_reading_stays_bounded(countersign):
    """Thousands of pipelined /metrics requests from a client that never reads: the
    listener stops reading while its output is full, so memory stays flat."""
    proxy = countersign()
    wait_for_port("127.0.0.1", proxy.admin_port, timeout=10)
    before = _rss_kib(proxy.pid)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", proxy.admin_port))
    sock.setblocking(False)
    request = b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n" * 200
    sent = 0
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            sent += sock.send(request)
        except BlockingIOError:
            time.sleep(0.01)
    time.sleep(0.5)
    grown = _rss_kib(proxy.pid) - before
    sock.close()
    print(f"admin pipelining: grew {grown} KiB for {sent} bytes sent")
    assert grown < 4 * 1024, f"the proxy grew by {grown} KiB for {sent} bytes of unread pipelined requests"
    status, _ = proxy.admin_get("/healthz")
    assert status == 200


# ------------------------------------------------------------------------------ own addresses


@pytest.fixture
def dual_stack_admin(countersign):
    """Admin listening on [::] (every local address, IPv4 and IPv6)."""
    port = free_port()
    return countersign({"admin": {"address": f"[::]:{port}"}})


def _this_hosts_address() -> str:
    """A non-loopback address of this machine (no packet is sent), or loopback if none."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 9))
        return probe.getsockname()[0]
    except OSError:
        return "127.0.0.3"
    finally:
        probe.close()


SPELLINGS = ["127.0.0.1", "localhost", "127.1", "127.0.0.2", "0.0.0.0", "[::1]", "[::ffff:127.0.0.1]", "2130706433",
             _this_hosts_address()]


@pytest.mark.parametrize("host", SPELLINGS)
def test_absolute_form_to_the_admin_address_is_refused(dual_stack_admin, host):
    proxy = dual_stack_admin
    url = f"http://{host}:{proxy.admin_port}/metrics"
    response = exchange("127.0.0.1", proxy.port, forward_request(url))
    if host in ("127.1", "2130706433") and response.status == 502:
        # inet_aton's short forms: the resolver does not take them, so nothing is reached.
        assert_proxy_error(response, 502, proxy, "dns_error")
        return
    assert_proxy_error(response, 403, proxy, "destination_ip_prohibited")
    assert b"countersign_" not in response.body


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "0.0.0.0"])
def test_connect_to_the_admin_address_is_refused(dual_stack_admin, host):
    proxy = dual_stack_admin
    authority = f"{host}:{proxy.admin_port}"
    request = f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode()
    response = exchange("127.0.0.1", proxy.port, request, method="CONNECT")
    assert_proxy_error(response, 403, proxy, "destination_ip_prohibited")


def test_requests_to_the_proxy_port_itself_are_refused_not_looped(countersign):
    proxy = countersign()
    response = exchange("127.0.0.1", proxy.port, forward_request(f"http://127.0.0.1:{proxy.port}/x"))
    assert_proxy_error(response, 403, proxy, "destination_ip_prohibited")
    authority = f"localhost:{proxy.port}"
    response = exchange("127.0.0.1", proxy.port, f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode(),
                        method="CONNECT")
    assert_proxy_error(response, 403, proxy, "destination_ip_prohibited")


def test_a_gateway_to_the_admin_address_is_refused(countersign):
    admin_port = free_port()
    gateway_port = free_port()
    proxy = countersign({"admin": {"address": f"127.0.0.1:{admin_port}"},
                         "listen": [{}, {"address": f"127.0.0.1:{gateway_port}", "mode": "gateway",
                                         "upstream": f"http://localhost:{admin_port}"}]})
    request = b"GET /metrics HTTP/1.1\r\nHost: anything\r\n\r\n"
    response = exchange("127.0.0.1", gateway_port, request)
    assert_proxy_error(response, 403, proxy, "destination_ip_prohibited")


def test_other_loopback_services_are_still_reachable(proxy, origin):
    response = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo")))
    assert response.status == 200
