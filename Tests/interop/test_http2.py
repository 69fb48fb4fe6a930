"""HTTP/2 on the client leg (SPEC "Proxy behaviour", issue 25): an intercepted client that offers
`h2` by ALPN speaks HTTP/2 to Countersign, and every stream is an ordinary exchange toward an
HTTP/1.1 origin (routing, injection, challenges answered and replayed, placeholders refused per
stream). curl --http2 and nghttp are the well-behaved clients; Python `h2` plays the hostile one
(rapid reset, CONTINUATION flood, HPACK bomb, SETTINGS/PING floods, too many streams), each
getting the RFC 9113 error code while a second client is served right after."""
import hashlib
import json
import signal
import socket
import ssl
import subprocess
import threading
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
import pytest

from conftest_intercept import INTERCEPT_DIGEST_PASSWORD, INTERCEPT_DIGEST_USER, intercepted_host_entry
from harness.curl import PROXY_VARIABLES, curl
from harness.ports import wait_until
from harness.h2wire import CONTINUATION, DATA, GOAWAY, HEADERS, PREFACE, SETTINGS, FrameReader, frame, literal_block, tunnel
from harness.rawclient import request_bytes
from test_interception import listed
from test_signing import signing_keys  # noqa: F401  (the fixture)

pytestmark = pytest.mark.countersign_only

API_KEY = "h2-k3y-51c0"
CREDENTIALS = {"apikey": {"value_env": "CS_API_KEY"}}
ENV = {"CS_API_KEY": API_KEY}


def curl_h2(proxy, url, workdir, *args, name="curl"):
    return curl(["--http2", "--cacert", str(proxy.ca_certificate), *args, url],
                workdir, env_proxy={"HTTPS_PROXY": proxy.url}, name=name)


def access_lines(proxy, count=1, **match):
    def found():
        lines = [entry for entry in proxy.access_logs() if all(entry.get(k) == v for k, v in match.items())]
        return lines if len(lines) >= count else None
    return wait_until(found, timeout=10) or []


# ------------------------------------------------------------------------- well-behaved clients


def test_curl_http2_get_reaches_an_http11_origin(intercepting_countersign, intercept_tls_origin, intercept_pki, workdir):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    result = curl_h2(proxy, intercept_tls_origin.https_url("/echo?via=h2"), workdir)
    assert result.returncode == 0 and result.status == 200, result.stderr
    assert b"HTTP/2" in (workdir / "curl.heads").read_bytes(), "curl did not speak HTTP/2 to the proxy"
    echoed = json.loads(result.body)
    assert echoed["target"] == "/echo?via=h2" and echoed["version"] == "HTTP/1.1"
    received = dict((k.lower(), v) for k, v in echoed["headers"])
    assert received["host"] == f"localhost:{intercept_tls_origin.port}"
    # RFC 9110 §7.6.3: Via names the version the request was received in, not the one it went on in.
    assert received["via"] == "2 countersign", received
    # The origin answered in HTTP/1.1: so says the response's Via.
    assert ("via", "1.1 countersign") in [(k.lower(), v) for k, v in result.headers], result.headers
    line = access_lines(proxy, method="GET")
    assert line and line[-1]["protocol"] == "HTTP/2.0" and line[-1]["status"] == 200, line


def test_http2_false_keeps_the_host_on_http11(intercepting_countersign, intercept_tls_origin, intercept_pki, workdir):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin, http2=False))
    result = curl_h2(proxy, intercept_tls_origin.https_url("/echo"), workdir)
    assert result.returncode == 0 and result.status == 200, result.stderr
    assert b"HTTP/1.1 200" in (workdir / "curl.heads").read_bytes()
    line = access_lines(proxy, path="/echo")
    assert line and line[-1]["protocol"] == "HTTP/1.1", line


@pytest.mark.parametrize("length", [0, 300_000])
def test_curl_http2_post_body_arrives_whole(intercepting_countersign, intercept_tls_origin, intercept_pki, workdir, length):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    body = bytes((i * 7) % 251 for i in range(length))
    (workdir / "body.bin").write_bytes(body)
    result = curl_h2(proxy, intercept_tls_origin.https_url("/upload"), workdir, "--data-binary", f"@{workdir / 'body.bin'}")
    assert result.returncode == 0 and result.status == 200, result.stderr
    echoed = json.loads(result.body)
    assert echoed["method"] == "POST" and echoed["body_length"] == length
    assert echoed["body_sha256"] == hashlib.sha256(body).hexdigest()


