"""Real servers that demand authentication, for the interop tests of answering 401/407:

  BasicNginx       nginx `auth_basic` over an htpasswd file (MD5-crypt lines)
  DigestApache     Apache httpd `mod_auth_digest` over an htdigest file; a CGI at /upload
                   answers with the SHA-256 of the request body it received
  Httpbin          httpbin under gunicorn's gthread worker (keep-alive): Basic, Digest, Bearer
  NtlmServer       a threaded HTTPS server built on pyspnego's NTLM acceptor (this file's
                   `ntlm-server` command), enforcing the tls-server-end-point channel binding
  SquidParent      Squid demanding Basic or Digest proxy authentication (a parent proxy)

Each listens on a loopback ephemeral port with its configuration in its own scratch
directory, is started as a child process and stopped by its PID, and writes an access log
the tests read to count 401/407s, handshakes and connections. No log holds a header value:
only request lines, statuses and the user names the servers accepted."""
import argparse
import base64
import hashlib
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

INTEROP_DIR = Path(__file__).resolve().parents[1]

from .nginx import start_nginx
from .ports import free_port, wait_until
from .process import ManagedProcess, start_listening


@dataclass
class AccessLine:
    """One request as an upstream logged it. `connection` identifies the TCP connection
    (nginx's serial, Apache's client port, the NTLM server's counter); `user` is who the
    server accepted, '-' when nobody."""
    connection: str
    request_line: str
    status: int
    user: str = "-"
    extra: dict = None

    @property
    def path(self) -> str:
        parts = self.request_line.split(" ")
        return parts[1] if len(parts) > 1 else ""


class LoggedPeer:
    """An access log the tests count from; `mark()` and `since(mark)` scope counts to a step."""
    access_log: Path

    def entries(self) -> list:
        raise NotImplementedError

    def mark(self) -> int:
        return len(self.entries())

    def since(self, mark: int) -> list:
        return self.entries()[mark:]

    def statuses(self, mark: int = 0) -> list:
        return [entry.status for entry in self.since(mark)]

    def wait_for_entries(self, count: int, timeout: float = 3.0) -> list:
        """Access logs are written after the response; wait until `count` lines are there."""
        wait_until(lambda: len(self.entries()) >= count, timeout)
        return self.entries()


def _tab_lines(path: Path, fields: int) -> list:
    if not path.exists():
        return []
    return [line.split("\t") for line in path.read_text(errors="replace").splitlines()
            if line.count("\t") == fields - 1]


def _shared_scratch(name: str) -> Path:
    """Apache and Squid drop root for an unprivileged user that must read their files and
    write their logs, and pytest's tmp dirs are root-only; so use a fresh /tmp directory."""
    workdir = Path(tempfile.mkdtemp(prefix=f"countersign-auth-{name}-"))
    workdir.chmod(0o777)
    return workdir


def _stop_and_remove(process, workdir: Path) -> None:
    process.stop()
    shutil.rmtree(workdir, ignore_errors=True)


# ---------------------------------------------------------------------------------------- nginx


class BasicNginx(LoggedPeer):
    """nginx with `auth_basic` on every path. `return` would run before the auth phase, so
    the protected content is a static file: GET /secret.txt -> SECRET_BODY."""
    SECRET_BODY = b"nginx basic-protected body\n"

    def __init__(self, workdir: Path, users: dict, realm: str = "nginx-basic", tls: tuple = None):
        """`tls` = (certificate chain, key) adds an HTTPS listener on `tls_port`."""
        self.workdir = workdir
        self.realm = realm
        workdir.mkdir(parents=True, exist_ok=True)
        www = workdir / "www"
        www.mkdir()
        (www / "secret.txt").write_bytes(self.SECRET_BODY)
        htpasswd = workdir / "htpasswd"
        htpasswd.write_text("".join(f"{user}:{_apr1(password)}\n" for user, password in users.items()))
        self.access_log = workdir / "access.log"
        self.port = free_port()
        self.tls_port = free_port() if tls else None
        tls_listener = (f"listen 127.0.0.1:{self.tls_port} ssl; ssl_certificate {tls[0]}; "
                        f"ssl_certificate_key {tls[1]};") if tls else ""
        self.process = start_nginx(workdir, f"""
    default_type text/plain;
    # Whether a Proxy-Authorization field arrived, never its value.
    map $http_proxy_authorization $proxy_authorization_seen {{ "" "-"; default "present"; }}
    log_format auth "$connection\\t$request\\t$status\\t$remote_user\\t$proxy_authorization_seen";
    access_log {self.access_log} auth;
    keepalive_timeout 60s;
    server {{
        listen 127.0.0.1:{self.port};
        {tls_listener}
        root {www};
        auth_basic "{realm}";
        auth_basic_user_file {htpasswd};
    }}""", [self.port] + ([self.tls_port] if tls else []))

    def url(self, path: str = "/secret.txt") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def tls_url(self, path: str = "/secret.txt", scheme: str = "https") -> str:
        """The HTTPS listener; with scheme "http" the URL a client gives a proxy whose host
        entry for localhost:tls_port says upstream_tls."""
        return f"{scheme}://localhost:{self.tls_port}{path}"

    def entries(self) -> list:
        return [AccessLine(parts[0], parts[1], int(parts[2]), parts[3] or "-",
                           {"proxy_authorization": parts[4]})
                for parts in _tab_lines(self.access_log, 5)]

    def stop(self) -> None:
        self.process.stop()


