"""Heads that arrive a few bytes at a time, as a slow or hostile client sends them: the proxy
finds the blank line wherever the reads split it, refuses a malformed byte when it arrives
(not at the timeout), and applies max_header_bytes at exactly that many bytes. Response heads
(and a parent's answer to CONNECT) are read up to max_header_bytes too, not stalled at the
body's read-ahead."""
import socket
import ssl
import time

import pytest

from conftest_intercept import intercepted_host_entry
from harness.checks import assert_nothing_reached, assert_proxy_error
from harness.rawclient import RawConnection, request_bytes
from harness.trickle import TricklingPeer
from harness.wire import SocketReader


def _trickle(connection: RawConnection, data: bytes, step: int = 1) -> None:
    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for offset in range(0, len(data), step):
        connection.send(data[offset:offset + step])


def _request(origin, *lines: bytes, pad_to: int = 0) -> bytes:
    head = b"GET " + origin.url("/echo").encode() + b" HTTP/1.1\r\nHost: " + origin.authority.encode() + b"\r\n" + \
        b"".join(line + b"\r\n" for line in lines)
    if pad_to:
        filler = b"X-Pad: \r\n"
        head += b"X-Pad: " + b"p" * (pad_to - len(head) - len(filler) - 2) + b"\r\n"
    return head + b"\r\n"


def test_head_sent_byte_by_byte_is_forwarded_intact(proxy, origin):
    with RawConnection("127.0.0.1", proxy.port) as connection:
        _trickle(connection, _request(origin, b"X-Trickled: one byte at a time", b"Accept: */*"))
        response = connection.read_response()
    assert response.status == 200
    assert origin.requests[-1].header("X-Trickled") == "one byte at a time"


def test_bare_lf_is_refused_when_it_arrives(proxy, origin):
    before = origin.snapshot()
    with RawConnection("127.0.0.1", proxy.port) as connection:
        _trickle(connection, b"GET " + origin.url("/echo").encode() + b" HTTP/1.1\r\nX-Bare: lf\n")
        started = time.monotonic()
        # The rest of the head never comes: the answer must not wait for the head timeout.
        response = connection.read_response()
    assert time.monotonic() - started < 5
    assert_proxy_error(response, 400, proxy, "http_request_error")
    assert_nothing_reached(origin, before)


@pytest.mark.countersign_only
@pytest.mark.parametrize("step", [1, 7, 4096])
def test_max_header_bytes_is_exact_however_the_head_is_split(countersign, origin, step):
    proxy = countersign({"limits": {"max_header_bytes": 4096}})
    exact = _request(origin, pad_to=4096)
    assert len(exact) == 4096
    with RawConnection("127.0.0.1", proxy.port) as connection:
        _trickle(connection, exact, step)
        assert connection.read_response().status == 200
    before = origin.snapshot()
    over = _request(origin, pad_to=4097)
    assert len(over) == 4097
    with RawConnection("127.0.0.1", proxy.port) as connection:
        # Its first max_header_bytes bytes decide: the proxy must not wait for the last one.
        _trickle(connection, over[:4096], step)
        response = connection.read_response()
    assert_proxy_error(response, 431, proxy, "http_request_error")
    assert_nothing_reached(origin, before)


@pytest.mark.parametrize("size", [20 * 1024, 40 * 1024])
def test_response_head_larger_than_the_read_ahead_arrives_whole(proxy, origin, size):
    """Large cookies or CSP headers: the head is read up to max_header_bytes (64 KiB), not
    stalled at the body read-ahead."""
    started = time.monotonic()
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(_request(origin).replace(b"/echo", f"/big-head/{size}".encode()))
        response = connection.read_response()
    assert response.status == 200, f"a {size}-byte response head got {response.status}: {response.body[:200]!r}"
    cookies = [value for name, value in response.headers if name.lower() == "set-cookie"]
    assert len(cookies) == size // 4020 and all(value.endswith("v" * 4000) for value in cookies)
    assert response.body == b"big head\n"
    assert time.monotonic() - started < 3, "the head stalled before it was read whole"


@pytest.mark.countersign_only
def test_response_head_over_max_header_bytes_is_502_naming_its_size(countersign, origin):
    proxy = countersign({"limits": {"max_header_bytes": 16384}})
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(_request(origin).replace(b"/echo", b"/big-head/24000"))
        response = connection.read_response()
    assert_proxy_error(response, 502, proxy, "http_response_header_section_size")
    assert b"16384" in response.body or b"too large" in response.body.lower(), response.body


@pytest.mark.countersign_only
def test_parent_connect_answer_over_max_header_bytes_is_502_naming_its_size(countersign, origin):
    cookies = b"".join(b"Set-Cookie: c%d=%s\r\n" % (index, b"v" * 4000) for index in range(6))
    parent = TricklingPeer(b"", before=b"HTTP/1.1 200 Connection established\r\n" + cookies + b"\r\n")
    try:
        proxy = countersign({"limits": {"max_header_bytes": 16384}, "parent_proxy": {"url": f"http://{parent.authority}"}})
        with RawConnection("127.0.0.1", proxy.port) as connection:
            connection.send(request_bytes("GET", f"https://{origin.authority}/", [("Host", origin.authority)]))
            response = connection.read_response()
    finally:
        parent.stop()
    assert_proxy_error(response, 502, proxy, "http_response_header_section_size")


@pytest.mark.countersign_only
def test_large_response_head_inside_an_intercepted_tunnel_arrives_whole(intercepting_countersign, intercept_tls_origin,
                                                                        intercept_pki):
    authority = f"localhost:{intercept_tls_origin.port}"
    proxy = intercepting_countersign({authority: intercepted_host_entry(intercept_pki)})
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(request_bytes("CONNECT", authority, [("Host", authority)]))
        assert connection.read_response("CONNECT").status == 200
        context = ssl.create_default_context(cafile=str(proxy.ca_certificate))
        connection.sock = context.wrap_socket(connection.sock, server_hostname="localhost")
        connection.reader = SocketReader(connection.sock)
        connection.send(request_bytes("GET", "/big-head/40000", [("Host", authority)]))
        response = connection.read_response()
    assert response.status == 200, f"a 40 KB response head inside the tunnel got {response.status}: {response.body[:200]!r}"
    assert len([1 for name, _ in response.headers if name.lower() == "set-cookie"]) == 40000 // 4020
