"""HTTP/2 on the wire for interop tests: frames built and read by hand (so a test can send what
no library would), the tunnel that reaches Countersign's intercepting listener with ALPN h2, and
a literal-only HPACK encoder that writes any field, malformed ones included."""
import ssl

from harness.rawclient import RawConnection, request_bytes

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

# Frame types (RFC 9113 section 6).
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
# Flags.
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20
# Error codes (RFC 9113 section 7).
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR, SETTINGS_TIMEOUT, STREAM_CLOSED, FRAME_SIZE_ERROR, \
    REFUSED_STREAM, CANCEL, COMPRESSION_ERROR = range(10)


def frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def setting(identifier: int, value: int) -> bytes:
    return identifier.to_bytes(2, "big") + value.to_bytes(4, "big")


def hpack_integer(value: int, prefix_bits: int, first: int = 0) -> bytes:
    """RFC 7541 section 5.1; `first` carries the representation's leading bits."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out, value = bytearray([first | limit]), value - limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def literal_block(fields) -> bytes:
    """Each field a literal without indexing with a literal name and no Huffman (RFC 7541
    section 6.2.2): the bytes go out exactly as given, upper case or not."""
    out = bytearray()
    for name, value in fields:
        name, value = name.encode() if isinstance(name, str) else name, value.encode() if isinstance(value, str) else value
        out += b"\x00" + hpack_integer(len(name), 7) + name + hpack_integer(len(value), 7) + value
    return bytes(out)


def tunnel(proxy, origin):
    """CONNECT through the proxy, then TLS offering h2 only; the socket speaks HTTP/2."""
    authority = f"localhost:{origin.port}"
    connection = RawConnection("127.0.0.1", proxy.port)
    connection.send(request_bytes("CONNECT", authority, [("Host", authority)]))
    assert connection.read_response("CONNECT").status == 200
    context = ssl.create_default_context(cafile=str(proxy.ca_certificate))
    context.set_alpn_protocols(["h2"])
    sock = context.wrap_socket(connection.sock, server_hostname="localhost")
    assert sock.selected_alpn_protocol() == "h2"
    return sock


class FrameReader:
    """HTTP/2 frames off a socket, acknowledging the proxy's SETTINGS."""

    def __init__(self, sock, acknowledge=True):
        self.sock, self.buffer, self.acknowledge = sock, b"", acknowledge

    def next(self):
        """The next frame as (type, flags, stream, payload), or None once the peer has closed."""
        while True:
            if len(self.buffer) >= 9 and len(self.buffer) >= 9 + int.from_bytes(self.buffer[:3], "big"):
                length = int.from_bytes(self.buffer[:3], "big")
                found = (self.buffer[3], self.buffer[4], int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF, self.buffer[9:9 + length])
                self.buffer = self.buffer[9 + length:]
                if found[0] == SETTINGS and not found[1] & ACK and self.acknowledge:
                    self.sock.sendall(frame(SETTINGS, ACK, 0, b""))
                return found
            try:
                data = self.sock.recv(65536)
            except (ConnectionResetError, ssl.SSLError):
                data = b""
            if not data:
                return None
            self.buffer += data

    def until(self, wanted):
        while True:
            found = self.next()
            assert found is not None, "the proxy closed the connection"
            if wanted(*found):
                return found
