"""A Python origin on a raw socket, so tests can see what the proxy really sent upstream:
header names in their case and order, body framing, and how many connections and requests
arrived. One thread per connection; keep-alive and 100-continue are honoured.

Routes (any method; the query string is ignored):
  /echo, /upload   200 JSON: method, target, version, headers [[name, value], ...],
                   body_sha256, body_length, body_chunked, trailers
  /chunked         a chunked body of CHUNKED_BODY with an X-Body-SHA256 trailer
  /status/NNN      that status; no body for 1xx/204/304
  /cookie          sets a cookie (to check it never reaches the proxy's logs)
  /stall           reads the request and never answers
  /reset           announces 1 MiB, sends 64 KiB, then resets the connection
  /until-close     a body with no length, UNTIL_CLOSE_BODY in two writes, ended by closing
  /ws              a WebSocket echo (text and binary frames, close answered)
"""
import hashlib
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field as dataclass_field

from . import websocket
from .wire import PeerClosed, SocketReader, field, field_values, parse_fields

CHUNKED_PIECES = [b"first chunk\n", b"x" * 5000, b"", b"last bit\n"]
CHUNKED_BODY = b"".join(CHUNKED_PIECES)
CHUNKED_SHA256 = hashlib.sha256(CHUNKED_BODY).hexdigest()
COOKIE_SECRET = "origin-session-c0ffee-9f2a"
RESET_ANNOUNCED = 1 << 20
RESET_SENT = 64 << 10
UNTIL_CLOSE_BODY = b"read until the origin closes\n" * 700


@dataclass
class RecordedRequest:
    connection_id: int
    method: str
    target: str
    version: str
    headers: list
    raw_head: bytes
    body_sha256: str = ""
    body_length: int = 0
    body_chunked: bool = False
    trailers: list = dataclass_field(default_factory=list)

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    def header(self, name: str, default=None):
        return field(self.headers, name, default)

    def header_values(self, name: str) -> list:
        return field_values(self.headers, name)

    def header_names(self) -> list:
        return [name for name, _ in self.headers]


