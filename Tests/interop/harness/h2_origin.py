"""Hypercorn serving an ASGI echo app over TLS, choosing h2 whenever the client offers it by
ALPN (HTTP/1.1 otherwise), for the upstream leg. GET/POST any path: 200 JSON with the HTTP version the
origin saw, method, path, headers and the body's length and SHA-256; /trailers adds a
`x-body-sha256` trailer (ASGI http.response.trailers); /big sends BIG_SIZE octets of
BIG_BYTE in 64 KiB pieces, without a length. A WebSocket (over HTTP/1.1) echoes each message."""
import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from .ports import free_port, wait_for_port

BIG_SIZE = 2 * 1024 * 1024

APP = textwrap.dedent('''
    import hashlib, json
    BIG_SIZE, BIG_BYTE = 2 * 1024 * 1024, b"z"

    async def app(scope, receive, send):
        if scope["type"] == "websocket":
            await receive()
            await send({"type": "websocket.accept"})
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    return
                await send({"type": "websocket.send", "bytes": message.get("bytes"), "text": message.get("text")})
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"] == "/big":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/octet-stream")]})
            for _ in range(BIG_SIZE // 65536):
                await send({"type": "http.response.body", "body": BIG_BYTE * 65536, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            return
        reply = json.dumps({"http_version": scope["http_version"], "method": scope["method"], "path": scope["path"],
                            "headers": [[k.decode(), v.decode()] for k, v in scope["headers"]],
                            "body_length": len(body), "body_sha256": hashlib.sha256(body).hexdigest()}).encode()
        trailers = scope["path"] == "/trailers" and "http.response.trailers" in scope.get("extensions", {})
        await send({"type": "http.response.start", "status": 200, "trailers": trailers,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": reply})
        if trailers:
            await send({"type": "http.response.trailers", "headers": [(b"x-body-sha256", hashlib.sha256(reply).hexdigest().encode())],
                        "more_trailers": False})
''')


class HypercornOrigin:
    def __init__(self, workdir: Path, certificate: Path, key: Path):
        self.port = free_port()
        (workdir / "h2app.py").write_text(APP)
        (workdir / "h2origin.toml").write_text(f'alpn_protocols = ["h2"]\ncertfile = "{certificate}"\nkeyfile = "{key}"\n'
                                               f'bind = ["127.0.0.1:{self.port}"]\n')
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hypercorn", "--config", "h2origin.toml", "h2app:app"],
            cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for_port("127.0.0.1", self.port, timeout=20, alive=lambda: self.process.poll() is None)

    def url(self, path: str) -> str:
        return f"https://localhost:{self.port}{path}"

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