def _apr1(password: str) -> str:
    """An Apache MD5-crypt hash (what `htpasswd -m` writes), made by openssl."""
    completed = subprocess.run(["openssl", "passwd", "-apr1", "-stdin"], input=password.encode(),
                               capture_output=True, check=True)
    return completed.stdout.decode().strip()


# --------------------------------------------------------------------------------------- Apache

APACHE_MODULES = ["mpm_prefork", "authn_core", "authn_file", "authz_core", "authz_user",
                  "auth_digest", "alias", "cgi", "mime"]
APACHE_MODULE_DIR = Path("/usr/lib/apache2/modules")

UPLOAD_CGI = """#!/bin/sh
# Answers with the SHA-256 and length of the request body this server received.
printf 'Content-Type: text/plain\\r\\n\\r\\n'
tmp=$(mktemp)
cat > "$tmp"
printf '%s %s\\n' "$(sha256sum < "$tmp" | cut -c1-64)" "$(wc -c < "$tmp" | tr -d ' ')"
rm -f "$tmp"
"""


class DigestApache(LoggedPeer):
    """Apache httpd with mod_auth_digest on every path.
    GET /secret.txt -> SECRET_BODY; POST /upload -> "<sha256> <length>" of the body received.
    `algorithm` is the AuthDigestAlgorithm directive; `nonce_lifetime` seconds until a nonce
    is stale; with `nc_check` (AuthDigestNcCheck On) Apache accepts only the exact next
    nonce count of each client (opaque) and logs "nonce-count check failed" otherwise."""
    SECRET_BODY = b"apache digest-protected body\n"
    # /forbidden/ is for this user only: any other valid user gets 401 there (no such user exists).
    FORBIDDEN_ONLY_USER = "someone-else"

    def __init__(self, users: dict, realm: str = "apache-digest", algorithm: str = "MD5",
                 nonce_lifetime: int = 300, nc_check: bool = False):
        self.workdir = workdir = _shared_scratch("apache")
        self.realm = realm
        self.port = free_port()
        htdocs, cgi = workdir / "htdocs", workdir / "cgi"
        htdocs.mkdir()
        cgi.mkdir()
        (htdocs / "secret.txt").write_bytes(self.SECRET_BODY)
        upload = cgi / "upload"
        upload.write_text(UPLOAD_CGI)
        upload.chmod(0o755)
        self.set_users(users)
        self.access_log = workdir / "access.log"
        self.error_log = workdir / "error.log"
        (workdir / "httpd.conf").write_text(self._config(algorithm, nonce_lifetime, nc_check))
        self.process = start_apache(workdir, [self.port], self.error_log)

    def set_users(self, users: dict) -> None:
        """Writes the htdigest file (user:realm:MD5(user:realm:password)); Apache reads it on
        every request, so a rewrite is a password rotation."""
        (self.workdir / "htdigest").write_text("".join(
            f"{user}:{self.realm}:{hashlib.md5(f'{user}:{self.realm}:{password}'.encode()).hexdigest()}\n"
            for user, password in users.items()))

    @staticmethod
    def config_test(algorithm: str) -> tuple:
        """(accepted, message) of `apache2 -t` for a config using AuthDigestAlgorithm `algorithm`."""
        workdir = _shared_scratch("apache-t")
        try:
            (workdir / "htdocs").mkdir()
            (workdir / "htdigest").write_text("")
            probe = DigestApache.__new__(DigestApache)
            probe.workdir, probe.realm, probe.port = workdir, "probe", free_port()
            probe.access_log, probe.error_log = workdir / "access.log", workdir / "error.log"
            (workdir / "httpd.conf").write_text(probe._config(algorithm, 300))
            completed = subprocess.run(["apache2", "-t", "-f", str(workdir / "httpd.conf")],
                                       capture_output=True, env=_apache_env())
            return completed.returncode == 0, (completed.stdout + completed.stderr).decode(errors="replace")
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def url(self, path: str = "/secret.txt") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def entries(self) -> list:
        return [AccessLine(parts[0], parts[2], int(parts[3]), parts[4], {"keepalive_count": parts[1]})
                for parts in _tab_lines(self.access_log, 5)]

    def error_text(self) -> str:
        return self.error_log.read_text(errors="replace")[-3000:] if self.error_log.exists() else ""

    def stop(self) -> None:
        _stop_and_remove(self.process, self.workdir)

    def _config(self, algorithm: str, nonce_lifetime: int, nc_check: bool = False) -> str:
        workdir = self.workdir
        return apache_preamble(workdir, self.port, self.error_log, APACHE_MODULES, log_level="warn auth_digest:info") + f"""
StartServers 2
MinSpareServers 2
MaxSpareServers 32
MaxRequestWorkers 32
KeepAlive On
KeepAliveTimeout 30
MaxKeepAliveRequests 0
TypesConfig /dev/null
AuthDigestShmemSize 1048576
# Client port (identifies the connection), keep-alive count, request line, status, user.
LogFormat "%{{remote}}p\\t%k\\t%r\\t%>s\\t%u" auth
CustomLog {self.access_log} auth
DocumentRoot {workdir}/htdocs
ScriptAlias /upload {workdir}/cgi/upload
<Location />
    AuthType Digest
    AuthName "{self.realm}"
    AuthDigestDomain /
    AuthDigestProvider file
    AuthUserFile {workdir}/htdigest
    AuthDigestAlgorithm {algorithm}
    AuthDigestNonceLifetime {nonce_lifetime}
    AuthDigestNcCheck {"On" if nc_check else "Off"}
    Require valid-user
</Location>
# Authenticated but not authorized: Apache answers the valid user with 401 in the same realm.
<Location /forbidden/>
    Require user {self.FORBIDDEN_ONLY_USER}
</Location>
"""


