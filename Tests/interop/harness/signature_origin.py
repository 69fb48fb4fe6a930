"""An origin that verifies RFC 9421 request signatures with the PyPI package
`http-message-signatures` (a verifier nobody here wrote): each request's signature is checked
with the key its `keyid` names, its Content-Digest against the body received, and the result is
answered as JSON (200 `{"verified": true, ...}`, or 401 `{"verified": false, "error": ...}`).
Every request is recorded with its result. Plain HTTP, or HTTPS with a given certificate."""
import json
import ssl
import threading
from dataclasses import dataclass
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests
from http_message_signatures import HTTPMessageSigner, HTTPMessageVerifier, HTTPSignatureKeyResolver
from http_message_signatures.algorithms import (ECDSA_P256_SHA256, ECDSA_P384_SHA384, ED25519, HMAC_SHA256,
                                                RSA_PSS_SHA512, RSA_V1_5_SHA256)

ALGORITHMS = {cls.algorithm_id: cls for cls in (HMAC_SHA256, ED25519, ECDSA_P256_SHA256, ECDSA_P384_SHA384,
                                                RSA_PSS_SHA512, RSA_V1_5_SHA256)}


@dataclass
class Verified:
    method: str
    target: str
    verified: bool
    detail: str
    covered: list
    parameters: dict
    headers: list


class _Keys(HTTPSignatureKeyResolver):
    def __init__(self, keys: dict):
        self.keys = keys

    def resolve_public_key(self, key_id: str):
        return self.keys.get(key_id)

    def resolve_private_key(self, key_id: str):
        return self.keys[key_id]


class SignatureOrigin:
    """`keys`: keyid -> (algorithm id, HMAC secret bytes or PEM public key bytes)."""

    def __init__(self, keys: dict, certificate=None, key=None, host: str = "127.0.0.1", basic: str = None,
                 response_signer: tuple = None):
        """`response_signer`: (keyid, algorithm id, HMAC secret or PEM private key bytes) to sign
        every response with (covering @status, content-digest, content-type); `tamper`, set
        later, names what to spoil: "body" (the digest no longer matches), "old" (created an hour
        ago), "unsigned" (no signature), "uncovered" (the signature leaves Content-Digest out)."""
        self.response_signer = response_signer
        self.tamper = None
        """`basic`: "user:password" the origin demands first (401 + a Basic challenge without it),
        as a service account's API would, so the proxy answers and replays."""
        self.keys = keys
        self.basic = "Basic " + __import__("base64").b64encode(basic.encode()).decode() if basic else None
        self.challenges = 0
        self.seen: list = []
        self.lock = threading.Lock()
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if origin.basic and self.headers.get("Authorization") != origin.basic:
                    with origin.lock:
                        origin.challenges += 1
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="signed"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                result = origin._verify(self, body)
                with origin.lock:
                    origin.seen.append(result)
                payload = json.dumps({"verified": result.verified, "detail": result.detail, "covered": result.covered,
                                      "parameters": result.parameters, "body_length": len(body)}).encode()
                self.send_response(200 if result.verified else 401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _signed(self):
                """The /signed/... routes: a JSON body, signed as `response_signer` says."""
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                body = json.dumps({"path": self.path, "answer": 42}).encode()
                fields = origin.signed_response_fields(200, body, self.command)
                if origin.tamper == "body":
                    body = body.replace(b"42", b"43")
                self.send_response(200)
                for name, value in fields:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _route(self):
                if self.path.startswith("/signed/"):
                    self._signed()
                else:
                    self._any()

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _route

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.scheme = "http"
        if certificate:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(certificate, key)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def authority(self) -> str:
        return f"127.0.0.1:{self.port}"

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def _verify(self, handler, body: bytes) -> Verified:
        headers = list(handler.headers.items())
        host = handler.headers.get("Host", self.authority)
        prepared = requests.Request(handler.command, f"{self.scheme}://{host}{handler.path}").prepare()
        prepared.headers.clear()
        for name, value in headers:
            prepared.headers[name] = value if name not in prepared.headers else prepared.headers[name] + ", " + value
        prepared.body = body or None
        inputs = handler.headers.get("Signature-Input", "")
        key_id = inputs.split('keyid="', 1)[1].split('"', 1)[0] if 'keyid="' in inputs else None
        if key_id not in self.keys:
            return Verified(handler.command, handler.path, False, f"unknown keyid {key_id}", [], {}, headers)
        algorithm, key = self.keys[key_id]
        verifier = HTTPMessageVerifier(signature_algorithm=ALGORITHMS[algorithm], key_resolver=_Keys({key_id: key}))
        try:
            results = verifier.verify(prepared, max_age=timedelta(minutes=5), expect_tag="countersign", body=body)
        except Exception as failure:  # the library's refusal, whatever its class
            return Verified(handler.command, handler.path, False, f"{type(failure).__name__}: {failure}", [], {}, headers)
        result = results[0]
        covered = [str(component) for component in result.covered_components]
        return Verified(handler.command, handler.path, True, "ok", covered, dict(result.parameters), headers)

    def signed_response_fields(self, status: int, body: bytes, method: str) -> list:
        import base64
        import hashlib
        from datetime import datetime, timedelta, timezone
        fields = [("Content-Type", "application/json")]
        fields.append(("Content-Digest", "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"))
        if not self.response_signer or self.tamper == "unsigned":
            return fields
        key_id, algorithm, key = self.response_signer
        response = requests.Response()
        response.status_code = status
        response.headers = requests.structures.CaseInsensitiveDict(fields)
        response.request = requests.Request(method, f"{self.scheme}://{self.authority}/").prepare()
        created = datetime.now(timezone.utc) - (timedelta(hours=1) if self.tamper == "old" else timedelta(0))
        covered = ["@status", "content-type"] + ([] if self.tamper == "uncovered" else ["content-digest"])
        HTTPMessageSigner(signature_algorithm=ALGORITHMS[algorithm], key_resolver=_Keys({key_id: key})).sign(
            response, key_id=key_id, created=created, covered_component_ids=covered, label="resp", use_existing_digest=True)
        return fields + [("Signature-Input", response.headers["Signature-Input"]), ("Signature", response.headers["Signature"])]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
