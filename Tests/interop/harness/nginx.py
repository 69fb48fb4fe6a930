"""nginx as a third-party origin: static files over HTTP and HTTPS (self-signed), a 204,
and an access log that records each request's connection serial number so tests can count
upstream connections. Runs in the foreground without a master process; stopped by PID."""
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

from .certs import SelfSignedCertificate
from .ports import free_port
from .process import ManagedProcess, start_listening

# Tab-separated so request lines with spaces parse back unambiguously. No header values are
# logged: in particular never $http_authorization.
LOG_FORMAT = "$connection\\t$connection_requests\\t$request\\t$status\\t$request_length\\t$bytes_sent"


@dataclass
class NginxAccess:
    connection: int
    connection_requests: int
    request_line: str
    status: int
    request_length: int
    bytes_sent: int


class NginxServer:
    def __init__(self, workdir: Path, www: Path, certificate: SelfSignedCertificate):
        self.workdir = workdir
        self.www = www
        self.certificate = certificate
        workdir.mkdir(parents=True, exist_ok=True)
        self.access_log = workdir / "access.log"
        self.port = free_port()
        self.tls_port = _port_free_on_both_families()
        self.process = start_nginx(workdir, self._http(), [self.port, self.tls_port], worker_connections=512)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def tls_url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"https://{host}:{self.tls_port}{path}"

    def access_entries(self) -> list:
        entries = []
        if not self.access_log.exists():
            return entries
        for line in self.access_log.read_text(errors="replace").splitlines():
            parts = line.split("\t")
            if len(parts) == 6:
                entries.append(NginxAccess(int(parts[0]), int(parts[1]), parts[2], int(parts[3]),
                                           int(parts[4]), int(parts[5])))
        return entries

    def stop(self) -> None:
        self.process.stop()

    def _http(self) -> str:
        return f"""
    default_type application/octet-stream;
    log_format interop "{LOG_FORMAT}";
    access_log {self.access_log} interop;
    keepalive_requests 10000;
    keepalive_timeout 60s;
    sendfile on;
    server {{
        listen 127.0.0.1:{self.port};
        root {self.www};
        location = /204 {{ return 204; }}
    }}
    server {{
        listen 127.0.0.1:{self.tls_port} ssl;
        listen [::1]:{self.tls_port} ssl;
        ssl_certificate {self.certificate.certificate};
        ssl_certificate_key {self.certificate.key};
        root {self.www};
    }}"""


def _port_free_on_both_families() -> int:
    for _ in range(50):
        port = free_port()
        try:
            with socket.socket(socket.AF_INET6) as probe:
                probe.bind(("::1", port))
            return port
        except OSError:
            continue
    raise RuntimeError("found no port free on both 127.0.0.1 and ::1")


def start_nginx(workdir: Path, http: str, ports: list, name: str = "nginx", error_level: str = "info",
                worker_connections: int = 256) -> ManagedProcess:
    """Writes workdir/nginx.conf around `http` (the body of its http block: the foreground,
    single-process settings and the temp paths inside workdir are added here), starts nginx and
    waits for `ports`; stops it and raises with its error log when it does not come up."""
    temp = workdir / "temp"
    for kind in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (temp / kind).mkdir(parents=True, exist_ok=True)
    (workdir / "nginx.conf").write_text(f"""
daemon off;
master_process off;
worker_processes 1;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log {error_level};
events {{ worker_connections {worker_connections}; }}
http {{
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
{http}
}}
""")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    return start_listening([nginx, "-p", str(workdir), "-c", str(workdir / "nginx.conf"), "-e", str(workdir / "error.log")],
                           workdir, name, ports, log=workdir / "error.log")