class OriginServer:
    def __init__(self, host: str = "127.0.0.1"):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.host = host
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((host, 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.connections = 0
        self.bytes_received = 0
        self.requests: list[RecordedRequest] = []
        self.open_sockets: set = set()
        self.stopping = False
        self.thread = threading.Thread(target=self._accept_loop, daemon=True)
        self.thread.start()

    @property
    def authority(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return f"http://{self.authority}{path}"

    def stop(self) -> None:
        self.stopping = True
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
        except OSError:
            pass
        self.listener.close()
        with self.lock:
            for sock in list(self.open_sockets):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def snapshot(self):
        """(connections, requests, bytes received) so far, to compare before and after an exchange."""
        with self.lock:
            return self.connections, len(self.requests), self.bytes_received

    def _count_bytes(self, count: int) -> None:
        with self.lock:
            self.bytes_received += count

    def _accept_loop(self) -> None:
        while not self.stopping:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
                connection_id = self.connections
                self.open_sockets.add(sock)
            threading.Thread(target=self._serve, args=(sock, connection_id), daemon=True).start()

    def _serve(self, sock: socket.socket, connection_id: int) -> None:
        reader = SocketReader(sock, on_data=self._count_bytes)
        sock.settimeout(60)
        try:
            while not self.stopping:
                request = self._read_request(sock, reader, connection_id)
                with self.lock:
                    self.requests.append(request)
                if not self._respond(sock, reader, request):
                    break
        except (PeerClosed, OSError, ValueError):
            pass
        finally:
            with self.lock:
                self.open_sockets.discard(sock)
            sock.close()

    def _read_request(self, sock, reader: SocketReader, connection_id: int) -> RecordedRequest:
        head = reader.read_head()
        lines = head[:-4].split(b"\r\n")
        method, target, version = lines[0].decode("latin-1").split(" ", 2)
        request = RecordedRequest(connection_id, method, target, version, parse_fields(lines[1:]), head)
        if (request.header("Expect") or "").lower() == "100-continue":
            sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        digest = hashlib.sha256()

        def sink(data: bytes) -> None:
            digest.update(data)
            request.body_length += len(data)

        if "chunked" in (request.header("Transfer-Encoding") or "").lower():
            request.body_chunked = True
            request.trailers = reader.read_chunked(sink)
        elif request.header("Content-Length") is not None:
            reader.read_exact_into(int(request.header("Content-Length")), sink)
        request.body_sha256 = digest.hexdigest()
        return request

    def _respond(self, sock, reader, request: RecordedRequest) -> bool:
        """Answers one request; returns whether the connection may carry another."""
        keep_alive = _wants_keep_alive(request)
        path = request.path
        if path == "/stall":
            wait_for_close(sock, seconds=60)
            return False
        if path == "/reset":
            sock.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {RESET_ANNOUNCED}\r\n\r\n".encode())
            sock.sendall(b"r" * RESET_SENT)
            time.sleep(0.2)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False
        if path == "/until-close":
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n" + UNTIL_CLOSE_BODY[:1000])
            time.sleep(0.05)
            sock.sendall(UNTIL_CLOSE_BODY[1000:])
            return False
        if path == "/ws":
            self._websocket_echo(sock, reader, request)
            return False
        if path == "/chunked":
            sock.sendall(_chunked_response(request.method == "HEAD", keep_alive))
            return keep_alive
        if path.startswith("/big-head/"):
            # A response head of about N bytes: Set-Cookie fields of 4 KiB, as large sites send.
            size = int(path.rsplit("/", 1)[1])
            cookies = [("Set-Cookie", f"c{index}={'v' * 4000}") for index in range(size // 4020)]
            sock.sendall(_response(200, b"big head\n", cookies, keep_alive, request.method == "HEAD"))
            return keep_alive
        if path.startswith("/status/"):
            status = int(path.rsplit("/", 1)[1])
            extra = [("ETag", '"v1"')] if status == 304 else []
            body = b"" if status in (204, 304) or status < 200 else f"status {status}\n".encode()
            sock.sendall(_response(status, body, extra, keep_alive, request.method == "HEAD"))
            return keep_alive
        extra = [("Set-Cookie", f"session={COOKIE_SECRET}; HttpOnly")] if path == "/cookie" else []
        body = json.dumps({
            "method": request.method, "target": request.target, "version": request.version,
            "headers": request.headers, "body_sha256": request.body_sha256,
            "body_length": request.body_length, "body_chunked": request.body_chunked,
            "trailers": request.trailers,
        }).encode()
        sock.sendall(_response(200, body, [("Content-Type", "application/json")] + extra,
                               keep_alive, request.method == "HEAD"))
        return keep_alive

    def _websocket_echo(self, sock, reader, request: RecordedRequest) -> None:
        key = request.header("Sec-WebSocket-Key")
        if (request.header("Upgrade") or "").lower() != "websocket" or not key:
            sock.sendall(_response(400, b"expected a WebSocket upgrade\n", [], False, False))
            return
        sock.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Accept: {websocket.accept_for(key)}\r\n\r\n").encode())
        while True:
            opcode, payload = websocket.read_frame(reader)
            if opcode == websocket.OPCODE_CLOSE:
                sock.sendall(websocket.encode_frame(websocket.OPCODE_CLOSE, payload[:2], masked=False))
                return
            sock.sendall(websocket.encode_frame(opcode, payload, masked=False))


def _wants_keep_alive(request: RecordedRequest) -> bool:
    tokens = [t.strip().lower() for t in (request.header("Connection") or "").split(",")]
    if request.version == "HTTP/1.0":
        return "keep-alive" in tokens
    return "close" not in tokens


def _response(status: int, body: bytes, extra, keep_alive: bool, head_only: bool) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    lines += [f"{name}: {value}" for name, value in extra]
    if status not in (204, 304) and status >= 200:
        lines.append(f"Content-Length: {len(body)}")
    if not keep_alive:
        lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head if head_only else head + body


def _chunked_response(head_only: bool, keep_alive: bool) -> bytes:
    head = ("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
            "Trailer: X-Body-SHA256\r\n" + ("" if keep_alive else "Connection: close\r\n") + "\r\n").encode()
    if head_only:
        return head
    body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in CHUNKED_PIECES if piece)
    return head + body + f"0\r\nX-Body-SHA256: {CHUNKED_SHA256}\r\n\r\n".encode()


def wait_for_close(sock, seconds: float) -> None:
    """Reads and drops whatever the peer sends until it closes (or `seconds` of silence)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except OSError:
        pass


_REASONS = {100: "Continue", 200: "OK", 204: "No Content", 304: "Not Modified", 400: "Bad Request",
            404: "Not Found", 500: "Internal Server Error"}
