"""A hostile origin for the response half of the smuggling differential: a raw-socket server
that answers GET /h/NAME with the exact bytes of RESPONSE_SHAPES[NAME] (then closes when the
shape says so) and GET /ok/N with a clean `ok-N`, on as many requests per connection as the
proxy sends. What the proxy must make of each shape is in `accept`:
  "refused"      a 502 of the proxy's own (Proxy-Status)
  "incomplete"   a response the proxy had to cut short: the client sees it end early
  ("body", b)    exactly one response whose body is b
  ("status", n)  exactly one bodiless response with status n"""
import socket
import threading
from dataclasses import dataclass

from .ports import free_port

EXTRA = b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nsmuggled"
HELLO = ("body", b"hello")


@dataclass
class ResponseShape:
    family: str
    wire: bytes
    accept: tuple
    close: bool = False  # close the connection after sending
    method: str = "GET"


def _r(head: bytes, body: bytes = b"") -> bytes:
    return head.replace(b"\n", b"\r\n") + b"\r\n\r\n" + body


def _interim(status: bytes = b"100 Continue") -> bytes:
    return b"HTTP/1.1 " + status + b"\r\n\r\n"


RESPONSE_SHAPES = {
    # Content-Length / Transfer-Encoding together and duplicated.
    "cl-te": ResponseShape("resp-framing", _r(b"HTTP/1.1 200 OK\nContent-Length: 50\nTransfer-Encoding: chunked",
                                              b"5\r\nhello\r\n0\r\n\r\n"), ("refused", HELLO)),
    "te-cl": ResponseShape("resp-framing", _r(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\nContent-Length: 3",
                                              b"5\r\nhello\r\n0\r\n\r\n"), ("refused", HELLO)),
    "cl-differing": ResponseShape("resp-framing", _r(b"HTTP/1.1 200 OK\nContent-Length: 5\nContent-Length: 6", b"hello!"),
                                  ("refused",)),
    "cl-same": ResponseShape("resp-framing", _r(b"HTTP/1.1 200 OK\nContent-Length: 5\nContent-Length: 5", b"hello"),
                             ("refused", HELLO)),
    "cl-list-same": ResponseShape("resp-framing", _r(b"HTTP/1.1 200 OK\nContent-Length: 5, 5", b"hello"), ("refused", HELLO)),
    "cl-list-differing": ResponseShape("resp-framing", _r(b"HTTP/1.1 200 OK\nContent-Length: 5, 6", b"hello!"), ("refused",)),
    "cl-plus": ResponseShape("resp-framing", _r(b"HTTP/1.1 200 OK\nContent-Length: +5", b"hello"), ("refused",)),
    "cl-negative": ResponseShape("resp-framing", _r(b"HTTP/1.1 200 OK\nContent-Length: -1", b"hello"), ("refused",)),
    "cl-overflow": ResponseShape("resp-framing", _r(b"HTTP/1.1 200 OK\nContent-Length: 18446744073709551621", b"hello"),
                                 ("refused",), close=True),
    "te-chunked-twice": ResponseShape("resp-framing", _r(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked, chunked",
                                                         b"5\r\nhello\r\n0\r\n\r\n"), ("refused",)),
    "te-gzip-until-close": ResponseShape("resp-framing", _r(b"HTTP/1.1 200 OK\nTransfer-Encoding: gzip", b"hello"),
                                         ("refused", HELLO), close=True),
    "te-space-before-colon": ResponseShape("resp-framing", _r(b"HTTP/1.1 200 OK\nTransfer-Encoding : chunked\nContent-Length: 5",
                                                              b"hello"), ("refused",)),
    "te-underscore-with-cl": ResponseShape("resp-framing", _r(b"HTTP/1.1 200 OK\nContent-Length: 5\nTransfer_Encoding: chunked",
                                                              b"0\r\n\r\n" + EXTRA), ("refused", ("body", b"0\r\n\r\n"))),
    "http10-te-chunked": ResponseShape("resp-framing", _r(b"HTTP/1.0 200 OK\nTransfer-Encoding: chunked",
                                                          b"5\r\nhello\r\n0\r\n\r\n"), ("refused", HELLO), close=True),
    # Bytes beyond the framing must never become the next response.
    "extra-after-cl": ResponseShape("resp-extra", _r(b"HTTP/1.1 200 OK\nContent-Length: 5", b"hello" + EXTRA), ("refused", HELLO)),
    "extra-after-chunked": ResponseShape("resp-extra", _r(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked",
                                                          b"5\r\nhello\r\n0\r\n\r\n" + EXTRA), ("refused", HELLO)),
    "204-with-body": ResponseShape("resp-extra", _r(b"HTTP/1.1 204 No Content\nContent-Length: 5", b"hello" + EXTRA),
                                   ("refused", ("status", 204))),
    "304-with-body": ResponseShape("resp-extra", _r(b"HTTP/1.1 304 Not Modified\nContent-Length: 5", b"hello" + EXTRA),
                                   ("refused", ("status", 304))),
    "head-with-body": ResponseShape("resp-extra", _r(b"HTTP/1.1 200 OK\nContent-Length: 5", b"hello" + EXTRA),
                                    ("refused", ("status", 200)), method="HEAD"),
    "close-with-extra": ResponseShape("resp-extra", _r(b"HTTP/1.1 200 OK\nContent-Length: 5\nConnection: close",
                                                       b"hello" + EXTRA), ("refused", HELLO)),
    # Interim responses.
    "100-flood-50": ResponseShape("resp-1xx", _interim() * 50 + _r(b"HTTP/1.1 200 OK\nContent-Length: 5", b"hello"),
                                  ("refused", HELLO)),
    "102-flood-50": ResponseShape("resp-1xx", _interim(b"102 Processing") * 50 + _r(b"HTTP/1.1 200 OK\nContent-Length: 5", b"hello"),
                                  ("refused", HELLO)),
    "103-flood-5000": ResponseShape("resp-1xx", _r(b"HTTP/1.1 103 Early Hints\nLink: </a>; rel=preload") * 5000
                                    + _r(b"HTTP/1.1 200 OK\nContent-Length: 5", b"hello"), ("refused", HELLO)),
    "100-with-body": ResponseShape("resp-1xx", _r(b"HTTP/1.1 100 Continue\nContent-Length: 5", b"hello")
                                   + _r(b"HTTP/1.1 200 OK\nContent-Length: 5", b"hello"), ("refused",)),
    "101-unasked": ResponseShape("resp-1xx", _r(b"HTTP/1.1 101 Switching Protocols\nConnection: Upgrade\nUpgrade: websocket", EXTRA),
                                 ("refused",)),
    "101-unasked-h2c": ResponseShape("resp-1xx", _r(b"HTTP/1.1 101 Switching Protocols\nConnection: Upgrade\nUpgrade: h2c",
                                                    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), ("refused",)),
    # Line structure.
    "bare-lf-everywhere": ResponseShape("resp-lines", b"HTTP/1.1 200 OK\nContent-Length: 5\n\nhello", ("refused",)),
    "bare-lf-one-field": ResponseShape("resp-lines", b"HTTP/1.1 200 OK\r\nX-A: a\nContent-Length: 5\r\n\r\nhello", ("refused",)),
    "bare-cr-field": ResponseShape("resp-lines", b"HTTP/1.1 200 OK\r\nX-A: a\rContent-Length: 6\r\nContent-Length: 5\r\n\r\nhello",
                                   ("refused",)),
    "obs-fold": ResponseShape("resp-lines", _r(b"HTTP/1.1 200 OK\nX-A: a\n b\nContent-Length: 5", b"hello"), ("refused",)),
    "obs-fold-cl": ResponseShape("resp-lines", _r(b"HTTP/1.1 200 OK\nContent-Length:\n 5", b"hello"), ("refused",)),
    "space-before-colon": ResponseShape("resp-lines", _r(b"HTTP/1.1 200 OK\nContent-Length : 5", b"hello"), ("refused",)),
    "nul-in-value": ResponseShape("resp-lines", _r(b"HTTP/1.1 200 OK\nX-A: a\x00b\nContent-Length: 5", b"hello"), ("refused",)),
    "status-two-digits": ResponseShape("resp-lines", _r(b"HTTP/1.1 20 OK\nContent-Length: 5", b"hello"), ("refused",)),
    "status-four-digits": ResponseShape("resp-lines", _r(b"HTTP/1.1 2000 OK\nContent-Length: 5", b"hello"), ("refused",)),
    "status-http2": ResponseShape("resp-lines", _r(b"HTTP/2 200\nContent-Length: 5", b"hello"), ("refused",)),
    "status-lowercase": ResponseShape("resp-lines", _r(b"http/1.1 200 OK\nContent-Length: 5", b"hello"), ("refused",)),
    "reason-control": ResponseShape("resp-lines", _r(b"HTTP/1.1 200 O\x01K\nContent-Length: 5", b"hello"), ("refused",)),
    "status-no-reason": ResponseShape("resp-lines", _r(b"HTTP/1.1 200\nContent-Length: 5", b"hello"), ("refused", HELLO)),
    "head-too-large": ResponseShape("resp-lines", _r(b"HTTP/1.1 200 OK\nX-Big: " + b"a" * 200_000 + b"\nContent-Length: 5", b"hello"),
                                    ("refused",), close=True),
    # Bodies cut short or malformed: the client must see the response end early, never a whole one.
    "cl-truncated": ResponseShape("resp-body", _r(b"HTTP/1.1 200 OK\nContent-Length: 10", b"hello"), ("refused", "incomplete"),
                                  close=True),
    "chunked-truncated": ResponseShape("resp-body", _r(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked", b"5\r\nhello\r\n"),
                                       ("refused", "incomplete"), close=True),
    "chunked-bad-size": ResponseShape("resp-body", _r(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked", b"5\r\nhello\r\nzz\r\n"),
                                      ("refused", "incomplete"), close=True),
    "chunked-size-overflow": ResponseShape("resp-body", _r(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked",
                                                           b"10000000000000005\r\nhello\r\n0\r\n\r\n"), ("refused", "incomplete"), close=True),
    "chunked-data-too-long": ResponseShape("resp-body", _r(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked",
                                                           b"3\r\nhello\r\n0\r\n\r\n"), ("refused", "incomplete"), close=True),
    "chunked-ext-bare-lf": ResponseShape("resp-body", _r(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked",
                                                         b"5;a\nb\r\nhello\r\n0\r\n\r\n"), ("refused", "incomplete"), close=True),
    "chunked-ext-quoted": ResponseShape("resp-body", _r(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked",
                                                        b'5;a="x;y"\r\nhello\r\n0\r\n\r\n'), ("refused", HELLO)),
    "chunked-trailer-cl": ResponseShape("resp-body", _r(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked",
                                                        b"5\r\nhello\r\n0\r\nContent-Length: 100\r\n\r\n"), ("refused", HELLO)),
    "chunked-trailer-obs-fold": ResponseShape("resp-body", _r(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked",
                                                              b"5\r\nhello\r\n0\r\nX-T: a\r\n b\r\n\r\n"), ("refused", "incomplete"),
                                              close=True),
    "until-close-http10": ResponseShape("resp-body", b"HTTP/1.0 200 OK\r\n\r\nhello", ("refused", HELLO), close=True),
    "until-close-http11": ResponseShape("resp-body", b"HTTP/1.1 200 OK\r\n\r\nhello", ("refused", HELLO), close=True),
}


class HostileOrigin:
    """Serves the shapes above on 127.0.0.1; stopped by closing its listening socket."""

    def __init__(self):
        self.port = free_port()
        self.listener = socket.create_server(("127.0.0.1", self.port))
        self.connections = 0
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def authority(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _accept(self):
        while self.running:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        buffer = b""
        client.settimeout(10)
        try:
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = client.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                lines = head.split(b"\r\n")
                length = next((int(line.split(b":", 1)[1]) for line in lines[1:]
                               if line.lower().startswith(b"content-length:")), 0)
                while len(buffer) < length:
                    buffer += client.recv(65536)
                buffer = buffer[length:]
                path = lines[0].split(b" ")[1].decode("latin-1")
                if path.startswith("/h/"):
                    shape = RESPONSE_SHAPES[path.split("/")[2]]
                    client.sendall(shape.wire)
                    if shape.close:
                        return
                else:
                    body = ("ok-" + path.rsplit("/", 1)[-1]).encode()
                    client.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        except OSError:
            return
        finally:
            client.close()

    def stop(self):
        self.running = False
        self.listener.close()
