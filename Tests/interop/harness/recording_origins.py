"""Origins that write down exactly which requests they parsed, for the smuggling differential:
nginx and Apache httpd from their own access logs (every request line they parsed, with the
status they gave it, parse errors included), gunicorn's gthread worker from a WSGI app (and its
"Invalid request" warnings). The body each one read is recorded as a SHA-256: nginx logs the
body it read for proxy_pass to a sink block, Apache hands it to a CGI, the WSGI app reads it.

`records()` returns the Record list so far; `mark()` / `since(mark)` scope it to one shape."""
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from .auth_peers import LoggedPeer, _shared_scratch, _stop_and_remove, apache_preamble, start_apache
from .nginx import start_nginx
from .ports import free_port
from .process import start_listening


@dataclass(frozen=True)
class Record:
    method: str
    target: str
    host: str
    status: int  # what the origin answered (0 when unknown: the app saw it)
    body_sha256: str = ""
    body_length: int = -1  # -1 when the origin did not read a body (it refused the request)

    @property
    def refused(self) -> bool:
        return self.status >= 400


class RecordingOrigin(LoggedPeer):
    """`mark()` / `since(mark)` (LoggedPeer's) scope the records to one shape."""
    kind = "origin"

    def records(self) -> list:
        raise NotImplementedError

    def entries(self) -> list:
        return self.records()

    @property
    def authority(self) -> str:
        return f"127.0.0.1:{self.port}"


# ------------------------------------------------------------------------------------------ nginx

NGINX_LOG = ('{"m":"$request_method","t":"$request_uri","r":"$request","h":"$http_host",'
             '"s":"$status","b":"$request_body"}')


class RecordingNginx(RecordingOrigin):
    kind = "nginx"

    def __init__(self, workdir: Path):
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.access_log = workdir / "access.log"
        self.port, sink = free_port(), free_port()
        # proxy_pass makes nginx read the whole body into one buffer, so $request_body is the
        # body exactly as nginx framed (and de-chunked) it.
        self.process = start_nginx(workdir, f"""
    log_format recording escape=json '{NGINX_LOG}';
    keepalive_requests 100000;
    keepalive_timeout 60s;
    server {{
        listen 127.0.0.1:{self.port};
        access_log {self.access_log} recording;
        client_body_buffer_size 1m;
        client_max_body_size 1m;
        client_body_in_single_buffer on;
        location / {{ proxy_pass http://127.0.0.1:{sink}; }}
    }}
    server {{
        listen 127.0.0.1:{sink};
        access_log off;
        location / {{ return 200 "ok\\n"; }}
    }}""", [self.port], error_level="warn")

    def records(self) -> list:
        records = []
        if not self.access_log.exists():
            return records
        for line in self.access_log.read_bytes().splitlines():
            entry = json.loads(line.decode("latin-1"))
            body = entry["b"].encode("latin-1")
            status = int(entry["s"])
            method = entry["m"]
            target = entry["t"]
            if not method:  # refused before the request line parsed: keep what it logged
                method, _, rest = entry["r"].partition(" ")
                target = rest.rsplit(" ", 1)[0]
            read_body = status < 400 or bool(body)
            records.append(Record(method, target, entry["h"], status, hashlib.sha256(body).hexdigest() if read_body else "",
                                  len(body) if read_body else -1))
        return records

    def stop(self) -> None:
        self.process.stop()


# ----------------------------------------------------------------------------------------- Apache

RECORD_CGI = """#!/bin/sh
# Writes down what Apache handed over: method, raw target, Host, and the body's SHA-256 and length.
tmp=$(mktemp)
cat > "$tmp"
printf '%s\\t%s\\t%s\\t%s\\t%s\\n' "$REQUEST_METHOD" "$REQUEST_URI" "$HTTP_HOST" \\
    "$(sha256sum < "$tmp" | cut -c1-64)" "$(wc -c < "$tmp" | tr -d ' ')" >> {log}
rm -f "$tmp"
printf 'Content-Type: text/plain\\r\\n\\r\\nok\\n'
"""


