"""HTTP/2 conformance of the intercepting listener, in the spirit of h2spec (issue 25, "How it is
checked"): h2spec's default server cases, each sent as raw frames over a real TLS connection (ALPN
h2) inside an intercepted CONNECT, asserting what RFC 9113 / RFC 7541 name: the GOAWAY code for a
connection error, RST_STREAM for a stream error, or the frame a server must answer with. Each case
carries its h2spec id ("http2/6.5/3" is section 6.5, case 3). The same cases drive the machine
directly in Tests/CountersignTests/HTTP/H2Spec*CasesTests.swift; here they go through TLS, the
libevent shell and the session, as a client would reach them."""
from dataclasses import dataclass
from typing import Callable

import hpack
import pytest

from harness.h2wire import (ACK, CONTINUATION, DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS, PADDED, PING, PREFACE,
                            PRIORITY, PRIORITY_FLAG, RST_STREAM, SETTINGS, WINDOW_UPDATE, COMPRESSION_ERROR,
                            FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR, PROTOCOL_ERROR, STREAM_CLOSED, FrameReader, frame,
                            literal_block, setting, tunnel)
from test_interception import listed

pytestmark = pytest.mark.countersign_only

ENABLE_PUSH, INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE = 0x2, 0x4, 0x5
PING_DATA = b"h2spec\x00\x01"


class Wire:
    """One client connection speaking raw frames to the intercepting listener."""

    def __init__(self, proxy, origin):
        self.authority = f"localhost:{origin.port}"
        self.sock = tunnel(proxy, origin)
        self.sock.settimeout(10)
        self.frames = FrameReader(self.sock)
        self.seen = []

    def handshake(self):
        """Preface and an empty SETTINGS; returns once the server's SETTINGS has arrived (and been acknowledged)."""
        self.send(PREFACE + frame(SETTINGS, 0, 0, b""))
        self.seen.append(self.frames.until(lambda kind, flags, stream, payload: kind == SETTINGS and not flags & ACK))

    def send(self, data: bytes):
        self.sock.sendall(data)

    def fields(self, path="/stall", method="GET", extra=()):
        return [(":method", method), (":scheme", "https"), (":path", path), (":authority", self.authority), *extra]

    def request(self, stream, path="/stall", method="GET", end_stream=True, extra=()) -> bytes:
        flags = END_HEADERS | (END_STREAM if end_stream else 0)
        return frame(HEADERS, flags, stream, literal_block(self.fields(path, method, extra)))

    def next(self):
        found = self.frames.next()
        if found is not None:
            self.seen.append(found)
        return found

    def ending(self):
        """The first GOAWAY or RST_STREAM as ("goaway", code) / ("rst", stream, code), or ("closed",)."""
        while (found := self.next()) is not None:
            kind, _, stream, payload = found
            if kind == GOAWAY:
                return ("goaway", int.from_bytes(payload[4:8], "big"))
            if kind == RST_STREAM:
                return ("rst", stream, int.from_bytes(payload[:4], "big"))
        return ("closed",)

    def ping_answered(self) -> bool:
        """Sends a PING and reads until its ACK: the connection is alive and nothing went wrong before."""
        self.send(frame(PING, 0, 0, PING_DATA))
        while (found := self.next()) is not None:
            kind, flags, _, payload = found
            if kind in (GOAWAY, RST_STREAM):
                return False
            if kind == PING and flags & ACK and payload == PING_DATA:
                return True
        return False

    def close(self):
        self.sock.close()


# ------------------------------------------------------------------------------- expectations

def connection_error(code):
    def check(wire):
        outcome = wire.ending()
        assert outcome == ("goaway", code), f"expected GOAWAY {code}, got {outcome}; frames {wire.seen}"
        assert wire.next() is None, "the connection stayed open after a connection error's GOAWAY"
    return check


def stream_error(stream, code):
    def check(wire):
        outcome = wire.ending()
        assert outcome == ("rst", stream, code), f"expected RST_STREAM {code} on {stream}, got {outcome}; frames {wire.seen}"
        assert wire.ping_answered(), "a stream error took the connection down"
    return check


def stream_or_connection_error(stream, code):
    """Where RFC 9113 lets the server choose (e.g. a frame on a closed stream)."""
    def check(wire):
        outcome = wire.ending()
        assert outcome in (("rst", stream, code), ("goaway", code)), f"expected code {code}, got {outcome}; frames {wire.seen}"
    return check


