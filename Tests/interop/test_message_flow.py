"""HTTP/1.1 message handling through the proxy: connection reuse, pipelining, large bodies
both ways, chunked framing, bodiless responses, 100-continue and HTTP/1.0 clients."""
import hashlib
import json

import pytest

from harness.checks import sha256_of_file
from harness.curl import curl
from harness.origin import CHUNKED_BODY, CHUNKED_SHA256
from harness.rawclient import RawConnection, forward_request


def test_keep_alive_two_requests_share_client_and_upstream_connections(proxy, origin, workdir):
    result = curl(["-v", "-x", proxy.url, origin.url("/echo?n=1"),
                   "-o", str(workdir / "second.body"), origin.url("/echo?n=2")], workdir)
    assert result.returncode == 0, result.stderr
    assert "Re-using existing connection" in result.stderr, "curl had to open a second connection to the proxy"
    assert [r.target.split("?")[1] for r in origin.requests] == ["n=1", "n=2"]
    assert origin.connections == 1, f"the proxy opened {origin.connections} upstream connections for two requests"


def test_keep_alive_against_nginx_reuses_one_upstream_connection(proxy, nginx, workdir):
    already = len(nginx.access_entries())
    result = curl(["-x", proxy.url, nginx.url("/1k"), "-o", str(workdir / "second.body"), nginx.url("/1k")], workdir)
    assert result.returncode == 0, result.stderr
    entries = nginx.access_entries()[already:]
    assert [e.status for e in entries] == [200, 200]
    assert entries[0].connection == entries[1].connection, "nginx saw two connections for two requests"


def test_pipelined_requests_are_answered_in_order(proxy, origin):
    first = forward_request(origin.url("/echo?n=1"))
    second = forward_request(origin.url("/echo?n=2"))
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(first + second)
        answers = [connection.read_response(), connection.read_response()]
    assert [a.status for a in answers] == [200, 200]
    assert [a.json()["target"].split("?")[1] for a in answers] == ["n=1", "n=2"]


@pytest.mark.slow
def test_100_megabyte_download_arrives_intact(proxy, nginx, big_file, workdir):
    result = curl(["-x", proxy.url, nginx.url("/100m")], workdir, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.status == 200
    assert sha256_of_file(result.body_path) == big_file.sha256


@pytest.mark.slow
@pytest.mark.parametrize("route", ["absolute-form", "connect-tunnel"])
def test_10_megabyte_upload_arrives_intact(proxy, origin, upload_file, workdir, route):
    # --proxytunnel makes curl CONNECT even for http://, so the upload crosses the blind relay.
    tunnel = ["--proxytunnel"] if route == "connect-tunnel" else []
    result = curl(["-x", proxy.url, *tunnel, "--data-binary", f"@{upload_file.path}",
                   "-H", "Content-Type: application/octet-stream", origin.url("/upload")], workdir, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.status == 200
    echoed = json.loads(result.body)
    assert echoed["body_length"] == upload_file.size
    assert echoed["body_sha256"] == upload_file.sha256


def test_chunked_request_body_reaches_origin_intact(proxy, origin):
    pieces = [b"alpha-", b"b" * 40000, b"-omega"]
    body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"
    request = forward_request(origin.url("/echo"), "POST", [("Transfer-Encoding", "chunked")], body)
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(request)
        response = connection.read_response()
    assert response.status == 200
    echoed = response.json()
    assert echoed["body_sha256"] == hashlib.sha256(b"".join(pieces)).hexdigest()
    assert echoed["body_length"] == sum(map(len, pieces))


def test_chunked_response_with_trailer_arrives_intact(proxy, origin):
    request = forward_request(origin.url("/chunked"), headers=[("TE", "trailers")])
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(request)
        response = connection.read_response()
    assert response.status == 200
    assert response.complete
    assert response.body == CHUNKED_BODY
    assert "chunked" in (response.header("Transfer-Encoding") or ""), "the chunked response was re-framed"
    assert ("X-Body-SHA256", CHUNKED_SHA256) in response.trailers, f"trailers seen: {response.trailers}"


def test_head_has_no_body_and_connection_stays_usable(proxy, origin):
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(forward_request(origin.url("/echo"), "HEAD"))
        head = connection.read_response("HEAD")
        connection.send(forward_request(origin.url("/echo?after=head")))
        after = connection.read_response()
    assert head.status == 200
    assert int(head.header("Content-Length")) > 0, "HEAD lost the length a GET would have"
    assert after.status == 200
    assert after.json()["target"].endswith("after=head")


def test_204_from_nginx_then_next_request_on_same_connection(proxy, nginx, small_file):
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(forward_request(nginx.url("/204")))
        no_content = connection.read_response()
        connection.send(forward_request(nginx.url("/1k")))
        after = connection.read_response()
    assert no_content.status == 204
    assert after.status == 200
    assert after.body == small_file.path.read_bytes()


def test_304_from_nginx_then_next_request_on_same_connection(proxy, nginx, small_file):
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(forward_request(nginx.url("/1k")))
        first = connection.read_response()
        etag = first.header("ETag")
        assert etag, "nginx sent no ETag"
        connection.send(forward_request(nginx.url("/1k"), headers=[("If-None-Match", etag)]))
        not_modified = connection.read_response()
        connection.send(forward_request(nginx.url("/1k")))
        after = connection.read_response()
    assert not_modified.status == 304
    assert after.status == 200
    assert after.body == small_file.path.read_bytes()


def test_expect_100_continue_gets_interim_then_final_answer(proxy, origin):
    body = b"z" * 200_000
    request_head = forward_request(origin.url("/upload"), "POST",
                                   [("Content-Length", str(len(body))), ("Expect", "100-continue")])
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(request_head)
        interim = connection.read_response(skip_interim=False)
        assert interim.status == 100, f"expected 100 Continue before the body, got {interim.status}"
        connection.send(body)
        final = connection.read_response()
    assert final.status == 200
    assert final.json()["body_sha256"] == hashlib.sha256(body).hexdigest()


def test_curl_large_upload_uses_100_continue(proxy, origin, workdir):
    payload = workdir / "two-megabytes.bin"
    payload.write_bytes(b"c" * (2 << 20))
    result = curl(["-v", "-x", proxy.url, "--data-binary", f"@{payload}", origin.url("/upload")], workdir)
    assert result.status == 200, result.stderr
    assert "Expect: 100-continue" in result.stderr, "curl did not ask for 100-continue"
    assert "HTTP/1.1 100" in result.stderr, "the client never saw 100 Continue"
    assert json.loads(result.body)["body_length"] == 2 << 20


def test_http_1_0_client_is_served_and_connection_closed(proxy, origin):
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(forward_request(origin.url("/echo"), version="HTTP/1.0"))
        response = connection.read_response()
        assert response.status == 200
        assert response.complete
        assert response.json()["method"] == "GET"
        assert connection.peer_closed(timeout=5), "the proxy kept a non-keep-alive HTTP/1.0 connection open"

