"""Byte tunnels: WebSocket after a 101, blind CONNECT to a TLS origin (the client sees the
origin's own certificate), CONNECT to an IPv6 literal, and a bulk download through a tunnel
(long enough that the relay moves it with splice(2); the upload is in test_message_flow)."""
import os
import ssl

import pytest

from harness import websocket
from harness.checks import assert_vanishing_frees_descriptors, sha256_of_file
from harness.curl import curl
from harness.rawclient import RawConnection, exchange, forward_request, request_bytes


def test_websocket_echo_through_upgrade(proxy, origin):
    key = websocket.new_key()
    request = forward_request(origin.url("/ws"), headers=[
        ("Upgrade", "websocket"), ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13")])
    big_message = os.urandom(70_000)
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(request)
        switched = connection.read_response()
        assert switched.status == 101, f"no protocol switch: {switched.status} {switched.body[:200]!r}"
        assert switched.header("Sec-WebSocket-Accept") == websocket.accept_for(key)
        connection.send(websocket.encode_frame(websocket.OPCODE_TEXT, b"hello through the proxy", masked=True))
        assert websocket.read_frame(connection.reader) == (websocket.OPCODE_TEXT, b"hello through the proxy")
        connection.send(websocket.encode_frame(websocket.OPCODE_BINARY, big_message, masked=True))
        assert websocket.read_frame(connection.reader) == (websocket.OPCODE_BINARY, big_message)
        connection.send(websocket.encode_frame(websocket.OPCODE_CLOSE, b"\x03\xe8", masked=True))
        assert websocket.read_frame(connection.reader)[0] == websocket.OPCODE_CLOSE


def test_blind_connect_with_curl_verifies_nginx_certificate(proxy, nginx, small_file, tls_certificate, workdir):
    result = curl(["-x", proxy.url, "--cacert", str(tls_certificate.certificate), nginx.tls_url("/1k")], workdir)
    assert result.returncode == 0, f"curl could not verify the origin through the tunnel: {result.stderr}"
    assert result.body == small_file.path.read_bytes()


def test_blind_connect_client_sees_origin_certificate_bytes(proxy, nginx, tls_certificate):
    authority = f"127.0.0.1:{nginx.tls_port}"
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(request_bytes("CONNECT", authority, [("Host", authority)]))
        established = connection.read_response("CONNECT")
        assert established.status == 200
        context = ssl.create_default_context(cafile=str(tls_certificate.certificate))
        with context.wrap_socket(connection.sock, server_hostname="localhost") as tls:
            served = tls.getpeercert(binary_form=True)
    assert served == tls_certificate.der(), "the tunnel was intercepted: the served certificate is not nginx's"


def test_connect_to_ipv6_loopback_literal(proxy, origin_v6):
    authority = origin_v6.authority  # [::1]:PORT
    with RawConnection("127.0.0.1", proxy.port) as connection:
        connection.send(request_bytes("CONNECT", authority, [("Host", authority)]))
        established = connection.read_response("CONNECT")
        assert established.status == 200
        connection.send(request_bytes("GET", "/echo?via=tunnel", [("Host", authority)]))
        inside = connection.read_response()
    assert inside.status == 200
    assert inside.json()["target"] == "/echo?via=tunnel"
    assert origin_v6.requests[0].header("Via") is None, "a blind tunnel must not touch the bytes inside it"


def test_connect_to_ipv6_tls_origin_with_curl(proxy, nginx, small_file, tls_certificate, workdir):
    result = curl(["-x", proxy.url, "--cacert", str(tls_certificate.certificate),
                   nginx.tls_url("/1k", host="[::1]")], workdir)
    assert result.returncode == 0, result.stderr
    assert result.body == small_file.path.read_bytes()


@pytest.mark.slow
def test_100_megabyte_download_through_blind_tls_tunnel_arrives_intact(proxy, nginx, big_file, tls_certificate, workdir):
    result = curl(["-x", proxy.url, "--cacert", str(tls_certificate.certificate), nginx.tls_url("/100m")],
                  workdir, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.status == 200
    assert sha256_of_file(result.body_path) == big_file.sha256


@pytest.mark.slow
@pytest.mark.countersign_only
def test_client_vanishing_mid_tunnel_download_frees_descriptors(countersign, nginx, big_file, origin):
    proxy = countersign()
    assert exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo"))).status == 200
    baseline = proxy.fd_count()

    authority = f"127.0.0.1:{nginx.port}"
    connection = RawConnection("127.0.0.1", proxy.port)
    connection.send(request_bytes("CONNECT", authority, [("Host", authority)]))
    assert connection.read_response("CONNECT").status == 200
    connection.send(request_bytes("GET", "/100m", [("Host", authority)]))
    connection.read_raw(4 << 20)  # far past the point where the relay switches to a pipe
    assert_vanishing_frees_descriptors(proxy, baseline, connection)
    assert exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo"))).status == 200
