"""A hostile origin and a stalled client, for the bounded-memory tests: the origin writes as
fast as the proxy takes bytes, the client asks and then never reads. What the proxy keeps in
between is measured from /proc/PID/status.

Origin routes (any method):
  /body     200 with a 4 GiB Content-Length, then zeros until the connection breaks
  /ws       101 Switching Protocols, then bytes until the connection breaks
  /interim  103 Early Hints heads, one after another, never a final response
  /stall    reads the request head and nothing more (an upload nobody takes)
"""
import socket
import ssl
import threading
import time

from .wire import SocketReader

BLOCK = b"\0" * 65536
# Large heads (48 KiB, under the proxy's 64 KiB head limit), so the flood is measured in
# bytes rather than in how fast the proxy parses heads.
EARLY_HINTS = b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; x=" + b"a" * 49152 + b"\r\n\r\n"


class FloodOrigin:
    def __init__(self, tls_context: ssl.SSLContext = None, host: str = "127.0.0.1"):
        self.tls_context = tls_context
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((host, 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.stopped = threading.Event()
        self.sent = 0
        self.lock = threading.Lock()
        self.sockets = []
        threading.Thread(target=self._accept_loop, daemon=True).start()

    def stop(self) -> None:
        self.stopped.set()
        self.listener.close()
        with self.lock:
            for sock in self.sockets:
                try:
                    sock.close()
                except OSError:
                    pass

    def _accept_loop(self) -> None:
        while not self.stopped.is_set():
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.sockets.append(sock)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        try:
            if self.tls_context:
                sock.settimeout(10)
                sock = self.tls_context.wrap_socket(sock, server_side=True)
                with self.lock:
                    self.sockets.append(sock)
            sock.settimeout(30)
            reader = SocketReader(sock)
            request_line = reader.read_line()
            while reader.read_line() not in (b"", b"\r\n", b"\n"):
                pass
            path = request_line.split(b" ")[1] if b" " in request_line else b"/"
            if path.endswith(b"/stall"):
                self.stopped.wait()
            elif path.endswith(b"/ws"):
                sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                             b"Sec-WebSocket-Accept: x\r\n\r\n")
                self._flood(sock, BLOCK)
            elif path.endswith(b"/interim"):
                self._flood(sock, EARLY_HINTS)
            else:
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                             b"Content-Length: 4294967296\r\n\r\n")
                self._flood(sock, BLOCK)
        except (OSError, ValueError):
            pass
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def _flood(self, sock, block: bytes) -> None:
        while not self.stopped.is_set():
            sock.sendall(block)
            with self.lock:
                self.sent += len(block)


class Uploader:
    """Writes a request body as fast as the proxy takes it, from a thread; `sent` counts. Read the
    answer with `receive`: one TLS connection must not be read and written from two threads at
    once (OpenSSL's SSL objects are not thread-safe: a session ticket read while a record was
    being written corrupted the stream now and then), so over TLS both go by turns, each waiting
    at most a moment for the socket."""

    TURN = 0.05

    def __init__(self, sock):
        self.sock = sock
        self.sent = 0
        self.stopped = threading.Event()
        self.turns = threading.Lock() if isinstance(sock, ssl.SSLSocket) else None
        if self.turns is not None:
            sock.settimeout(self.TURN)
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        try:
            while not self.stopped.is_set():
                if self.turns is None:
                    self.sock.sendall(BLOCK)
                    self.sent += len(BLOCK)
                    continue
                with self.turns:
                    try:
                        self.sent += self.sock.send(BLOCK)
                    except (TimeoutError, ssl.SSLWantWriteError):
                        pass
                time.sleep(0.001)  # the reader's turn
        except (OSError, ValueError):
            pass

    def receive(self, size: int, timeout: float) -> bytes:
        """Up to `size` bytes of the answer, b'' when the connection closed; TimeoutError after `timeout` s."""
        if self.turns is None:
            self.sock.settimeout(timeout)
            return self.sock.recv(size)
        deadline = time.monotonic() + timeout
        while True:
            with self.turns:
                try:
                    return self.sock.recv(size)
                except (TimeoutError, ssl.SSLWantReadError):
                    pass
            if time.monotonic() >= deadline:
                raise TimeoutError(f"no answer in {timeout} s")
            time.sleep(0.001)

    def stop(self):
        self.stopped.set()


def stalled_socket(port: int) -> socket.socket:
    """A client socket to the proxy with a small receive buffer, as a reader that stopped."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    return sock


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def rss_growth_kib(pid: int, origin, settle: float = 1.0, watch: float = 3.0) -> int:
    """How much the process grew while `origin` (anything with a `sent` count) kept sending
    and nobody read: measured from `settle` seconds after the flood started (the kernel's
    socket buffers are full by then) over `watch` seconds. Fails when nothing was sent."""
    time.sleep(settle)
    start = rss_kib(pid)
    peak = start
    deadline = time.monotonic() + watch
    while time.monotonic() < deadline:
        time.sleep(0.1)
        peak = max(peak, rss_kib(pid))
    assert origin.sent > 0, "nothing was sent: the test measured nothing"
    return peak - start
