"""An HTTP(S) origin that demands Negotiate (RFC 4559), accepted with python-gssapi and the
service keytab of a test realm (harness/kdc.py), as a child process:

    NegotiateOrigin(workdir, realm, keytab, tls=(chain, key), require_binding=True)

Each connection must authenticate before it is served and stays authenticated afterwards
(IIS semantics, which Countersign's one-handshake-per-connection relies on). Options:

  require_binding  over TLS, the initiator's token must carry the tls-server-end-point binding
                   of the certificate served (Extended Protection): MIT refuses a different
                   one, and a token without any is refused here (no GSS_C_CHANNEL_BOUND_FLAG)
  binding_of       compute the expected binding from another certificate (a wrong binding)
  bogus_final      the 2xx carries a forged final token: mutual authentication must fail
  ntlm_users       also offer NTLM (pyspnego's acceptor, `DOMAIN:user:password` lines), the
                   scheme a client falls back to when it cannot get a Kerberos ticket
  close_after      answer with Connection: close after this many served (200) requests per connection
  per_request      every request must carry a token (mod_auth_gssapi without GssapiConnectionBound)
  open_access      serve every request without authentication (the baseline of bench/negotiate.py)
  close_on_challenge  a challenge without a token closes its connection (KeepAlive Off servers)
  proxy            act as a parent proxy instead: 407 / Proxy-Authenticate / Proxy-Authorization;
                   absolute-form requests are answered here, CONNECT is relayed to its target

The access log (JSON lines) names the connection, the leg ("negotiate", "ntlm-negotiate",
"ntlm-authenticate", "-"), the status, the user accepted and any error; never a token."""
import argparse
import base64
import hashlib
import json
import os
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from .auth_peers import JsonLogHTTPServer, _tls_server_end_point
from .ports import free_port
from .process import start_listening

INTEROP_DIR = Path(__file__).resolve().parents[1]
CHANNEL_BOUND_FLAG = 0x800   # GSS_C_CHANNEL_BOUND_FLAG (MIT 1.19+): the initiator's bindings matched


