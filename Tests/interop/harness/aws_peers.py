"""AWS peers for the SigV4 tests: moto in server mode with authentication enforced (it checks
header-form signatures itself), behind a verifying front that recomputes every signature with
botocore's own signers (header form, presigned query, each aws-chunked chunk signature),
checks a hex X-Amz-Content-Sha256 against the body, refuses a mismatch with moto's own
`403 SignatureDoesNotMatch`, and passes what verifies to moto unchanged. The front also sees
STS's answers go by, so it knows the temporary keys moto hands out."""
import hashlib
import hmac
import http.client
import re
import ssl
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from harness.ports import free_port, wait_for_port
from harness.process import ManagedProcess

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


class MotoServer:
    """`python -m moto.server` on a free port; `enforce_auth()` turns SigV4 checking on."""

    def __init__(self, workdir):
        self.port = free_port()
        self.process = ManagedProcess([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                      workdir, "moto")
        wait_for_port("127.0.0.1", self.port, timeout=30, alive=self.process.alive)
        self.endpoint = f"http://127.0.0.1:{self.port}"

    def client(self, service, **keys):
        return boto3.client(service, endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id=keys.get("key", "AKIASETUP0000000000"),
                            aws_secret_access_key=keys.get("secret", "setup"))

    def create_user_keys(self) -> tuple:
        """An IAM user allowed everything, and its access key (made before auth is enforced)."""
        iam = self.client("iam")
        iam.create_user(UserName="app")
        iam.put_user_policy(UserName="app", PolicyName="all", PolicyDocument=
                            '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}')
        key = iam.create_access_key(UserName="app")["AccessKey"]
        iam.create_role(RoleName="app-role", AssumeRolePolicyDocument=
                        '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Federated":"*"},'
                        '"Action":"sts:AssumeRoleWithWebIdentity"},'
                        '{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}')
        iam.put_role_policy(RoleName="app-role", PolicyName="all", PolicyDocument=
                            '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}')
        return key["AccessKeyId"], key["SecretAccessKey"]

    def set_unauthenticated_actions(self, count: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        connection.request("POST", "/moto-api/reset-auth", body=str(count).encode())
        assert connection.getresponse().status == 200
        connection.close()

    def stop(self):
        self.process.stop()


@dataclass
class Seen:
    method: str
    target: str
    form: str           # "header", "query", "none"
    payload: str        # X-Amz-Content-Sha256 as received
    verdict: str        # "verified" or why refused
    headers: dict = field(default_factory=dict)   # names lower-cased
    body: bytes = b""


class VerifyingFront:
    """The origin Countersign talks to. `keys` maps access key id -> (secret, token or None)."""

    def __init__(self, moto: MotoServer, keys: dict, tls=None, host="127.0.0.1"):
        """`tls`: (certificate chain file, key file) to serve HTTPS as `host` (a name the
        certificate holds), the way an intercepted S3 endpoint is reached."""
        self.moto = moto
        self.keys = dict(keys)
        self.seen: list = []
        # When set, STS's answers say its keys expire this many seconds after they were issued,
        # and this front refuses them past that, as AWS does.
        self.sts_lifetime = None
        self.expiry: dict = {}   # access key id -> Unix time its keys expire
        # Requests to answer with a `401` and a Basic challenge before verifying anything.
        self.challenges_left = 0
        self.sts_tokens: list = []     # web identity tokens STS was asked with, in order
        self.lock = threading.Lock()
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_request(self):
                front.handle(self)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = do_request

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.authority = f"{host}:{self.port}"
        self.endpoint = f"{'https' if tls else 'http'}://{self.authority}"
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    @staticmethod
    def read_chunked(stream) -> bytes:
        body = b""
        while True:
            size = int(stream.readline().split(b";")[0], 16)
            if size == 0:
                while stream.readline() not in (b"\r\n", b""):
                    pass
                return body
            body += stream.read(size)
            stream.readline()

    # The request, read whole (bodies here are small).
    def handle(self, handler):
        headers = {name: value for name, value in handler.headers.items()}
        if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
            # Moto reads Content-Length only: the HTTP framing goes, what it carried stays.
            body = self.read_chunked(handler.rfile)
            headers = {n: v for n, v in headers.items() if n.lower() != "transfer-encoding"}
            headers["Content-Length"] = str(len(body))
        else:
            length = int(handler.headers.get("Content-Length", "0"))
            body = handler.rfile.read(length) if length else b""
        lower = {name.lower(): value for name, value in headers.items()}
        split = urllib.parse.urlsplit(handler.path)
        query = urllib.parse.parse_qs(split.query, keep_blank_values=True)
        if split.path == "/" and b"Action=AssumeRoleWithWebIdentity" in body:
            return self.forward_sts(handler, body, headers)
        with self.lock:
            challenge, self.challenges_left = self.challenges_left > 0, max(0, self.challenges_left - 1)
        if challenge:
            with self.lock:
                self.seen.append(Seen(handler.command, handler.path, "challenged", lower.get("x-amz-content-sha256", ""), "challenged",
                                      {name.lower(): value for name, value in handler.headers.items()}, body))
            return self.reply(handler, 401, [("WWW-Authenticate", 'Basic realm="front"')], b"")
        if "X-Amz-Signature" in query:
            form, verdict = "query", self.verify_query(handler.command, handler.path, headers, query)
        elif "Authorization" in headers:
            form, verdict = "header", self.verify_header(handler.command, handler.path, headers, body)
        else:
            form, verdict = "none", "no signature"
        with self.lock:
            self.seen.append(Seen(handler.command, handler.path, form, lower.get("x-amz-content-sha256", ""), verdict,
                                  {name.lower(): value for name, value in handler.headers.items()}, body))
        if verdict != "verified":
            reply = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code><Message>'
                     + verdict.encode() + b"</Message></Error>")
            return self.reply(handler, 403, [("Content-Type", "application/xml")], reply)
        if form == "query":
            # moto's enforced auth reads only the Authorization header (a presigned query makes it
            # fail with a 500): the query signature was verified here, moto serves it as it is.
            with self.lock:
                self.moto.set_unauthenticated_actions(1)
                return self.forward(handler, headers, body)
        self.forward(handler, headers, body)

    def forward(self, handler, headers, body):
        connection = http.client.HTTPConnection("127.0.0.1", self.moto.port, timeout=30)
        connection.putrequest(handler.command, handler.path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders(body)
        response = connection.getresponse()
        data = response.read()
        fields = [(n, v) for n, v in response.getheaders() if n.lower() not in ("transfer-encoding", "connection", "content-length")]
        self.reply(handler, response.status, fields, data, head=handler.command == "HEAD", length=response.getheader("Content-Length"))
        connection.close()

    def forward_sts(self, handler, body, headers):
        form = urllib.parse.parse_qs(body.decode())
        with self.lock:
            self.sts_tokens.append(form.get("WebIdentityToken", [""])[0])
            # The call is unsigned by design (the token is the proof): moto lets one through.
            self.moto.set_unauthenticated_actions(1)
            connection = http.client.HTTPConnection("127.0.0.1", self.moto.port, timeout=30)
            connection.request("POST", "/", body=body, headers={"Content-Type": headers.get("Content-Type", "")})
            response = connection.getresponse()
            data = response.read()
            connection.close()
        text = data.decode()
        expiry = None
        if self.sts_lifetime:
            expiry = int(time.time()) + self.sts_lifetime
            text = re.sub(r"<Expiration>.*?</Expiration>", f"<Expiration>{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(expiry))}</Expiration>", text)
            data = text.encode()
        found = {name: re.search(f"<{name}>(.*?)</{name}>", text, re.S) for name in ("AccessKeyId", "SecretAccessKey", "SessionToken")}
        if all(found.values()):
            self.keys[found["AccessKeyId"].group(1)] = (found["SecretAccessKey"].group(1), found["SessionToken"].group(1))
            if expiry:
                self.expiry[found["AccessKeyId"].group(1)] = expiry
        self.reply(handler, response.status, [("Content-Type", "text/xml")], data)

    @staticmethod
    def reply(handler, status, fields, data, head=False, length=None):
        handler.send_response(status)
        for name, value in fields:
            handler.send_header(name, value)
        handler.send_header("Content-Length", length if head and length else str(len(data)))
        handler.end_headers()
        if not head:
            handler.wfile.write(data)

    # Verification with botocore's signers.
    def credentials_for(self, access_key, headers_token):
        if access_key not in self.keys:
            return None, "unknown access key"
        if access_key in self.expiry and time.time() >= self.expiry[access_key]:
            return None, "expired temporary keys"
        secret, token = self.keys[access_key]
        if token is not None and headers_token != token:
            return None, "wrong or missing session token"
        return Credentials(access_key, secret, token), None

    def verify_header(self, method, target, headers, body):
        authorization = headers["Authorization"]
        match = re.match(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                         r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$", authorization)
        if not match:
            return "malformed Authorization"
        access_key, _, region, service, signed, signature = match.groups()
        lower = {name.lower(): value for name, value in headers.items()}
        credentials, problem = self.credentials_for(access_key, lower.get("x-amz-security-token"))
        if problem:
            return problem
        payload = lower.get("x-amz-content-sha256", "")
        streaming = payload.startswith("STREAMING-")
        if re.fullmatch(r"[0-9a-f]{64}", payload) and payload != hashlib.sha256(body).hexdigest():
            return "X-Amz-Content-Sha256 is not the body's hash"
        names = signed.split(";")
        missing = [name for name in names if name not in lower]
        if missing:
            return f"signed headers missing: {missing}"
        request = AWSRequest(method=method, url=f"http://{lower['host']}{target}", data=b"" if streaming else body,
                             headers={name: lower[name] for name in names})
        request.context["timestamp"] = lower["x-amz-date"]
        auth = (S3SigV4Auth if service == "s3" else SigV4Auth)(credentials, service, region)
        expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
        if not hmac.compare_digest(expected, signature):
            return "signature mismatch"
        if payload.startswith("STREAMING-AWS4-HMAC-SHA256-PAYLOAD"):
            return self.verify_chunks(body, credentials.secret_key, lower["x-amz-date"], f"{lower['x-amz-date'][:8]}/{region}/{service}/aws4_request",
                                      signature, trailer=payload.endswith("-TRAILER"))
        return "verified"

    def verify_query(self, method, target, headers, query):
        split = urllib.parse.urlsplit(target)
        access_key, date, region, service, _ = query["X-Amz-Credential"][0].split("/")
        credentials, problem = self.credentials_for(access_key, query.get("X-Amz-Security-Token", [None])[0])
        if problem:
            return problem
        kept = "&".join(pair for pair in split.query.split("&") if not pair.startswith("X-Amz-Signature="))
        lower = {name.lower(): value for name, value in headers.items()}
        names = query["X-Amz-SignedHeaders"][0].split(";")
        request = AWSRequest(method=method, url=f"http://{lower['host']}{split.path}?{kept}", headers={n: lower[n] for n in names})
        request.context["timestamp"] = query["X-Amz-Date"][0]
        auth = S3SigV4QueryAuth(credentials, service, region, expires=int(query["X-Amz-Expires"][0]))
        expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
        return "verified" if hmac.compare_digest(expected, query["X-Amz-Signature"][0]) else "presigned signature mismatch"

    @staticmethod
    def verify_chunks(body, secret, amz_date, scope, seed, trailer):
        def sign(key, text):
            return hmac.new(key, text.encode(), hashlib.sha256)
        key = sign(("AWS4" + secret).encode(), scope.split("/")[0]).digest()
        for part in scope.split("/")[1:]:
            key = sign(key, part).digest()
        try:
            return VerifyingFront.verify_chain(body, key, amz_date, scope, seed, trailer)
        except (ValueError, UnicodeDecodeError):
            return "aws-chunked framing cut short or malformed"

    @staticmethod
    def verify_chain(body, key, amz_date, scope, seed, trailer):
        def sign(key, text):
            return hmac.new(key, text.encode(), hashlib.sha256)
        previous, rest = seed, body
        while True:
            line, _, rest = rest.partition(b"\r\n")
            size_text, _, extension = line.decode().partition(";chunk-signature=")
            size = int(size_text, 16)
            data, rest = rest[:size], rest[size:]
            text = f"AWS4-HMAC-SHA256-PAYLOAD\n{amz_date}\n{scope}\n{previous}\n{EMPTY_SHA256}\n{hashlib.sha256(data).hexdigest()}"
            previous = sign(key, text).hexdigest()
            if not hmac.compare_digest(previous, extension):
                return "chunk signature mismatch"
            if size == 0:
                break
            rest = rest[2:]
        if trailer:
            lines = [line for line in rest.decode().split("\r\n") if line]
            fields = [line for line in lines if not line.startswith("x-amz-trailer-signature:")]
            canonical = "".join(f"{f.split(':', 1)[0].lower()}:{f.split(':', 1)[1].strip()}\n" for f in fields)
            text = f"AWS4-HMAC-SHA256-TRAILER\n{amz_date}\n{scope}\n{previous}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
            if f"x-amz-trailer-signature:{sign(key, text).hexdigest()}" not in lines:
                return "trailer signature mismatch"
        return "verified"


def chunk_signed_upload(front, body_chunks, amz_date, path="/stream/obj", key=("AKIAPLACEHOLDER00000", "placeholder-secret"),
                        content_length=True, trailer=None):
    """(headers, body) of a STREAMING-AWS4-HMAC-SHA256-PAYLOAD upload as the Java SDK makes it,
    signed with `key` (placeholders by default): the seed signature by botocore's S3SigV4Auth,
    the chunk signatures chained from it. Without `content_length` the client signs no length
    and is to send the body in HTTP chunks (`X-Amz-Decoded-Content-Length` only). `trailer`,
    a (name, value) checksum field, makes it the -TRAILER form, with a trailer signature."""
    access_key, secret = key
    scope = f"{amz_date[:8]}/us-east-1/s3/aws4_request"
    mode = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" + ("-TRAILER" if trailer else "")
    headers = {"host": front.authority, "x-amz-date": amz_date, "x-amz-content-sha256": mode,
               "content-encoding": "aws-chunked", "x-amz-decoded-content-length": str(sum(map(len, body_chunks)))}
    if trailer:
        headers["x-amz-trailer"] = trailer[0]
    signing_key = hmac.new(("AWS4" + secret).encode(), amz_date[:8].encode(), hashlib.sha256).digest()
    for part in ("us-east-1", "s3", "aws4_request"):
        signing_key = hmac.new(signing_key, part.encode(), hashlib.sha256).digest()

    def framed(seed):
        body, previous = b"", seed
        for chunk in body_chunks + [b""]:
            text = f"AWS4-HMAC-SHA256-PAYLOAD\n{amz_date}\n{scope}\n{previous}\n{EMPTY_SHA256}\n{hashlib.sha256(chunk).hexdigest()}"
            previous = hmac.new(signing_key, text.encode(), hashlib.sha256).hexdigest()
            body += f"{len(chunk):x};chunk-signature={previous}\r\n".encode() + chunk + (b"\r\n" if chunk or not trailer else b"")
        if trailer:
            canonical = f"{trailer[0]}:{trailer[1]}\n"
            text = f"AWS4-HMAC-SHA256-TRAILER\n{amz_date}\n{scope}\n{previous}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
            body += (f"{trailer[0]}:{trailer[1]}\r\nx-amz-trailer-signature:"
                     f"{hmac.new(signing_key, text.encode(), hashlib.sha256).hexdigest()}\r\n\r\n").encode()
        return body

    if content_length:
        headers["content-length"] = str(len(framed("0" * 64)))     # every signature is 64 hex digits
    request = AWSRequest(method="PUT", url=f"{front.endpoint}{path}", headers=headers)
    request.context["timestamp"] = amz_date
    auth = S3SigV4Auth(Credentials(access_key, secret), "s3", "us-east-1")
    seed = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
    headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, "
                                f"SignedHeaders={';'.join(sorted(h for h in headers))}, Signature={seed}")
    return headers, framed(seed)
