"""Request-smuggling shapes sent on a raw socket: each is refused by the proxy itself with a
Proxy-Status, not one byte of it reaches the origin, and the proxy serves normally afterwards.
Near misses that RFC 9112 allows are accepted and forwarded intact."""
import pytest

from harness.checks import assert_nothing_reached, assert_proxy_error
from harness.rawclient import RawConnection, exchange, forward_request


def _head(origin, request_line: bytes, *lines: bytes, body: bytes = b"") -> bytes:
    host = origin.authority.encode()
    return request_line.replace(b"URL", origin.url("/echo").encode()) + b"\r\nHost: " + host + b"\r\n" + \
        b"".join(line + b"\r\n" for line in lines) + b"\r\n" + body


GET = b"GET URL HTTP/1.1"
POST = b"POST URL HTTP/1.1"

REFUSALS = {
    "content_length_with_transfer_encoding": (400, lambda o: _head(
        o, POST, b"Content-Length: 5", b"Transfer-Encoding: chunked", body=b"0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n")),
    "differing_repeated_content_length": (400, lambda o: _head(
        o, POST, b"Content-Length: 5", b"Content-Length: 6", body=b"hello!")),
    "transfer_encoding_gzip_only": (400, lambda o: _head(o, POST, b"Transfer-Encoding: gzip", body=b"abc")),
    "transfer_encoding_chunked_not_final": (400, lambda o: _head(
        o, POST, b"Transfer-Encoding: chunked, gzip", body=b"0\r\n\r\n")),
    "transfer_encoding_chunkedx": (400, lambda o: _head(o, POST, b"Transfer-Encoding: chunkedx", body=b"0\r\n\r\n")),
    "obsolete_line_folding": (400, lambda o: _head(o, GET, b"X-Folded: first", b"  continued")),
    "bare_cr_in_value": (400, lambda o: _head(o, GET, b"X-Bad: one\rtwo")),
    "bare_lf_ending_a_field": (400, lambda o: _head(o, GET, b"X-Bare-LF: one\nX-Next: two")),
    "whitespace_before_colon": (400, lambda o: _head(o, GET, b"X-Spaced : value")),
    "invalid_character_in_field_name": (400, lambda o: _head(o, GET, b"X@Bad: value")),
    "control_character_in_value": (400, lambda o: _head(o, GET, b"X-Control: a\x01b")),
    "nul_in_value": (400, lambda o: _head(o, GET, b"X-Nul: a\x00b")),
    "request_line_without_version": (400, lambda o: _head(o, b"GET URL")),
    "request_line_with_bad_version": (400, lambda o: _head(o, b"GET URL HTTP/1.x")),
    "absolute_uri_with_empty_host": (400, lambda o: _head(o, b"GET http:///echo HTTP/1.1")),
    "absolute_uri_with_bad_port": (400, lambda o: _head(o, b"GET http://127.0.0.1:99999/echo HTTP/1.1")),
    "absolute_uri_with_unclosed_ipv6_bracket": (400, lambda o: _head(o, b"GET http://[::1/echo HTTP/1.1")),
    "head_over_max_header_bytes": (431, lambda o: _head(o, GET, b"X-Big: " + b"a" * 100_000)),
}


@pytest.mark.parametrize("shape", sorted(REFUSALS))
def test_smuggling_shape_is_refused_and_never_forwarded(shape, proxy, origin):
    status, build = REFUSALS[shape]
    before = origin.snapshot()
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(build(origin))
        response = connection.read_response()
    assert_proxy_error(response, status, proxy, "http_request_error")
    assert_nothing_reached(origin, before)
    follow_up = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo?after=refusal")))
    assert follow_up.status == 200, "the proxy stopped serving after a refusal"


def test_identical_repeated_content_length_is_accepted(proxy, origin):
    response = exchange("127.0.0.1", proxy.port, _head(
        origin, POST, b"Content-Length: 5", b"Content-Length: 5", body=b"hello"))
    assert response.status == 200
    assert response.json()["body_length"] == 5


def test_transfer_encoding_chunked_alone_is_accepted(proxy, origin):
    response = exchange("127.0.0.1", proxy.port, _head(
        origin, POST, b"Transfer-Encoding: chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    assert response.status == 200
    assert response.json()["body_length"] == 5


def test_obs_text_in_a_value_is_accepted_and_kept(proxy, origin):
    response = exchange("127.0.0.1", proxy.port, _head(origin, GET, b"X-Latin: caf\xe9"))
    assert response.status == 200
    assert origin.requests[0].header("X-Latin") == "caf\xe9"


@pytest.mark.countersign_only
def test_configured_max_header_bytes_is_the_limit(countersign, origin):
    proxy = countersign({"limits": {"max_header_bytes": 8192}})
    under = exchange("127.0.0.1", proxy.port, _head(origin, GET, b"X-Pad: " + b"p" * 6000))
    assert under.status == 200
    before = origin.snapshot()
    over = exchange("127.0.0.1", proxy.port, _head(origin, GET, b"X-Pad: " + b"p" * 10000))
    assert_proxy_error(over, 431, proxy, "http_request_error")
    assert_nothing_reached(origin, before)