def test_chunked_response_and_its_trailer_reach_the_h2_client(intercepting_countersign, intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    client = H2Client(proxy, intercept_tls_origin)
    stream = client.request("GET", "/chunked")
    response = client.response(stream)
    assert response.status == 200
    from harness.origin import CHUNKED_SHA256
    assert hashlib.sha256(response.body).hexdigest() == CHUNKED_SHA256
    assert dict(response.trailers).get("x-body-sha256") == CHUNKED_SHA256, response.trailers
    client.close()


def test_request_body_without_length_and_trailers_go_chunked(intercepting_countersign, intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    client = H2Client(proxy, intercept_tls_origin)
    stream = client.request("POST", "/upload", body=[b"part one,", b"part two"], trailers=[("x-checksum", "abc")])
    response = client.response(stream)
    echoed = json.loads(response.body)
    assert response.status == 200 and echoed["body_chunked"] is True and echoed["body_length"] == 17
    assert ["x-checksum", "abc"] in [[k.lower(), v] for k, v in echoed["trailers"]], echoed["trailers"]
    client.close()


def test_nghttp_twenty_concurrent_streams_on_one_connection(intercepting_countersign, intercept_tls_origin,
                                                            intercept_pki, workdir):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    # nghttp has no proxy option: the tunnel is opened here and nghttp speaks through a local relay.
    relay = TunnelRelay(proxy, intercept_tls_origin)
    url = f"https://localhost:{relay.port}/echo?n=1"
    # :authority names the origin (the relay's port would be misdirected, 421).
    completed = subprocess.run(["nghttp", "-n", "-s", "-m", "20", "-H", f":authority: localhost:{intercept_tls_origin.port}", url], capture_output=True, text=True, timeout=60,
                               env=_clean_env(SSL_CERT_FILE=str(proxy.ca_certificate)))
    relay.stop()
    assert completed.returncode == 0, completed.stderr + completed.stdout
    lines = access_lines(proxy, count=20, method="GET")
    assert len(lines) == 20 and all(line["status"] == 200 and line["protocol"] == "HTTP/2.0" for line in lines), lines
    assert relay.connections == 1, "nghttp opened more than one connection"


# ------------------------------------------------------------------ each stream a full exchange


def test_digest_challenge_answered_on_one_stream_while_others_flow(intercepting_countersign, intercept_guarded_origin,
                                                                  intercept_pki, workdir):
    host = intercepted_host_entry(intercept_pki, identity="client", auth=[{"credential": "svc", "schemes": ["digest"]}])
    credentials = {
        "client": {"certificate": str(intercept_pki.path("client-chain.pem")), "private_key": str(intercept_pki.path("client.key"))},
        "svc": {"user": INTERCEPT_DIGEST_USER, "password_env": "INTERCEPT_DIGEST_PASSWORD"},
    }
    proxy = intercepting_countersign({f"localhost:{intercept_guarded_origin.port}": host}, credentials=credentials,
                                     env={"INTERCEPT_DIGEST_PASSWORD": INTERCEPT_DIGEST_PASSWORD})
    client = H2Client(proxy, intercept_guarded_origin)
    posted = client.request("POST", "/upload", body=[b"replayed body"], length=13)
    gets = [client.request("GET", f"/echo?i={i}") for i in range(5)]
    for stream in [posted] + gets:
        assert client.response(stream).status == 200
    assert json.loads(client.response(posted).body)["body_length"] == 13
    assert intercept_guarded_origin.challenges >= 1, "the origin never challenged: the test proves nothing"
    client.close()


def test_injected_header_and_a_refused_placeholder_end_only_their_stream(intercepting_countersign, intercept_tls_origin,
                                                                         intercept_pki):
    hosts = listed(intercept_pki, intercept_tls_origin, inject=[{"header": "X-Api-Key", "credential": "apikey"}])
    proxy = intercepting_countersign(hosts, credentials={**CREDENTIALS, "other": {"value_env": "CS_OTHER"}},
                                     env={**ENV, "CS_OTHER": "other-secret"})
    client = H2Client(proxy, intercept_tls_origin)
    refused = client.request("GET", "/echo?refused=1", headers=[("authorization", "Bearer countersign:other")])
    fine = client.request("GET", "/echo?fine=1", headers=[("x-api-key", "client-value")])
    assert client.response(refused).status == 403
    response = client.response(fine)
    assert response.status == 200
    seen = dict((k.lower(), v) for k, v in json.loads(response.body)["headers"])
    assert seen["x-api-key"] == API_KEY
    # The connection is still good for more.
    assert client.response(client.request("GET", "/echo?after=1")).status == 200
    assert not any("refused=1" in request.target for request in intercept_tls_origin.requests)
    client.close()


def test_signed_host_with_basic_answered_and_replayed_per_stream(intercepting_countersign, intercept_pki, signing_keys):
    """Each stream: a 401 Basic challenge answered, the body replayed, every attempt signed
    (RFC 9421, verified by http-message-signatures in the origin)."""
    from test_signing import _origin, _signing_config
    origin = _origin(signing_keys, certificate=str(intercept_pki.path("leaf-chain.pem")), key=str(intercept_pki.path("leaf.key")),
                     basic="svc:svc-secret-h2")
    try:
        authority = f"localhost:{origin.port}"
        config = _signing_config(signing_keys, "cs-p256", authority)
        config["credentials"]["svc"] = {"user": "svc", "password_env": "CS_SVC"}
        config["hosts"][authority].update({"intercept": True, "trust": {"anchors": [str(intercept_pki.path("root.pem"))]},
                                           "auth": [{"credential": "svc", "schemes": ["basic"]}]})
        proxy = intercepting_countersign(config["hosts"], credentials=config["credentials"], env={"CS_SVC": "svc-secret-h2"})
        client = H2Client(proxy, origin)
        streams = [client.request("POST", f"/x?i={i}", body=[b"signed body"], headers=[("content-type", "text/plain")], length=11)
                   for i in range(4)]
        for stream in streams:
            response = client.response(stream)
            verdict = json.loads(response.body)
            assert response.status == 200 and verdict["verified"] and verdict["body_length"] == 11, verdict
        assert origin.challenges >= 1, "the origin never challenged: the test proves nothing"
        client.close()
    finally:
        origin.stop()


def test_a_stalled_stream_does_not_block_another(intercepting_countersign, intercept_tls_origin, intercept_pki):
    """Streams get a 1000-octet window; the client never opens stream A's further, so A's chunked
    body (5 KiB) stalls in the proxy; stream B is answered all the same, and A completes whole
    once its window opens."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    client = H2Client(proxy, intercept_tls_origin, initial_window=1000)
    stalled = client.request("GET", "/chunked")
    client.stalled.add(stalled)
    client.pump(lambda: stalled in client.responses and len(client.responses[stalled].body) == 1000)
    assert len(client.responses[stalled].body) == 1000 and not client.responses[stalled].ended
    other = client.request("GET", "/status/204")
    assert client.response(other).status == 204
    assert not client.responses[stalled].ended
    client.stalled.discard(stalled)
    client.conn.increment_flow_control_window(1 << 20, stream_id=stalled)
    client.flush()
    from harness.origin import CHUNKED_SHA256
    assert hashlib.sha256(client.response(stalled).body).hexdigest() == CHUNKED_SHA256


def test_a_request_body_that_stops_ends_its_stream_at_idle_timeout_and_others_go_on(intercepting_countersign, intercept_tls_origin,
                                                                                     intercept_pki):
    """A stream's exchange reads its request body as an HTTP/1.1 connection's would: silence
    for idle_timeout in the middle of it ends that stream (reset: no response was started),
    not the connection, whose other streams are served before and after."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin), limits={"idle_timeout": "1s"})
    client = H2Client(proxy, intercept_tls_origin)
    started = time.monotonic()
    stalled = client.request("POST", "/upload", body=[b"first half"], length=100, end=False)
    assert client.response(client.request("GET", "/echo?during=1")).status == 200
    assert client.reset_code(stalled) is not None, "the stream was never ended"
    waited = time.monotonic() - started
    assert 0.8 < waited < 8, waited
    assert not client.closed and client.goaway is None
    assert client.response(client.request("GET", "/echo?after=1")).status == 200
    client.close()


def test_a_connection_counts_its_idle_timeout_from_when_its_last_stream_ended(intercepting_countersign, intercept_tls_origin,
                                                                              intercept_pki):
    """idle_timeout closes a connection that has had no stream open that long: the clock starts
    when the last stream ends, not at the client's last octet. Here the last octet (a GET) comes
    1.5 s before the stalled upload's stream ends; counting from it would send GOAWAY 1.5 s
    after that stream's reset instead of 3 s."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin), limits={"idle_timeout": "3s"})
    client = H2Client(proxy, intercept_tls_origin)
    stalled = client.request("POST", "/upload", body=[b"first half"], length=100, end=False)
    time.sleep(1.5)  # the time itself is what is tested
    assert client.response(client.request("GET", "/echo?late=1")).status == 200
    assert client.reset_code(stalled) is not None, "the stalled stream was never ended"
    reset_seen = time.monotonic()
    assert client.goaway_code() == 0, "the idle connection was never closed"
    idle = time.monotonic() - reset_seen
    assert idle > 2.4, f"GOAWAY {idle:.2f} s after the last stream ended (idle_timeout 3 s)"
    client.close()


def test_request_bodies_of_streams_answered_before_reading_them_are_given_back_to_the_connection_window(
        intercepting_countersign, intercept_tls_origin, intercept_pki):
    """Streams answered (400) without their request body being read: the DATA they were sent
    still counts against the connection's window (1 MiB), and is credited back when the stream
    ends, so eighty such 15,000-octet bodies (each in the TLS record of its HEADERS, so in the
    proxy's hands before the stream is answered) leave room for a body on the next stream."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    client = H2Client(proxy, intercept_tls_origin)
    for _ in range(80):
        refused = client.request("POST", "/a b", body=[b"x" * 15000])
        assert client.response(refused).status == 400
    served = client.response(client.request("POST", "/upload", body=[b"y" * 10000]))
    assert served.status == 200 and json.loads(served.body)["body_length"] == 10000
    client.close()


def test_a_body_read_until_the_origin_closes_reaches_the_h2_client_whole(intercepting_countersign, intercept_tls_origin,
                                                                          intercept_pki):
    """A response with neither length nor chunks ends when its connection closes: its stream
    gets every octet, in two writes of the origin, then END_STREAM (not a reset)."""
    from harness.origin import UNTIL_CLOSE_BODY
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    client = H2Client(proxy, intercept_tls_origin)
    response = client.response(client.request("GET", "/until-close"))
    assert (response.status, response.reset, response.ended) == (200, None, True)
    assert response.body == UNTIL_CLOSE_BODY
    assert client.response(client.request("GET", "/echo")).status == 200
    client.close()


def test_responses_ending_with_their_head_and_a_path_http11_cannot_carry(intercepting_countersign, intercept_tls_origin,
                                                                          intercept_pki):
    """Heads cross between a stream and its exchange as parsed heads, not HTTP/1.1 octets. A
    response that ends with its head (HEAD of a chunked response, a 304) is one HEADERS with
    END_STREAM carrying its fields (ETag, Via), without the framing and hop-by-hop ones; a :path
    HTTP/1.1 cannot carry (a space) is answered 400 on its own stream, and the connection serves
    the next request. Every stream ends in the proxy too, with the connection still open."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    client = H2Client(proxy, intercept_tls_origin)
    head = client.response(client.request("HEAD", "/chunked"))
    fields = dict(head.headers)
    assert (head.status, head.ended, head.body) == (200, True, b"")
    assert fields["content-type"] == "text/plain" and fields["via"] == "1.1 countersign"
    assert not {"transfer-encoding", "trailer", "connection"} & set(fields)
    unchanged = client.response(client.request("GET", "/status/304"))
    assert (unchanged.status, unchanged.ended, unchanged.body) == (304, True, b"")
    assert dict(unchanged.headers)["etag"] == '"v1"'
    refused = client.response(client.request("GET", "/a b"))
    assert refused.status == 400 and refused.ended
    served = client.response(client.request("GET", "/echo"))
    assert served.status == 200 and json.loads(served.body)["target"] == "/echo"

    def counts():
        return json.loads(proxy.process.admin_get("/status.json")[1])["counts"]
    assert wait_until(lambda: counts()["h2_connections_open"] == 1 and counts()["h2_streams_open"] == 0, timeout=10), counts()
    client.close()


def test_streams_reset_in_the_read_that_opened_them_reach_no_origin(intercepting_countersign, intercept_tls_origin,
                                                                     intercept_pki):
    """A stream's exchange starts once the whole read that opened it is handled: HEADERS and
    RST_STREAM arriving together (as rapid reset sends them, CVE-2023-44487) end the stream
    before an upstream connection is dialled for it; the next stream is served."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    client = H2Client(proxy, intercept_tls_origin)
    connections, requests, _ = intercept_tls_origin.snapshot()
    for _ in range(20):
        stream = client.conn.get_next_available_stream_id()
        client.conn.send_headers(stream, [(":method", "GET"), (":scheme", "https"), (":authority", client.authority),
                                          (":path", "/echo?reset=1")])
        client.conn.reset_stream(stream)
    client.flush()  # one write, one TLS record
    served = client.response(client.request("GET", "/echo"))
    assert served.status == 200
    after_connections, after_requests, _ = intercept_tls_origin.snapshot()
    assert (after_connections - connections, after_requests - requests) == (1, 1), "a reset stream dialled the origin"
    client.close()


def test_status_and_metrics_count_h2_connections_and_streams(intercepting_countersign, intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    client = H2Client(proxy, intercept_tls_origin)
    client.request("GET", "/stall")

    def counts():
        return json.loads(proxy.process.admin_get("/status.json")[1])["counts"]
    assert wait_until(lambda: counts()["h2_connections_open"] == 1 and counts()["h2_streams_open"] == 1, timeout=10), counts()
    client.close()
    assert wait_until(lambda: counts()["h2_connections_open"] == 0 and counts()["h2_streams_open"] == 0, timeout=10), counts()
    metrics = proxy.process.admin_get("/metrics")[1].decode()
    assert "countersign_client_h2_connections 0" in metrics and 'countersign_exchanges_total{protocol="HTTP/2.0"} 1' in metrics, metrics


def test_drain_sends_goaway_and_lets_open_streams_finish(intercepting_countersign, intercept_tls_origin, intercept_pki):
    """SIGTERM: GOAWAY NO_ERROR naming the last stream, whose request then finishes and is
    answered. Raw frames here: h2 (the library) stops reading a connection once it has a GOAWAY."""
    import hpack
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    sock = tunnel(proxy, intercept_tls_origin)
    sock.settimeout(10)
    head = hpack.Encoder().encode([(":method", "POST"), (":scheme", "https"), (":path", "/upload"),
                                   (":authority", f"localhost:{intercept_tls_origin.port}")])
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"") + frame(1, 0x4, 1, head) + frame(0, 0, 1, b"first half "))
    # The stream must be open in the proxy before the drain, or GOAWAY would leave it out.
    assert wait_until(lambda: json.loads(proxy.process.admin_get("/status.json")[1])["counts"]["h2_streams_open"] == 1, timeout=10)
    proxy.process.process.signal(signal.SIGTERM)
    frames = FrameReader(sock)
    goaway = frames.until(lambda kind, flags, stream, payload: kind == 7)
    assert goaway and int.from_bytes(goaway[3][:4], "big") == 1 and int.from_bytes(goaway[3][4:8], "big") == 0, goaway
    sock.sendall(frame(0, 0x1, 1, b"second half"))
    status, body = None, b""
    decoder = hpack.Decoder()
    while True:
        kind, flags, stream, payload = frames.until(lambda kind, flags, stream, payload: stream == 1 and kind in (0, 1, 3))
        assert kind != 3, "the stream was reset"
        if kind == 1:
            status = dict(decoder.decode(payload))[":status"]
        else:
            body += payload
        if flags & 0x1:
            break
    assert status == "200" and json.loads(body)["body_length"] == 22
    sock.close()


def test_an_idle_h2_connection_gets_goaway_and_is_closed(intercepting_countersign, intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin), limits={"idle_timeout": "500ms"})
    sock = tunnel(proxy, intercept_tls_origin)
    sock.settimeout(10)
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b""))
    frames = FrameReader(sock)
    goaway = frames.until(lambda kind, flags, stream, payload: kind == 7)
    assert int.from_bytes(goaway[3][4:8], "big") == 0, "idle close is not an error"
    assert sock.recv(1) == b"", "the connection stayed open after GOAWAY"


