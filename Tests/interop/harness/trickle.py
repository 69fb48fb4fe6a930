"""Peers that send one byte at a time, slowly: what a hostile client, origin or parent proxy
does to hold a connection open without ever finishing a head (or a TLS handshake)."""
import select
import socket
import threading
import time

from .ports import free_port


def trickle(sock, data: bytes, interval: float, limit: float, answers=lambda received: True):
    """Sends `data` one byte every `interval` seconds until the peer closes or sends what
    `answers` (given each piece received) calls an answer, or `limit` seconds pass. Returns
    (seconds until then, or None at the limit; every byte received, up to the peer's close
    or a pause of 2 s after its answer)."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    started = time.monotonic()
    received = b""
    for byte in data:
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return time.monotonic() - started, received
        readable, _, _ = select.select([sock], [], [], interval)
        if readable:
            try:
                piece = sock.recv(65536)
            except ConnectionResetError:
                piece = b""
            received += piece
            if not piece:
                return time.monotonic() - started, received
            if answers(piece):
                return time.monotonic() - started, received + _read_until_quiet(sock)
        if time.monotonic() - started > limit:
            return None, received
    return None, received


def _read_until_quiet(sock) -> bytes:
    received = b""
    sock.settimeout(2.0)
    while True:
        try:
            data = sock.recv(65536)
        except (socket.timeout, ConnectionResetError):
            return received
        if not data:
            return received
        received += data


class TricklingPeer:
    """A TCP server on 127.0.0.1 that reads one request head (a GET, or a CONNECT when it
    plays a parent proxy; with `waits_for_head` False, any first bytes such as a ClientHello),
    then sends `answer` one byte every `interval` seconds until the
    proxy closes the connection. `closed_after` holds, per connection, the seconds from the
    request head to the proxy's close (None while it keeps it)."""

    def __init__(self, answer: bytes, interval: float = 0.2, before: bytes = b"", waits_for_head: bool = True):
        self.answer = answer
        self.waits_for_head = waits_for_head
        self.before = before
        self.interval = interval
        self.port = free_port()
        self.listener = socket.create_server(("127.0.0.1", self.port))
        self.closed_after = []
        self.request_heads = []
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
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        index = len(self.closed_after)
        self.closed_after.append(None)
        started = time.monotonic()
        try:
            head = b""
            # A TLS client's first flight has no blank line: any bytes will do.
            while not head or (self.waits_for_head and b"\r\n\r\n" not in head):
                data = client.recv(65536)
                if not data:
                    return
                head += data
            self.request_heads.append(head)
            started = time.monotonic()
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.before:
                client.sendall(self.before)
            for byte in self.answer:
                client.sendall(bytes([byte]))
                readable, _, _ = select.select([client], [], [], self.interval)
                if readable and not client.recv(65536):
                    break
            self.closed_after[index] = time.monotonic() - started
        except OSError:
            self.closed_after[index] = time.monotonic() - started
        finally:
            client.close()

    def stop(self):
        self.running = False
        self.listener.close()