def apache_preamble(workdir: Path, port: int, error_log: Path, modules, server_name: str = "127.0.0.1",
                    log_level: str = "warn") -> str:
    """The start of an httpd.conf every Apache peer shares: its files inside `workdir`, one
    listener on 127.0.0.1:`port`, the `modules` loaded, and www-data as the user when run as root."""
    loads = "\n".join(f"LoadModule {name}_module {APACHE_MODULE_DIR}/mod_{name}.so" for name in modules)
    run_as = "User www-data\nGroup www-data" if os.geteuid() == 0 else ""
    return f"""
ServerRoot {workdir}
ServerName {server_name}
Listen 127.0.0.1:{port}
PidFile {workdir}/httpd.pid
DefaultRuntimeDir {workdir}
Mutex file:{workdir} default
ErrorLog {error_log}
LogLevel {log_level}
{loads}
{run_as}"""


def start_apache(workdir: Path, ports: list, error_log: Path, env: dict = None) -> ManagedProcess:
    """httpd in the foreground on workdir/httpd.conf, once each of `ports` accepts connections.
    In its own session: at shutdown httpd signals its whole process group, which would
    otherwise include pytest."""
    return start_listening(["setsid", "apache2", "-DFOREGROUND", "-f", str(workdir / "httpd.conf")], workdir, "apache",
                           ports, env={**_apache_env(), **(env or {})}, log=error_log)


def _apache_env() -> dict:
    env = dict(os.environ)
    env.setdefault("APACHE_RUN_DIR", "/tmp")
    env.setdefault("APACHE_LOG_DIR", "/tmp")
    return env


# -------------------------------------------------------------------------------------- httpbin