class RecordingApache(RecordingOrigin):
    kind = "apache"

    def __init__(self):
        self.workdir = workdir = _shared_scratch("smuggling-apache")
        self.port = free_port()
        self.access_log, self.cgi_log, self.error_log = workdir / "access.log", workdir / "cgi.log", workdir / "error.log"
        self.cgi_log.touch()
        self.cgi_log.chmod(0o666)
        (workdir / "cgi").mkdir()
        script = workdir / "cgi" / "record"
        script.write_text(RECORD_CGI.format(log=self.cgi_log))
        script.chmod(0o755)
        (workdir / "htdocs").mkdir()
        modules = ("mpm_prefork", "authz_core", "alias", "cgi", "mime")
        (workdir / "httpd.conf").write_text(apache_preamble(workdir, self.port, self.error_log, modules) + f"""
StartServers 4
MinSpareServers 4
MaxSpareServers 16
MaxRequestWorkers 32
KeepAlive On
KeepAliveTimeout 30
MaxKeepAliveRequests 0
TypesConfig /dev/null
# Method, raw target, Host, status, tab-separated (the request line as parsed, 400s included).
LogFormat "%m\\t%U%q\\t%{{Host}}i\\t%>s\\t%r" recording
CustomLog {self.access_log} recording
DocumentRoot {workdir}/htdocs
ScriptAliasMatch "^/" "{script}"
""")
        self.process = start_apache(workdir, [self.port], self.error_log)

    def records(self) -> list:
        if not self.access_log.exists():
            return []
        bodies = [line.split(b"\t") for line in self.cgi_log.read_bytes().splitlines()]
        records = []
        for line in self.access_log.read_bytes().splitlines():
            parts = line.decode("latin-1").split("\t")
            if len(parts) < 5:
                continue
            method, _, host, status, request_line = parts[0], parts[1], parts[2], int(parts[3]), "\t".join(parts[4:])
            target = request_line.split(" ")[1] if request_line.count(" ") >= 2 else request_line
            sha, length = "", -1
            if status < 400 and bodies:
                # The CGI ran for this request (requests on one connection are in order).
                body = bodies.pop(0)
                sha, length = body[3].decode(), int(body[4])
            records.append(Record(method, target, "" if host == "-" else host, status, sha, length))
        return records

    def stop(self) -> None:
        _stop_and_remove(self.process, self.workdir)


# --------------------------------------------------------------------------------------- gunicorn

RECORD_APP = '''
import hashlib, json, os
LOG = os.environ["RECORD_LOG"]

def app(environ, start_response):
    body = environ["wsgi.input"].read()
    record = {"m": environ["REQUEST_METHOD"], "t": environ.get("RAW_URI", ""), "h": environ.get("HTTP_HOST", ""),
              "sha": hashlib.sha256(body).hexdigest(), "n": len(body)}
    with open(LOG, "a") as log:
        log.write(json.dumps(record) + "\\n")
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "3")])
    return [b"ok\\n"]
'''


class RecordingGunicorn(RecordingOrigin):
    kind = "gunicorn"

    def __init__(self, workdir: Path):
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "record_app.py").write_text(RECORD_APP)
        self.log, self.error_log = workdir / "records.jsonl", workdir / "gunicorn.log"
        self.log.touch()
        self.port = free_port()
        env = dict(os.environ, RECORD_LOG=str(self.log))
        self.process = start_listening(
            [sys.executable, "-m", "gunicorn", "-k", "gthread", "--threads", "4", "-w", "1", "--keep-alive", "30",
             "-b", f"127.0.0.1:{self.port}", "--error-logfile", str(self.error_log), "--log-level", "warning",
             "--chdir", str(workdir), "record_app:app"],
            workdir, "gunicorn", [self.port], timeout=30, env=env, log=self.error_log)

    def _both(self):
        served = [Record(r["m"], r["t"], r["h"], 0, r["sha"], r["n"])
                  for r in map(json.loads, self.log.read_text().splitlines())]
        # Requests gunicorn refused while parsing never reach the app; it warns about each.
        refused = [Record("?", line.split(": ", 1)[-1][:80], "", 400)
                   for line in self.error_log.read_text(errors="replace").splitlines()
                   if "Invalid request from" in line] if self.error_log.exists() else []
        return served, refused

    def records(self) -> list:
        served, refused = self._both()
        return served + refused

    def mark(self):
        served, refused = self._both()
        return len(served), len(refused)

    def since(self, mark) -> list:
        served, refused = self._both()
        return served[mark[0]:] + refused[mark[1]:]

    def stop(self) -> None:
        self.process.stop()
