"""What reaches the origin: the client's header names in their case and order, no hop-by-hop
fields, and a Via added by the proxy."""
import pytest

from harness.rawclient import RawConnection, forward_request

CLIENT_FIELDS = [("X-Lower-case", "1"), ("x-UPPER-Mixed", "2"), ("X-Zulu", "3"), ("X-Alpha", "4"),
                 ("ACCEPT", "*/*"), ("x-custom-TOKEN", "5")]


def _forward(proxy, url, headers, method="GET"):
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(forward_request(url, method, headers))
        return connection.read_response()


def test_header_names_keep_case_and_order(proxy, origin):
    response = _forward(proxy, origin.url("/echo"), CLIENT_FIELDS)
    assert response.status == 200
    received = [name for name in origin.requests[0].header_names()
                if name.lower() in {n.lower() for n, _ in CLIENT_FIELDS}]
    assert received == [name for name, _ in CLIENT_FIELDS]


def test_hop_by_hop_fields_do_not_reach_origin(proxy, origin):
    response = _forward(proxy, origin.url("/echo"), [
        ("Connection", "keep-alive, X-Hop-Private"),
        ("X-Hop-Private", "only-for-the-proxy"),
        ("Proxy-Connection", "keep-alive"),
        ("Keep-Alive", "timeout=5"),
        ("TE", "trailers"),
        ("Trailer", "X-Checksum"),
        ("Proxy-Authorization", "Basic dXNlcjpwYXNz"),
        ("X-End-To-End", "kept"),
    ])
    assert response.status == 200
    received = {name.lower() for name in origin.requests[0].header_names()}
    leaked = received & {"x-hop-private", "proxy-connection", "keep-alive", "te", "trailer", "proxy-authorization"}
    assert not leaked, f"hop-by-hop fields reached the origin: {sorted(leaked)}"
    assert "X-Hop-Private" not in (origin.requests[0].header("Connection") or "")
    assert origin.requests[0].header("X-End-To-End") == "kept"


def test_via_is_added(proxy, origin):
    _forward(proxy, origin.url("/echo"), [])
    via = origin.requests[0].header("Via")
    assert via and via.startswith("1.1 "), f"Via is {via!r}"


def test_client_via_is_kept_and_extended(proxy, origin):
    _forward(proxy, origin.url("/echo"), [("Via", "1.0 app-side-gateway")])
    via = ", ".join(origin.requests[0].header_values("Via"))
    assert via.startswith("1.0 app-side-gateway"), f"the client's Via was dropped: {via!r}"
    assert via.count(",") >= 1, f"the proxy added no Via entry of its own: {via!r}"


@pytest.mark.parametrize("fields", [
    [b"Transfer-Encoding: ,chunked"],
    [b"Transfer-Encoding: chunked,"],
    [b"Transfer-Encoding: , ,\tchunked"],
    [b"Transfer-Encoding: ,", b"Transfer-Encoding: chunked"],
], ids=["leading-empty", "trailing-empty", "several-empty", "empty-field-then-chunked"])
def test_transfer_encoding_with_empty_list_elements_is_forwarded_normalised(proxy, origin, fields):
    """RFC 9110 §5.6.1: empty list elements must be accepted. The proxy decodes the chunked
    body and chunks it again, so the field it forwards must be the one it actually applied
    (`chunked`), not the client's spelling, which another parser may read differently."""
    host = origin.authority.encode()
    request = (b"POST " + origin.url("/echo").encode() + b" HTTP/1.1\r\nHost: " + host + b"\r\n"
               + b"".join(field + b"\r\n" for field in fields) + b"\r\n5\r\nhello\r\n0\r\n\r\n")
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(request)
        response = connection.read_response()
    assert response.status == 200
    assert response.json()["body_length"] == 5
    assert origin.requests[0].header_values("Transfer-Encoding") == ["chunked"]
