#!/usr/bin/env python3
"""Memory a proxy spends per idle CONNECT tunnel (or, with --tls-ca, per idle intercepted connection).

Reads the proxy's memory (VmRSS from /proc/PID/status and Pss from /proc/PID/smaps_rollup,
summed over the process and its descendants, so helper processes count too), opens COUNT
CONNECT tunnels through it to an origin that keeps connections open, sends one small request
through each (so the proxy has moved bytes both ways, as a real tunnel has), leaves them idle,
reads the memory again and prints one JSON object. With --tls-ca the client completes a TLS
handshake inside each tunnel, verifying the proxy's minted certificate against that CA, before its
request: the proxy then holds a TLS session on each side of every idle connection. With --h2 that
TLS offers only ALPN h2 and the request is one HTTP/2 stream (preface, SETTINGS, GET) answered in
full; with --direct there is no CONNECT: the client speaks to --proxy-port as if it were the
origin (a reverse proxy such as nghttpx, measured beside an intercepting one).


    {"opened": N, "rss_kib_per_tunnel": ..., "pss_kib_per_tunnel": ..., "rss_before_kib": ..., ...}

Exits 1 with a sentence on stderr when not a single tunnel opened.
"""
import argparse
import json
import os
import resource
import socket
import ssl
import sys
import time

from proctree import descendants

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "interop"))
from harness.h2wire import (DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS, PREFACE, RST_STREAM,  # noqa: E402
                            SETTINGS, FrameReader, frame, literal_block)


def memory_kib(pid):
    """(RSS, Pss) in KiB over pid and its descendants."""
    rss = pss = 0
    for process in descendants(pid):
        try:
            with open(f"/proc/{process}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
            with open(f"/proc/{process}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            continue  # a helper that exited between listing and reading
    return rss, pss


def read_head(sock):
    """Bytes up to and including the blank line ending a response head."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed before the response head ended")
        data += chunk
    return data


def read_response(sock):
    """One response with a Content-Length body; the tunnel stays open afterwards."""
    data = read_head(sock)
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed inside the response body")
        body += chunk
    return head.split(b"\r\n", 1)[0]


def client_tls_context(ca_file, h2=False):
    """Verifies the chain against the intercepting proxy's CA. The name is not checked: the
    figure is about memory, and peers mint leaves for IP literals differently."""
    context = ssl.create_default_context(cafile=ca_file)
    context.check_hostname = False
    if h2:
        context.set_alpn_protocols(["h2"])
    return context


def h2_exchange(sock, target, path):
    """One GET on stream 1, read until the response ends; the connection then stays open."""
    if sock.selected_alpn_protocol() != "h2":
        raise ConnectionError(f"ALPN chose {sock.selected_alpn_protocol()!r}, not h2")
    fields = [(":method", "GET"), (":scheme", "https"), (":path", path), (":authority", target)]
    sock.sendall(PREFACE + frame(SETTINGS, 0, 0, b"") + frame(HEADERS, END_HEADERS | END_STREAM, 1, literal_block(fields)))
    frames = FrameReader(sock)
    while (found := frames.next()) is not None:
        kind, flags, stream, _ = found
        if kind in (GOAWAY, RST_STREAM):
            raise ConnectionError(f"the request was refused (frame type {kind})")
        if kind in (HEADERS, DATA) and stream == 1 and flags & END_STREAM:
            return
    raise ConnectionError("closed before the HTTP/2 response ended")


def open_tunnel(proxy_port, target, path, timeout, tls_context=None, h2=False, direct=False):
    sock = socket.create_connection(("127.0.0.1", proxy_port), timeout=timeout)
    try:
        if not direct:
            sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
            status_line = read_head(sock).split(b"\r\n", 1)[0]
            if b" 200" not in status_line:
                raise ConnectionError(f"CONNECT answered {status_line.decode(errors='replace')}")
        if tls_context is not None:
            sock = tls_context.wrap_socket(sock, server_hostname=target.rsplit(":", 1)[0])
        if path and h2:
            h2_exchange(sock, target, path)
        elif path:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
            status_line = read_response(sock)
            if b" 200" not in status_line:
                raise ConnectionError(f"request in tunnel answered {status_line.decode(errors='replace')}")
        return sock
    except BaseException:
        sock.close()
        raise


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--target", required=True, help="host:port the tunnels go to")
    parser.add_argument("--pid", type=int, required=True, help="the proxy's process id")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--path", default="/1k", help="request sent once per tunnel; empty for none")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds to wait before reading memory")
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--tls-ca", help="PEM CA of an intercepting proxy: TLS inside each tunnel")
    parser.add_argument("--h2", action="store_true", help="with --tls-ca: ALPN h2 and the request as an HTTP/2 stream")
    parser.add_argument("--direct", action="store_true", help="no CONNECT: --proxy-port is the TLS server itself")
    args = parser.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < args.count + 64:
        sys.exit(f"open file limit {hard} is below {args.count} tunnels; raise ulimit -n")

    time.sleep(args.settle)
    rss_before, pss_before = memory_kib(args.pid)
    tls_context = client_tls_context(args.tls_ca, args.h2) if args.tls_ca else None
    tunnels, first_failure = [], None
    started = time.monotonic()
    for _ in range(args.count):
        try:
            tunnels.append(open_tunnel(args.proxy_port, args.target, args.path, args.timeout, tls_context, args.h2, args.direct))
        except (OSError, ConnectionError) as error:
            first_failure = f"tunnel {len(tunnels) + 1} failed: {error}"
            break
    open_seconds = time.monotonic() - started
    time.sleep(args.settle)
    rss_after, pss_after = memory_kib(args.pid)

    # Are they still open? An idle tunnel the proxy dropped costs it nothing and must not count.
    alive = 0
    for sock in tunnels:
        sock.setblocking(False)
        try:
            alive += sock.recv(1) != b""
        except (BlockingIOError, ssl.SSLWantReadError):
            alive += 1
        except OSError:
            pass
        sock.close()

    if not tunnels:
        sys.exit(f"no tunnel opened: {first_failure}")
    opened = len(tunnels)
    print(json.dumps({
        "opened": opened,
        "alive_at_measurement": alive,
        "rss_before_kib": rss_before,
        "rss_after_kib": rss_after,
        "pss_before_kib": pss_before,
        "pss_after_kib": pss_after,
        "rss_kib_per_tunnel": round((rss_after - rss_before) / opened, 2),
        "pss_kib_per_tunnel": round((pss_after - pss_before) / opened, 2),
        "open_seconds": round(open_seconds, 2),
        "first_failure": first_failure,
    }))


if __name__ == "__main__":
    main()