def ignored(wire):
    assert wire.ping_answered(), f"the frame was not ignored: {wire.seen}"


def response_headers(stream):
    def check(wire):
        while (found := wire.next()) is not None:
            kind, _, on, payload = found
            assert kind not in (GOAWAY, RST_STREAM), f"refused: {wire.seen}"
            if kind == HEADERS and on == stream:
                fields = dict(hpack.Decoder().decode(payload))
                assert fields[":status"] in ("200", 200), fields
                return
        raise AssertionError(f"no response on stream {stream}: {wire.seen}")
    return check


@dataclass
class Case:
    id: str
    send: Callable  # (Wire) -> bytes sent after the handshake
    expect: Callable  # (Wire) -> None, asserting
    handshake: bool = True

    def __str__(self):
        return self.id


def data_frame(size):
    return lambda w: w.request(1, end_stream=False) + frame(DATA, 0, 1, b"x" * size)


PRIORITY_PAYLOAD = (0).to_bytes(4, "big") + b"\x10"
HPACK_BLOCKS = {  # RFC 7541 decoding errors, the blocks h2spec sends (":method GET" ":scheme http" ":path /" indexed first).
    "hpack/2.3.3/1 index past the tables": bytes([0x82, 0x86, 0x84, 0xBE + 10]),
    "hpack/2.3.3/2 literal name index past the tables": bytes([0x82, 0x86, 0x84, 0x7F, 0x10, 0x01, 0x61]),
    "hpack/4.2/1 size update after a field": bytes([0x82, 0x86, 0x84, 0x41, 0x01, 0x61, 0x20]),
    "hpack/5.2/1 Huffman padding longer than 7 bits": bytes([0x82, 0x86, 0x84, 0x41, 0x82, 0x1F, 0xFF]),
    "hpack/5.2/2 Huffman padding by zeros": bytes([0x82, 0x86, 0x84, 0x41, 0x81, 0x18]),
    "hpack/5.2/3 EOS in a Huffman string": bytes([0x82, 0x86, 0x84, 0x41, 0x84, 0xFF, 0xFF, 0xFF, 0xFF]),
    "hpack/6.1/1 index 0": bytes([0x80]),
    "hpack/6.3/1 size update above SETTINGS_HEADER_TABLE_SIZE": bytes([0x3F, 0xE2, 0x1F, 0x82, 0x86, 0x84, 0x41, 0x01, 0x61]),
}


def malformed(extra=(), replace=None):
    """A request whose fields are `replace` (a function of the usual ones) or the usual plus `extra`."""
    def send(w):
        fields = replace(w.fields()) if replace else w.fields(extra=extra)
        return frame(HEADERS, END_HEADERS | END_STREAM, 1, literal_block(fields))
    return send


def without(name):
    return lambda fields: [f for f in fields if f[0] != name]


def doubled(name):
    return lambda fields: fields + [f for f in fields if f[0] == name]