class NegotiateOrigin:
    def __init__(self, workdir: Path, realm, keytab: Path, tls=None, require_binding: bool = False,
                 binding_of: Path = None, bogus_final: bool = False, ntlm_users: list = None,
                 close_after: int = 0, proxy: bool = False, close_on_challenge: bool = False,
                 open_access: bool = False, per_request: bool = False):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.tls = tls is not None
        self.access_log = self.workdir / "negotiate-access.jsonl"
        argv = [sys.executable, "-m", "harness.negotiate_origin", "--port", str(self.port),
                "--log", str(self.access_log), "--keytab", str(keytab)]
        if tls:
            argv += ["--certificate", str(tls[0]), "--key", str(tls[1])]
        if require_binding:
            argv.append("--require-binding")
        if binding_of:
            argv += ["--binding-of", str(binding_of)]
        if bogus_final:
            argv.append("--bogus-final")
        if close_after:
            argv += ["--close-after", str(close_after)]
        if proxy:
            argv.append("--proxy")
        if close_on_challenge:
            argv.append("--close-on-challenge")
        if open_access:
            argv.append("--open-access")
        if per_request:
            argv.append("--per-request")
        env = realm.environment()
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(INTEROP_DIR), env.get("PYTHONPATH")]))
        if ntlm_users:
            user_file = self.workdir / "ntlm-users"
            user_file.write_text("".join(f"{domain}:{user}:{password}\n" for domain, user, password in ntlm_users))
            user_file.chmod(0o600)
            env["NTLM_USER_FILE"] = str(user_file)
            argv.append("--ntlm")
        self.process = start_listening(argv, self.workdir, "negotiate-origin", [self.port], env=env)

    def url(self, path: str = "/secret.txt", host: str = "localhost") -> str:
        return f"http://{host}:{self.port}{path}"

    def https_url(self, path: str = "/secret.txt", host: str = "localhost") -> str:
        return f"https://{host}:{self.port}{path}"

    def entries(self) -> list:
        if not self.access_log.exists():
            return []
        return [json.loads(line) for line in self.access_log.read_text(errors="replace").splitlines() if line.strip()]

    def legs(self, leg: str) -> list:
        return [entry for entry in self.entries() if entry.get("leg") == leg]

    def handshakes_per_connection(self) -> dict:
        counts = {}
        for entry in self.entries():
            counts.setdefault(entry["connection"], 0)
            if entry.get("leg") == "negotiate":
                counts[entry["connection"]] += 1
        return counts

    def stop(self) -> None:
        self.process.stop()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "interop-negotiate"

    def setup(self):
        super().setup()
        # Head and body go in two writes: without this, Nagle holds the body for the client's
        # delayed ACK (40 ms per response on a keep-alive connection).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connection_id = self.server.next_connection_id()
        self.authenticated_as = None
        self.ntlm = None
        self.served = 0

    def log_message(self, *args):
        pass

    def do_GET(self):
        self._serve()

    do_POST = do_PUT = do_HEAD = do_CONNECT = do_GET

    @property
    def _status(self) -> int:
        return 407 if self.server.proxy else 401

    @property
    def _challenge_field(self) -> str:
        return "Proxy-Authenticate" if self.server.proxy else "WWW-Authenticate"

    def _serve(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        record = {"connection": self.connection_id, "request": self.requestline, "body_bytes": len(body), "leg": "-"}
        authorization = self.headers.get("Proxy-Authorization" if self.server.proxy else "Authorization")
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if scheme.lower() == "negotiate" and token:
            self._negotiate(base64.b64decode(token), body, record)
        elif scheme.lower() == "ntlm" and token and self.server.ntlm:
            self._ntlm(base64.b64decode(token), body, record)
        elif self.authenticated_as or self.server.open_access:
            self._ok(body, record, None)
        else:
            self._challenge(record, None)
        if not record.get("logged"):
            self.server.log_access(record)
        if self.server.per_request:
            self.authenticated_as = None

    def _negotiate(self, token: bytes, body: bytes, record: dict):
        import gssapi
        record["leg"] = "negotiate"
        self.authenticated_as = None
        bindings = None
        if self.server.expected_binding is not None:
            bindings = gssapi.raw.ChannelBindings(application_data=self.server.expected_binding)
        try:
            context = gssapi.SecurityContext(creds=self.server.credentials, usage="accept", channel_bindings=bindings)
            reply = context.step(token)
            complete = context.complete     # python-gssapi raises a step's error here, if not above
        except gssapi.exceptions.GSSError as failure:
            record["error"] = f"{type(failure).__name__}: {failure.gen_message()}"
            self._challenge(record, None)
            return
        if not complete:
            record["error"] = "context not complete after one leg"
            self._challenge(record, reply)
            return
        flags = int(context.actual_flags)
        record["mutual"] = bool(flags & 0x2)
        record["channel_bound"] = bool(flags & CHANNEL_BOUND_FLAG)
        if self.server.require_binding and not record["channel_bound"]:
            record["error"] = "token carries no channel binding"
            self._challenge(record, None)
            return
        self.authenticated_as = str(context.initiator_name)
        if self.server.bogus_final and reply:
            forged = bytearray(reply)
            forged[-3] ^= 0x01
            reply = bytes(forged)
        self._ok(body, record, reply)

    def _ntlm(self, message: bytes, body: bytes, record: dict):
        import spnego
        message_type = message[8] if len(message) > 8 else 0
        if message_type == 1:
            record["leg"] = "ntlm-negotiate"
            self.authenticated_as = None
            self.ntlm = spnego.server(protocol="ntlm")
            self._send(self._status, [(self._challenge_field, "NTLM " + base64.b64encode(self.ntlm.step(message)).decode())], b"", record)
            return
        record["leg"] = "ntlm-authenticate"
        try:
            if self.ntlm is None:
                raise ValueError("authenticate without negotiate on this connection")
            self.ntlm.step(message)
        except Exception as failure:  # pyspnego raises its own error types for bad answers
            record["error"] = type(failure).__name__
            self.ntlm = None
            self._challenge(record, None)
            return
        self.authenticated_as = "ntlm:" + str(self.ntlm.client_principal)
        self._ok(body, record, None)

    def _challenge(self, record: dict, token):
        offers = ["Negotiate" + ("" if token is None else " " + base64.b64encode(token).decode())]
        if self.server.ntlm:
            offers.append("NTLM")
        self._send(self._status, [(self._challenge_field, offer) for offer in offers], b"negotiate required\n", record)

    def _ok(self, body: bytes, record: dict, final_token):
        record["user"] = self.authenticated_as
        payload = (f"negotiate ok for {self.authenticated_as} on connection {self.connection_id}; "
                   f"body sha256 {hashlib.sha256(body).hexdigest()}\n").encode()
        headers = [("Content-Type", "text/plain")]
        if final_token:
            headers.append((self._challenge_field, "Negotiate " + base64.b64encode(final_token).decode()))
        if self.command == "CONNECT":
            self._relay(headers, record)
            return
        self._send(200, headers, payload, record)

    def _relay(self, headers: list, record: dict):
        """CONNECT as a parent proxy: 200, then bytes both ways until either side closes."""
        host, _, port = self.path.rpartition(":")
        upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
        record["status"] = 200
        self.send_response(200, "Connection established")
        for name, value in headers:
            if name != "Content-Type":
                self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()
        self.server.log_access(dict(record))
        record["logged"] = True

        def pipe(source, target):
            try:
                while True:
                    data = source.recv(65536)
                    if not data:
                        break
                    target.sendall(data)
            except OSError:
                pass
            finally:
                try:
                    target.shutdown(socket.SHUT_WR)
                except OSError:
                    pass

        back = threading.Thread(target=pipe, args=(upstream, self.connection), daemon=True)
        back.start()
        pipe(self.connection, upstream)
        back.join(30)
        upstream.close()
        self.close_connection = True

    def _send(self, status: int, headers: list, payload: bytes, record: dict):
        record["status"] = status
        # Only served requests count: like IIS, a challenge keeps the connection for the handshake.
        self.served += status == 200
        close = self.server.close_after and status == 200 and self.served >= self.server.close_after
        bare_challenge = status in (401, 407) and all(" " not in value for name, value in headers if name == self._challenge_field)
        close = close or (self.server.close_on_challenge and bare_challenge)
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)