class Httpbin(LoggedPeer):
    """httpbin under gunicorn's gthread worker, so connections are kept alive.
    Its Digest keeps no nonces (any nonce is accepted once the response hash matches) and a
    query string breaks it, so tests use bare paths."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.access_log = workdir / "access.log"
        self.process = start_listening(
            [sys.executable, "-m", "gunicorn", "-k", "gthread", "--threads", "8", "-w", "1",
             "--keep-alive", "30", "-b", f"127.0.0.1:{self.port}",
             "--access-logfile", str(self.access_log),
             "--access-logformat", "%({REMOTE_PORT}e)s\t%(r)s\t%(s)s\t-", "httpbin:app"],
            workdir, "httpbin", [self.port], timeout=30)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def entries(self) -> list:
        return [AccessLine(parts[0], parts[1], int(parts[2]))
                for parts in _tab_lines(self.access_log, 4) if parts[2].isdigit()]

    def stop(self) -> None:
        self.process.stop()


# ---------------------------------------------------------------------------------------- NTLM


class NtlmServer(LoggedPeer):
    """The `ntlm-server` command below, as a child process: HTTPS (or plain HTTP) where each
    connection must complete NTLM negotiate / challenge / authenticate before it is served,
    and stays authenticated afterwards (as IIS does). Users come from `NTLM_USER_FILE`
    (`DOMAIN:user:password` lines). With `require_binding` the authenticate message must
    carry the tls-server-end-point binding of the certificate served (Extended Protection);
    an all-zero or missing one is refused."""

    def __init__(self, workdir: Path, users: list, certificate_chain: Path = None,
                 key: Path = None, require_binding: bool = True):
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.tls = certificate_chain is not None
        self.access_log = workdir / "ntlm-access.jsonl"
        user_file = workdir / "ntlm-users"
        user_file.write_text("".join(f"{domain}:{user}:{password}\n" for domain, user, password in users))
        user_file.chmod(0o600)
        argv = [sys.executable, "-m", "harness.auth_peers", "ntlm-server", "--port", str(self.port),
                "--log", str(self.access_log)]
        if self.tls:
            argv += ["--certificate", str(certificate_chain), "--key", str(key)]
        if require_binding:
            argv.append("--require-binding")
        env = dict(os.environ, NTLM_USER_FILE=str(user_file))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(INTEROP_DIR), env.get("PYTHONPATH")]))
        self.process = start_listening(argv, workdir, "ntlm-server", [self.port], env=env)

    def url(self, path: str = "/secret.txt", host: str = "localhost") -> str:
        """The URL a client asks the proxy for; upstream TLS comes from the proxy's host entry."""
        return f"http://{host}:{self.port}{path}"

    def entries(self) -> list:
        if not self.access_log.exists():
            return []
        lines = []
        for text in self.access_log.read_text(errors="replace").splitlines():
            record = json.loads(text)
            lines.append(AccessLine(str(record["connection"]), record["request"], record["status"],
                                    record.get("user") or "-", record))
        return lines

    def handshakes(self, mark: int = 0) -> list:
        """The negotiate legs (each starts one handshake)."""
        return [entry for entry in self.since(mark) if entry.extra.get("leg") == "negotiate"]

    def authenticate_legs(self, mark: int = 0) -> list:
        return [entry for entry in self.since(mark) if entry.extra.get("leg") == "authenticate"]

    def stop(self) -> None:
        self.process.stop()


def _tls_server_end_point(certificate_chain: Path) -> bytes:
    """RFC 5929 binding of the leaf served: its DER hashed with its signature's hash, which
    is SHA-256 for the test PKI's ECDSA-SHA256 certificates (and for MD5/SHA-1 ones)."""
    leaf_pem = certificate_chain.read_text().split("-----END CERTIFICATE-----")[0] + "-----END CERTIFICATE-----\n"
    return b"tls-server-end-point:" + hashlib.sha256(ssl.PEM_cert_to_DER_cert(leaf_pem)).digest()