CASES = [
    # 3.5 the connection preface
    Case("http2/3.5/2 an invalid preface", lambda w: b"INVALID CONNECTION PREFACE\r\n\r\n", connection_error(PROTOCOL_ERROR), handshake=False),
    # 4.1 frame format
    Case("http2/4.1/1 an unknown frame type is ignored", lambda w: frame(0x16, 0, 0, b"\x00" * 8), ignored),
    Case("http2/4.1/2 undefined flags are ignored", lambda w: frame(PING, 0x16, 0, b"\x00" * 8), ignored),
    Case("http2/4.1/3 the reserved bit is ignored",
         lambda w: frame(PING, 0, 0, b"\x00" * 8)[:5] + b"\x80\x00\x00\x00" + b"\x00" * 8, ignored),
    # 4.2 frame size
    Case("http2/4.2/1 DATA of SETTINGS_MAX_FRAME_SIZE octets is accepted",
         lambda w: w.request(1, "/upload", "POST", end_stream=False, extra=[("content-length", "16384")])
         + frame(DATA, END_STREAM, 1, b"x" * 16384), response_headers(1)),
    Case("http2/4.2/2 DATA over SETTINGS_MAX_FRAME_SIZE", data_frame(16385), stream_or_connection_error(1, FRAME_SIZE_ERROR)),
    Case("http2/4.2/3 HEADERS over SETTINGS_MAX_FRAME_SIZE",
         lambda w: frame(HEADERS, END_HEADERS | END_STREAM, 1, literal_block(w.fields(extra=[("x-big", "a" * 16400)]))),
         connection_error(FRAME_SIZE_ERROR)),
    # 4.3 header compression and decompression
    Case("http2/4.3/1 an invalid header block fragment", lambda w: frame(HEADERS, END_HEADERS | END_STREAM, 1, b"\x00"),
         connection_error(COMPRESSION_ERROR)),
    Case("http2/4.3/2 PRIORITY inside a header block",
         lambda w: frame(HEADERS, END_STREAM, 1, literal_block(w.fields())) + frame(PRIORITY, 0, 1, PRIORITY_PAYLOAD),
         connection_error(PROTOCOL_ERROR)),
    # 5.1 stream states
    Case("http2/5.1/1 idle: DATA", lambda w: frame(DATA, END_STREAM, 1, b"test"), connection_error(PROTOCOL_ERROR)),
    Case("http2/5.1/2 idle: RST_STREAM", lambda w: frame(RST_STREAM, 0, 1, b"\x00\x00\x00\x08"), connection_error(PROTOCOL_ERROR)),
    Case("http2/5.1/3 idle: WINDOW_UPDATE", lambda w: frame(WINDOW_UPDATE, 0, 1, b"\x00\x00\x00\x64"), connection_error(PROTOCOL_ERROR)),
    Case("http2/5.1/4 idle: CONTINUATION", lambda w: frame(CONTINUATION, END_HEADERS, 1, literal_block(w.fields())),
         connection_error(PROTOCOL_ERROR)),
    Case("http2/5.1/5 half closed (remote): DATA", lambda w: w.request(1) + frame(DATA, END_STREAM, 1, b"test"),
         stream_or_connection_error(1, STREAM_CLOSED)),
    Case("http2/5.1/6 half closed (remote): HEADERS", lambda w: w.request(1) + w.request(1),
         stream_or_connection_error(1, STREAM_CLOSED)),
    Case("http2/5.1/8 closed: DATA after RST_STREAM",
         lambda w: w.request(1, end_stream=False) + frame(RST_STREAM, 0, 1, b"\x00\x00\x00\x08") + frame(DATA, 0, 1, b"test"),
         stream_or_connection_error(1, STREAM_CLOSED)),
    Case("http2/5.1/9 closed: HEADERS after RST_STREAM",
         lambda w: w.request(1, end_stream=False) + frame(RST_STREAM, 0, 1, b"\x00\x00\x00\x08") + w.request(1),
         stream_or_connection_error(1, STREAM_CLOSED)),
    # 5.1.1 stream identifiers
    Case("http2/5.1.1/1 an even stream identifier", lambda w: w.request(2), connection_error(PROTOCOL_ERROR)),
    Case("http2/5.1.1/2 a decreasing stream identifier", lambda w: w.request(5) + w.request(3), connection_error(PROTOCOL_ERROR)),
    # 5.3.1 stream dependencies
    Case("http2/5.3.1/1 HEADERS depending on its own stream",
         lambda w: frame(HEADERS, END_HEADERS | END_STREAM | PRIORITY_FLAG, 1, (1).to_bytes(4, "big") + b"\x10" + literal_block(w.fields())),
         stream_error(1, PROTOCOL_ERROR)),
    Case("http2/5.3.1/2 PRIORITY depending on its own stream", lambda w: frame(PRIORITY, 0, 3, (3).to_bytes(4, "big") + b"\x10"),
         stream_error(3, PROTOCOL_ERROR)),
    # 5.4.1 connection error handling
    Case("http2/5.4.1/1 GOAWAY then close on a connection error", lambda w: frame(PING, 0, 0, b"\x00" * 6),
         connection_error(FRAME_SIZE_ERROR)),
    # 5.5 extending HTTP/2
    Case("http2/5.5/1 an unknown extension frame is ignored", lambda w: frame(0xFF, 0, 0, b"\x00" * 8), ignored),
    Case("http2/5.5/2 an unknown extension frame inside a header block",
         lambda w: frame(HEADERS, END_STREAM, 1, literal_block(w.fields())) + frame(0xFF, 0, 1, b"\x00" * 8),
         connection_error(PROTOCOL_ERROR)),
    # 6.1 DATA
    Case("http2/6.1/1 DATA on stream 0", lambda w: frame(DATA, END_STREAM, 0, b"test"), connection_error(PROTOCOL_ERROR)),
    Case("http2/6.1/2 DATA on a half closed (remote) stream", lambda w: w.request(1) + frame(DATA, END_STREAM, 1, b"test"),
         stream_or_connection_error(1, STREAM_CLOSED)),
    Case("http2/6.1/3 DATA with a pad length past the payload",
         lambda w: w.request(1, "/upload", "POST", end_stream=False) + frame(DATA, PADDED | END_STREAM, 1, b"\x06test"),
         connection_error(PROTOCOL_ERROR)),
    # 6.2 HEADERS
    Case("http2/6.2/1 HEADERS without END_HEADERS then PRIORITY",
         lambda w: frame(HEADERS, END_STREAM, 1, literal_block(w.fields())) + frame(PRIORITY, 0, 1, PRIORITY_PAYLOAD),
         connection_error(PROTOCOL_ERROR)),
    Case("http2/6.2/2 HEADERS then CONTINUATION on another stream",
         lambda w: frame(HEADERS, END_STREAM, 1, literal_block(w.fields()[:2])) + frame(CONTINUATION, END_HEADERS, 3, literal_block(w.fields()[2:])),
         connection_error(PROTOCOL_ERROR)),
    Case("http2/6.2/3 HEADERS on stream 0", lambda w: frame(HEADERS, END_HEADERS | END_STREAM, 0, literal_block(w.fields())),
         connection_error(PROTOCOL_ERROR)),
    Case("http2/6.2/4 HEADERS with a pad length past the payload",
         lambda w: frame(HEADERS, END_HEADERS | END_STREAM | PADDED, 1, bytes([200]) + literal_block(w.fields())),
         connection_error(PROTOCOL_ERROR)),
    # 6.3 PRIORITY
    Case("http2/6.3/1 PRIORITY on stream 0", lambda w: frame(PRIORITY, 0, 0, PRIORITY_PAYLOAD), connection_error(PROTOCOL_ERROR)),
    Case("http2/6.3/2 PRIORITY of 4 octets", lambda w: w.request(1, end_stream=False) + frame(PRIORITY, 0, 1, PRIORITY_PAYLOAD[:4]),
         stream_error(1, FRAME_SIZE_ERROR)),
    # 6.4 RST_STREAM
    Case("http2/6.4/1 RST_STREAM on stream 0", lambda w: frame(RST_STREAM, 0, 0, b"\x00\x00\x00\x08"), connection_error(PROTOCOL_ERROR)),
    Case("http2/6.4/2 RST_STREAM on an idle stream", lambda w: frame(RST_STREAM, 0, 1, b"\x00\x00\x00\x08"), connection_error(PROTOCOL_ERROR)),
    Case("http2/6.4/3 RST_STREAM of 3 octets", lambda w: w.request(1, end_stream=False) + frame(RST_STREAM, 0, 1, b"\x00\x00\x08"),
         connection_error(FRAME_SIZE_ERROR)),
    # 6.5 SETTINGS
    Case("http2/6.5/1 SETTINGS ACK with a payload", lambda w: frame(SETTINGS, ACK, 0, b"\x00"), connection_error(FRAME_SIZE_ERROR)),
    Case("http2/6.5/2 SETTINGS on a stream", lambda w: frame(SETTINGS, 0, 1, setting(0x3, 100)), connection_error(PROTOCOL_ERROR)),
    Case("http2/6.5/3 SETTINGS not a multiple of 6 octets", lambda w: frame(SETTINGS, 0, 0, setting(0x3, 100)[:3]),
         connection_error(FRAME_SIZE_ERROR)),
    Case("http2/6.5.2/1 SETTINGS_ENABLE_PUSH of 2", lambda w: frame(SETTINGS, 0, 0, setting(ENABLE_PUSH, 2)), connection_error(PROTOCOL_ERROR)),
    Case("http2/6.5.2/2 SETTINGS_INITIAL_WINDOW_SIZE of 2^31", lambda w: frame(SETTINGS, 0, 0, setting(INITIAL_WINDOW_SIZE, 1 << 31)),
         connection_error(FLOW_CONTROL_ERROR)),
    Case("http2/6.5.2/3 SETTINGS_MAX_FRAME_SIZE below 16384", lambda w: frame(SETTINGS, 0, 0, setting(MAX_FRAME_SIZE, 16383)),
         connection_error(PROTOCOL_ERROR)),
    Case("http2/6.5.2/4 SETTINGS_MAX_FRAME_SIZE above 2^24-1", lambda w: frame(SETTINGS, 0, 0, setting(MAX_FRAME_SIZE, 1 << 24)),
         connection_error(PROTOCOL_ERROR)),
    Case("http2/6.5.2/5 an unknown setting is ignored", lambda w: frame(SETTINGS, 0, 0, setting(0xFF, 1)), ignored),
    # 6.7 PING
    Case("http2/6.7/2 a PING ACK is not answered", lambda w: frame(PING, ACK, 0, b"\x00" * 8), ignored),
    Case("http2/6.7/3 PING on a stream", lambda w: frame(PING, 0, 1, b"\x00" * 8), connection_error(PROTOCOL_ERROR)),
    Case("http2/6.7/4 PING of 6 octets", lambda w: frame(PING, 0, 0, b"\x00" * 6), connection_error(FRAME_SIZE_ERROR)),
    # 6.8 GOAWAY
    Case("http2/6.8/1 GOAWAY on a stream", lambda w: frame(GOAWAY, 0, 1, b"\x00" * 8), connection_error(PROTOCOL_ERROR)),
    # 6.9 WINDOW_UPDATE
    Case("http2/6.9/1 WINDOW_UPDATE of 0 on the connection", lambda w: frame(WINDOW_UPDATE, 0, 0, b"\x00" * 4),
         connection_error(PROTOCOL_ERROR)),
    Case("http2/6.9/2 WINDOW_UPDATE of 0 on a stream", lambda w: w.request(1, end_stream=False) + frame(WINDOW_UPDATE, 0, 1, b"\x00" * 4),
         stream_error(1, PROTOCOL_ERROR)),
    Case("http2/6.9/3 WINDOW_UPDATE of 3 octets", lambda w: frame(WINDOW_UPDATE, 0, 0, b"\x00\x00\x01"), connection_error(FRAME_SIZE_ERROR)),
    Case("http2/6.9.1/2 the connection window past 2^31-1",
         lambda w: frame(WINDOW_UPDATE, 0, 0, (0x7FFFFFFF).to_bytes(4, "big")) + frame(WINDOW_UPDATE, 0, 0, (0x7FFFFFFF).to_bytes(4, "big")),
         connection_error(FLOW_CONTROL_ERROR)),
    Case("http2/6.9.1/3 a stream window past 2^31-1",
         lambda w: w.request(1, end_stream=False) + frame(WINDOW_UPDATE, 0, 1, (0x7FFFFFFF).to_bytes(4, "big"))
         + frame(WINDOW_UPDATE, 0, 1, (0x7FFFFFFF).to_bytes(4, "big")),
         stream_error(1, FLOW_CONTROL_ERROR)),
    Case("http2/6.9.2/3 SETTINGS_INITIAL_WINDOW_SIZE past 2^31-1", lambda w: frame(SETTINGS, 0, 0, setting(INITIAL_WINDOW_SIZE, 1 << 31)),
         connection_error(FLOW_CONTROL_ERROR)),
    # 6.10 CONTINUATION
    Case("http2/6.10/2 CONTINUATION after END_HEADERS",
         lambda w: w.request(1, end_stream=False) + frame(CONTINUATION, END_HEADERS, 1, literal_block([("x-a", "1")])),
         connection_error(PROTOCOL_ERROR)),
    Case("http2/6.10/3 CONTINUATION on stream 0",
         lambda w: frame(HEADERS, END_STREAM, 1, literal_block(w.fields())) + frame(CONTINUATION, END_HEADERS, 0, literal_block([("x-a", "1")])),
         connection_error(PROTOCOL_ERROR)),
    Case("http2/6.10/5 CONTINUATION after DATA",
         lambda w: w.request(1, "/upload", "POST", end_stream=False) + frame(DATA, 0, 1, b"test")
         + frame(CONTINUATION, END_HEADERS, 1, literal_block([("x-a", "1")])),
         connection_error(PROTOCOL_ERROR)),
    # 8.1 HTTP request/response exchange
    Case("http2/8.1/1 a second HEADERS without END_STREAM",
         lambda w: w.request(1, "/upload", "POST", end_stream=False) + frame(HEADERS, END_HEADERS, 1, literal_block([("x-trailer", "1")])),
         stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2/1 an upper-case field name", malformed([("X-Upper", "1")]), stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.1/1 an unknown pseudo-header", malformed([(":custom", "1")]), stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.1/2 a response pseudo-header in a request", malformed([(":status", "200")]), stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.1/3 a pseudo-header in trailers",
         lambda w: w.request(1, "/upload", "POST", end_stream=False) + frame(HEADERS, END_HEADERS | END_STREAM, 1, literal_block([(":method", "POST")])),
         stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.1/4 a pseudo-header after a regular field",
         malformed(replace=lambda f: [f[0], f[1], ("x-a", "1"), *f[2:]]), stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.2/1 a connection-specific field", malformed([("connection", "keep-alive")]), stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.2/2 te other than trailers", malformed([("te", "gzip")]), stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.3/1 an empty :path", malformed(replace=lambda f: [(n, "" if n == ":path" else v) for n, v in f]),
         stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.3/2 no :method", malformed(replace=without(":method")), stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.3/3 no :scheme", malformed(replace=without(":scheme")), stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.3/4 no :path", malformed(replace=without(":path")), stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.3/5 :method twice", malformed(replace=doubled(":method")), stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.3/6 :scheme twice", malformed(replace=doubled(":scheme")), stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.3/7 :path twice", malformed(replace=doubled(":path")), stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.6/1 content-length above the DATA",
         lambda w: w.request(1, "/upload", "POST", end_stream=False, extra=[("content-length", "1")]) + frame(DATA, END_STREAM, 1, b"test"),
         stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.1.2.6/2 content-length below the DATA of several frames",
         lambda w: w.request(1, "/upload", "POST", end_stream=False, extra=[("content-length", "3")])
         + frame(DATA, 0, 1, b"te") + frame(DATA, END_STREAM, 1, b"st"),
         stream_error(1, PROTOCOL_ERROR)),
    Case("http2/8.2/1 PUSH_PROMISE from a client",
         lambda w: w.request(1, end_stream=False) + frame(5, END_HEADERS, 1, (2).to_bytes(4, "big") + b"\x82"),
         connection_error(PROTOCOL_ERROR)),
] + [Case(name, (lambda block: lambda w: frame(HEADERS, END_HEADERS | END_STREAM, 1, block))(block), connection_error(COMPRESSION_ERROR))
     for name, block in HPACK_BLOCKS.items()]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_h2spec_case(intercepting_countersign, intercept_tls_origin, intercept_pki, case):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    wire = Wire(proxy, intercept_tls_origin)
    try:
        if case.handshake:
            wire.handshake()
        wire.send(case.send(wire))
        case.expect(wire)
    finally:
        wire.close()


