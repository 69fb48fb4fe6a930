"""Raw-socket HTTP/1.1 client: sends exactly the bytes a test wrote and reads responses
one at a time, so smuggling shapes, pipelining and framing can be checked by hand."""
import hashlib
import json
import socket
import struct
from dataclasses import dataclass, field as dataclass_field

from .wire import PeerClosed, SocketReader, field, parse_fields

BODILESS_STATUSES = {204, 304}


@dataclass
class Response:
    version: str
    status: int
    reason: str
    headers: list
    body: bytes = b""
    trailers: list = dataclass_field(default_factory=list)
    body_length: int = 0
    body_sha256: str = ""
    complete: bool = True  # False when the peer closed before the framing said the body ended

    def header(self, name: str, default=None):
        return field(self.headers, name, default)

    def json(self):
        return json.loads(self.body)


class RawConnection:
    def __init__(self, host: str, port: int, timeout: float = 10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.reader = SocketReader(self.sock)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def close(self) -> None:
        self.sock.close()

    def abort(self) -> None:
        """Closes with a TCP reset, the way a crashed client vanishes."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()

    def read_response(self, method: str = "GET", keep_body: bool = True,
                      skip_interim: bool = True) -> Response:
        """Reads one response. Interim 1xx answers (other than 101) are skipped unless
        `skip_interim` is False. Bodies over a few MB should use keep_body=False."""
        while True:
            response = self._read_head()
            if skip_interim and 100 <= response.status < 200 and response.status != 101:
                continue
            break
        if method == "HEAD" or response.status in BODILESS_STATUSES or 100 <= response.status < 200:
            return response
        if method == "CONNECT" and 200 <= response.status < 300:
            return response
        self._read_body(response, keep_body)
        return response

    def _read_head(self) -> Response:
        head = self.reader.read_head()
        lines = head[:-4].split(b"\r\n")
        version, _, rest = lines[0].partition(b" ")
        status, _, reason = rest.partition(b" ")
        return Response(version.decode(), int(status), reason.decode("latin-1"),
                        parse_fields(lines[1:]))

    def _read_body(self, response: Response, keep_body: bool) -> None:
        digest = hashlib.sha256()
        kept = bytearray()

        def sink(data: bytes) -> None:
            digest.update(data)
            response.body_length += len(data)
            if keep_body:
                kept.extend(data)

        transfer_encoding = (response.header("Transfer-Encoding") or "").lower()
        length = response.header("Content-Length")
        try:
            if "chunked" in transfer_encoding:
                response.trailers = self.reader.read_chunked(sink)
            elif length is not None:
                self.reader.read_exact_into(int(length), sink)
            else:
                self.reader.read_to_close(sink)
        except PeerClosed:
            response.complete = False
        response.body = bytes(kept)
        response.body_sha256 = digest.hexdigest()

    def read_raw(self, count: int) -> bytes:
        return self.reader.read_exact(count)

    def peer_closed(self, timeout: float = 5.0) -> bool:
        """True when the other side closes (EOF or reset) within `timeout` without sending more."""
        if self.reader.buffer:
            return False
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1)
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True
        return data == b""


def request_bytes(method: str, target: str, headers, body: bytes = b"",
                  version: str = "HTTP/1.1") -> bytes:
    """Serializes a request exactly as given: header names, order and values untouched."""
    head = f"{method} {target} {version}\r\n".encode("latin-1")
    for name, value in headers:
        head += name.encode("latin-1") + b": " + (value if isinstance(value, bytes) else value.encode("latin-1")) + b"\r\n"
    return head + b"\r\n" + body


def exchange(host: str, port: int, data: bytes, method: str = "GET", timeout: float = 10.0) -> Response:
    """One request on a fresh connection; returns the response."""
    with RawConnection(host, port, timeout) as connection:
        connection.send(data)
        return connection.read_response(method)


def forward_request(url: str, method: str = "GET", headers=(), body: bytes = b"",
                    version: str = "HTTP/1.1") -> bytes:
    """An absolute-form request for a forward proxy, Host first, then `headers` as given."""
    authority = url.split("://", 1)[1].split("/", 1)[0]
    fields = [("Host", authority), *headers]
    if body and not any(name.lower() in ("content-length", "transfer-encoding") for name, _ in headers):
        fields.append(("Content-Length", str(len(body))))
    return request_bytes(method, url, fields, body, version)