def test_a_client_that_never_sends_its_preface_is_cut_off_at_header_timeout(intercepting_countersign, intercept_tls_origin,
                                                                              intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin), limits={"header_timeout": "500ms"})
    sock = tunnel(proxy, intercept_tls_origin)
    sock.settimeout(10)
    frames = FrameReader(sock, acknowledge=False)
    goaway = frames.until(lambda kind, flags, stream, payload: kind == 7)
    assert int.from_bytes(goaway[3][4:8], "big") == 4, "expected SETTINGS_TIMEOUT"


@pytest.mark.parametrize("stops_after", ["headers", "continuation"])
def test_a_header_block_left_half_sent_is_cut_off_at_header_timeout(intercepting_countersign, intercept_tls_origin,
                                                                    intercept_pki, stops_after):
    """HEADERS without END_HEADERS, alone or followed by a CONTINUATION that does not end the
    block either: header_timeout cuts it (what an HTTP/1.1 head gets), long before idle_timeout,
    with GOAWAY ENHANCE_YOUR_CALM whose last stream is 0 (the stream never had its head), and
    another client is served."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin),
                                     limits={"header_timeout": "500ms", "idle_timeout": "60s"})
    sock = tunnel(proxy, intercept_tls_origin)
    sock.settimeout(10)
    block = literal_block([(":method", "GET"), (":scheme", "https"), (":authority", f"localhost:{intercept_tls_origin.port}"),
                           (":path", "/echo?half=1")])
    middle = len(block) // 2
    frames = FrameReader(sock)
    sock.sendall(PREFACE + frame(SETTINGS, 0, 0, b""))
    # The proxy's SETTINGS acknowledged first: no frame of ours may come inside the block.
    frames.until(lambda kind, flags, stream, payload: kind == SETTINGS and not flags & 1)
    sock.sendall(frame(HEADERS, 0, 1, block[:middle]))
    if stops_after == "continuation":
        sock.sendall(frame(CONTINUATION, 0, 1, block[middle:middle + 1]))
    started = time.monotonic()
    goaway = frames.until(lambda kind, flags, stream, payload: kind == GOAWAY)
    assert time.monotonic() - started < 8, "cut by the idle timeout, not header_timeout"
    assert int.from_bytes(goaway[3][4:8], "big") == 11, "expected ENHANCE_YOUR_CALM"
    assert int.from_bytes(goaway[3][0:4], "big") & 0x7FFFFFFF == 0, "the unfinished stream was not processed"
    assert frames.next() is None, "the connection stayed open after GOAWAY"
    assert not any("half=1" in request.target for request in intercept_tls_origin.requests)
    assert_second_client_served(proxy, intercept_tls_origin)


# ------------------------------------------------------------------------------ hostile clients


def test_too_many_streams_are_refused_and_others_served(intercepting_countersign, intercept_tls_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin), limits={"h2_max_concurrent_streams": 2})
    client = H2Client(proxy, intercept_tls_origin)
    assert client.remote_settings.max_concurrent_streams == 2
    streams = [client.request("GET", "/stall") for _ in range(2)]
    extra = client.request("GET", "/echo", ignore_limit=True)
    assert client.reset_code(extra) == 7  # REFUSED_STREAM
    client.close()
    assert_second_client_served(proxy, intercept_tls_origin)


@pytest.mark.parametrize("attack, code", [("rapid_reset", 11), ("continuation_flood", 11), ("ping_flood", 11),
                                          ("settings_flood", 11), ("hpack_bomb", None)])
def test_attacks_get_the_rfc_error_and_others_are_served(intercepting_countersign, intercept_tls_origin, intercept_pki,
                                                         attack, code):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    client = H2Client(proxy, intercept_tls_origin)
    getattr(client, attack)()
    outcome = client.goaway_code()
    if code is None:
        # An HPACK bomb: each request above the header list limit is refused (431 or a reset), or
        # the connection ends with COMPRESSION_ERROR/ENHANCE_YOUR_CALM; never served.
        assert outcome in (None, 9, 11), outcome
    else:
        assert outcome == code, f"{attack}: expected GOAWAY {code}, got {outcome}"
    client.close()
    assert_second_client_served(proxy, intercept_tls_origin)
    # Every stream the attack opened is let go of, reset ones included.
    assert wait_until(lambda: json.loads(proxy.process.admin_get("/status.json")[1])["counts"]["h2_streams_open"] == 0, timeout=10)


def assert_second_client_served(proxy, origin):
    other = H2Client(proxy, origin)
    assert other.response(other.request("GET", "/echo?second=1")).status == 200
    other.close()


# ---------------------------------------------------------------------------------- the clients


def _clean_env(**extra):
    import os
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARIABLES}
    env.update(extra)
    return env


class Response:
    def __init__(self):
        self.status, self.headers, self.body, self.trailers, self.ended, self.reset = 0, [], b"", [], False, None


class H2Client:
    """A blocking Python h2 client over an intercepted tunnel, able to misbehave on purpose."""

    def __init__(self, proxy, origin, initial_window=None):
        self.authority = f"localhost:{origin.port}"
        # Streams whose received DATA is not acknowledged (their window stays shut).
        self.stalled = set()
        self.sock = tunnel(proxy, origin)
        self.sock.settimeout(10)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        if initial_window:
            self.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: initial_window})
        self.flush()
        self.responses, self.goaway, self.closed = {}, None, False
        self.pump(lambda: self._settings_seen)

    _settings_seen = False

    @property
    def remote_settings(self):
        return self.conn.remote_settings

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def send_raw(self, data: bytes):
        """Writes; a connection the proxy closed shows when reading (its GOAWAY comes first)."""
        try:
            self.sock.sendall(data)
        except OSError:
            self.send_failed = True

    send_failed = False

    def pump(self, done, limit=20.0):
        import time
        deadline = time.monotonic() + limit
        while not done():
            if self.closed or time.monotonic() > deadline:
                return False
            try:
                data = self.sock.recv(65536)
            except (socket.timeout, ssl.SSLError, OSError):
                self.closed = True
                return False
            if not data:
                self.closed = True
                return False
            try:
                events = self.conn.receive_data(data)
            except h2.exceptions.ProtocolError:
                self.closed = True
                return False
            for event in events:
                self.handle(event)
            self.flush()
        return True

    def handle(self, event):
        if isinstance(event, h2.events.RemoteSettingsChanged):
            self._settings_seen = True
        elif isinstance(event, h2.events.ResponseReceived):
            response = self.responses.setdefault(event.stream_id, Response())
            response.headers = event.headers
            response.status = int(dict(event.headers)[":status"])
        elif isinstance(event, h2.events.DataReceived):
            self.responses.setdefault(event.stream_id, Response()).body += event.data
            if event.stream_id not in self.stalled:
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.TrailersReceived):
            self.responses.setdefault(event.stream_id, Response()).trailers = event.headers
        elif isinstance(event, h2.events.StreamEnded):
            self.responses.setdefault(event.stream_id, Response()).ended = True
        elif isinstance(event, h2.events.StreamReset):
            self.responses.setdefault(event.stream_id, Response()).reset = event.error_code
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.goaway = event.error_code
            # GOAWAY NO_ERROR (a drain) leaves the open streams to finish.
            self.closed = event.error_code != 0

    def request(self, method, path, headers=(), body=(), trailers=None, length=None, ignore_limit=False, end=True):
        """`end=False` leaves the request body open (more DATA follows)."""
        stream = self.conn.get_next_available_stream_id()
        fields = [(":method", method), (":scheme", "https"), (":authority", self.authority), (":path", path), *headers]
        if length is not None:
            fields.append(("content-length", str(length)))
        if ignore_limit:
            # h2 would wait for a stream to end; the test wants the one beyond the limit sent.
            self.conn.remote_settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = 1000
            self.conn.remote_settings.acknowledge()
        self.conn.send_headers(stream, fields, end_stream=end and not body and not trailers)
        for index, piece in enumerate(body):
            self.conn.send_data(stream, piece, end_stream=end and index == len(body) - 1 and not trailers)
        if trailers:
            self.conn.send_headers(stream, trailers, end_stream=True)
        self.flush()
        return stream

    def response(self, stream):
        self.pump(lambda: stream in self.responses and (self.responses[stream].ended or self.responses[stream].reset is not None))
        return self.responses.get(stream, Response())

    def reset_code(self, stream):
        self.pump(lambda: stream in self.responses and self.responses[stream].reset is not None)
        return self.responses.get(stream, Response()).reset

    def goaway_code(self):
        self.pump(lambda: self.goaway is not None)
        return self.goaway

    # The attacks write frames by hand where h2 would refuse to.

    def rapid_reset(self):
        for _ in range(1500):
            stream = self.conn.get_next_available_stream_id()
            self.conn.send_headers(stream, [(":method", "GET"), (":scheme", "https"), (":authority", self.authority),
                                            (":path", "/stall")])
            self.conn.reset_stream(stream)
            self.send_raw(self.conn.data_to_send())
            if self.send_failed:
                return

    def continuation_flood(self):
        import hpack
        block = hpack.Encoder().encode([(":method", "GET"), (":scheme", "https"), (":authority", self.authority), (":path", "/echo")])
        stream = self.conn.get_next_available_stream_id()
        self.send_raw(frame(1, 0, stream, block))  # HEADERS without END_HEADERS
        for _ in range(200):
            self.send_raw(frame(9, 0, stream, b""))  # empty CONTINUATION frames

    def ping_flood(self):
        self.send_raw(b"".join(frame(6, 0, 0, i.to_bytes(8, "big")) for i in range(1000)))

    def settings_flood(self):
        self.send_raw(b"".join(frame(4, 0, 0, b"") for _ in range(1000)))

    def hpack_bomb(self):
        # One large field put in the dynamic table, then referenced thousands of times.
        import hpack
        encoder = hpack.Encoder()
        stream = self.conn.get_next_available_stream_id()
        first = encoder.encode([(":method", "GET"), (":scheme", "https"), (":authority", self.authority),
                                (":path", "/echo"), ("x-bomb", "b" * 4000)])
        index = bytes([0x80 | 62])  # the newest dynamic entry
        self.send_raw(frame(1, 0x4 | 0x1, stream, first + index * 4000))
        self.pump(lambda: stream in self.responses and (self.responses[stream].ended or self.responses[stream].reset is not None), limit=5)
        response = self.responses.get(stream)
        assert response is None or response.status in (0, 431), "a header list above the limit was served"

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class TunnelRelay:
    """A local TCP listener that opens a CONNECT tunnel through the proxy for each client
    (nghttp cannot use a proxy itself) and relays bytes both ways."""

    def __init__(self, proxy, origin):
        self.proxy, self.origin, self.connections = proxy, origin, 0
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while self.running:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            authority = f"localhost:{self.origin.port}"
            upstream = socket.create_connection(("127.0.0.1", self.proxy.port))
            upstream.sendall(request_bytes("CONNECT", authority, [("Host", authority)]))
            head = b""
            while b"\r\n\r\n" not in head:
                head += upstream.recv(1)
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._copy, args=(source, target), daemon=True).start()

    @staticmethod
    def _copy(source, target):
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            try:
                target.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def stop(self):
        self.running = False
        self.listener.close()


# ------------------------------------------------------------------------------ the upstream leg


@pytest.fixture
def h2_origin(intercept_pki, workdir):
    from harness.h2_origin import HypercornOrigin
    origin = HypercornOrigin(workdir, intercept_pki.path("leaf-chain.pem"), intercept_pki.path("leaf.key"))
    yield origin
    origin.stop()


@pytest.mark.parametrize("client_http2", [True, False])
def test_an_h2_only_origin_is_reached_over_http2(intercepting_countersign, h2_origin, intercept_pki, workdir, client_http2):
    """Hypercorn picks h2: the request reaches it over HTTP/2 whatever the client spoke, with
    the injected header, and a body both ways."""
    hosts = listed(intercept_pki, h2_origin, inject=[{"header": "X-Api-Key", "credential": "apikey"}])
    proxy = intercepting_countersign(hosts, credentials=CREDENTIALS, env=ENV)
    body = bytes(range(256)) * 800
    (workdir / "body.bin").write_bytes(body)
    args = ["--data-binary", f"@{workdir / 'body.bin'}"] + ([] if client_http2 else ["--http1.1"])
    result = curl(["--cacert", str(proxy.ca_certificate), *args, h2_origin.url("/upload")],
                  workdir, env_proxy={"HTTPS_PROXY": proxy.url})
    assert result.returncode == 0 and result.status == 200, (result.stderr, result.body[:300])
    echoed = json.loads(result.body)
    assert echoed["http_version"] == "2" and echoed["method"] == "POST"
    # Via names the version each message was received in (RFC 9110 §7.6.3): the client's
    # request as the client spoke it, the response as the origin answered (HTTP/2).
    assert dict(echoed["headers"])["via"] == ("2 countersign" if client_http2 else "1.1 countersign")
    assert ("via", "2 countersign") in [(k.lower(), v) for k, v in result.headers], result.headers
    assert echoed["body_length"] == len(body) and echoed["body_sha256"] == hashlib.sha256(body).hexdigest()
    assert dict(echoed["headers"])["x-api-key"] == API_KEY
    # A second request reuses the pooled h2 connection.
    again = curl(["--cacert", str(proxy.ca_certificate), h2_origin.url("/again")], workdir,
                 env_proxy={"HTTPS_PROXY": proxy.url}, name="again")
    assert again.status == 200 and json.loads(again.body)["path"] == "/again"


@pytest.mark.parametrize("client_http2", [True, False])
def test_a_large_response_from_an_h2_origin_flows_within_both_windows(intercepting_countersign, h2_origin, intercept_pki,
                                                                      workdir, client_http2):
    """2 MiB: far above every window on both legs (64 KiB per stream, 1 MiB per connection)."""
    from harness.h2_origin import BIG_SIZE
    proxy = intercepting_countersign(listed(intercept_pki, h2_origin))
    args = [] if client_http2 else ["--http1.1"]
    result = curl(["--cacert", str(proxy.ca_certificate), *args, h2_origin.url("/big")], workdir, env_proxy={"HTTPS_PROXY": proxy.url})
    assert result.returncode == 0 and result.status == 200, result.stderr
    assert result.body == b"z" * BIG_SIZE


def test_a_client_that_opens_large_windows_and_does_not_read_makes_the_proxy_hold_a_bounded_amount(
        intercepting_countersign, h2_origin, intercept_pki):
    """Windows are the client's to choose: one that advertises 2^31-1 octets and stops reading
    while eight 2 MiB responses come makes the proxy hold what its connection budget allows
    (256 KiB unsent, beyond the kernel's buffers), not the responses; once it reads, every
    octet arrives."""
    from harness.h2_origin import BIG_SIZE

    def rss_kib():
        for line in open(f"/proc/{proxy.process.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    proxy = intercepting_countersign(listed(intercept_pki, h2_origin))
    client = H2Client(proxy, h2_origin, initial_window=(1 << 31) - 1)
    client.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 * 1024)
    client.conn.increment_flow_control_window((1 << 31) - 1 - 65535)
    client.flush()
    assert client.response(client.request("GET", "/first")).status == 200
    before = rss_kib()
    streams = [client.request("GET", "/big") for _ in range(8)]
    time.sleep(3)
    grown = rss_kib() - before
    assert all(len(client.response(stream).body) == BIG_SIZE for stream in streams)
    assert grown < 6 * 1024, f"the proxy grew by {grown} KiB for a client that did not read"
    client.close()


def test_http2_false_keeps_the_upstream_on_http11(intercepting_countersign, h2_origin, intercept_pki, workdir):
    """Hypercorn would pick h2; with http2 false only http/1.1 is offered, and it is used."""
    proxy = intercepting_countersign(listed(intercept_pki, h2_origin, http2=False))
    result = curl(["--cacert", str(proxy.ca_certificate), h2_origin.url("/echo")], workdir, env_proxy={"HTTPS_PROXY": proxy.url})
    assert result.status == 200 and json.loads(result.body)["http_version"] == "1.1", result.body[:300]


def test_concurrent_exchanges_share_one_h2_upstream_connection(intercepting_countersign, h2_origin, intercept_pki):
    """Ten streams at once from an h2 client (after a first request opened the upstream
    connection): every one is answered over HTTP/2, and no second connection is dialled."""
    proxy = intercepting_countersign(listed(intercept_pki, h2_origin))
    client = H2Client(proxy, h2_origin)
    assert client.response(client.request("GET", "/first")).status == 200
    streams = [client.request("POST", f"/n{i}", body=[b"x" * 5000], length=5000) for i in range(10)]
    for index, stream in enumerate(streams):
        response = client.response(stream)
        echoed = json.loads(response.body)
        assert response.status == 200 and echoed["path"] == f"/n{index}" and echoed["http_version"] == "2"
        assert echoed["body_length"] == 5000
    metrics = proxy.process.admin_get("/metrics")[1].decode()
    assert "countersign_upstream_connects_total 1\n" in metrics, [l for l in metrics.splitlines() if l.startswith("countersign_upstream")]
    client.close()


def test_a_websocket_goes_over_http11_to_an_origin_that_would_pick_h2(intercepting_countersign, h2_origin, intercept_pki):
    """An upgrade needs HTTP/1.1 end to end: neither the pooled h2 connection nor a new h2 one
    carries it."""
    from harness import websocket
    from test_interception import open_tunnel
    proxy = intercepting_countersign(listed(intercept_pki, h2_origin))
    client = H2Client(proxy, h2_origin)
    assert json.loads(client.response(client.request("GET", "/warm")).body)["http_version"] == "2"
    client.close()
    authority = f"localhost:{h2_origin.port}"
    key = websocket.new_key()
    with open_tunnel(proxy, authority, proxy.ca_certificate) as connection:
        connection.send(request_bytes("GET", "/ws", [("Host", authority), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                                     ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13")]))
        switched = connection.read_response()
        assert switched.status == 101, f"no protocol switch: {switched.status} {switched.body[:200]!r}"
        connection.send(websocket.encode_frame(websocket.OPCODE_BINARY, b"over http/1.1", masked=True))
        assert websocket.read_frame(connection.reader) == (websocket.OPCODE_BINARY, b"over http/1.1")


def test_trailers_from_an_h2_origin_reach_an_h2_client(intercepting_countersign, h2_origin, intercept_pki):
    proxy = intercepting_countersign(listed(intercept_pki, h2_origin))
    client = H2Client(proxy, h2_origin)
    response = client.response(client.request("GET", "/trailers", headers=[("te", "trailers")]))
    assert response.status == 200
    assert dict(response.trailers).get("x-body-sha256") == hashlib.sha256(response.body).hexdigest(), response.trailers
    client.close()


# ------------------------------------------------------------------------------------------ gRPC


GRPC_TOKEN = "grpc-t0ken-5e1f"


@pytest.fixture
def grpc_origin(intercept_pki):
    """A grpcio server over TLS (the test PKI's localhost leaf) with raw-bytes methods: Unary
    echoes the request with the caller's authorization; Stream answers each message of a
    client stream; Fail ends with a status and trailing metadata. It records the metadata."""
    import grpc
    from concurrent import futures
    seen = []

    def unary(request, context):
        seen.append(dict(context.invocation_metadata()))
        return b"echo:" + request

    def stream(requests, context):
        seen.append(dict(context.invocation_metadata()))
        for index, request in enumerate(requests):
            yield b"%d:" % index + request

    def fail(request, context):
        context.set_trailing_metadata((("x-reason", "refused-on-purpose"),))
        context.abort(grpc.StatusCode.PERMISSION_DENIED, "no such luck")

    handler = grpc.method_handlers_generic_handler("test.Echo", {
        "Unary": grpc.unary_unary_rpc_method_handler(unary),
        "Stream": grpc.stream_stream_rpc_method_handler(stream),
        "Fail": grpc.unary_unary_rpc_method_handler(fail),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((handler,))
    credentials = grpc.ssl_server_credentials([(intercept_pki.path("leaf.key").read_bytes(), intercept_pki.path("leaf-chain.pem").read_bytes())])
    port = server.add_secure_port("127.0.0.1:0", credentials)
    server.start()
    server.port, server.seen = port, seen
    yield server
    server.stop(0)


def test_grpc_unary_streaming_and_status_through_the_proxy_with_an_injected_bearer(intercepting_countersign, grpc_origin,
                                                                                  intercept_pki, monkeypatch):
    import grpc
    hosts = listed(intercept_pki, grpc_origin, inject=[{"header": "Authorization", "credential": "token", "prefix": "Bearer "}])
    proxy = intercepting_countersign(hosts, credentials={"token": {"value_env": "CS_GRPC_TOKEN"}}, env={"CS_GRPC_TOKEN": GRPC_TOKEN})
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("https_proxy", proxy.url)
    credentials = grpc.ssl_channel_credentials(root_certificates=proxy.ca_certificate.read_bytes())
    with grpc.secure_channel(f"localhost:{grpc_origin.port}", credentials) as channel:
        unary = channel.unary_unary("/test.Echo/Unary")
        assert unary(b"hello", metadata=(("x-client", "h2-test"),), timeout=10) == b"echo:hello"
        assert grpc_origin.seen[-1]["authorization"] == f"Bearer {GRPC_TOKEN}", "the Bearer credential was not injected"
        assert grpc_origin.seen[-1]["x-client"] == "h2-test"
        streaming = channel.stream_stream("/test.Echo/Stream")
        replies = list(streaming(iter([b"a", b"b" * 70000, b"c"]), timeout=10))
        assert replies == [b"0:a", b"1:" + b"b" * 70000, b"2:c"]
        with pytest.raises(grpc.RpcError) as failure:
            channel.unary_unary("/test.Echo/Fail")(b"x", timeout=10)
        assert failure.value.code() == grpc.StatusCode.PERMISSION_DENIED and failure.value.details() == "no such luck"
        assert ("x-reason", "refused-on-purpose") in failure.value.trailing_metadata()
    lines = access_lines(proxy, count=3, method="POST")
    assert all(line["protocol"] == "HTTP/2.0" for line in lines), lines
    assert GRPC_TOKEN not in proxy.process.stderr_text()


def test_a_responses_headers_and_its_body_leave_in_one_tls_record(intercepting_countersign, intercept_tls_origin, intercept_pki):
    """The response's HEADERS wait for its first DATA, which crosses to the stream's side a loop
    turn later: sent alone, they went in a record (and a write) of their own, and a relay with
    Nagle's algorithm between client and proxy held the DATA for its peer's delayed ACK (~40 ms
    a response). OpenSSL hands one record per read, so the record holding HEADERS must hold DATA."""
    import hpack
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    sock = tunnel(proxy, intercept_tls_origin)
    sock.settimeout(10)
    head = hpack.Encoder().encode([(":method", "GET"), (":scheme", "https"), (":path", "/echo?p=1"),
                                   (":authority", f"localhost:{intercept_tls_origin.port}")])
    sock.sendall(PREFACE + frame(SETTINGS, 0, 0, b"") + frame(HEADERS, 0x5, 1, head))
    while True:
        record = sock.recv(65536)
        assert record, "the proxy closed the connection"
        kinds, offset = [], 0
        while offset + 9 <= len(record):
            length = int.from_bytes(record[offset:offset + 3], "big")
            kinds.append((record[offset + 3], int.from_bytes(record[offset + 5:offset + 9], "big") & 0x7FFFFFFF))
            offset += 9 + length
        if (HEADERS, 1) in kinds:
            assert (DATA, 1) in kinds, f"HEADERS for stream 1 came in a record without its DATA: {kinds}"
            break
    sock.close()