def test_h2spec_3_5_1_server_preface_is_settings(intercepting_countersign, intercept_tls_origin, intercept_pki):
    """http2/3.5/1: the first frame the server sends is SETTINGS (not an ACK)."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    wire = Wire(proxy, intercept_tls_origin)
    wire.send(PREFACE)
    first = wire.next()
    assert first is not None and first[0] == SETTINGS and not first[1] & ACK, first
    wire.close()


def test_h2spec_6_7_1_ping_is_echoed(intercepting_countersign, intercept_tls_origin, intercept_pki):
    """http2/6.7/1: a PING is answered by a PING with ACK and the same eight octets."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    wire = Wire(proxy, intercept_tls_origin)
    wire.handshake()
    assert wire.ping_answered(), wire.seen
    wire.close()


def test_h2spec_6_5_3_2_settings_are_acknowledged(intercepting_countersign, intercept_tls_origin, intercept_pki):
    """http2/6.5.3/2: a SETTINGS frame is acknowledged by an empty SETTINGS with ACK."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    wire = Wire(proxy, intercept_tls_origin)
    wire.handshake()
    wire.send(frame(SETTINGS, 0, 0, setting(INITIAL_WINDOW_SIZE, 100)))
    ack = wire.frames.until(lambda kind, flags, stream, payload: kind == SETTINGS and flags & ACK)
    assert ack[3] == b""
    wire.close()
