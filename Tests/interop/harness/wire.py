"""A buffered reader over a socket, shared by the raw client and the Python origin:
HTTP framing is read by hand so tests see exactly the bytes that travelled."""
import socket


class PeerClosed(Exception):
    """The other side closed (or reset) the connection before the expected bytes came."""


class SocketReader:
    def __init__(self, sock: socket.socket, on_data=None):
        self.sock = sock
        self.buffer = bytearray()
        self.on_data = on_data  # told the size of every read, so a server can count bytes

    def _fill(self) -> None:
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError as reset:
            raise PeerClosed("connection reset by peer") from reset
        if not data:
            raise PeerClosed("connection closed by peer")
        if self.on_data:
            self.on_data(len(data))
        self.buffer += data

    def read_until(self, marker: bytes, limit: int = 1 << 20) -> bytes:
        """Bytes up to and including `marker`."""
        while True:
            index = self.buffer.find(marker)
            if index >= 0:
                end = index + len(marker)
                chunk = bytes(self.buffer[:end])
                del self.buffer[:end]
                return chunk
            if len(self.buffer) > limit:
                raise ValueError(f"no {marker!r} within {limit} bytes")
            self._fill()

    def read_head(self, limit: int = 1 << 20) -> bytes:
        """A message head through its blank line (CRLF CRLF)."""
        return self.read_until(b"\r\n\r\n", limit)

    def read_line(self) -> bytes:
        return self.read_until(b"\r\n")[:-2]

    def read_exact(self, count: int) -> bytes:
        while len(self.buffer) < count:
            self._fill()
        chunk = bytes(self.buffer[:count])
        del self.buffer[:count]
        return chunk

    def read_exact_into(self, count: int, sink) -> None:
        """Streams `count` bytes to `sink(bytes)` without holding them all."""
        remaining = count
        while remaining:
            if not self.buffer:
                self._fill()
            take = min(remaining, len(self.buffer))
            sink(bytes(self.buffer[:take]))
            del self.buffer[:take]
            remaining -= take

    def read_to_close(self, sink) -> None:
        if self.buffer:
            sink(bytes(self.buffer))
            self.buffer.clear()
        while True:
            try:
                data = self.sock.recv(65536)
            except ConnectionResetError as reset:
                raise PeerClosed("connection reset by peer") from reset
            if not data:
                return
            sink(data)

    def read_chunked(self, sink) -> list:
        """Decodes a chunked body into `sink`; returns the trailer fields as (name, value)."""
        while True:
            size_line = self.read_line()
            size = int(size_line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                break
            self.read_exact_into(size, sink)
            if self.read_exact(2) != b"\r\n":
                raise ValueError("chunk data not followed by CRLF")
        trailers = []
        while True:
            line = self.read_line()
            if not line:
                return trailers
            name, _, value = line.partition(b":")
            trailers.append((name.decode("latin-1"), value.strip().decode("latin-1")))


def parse_fields(lines) -> list:
    """Header lines (bytes, no CRLF) to (name, value) pairs, names kept exactly as sent."""
    fields = []
    for line in lines:
        name, _, value = line.partition(b":")
        fields.append((name.decode("latin-1"), value.strip(b" \t").decode("latin-1")))
    return fields


def field(fields, name: str, default=None):
    """The first value of `name` (case-insensitive) in (name, value) pairs."""
    wanted = name.lower()
    for key, value in fields:
        if key.lower() == wanted:
            return value
    return default


def field_values(fields, name: str) -> list:
    wanted = name.lower()
    return [value for key, value in fields if key.lower() == wanted]