class _Server(JsonLogHTTPServer):
    def __init__(self, options):
        super().__init__(options.port, _Handler, options.log)
        import gssapi
        self.credentials = gssapi.Credentials(usage="accept", store={"keytab": str(options.keytab)})
        self.expected_binding = None
        if options.certificate:
            self.expected_binding = _tls_server_end_point(options.binding_of or options.certificate)
        self.require_binding = options.require_binding
        self.bogus_final = options.bogus_final
        self.ntlm = options.ntlm
        self.close_after = options.close_after
        self.proxy = options.proxy
        self.close_on_challenge = options.close_on_challenge
        self.open_access = options.open_access
        self.per_request = options.per_request


def main(argv) -> None:
    parser = argparse.ArgumentParser(prog="negotiate-origin")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--keytab", type=Path, required=True)
    parser.add_argument("--certificate", type=Path)
    parser.add_argument("--key", type=Path)
    parser.add_argument("--require-binding", action="store_true")
    parser.add_argument("--binding-of", type=Path)
    parser.add_argument("--bogus-final", action="store_true")
    parser.add_argument("--ntlm", action="store_true")
    parser.add_argument("--close-after", type=int, default=0)
    parser.add_argument("--proxy", action="store_true")
    parser.add_argument("--close-on-challenge", action="store_true")
    parser.add_argument("--open-access", action="store_true")
    parser.add_argument("--per-request", action="store_true")
    options = parser.parse_args(argv)
    server = _Server(options)
    if options.certificate:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(options.certificate, options.key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