class _NtlmHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "interop-ntlm"

    def setup(self):
        super().setup()
        self.connection_id = self.server.next_connection_id()
        self.acceptor = None
        self.authenticated_as = None

    def log_message(self, *args):   # the JSON access log replaces the stderr one
        pass

    def do_GET(self):
        self._serve()

    do_POST = do_PUT = do_HEAD = do_GET

    def _serve(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        record = {"connection": self.connection_id, "request": self.requestline,
                  "body_bytes": len(body), "leg": "-"}
        authorization = self.headers.get("Authorization") or ""
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() == "ntlm" and token.strip():
            self._handshake_leg(base64.b64decode(token.strip()), body, record)
        elif self.authenticated_as:
            self._ok(body, record)
        else:
            self._challenge(None, record)
        self.server.log_access(record)

    def _handshake_leg(self, message: bytes, body: bytes, record: dict):
        import spnego
        message_type = message[8] if len(message) > 8 else 0
        if message_type == 1:
            record["leg"] = "negotiate"
            self.authenticated_as = None
            self.acceptor = spnego.server(protocol="ntlm", channel_bindings=self.server.channel_bindings)
            self._challenge(self.acceptor.step(message), record)
            return
        record["leg"] = "authenticate"
        if message_type != 3 or self.acceptor is None:
            record["error"] = "authenticate without negotiate on this connection"
            self._challenge(None, record)
            return
        details = _authenticate_details(message)
        record.update(details)
        try:
            self.acceptor.step(message)
        except Exception as failure:  # pyspnego raises its own error types for bad answers
            record["error"] = type(failure).__name__
            self.acceptor = None
            self._challenge(None, record)
            return
        if self.server.require_binding and details.get("binding") != self.server.expected_binding_md5:
            record["error"] = "channel binding missing or zero"
            self.acceptor = None
            self._challenge(None, record)
            return
        self.authenticated_as = f"{details['domain']}\\{details['claimed_user']}"
        record["user"] = self.authenticated_as
        self._ok(body, record)

    def _challenge(self, token, record):
        value = "NTLM" if token is None else "NTLM " + base64.b64encode(token).decode()
        record["status"] = 401
        self.send_response(401)
        self.send_header("WWW-Authenticate", value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _ok(self, body: bytes, record: dict):
        record["status"] = 200
        record.setdefault("user", self.authenticated_as)
        payload = (f"ntlm ok for {self.authenticated_as} on connection {self.connection_id}; "
                   f"body sha256 {hashlib.sha256(body).hexdigest()}\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)


def _authenticate_details(message: bytes) -> dict:
    """User, domain, workstation and the channel-binding AV pair of an authenticate message."""
    from spnego._ntlm_raw.messages import Authenticate, AvId, NTClientChallengeV2
    authenticate = Authenticate.unpack(message)
    details = {"claimed_user": authenticate.user_name or "", "domain": authenticate.domain_name or "",
               "workstation": authenticate.workstation or "", "binding": None, "ntlmv2": False}
    response = authenticate.nt_challenge_response or b""
    if len(response) > 24:
        details["ntlmv2"] = True
        pairs = NTClientChallengeV2.unpack(response[16:]).av_pairs
        binding = pairs.get(AvId.channel_bindings)
        details["binding"] = binding.hex() if binding else None
    return details


class JsonLogHTTPServer(ThreadingHTTPServer):
    """A threaded loopback server numbering its connections and writing one JSON line per request."""
    daemon_threads = True

    def __init__(self, port: int, handler, log_path: Path):
        super().__init__(("127.0.0.1", port), handler)
        self._log = open(log_path, "a", buffering=1)
        self._lock = threading.Lock()
        self._connections = 0

    def next_connection_id(self) -> int:
        with self._lock:
            self._connections += 1
            return self._connections

    def log_access(self, record: dict):
        with self._lock:
            self._log.write(json.dumps(record) + "\n")


class _NtlmHTTPServer(JsonLogHTTPServer):
    def __init__(self, port: int, log_path: Path, channel_bindings, require_binding: bool):
        super().__init__(port, _NtlmHandler, log_path)
        self.channel_bindings = channel_bindings
        self.expected_binding_md5 = (hashlib.md5(channel_bindings.pack()).hexdigest()
                                     if channel_bindings else None)
        self.require_binding = require_binding and channel_bindings is not None


def run_ntlm_server(argv) -> None:
    parser = argparse.ArgumentParser(prog="ntlm-server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--certificate", type=Path)
    parser.add_argument("--key", type=Path)
    parser.add_argument("--require-binding", action="store_true")
    options = parser.parse_args(argv)
    bindings = None
    if options.certificate:
        from spnego.channel_bindings import GssChannelBindings
        bindings = GssChannelBindings(application_data=_tls_server_end_point(options.certificate))
    server = _NtlmHTTPServer(options.port, options.log, bindings, options.require_binding)
    if options.certificate:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(options.certificate, options.key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.serve_forever()


# --------------------------------------------------------------------------------------- Squid


def start_squid(config: Path, port: int, env: dict = None) -> ManagedProcess:
    """Squid in the foreground (-N) on `config`, once `port` accepts connections."""
    return start_listening([shutil.which("squid") or "/usr/sbin/squid", "-N", "-f", str(config)], config.parent, "squid",
                           [port], timeout=30, env=env)


class SquidParent(LoggedPeer):
    """Squid as a parent proxy that demands `scheme` ("basic", "digest" or "ntlm") proxy
    authentication from everyone (absolute-form requests and CONNECT alike). For "ntlm" Squid
    only has `ntlm_fake_auth`, which accepts any user once the three legs are done: it proves
    the handshake, not the password."""

    def __init__(self, scheme: str, users: dict, realm: str = "squid-parent", tls: tuple = None,
                 challenge_body_bytes: int = 0):
        """`tls` = (certificate, key): Squid listens only on an `https_port` (TLS from the
        first byte, so nothing reaches it in clear); `url` is then https://.
        `challenge_body_bytes`: its 407 page grows by that many bytes (Squid's own error
        templates, ERR_CACHE_ACCESS_DENIED padded), so the body comes in many reads."""
        self.workdir = workdir = _shared_scratch("squid")
        self.scheme = scheme
        self.tls = tls is not None
        self.port = free_port()
        self.access_log = workdir / "access.log"
        passwords = workdir / "passwd"
        realm_line = f"auth_param {scheme} realm {realm}"
        if scheme == "basic":
            passwords.write_text("".join(f"{user}:{_apr1(password)}\n" for user, password in users.items()))
            helper = f"/usr/lib/squid/basic_ncsa_auth {passwords}"
        elif scheme == "ntlm":
            passwords.write_text("")
            helper = "/usr/lib/squid/ntlm_fake_auth"
            realm_line = ""
        else:
            # digest_file_auth reads plain `user:password` lines unless told otherwise.
            passwords.write_text("".join(f"{user}:{password}\n" for user, password in users.items()))
            helper = f"/usr/lib/squid/digest_file_auth {passwords}"
        passwords.chmod(0o644)
        if tls:
            # Squid drops root: it reads its own copies. (Built with GnuTLS, it sends only
            # the certificate itself, so the tests use one their trust anchors name directly.)
            for source, name in zip(tls, ("parent.pem", "parent.key")):
                shutil.copyfile(source, workdir / name)
                (workdir / name).chmod(0o644)
            listener = (f"https_port 127.0.0.1:{self.port} tls-cert={workdir / 'parent.pem'} "
                        f"tls-key={workdir / 'parent.key'}")
        else:
            listener = f"http_port 127.0.0.1:{self.port}"
        errors = ""
        if challenge_body_bytes:
            shutil.copytree("/usr/share/squid/errors/templates", workdir / "errors")
            page = workdir / "errors" / "ERR_CACHE_ACCESS_DENIED"
            page.write_text(page.read_text() + "<!--" + "x" * challenge_body_bytes + "-->\n")
            errors = f"error_directory {workdir / 'errors'}"
        config = workdir / "squid.conf"
        config.write_text(f"""
{listener}
{errors}
pid_filename {workdir}/squid.pid
cache_log {workdir}/cache.log
logformat auth %>a:%>p\t%rm %ru HTTP/%rv\t%>Hs\t%un\t%>lp
access_log stdio:{self.access_log} auth
coredump_dir {workdir}
cache deny all
cache_mem 8 MB
visible_hostname squid-parent
shutdown_lifetime 0 seconds
auth_param {scheme} program {helper}
auth_param {scheme} children 2
{realm_line}
acl authenticated proxy_auth REQUIRED
http_access allow authenticated
http_access deny all
""")
        self.process = start_squid(config, self.port)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def entries(self) -> list:
        """`extra["local_port"]`: the Squid port the request came in on."""
        return [AccessLine(parts[0], parts[1], int(parts[2]) if parts[2].isdigit() else 0, parts[3],
                           {"local_port": parts[4]})
                for parts in _tab_lines(self.access_log, 5)]

    def stop(self) -> None:
        _stop_and_remove(self.process, self.workdir)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "ntlm-server":
        run_ntlm_server(sys.argv[2:])
    else:
        sys.exit("usage: python3 -m harness.auth_peers ntlm-server --port N --log FILE "
                 "[--certificate CHAIN --key KEY] [--require-binding]")
