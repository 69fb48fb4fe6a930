"""The proxy under test: Countersign itself, or Squid / tinyproxy as stand-ins that let the
harness be checked before Countersign can serve (PROXY_UNDER_TEST=squid|tinyproxy)."""
import copy
import json
import os
import shutil
import signal
import tempfile
import time
import urllib.request
from pathlib import Path

from .ports import free_port, wait_for_port
from .process import ManagedProcess, start_listening

DEFAULT_LIMITS = {
    "connect_timeout": "3s", "header_timeout": "5s", "idle_timeout": "20s",
    "tunnel_idle_timeout": "60s", "drain_timeout": "5s",
    # Teardown's SIGTERM need not wait the default 1 s of quiet; drain tests set their own.
    "drain_quiet_period": "100ms",
}


def countersign_binary() -> Path:
    configured = os.environ.get("COUNTERSIGN_BIN")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[3] / ".build" / "debug" / "countersign"


def base_config(listen_port: int, admin_port: int, workdir: Path) -> dict:
    return {
        "listen": [{"address": f"127.0.0.1:{listen_port}"}],
        "admin": {"address": f"127.0.0.1:{admin_port}"},
        "workers": 1,
        "unlisted_hosts": "tunnel",
        "state_dir": str(workdir / "state"),
        "limits": dict(DEFAULT_LIMITS),
        "log": {"level": "info"},
    }


def merge(base: dict, overrides: dict) -> dict:
    """Deep-merges `overrides` into a copy of `base`; a None value removes the key."""
    merged = copy.deepcopy(base)
    for key, value in overrides.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


class CountersignProcess:
    kind = "countersign"
    emits_proxy_status = True

    def __init__(self, binary: Path, workdir: Path, config: dict, env: dict, preexec_fn=None):
        self.binary = binary
        self.workdir = workdir
        self.config = config
        self.config_path = workdir / "countersign.json5"
        self.config_path.write_text(json.dumps(config, indent=2))
        self.port = int(config["listen"][0]["address"].rsplit(":", 1)[1])
        self.admin_port = int(config["admin"]["address"].rsplit(":", 1)[1])
        self.host = "127.0.0.1"
        self.process = ManagedProcess([str(binary), "run", "-c", str(self.config_path)],
                                      workdir, "countersign", env=env, preexec_fn=preexec_fn)
        self.pid = self.process.pid
        try:
            # Both listeners: a test that reads /metrics or /status first must not race the admin one.
            wait_for_port(self.host, self.port, timeout=20, alive=self.process.alive)
            wait_for_port(self.host, self.admin_port, timeout=20, alive=self.process.alive)
        except Exception as failure:
            self.process.stop()
            raise RuntimeError(f"countersign did not start listening ({failure}); its output:\n"
                               f"{self.process.output_tail()}") from None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def logs(self) -> list:
        """Every JSON line written to stderr so far (other lines are skipped)."""
        entries = []
        for line in self.process.stderr_text().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                entries.append(entry)
        return entries

    def access_logs(self) -> list:
        return [entry for entry in self.logs() if entry.get("msg") == "access"]

    def stderr_text(self) -> str:
        return self.process.stderr_text()

    def fd_count(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def settled_fd_count(self, quiet: float = 0.3, timeout: float = 5.0) -> int:
        """The descriptor count once it has not changed for `quiet` seconds (the readiness
        probes' connections closed, lazily opened files opened), instead of a fixed sleep."""
        deadline = time.monotonic() + timeout
        count, since = self.fd_count(), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = self.fd_count()
            if now != count:
                count, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                break
        return count

    def admin_get(self, path: str, timeout: float = 3.0):
        """(status, body) of a GET on the admin listener."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.admin_port}{path}", timeout=timeout) as reply:
                return reply.status, reply.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def reload(self, config: dict) -> None:
        """Writes a new configuration and sends SIGHUP."""
        self.config_path.write_text(json.dumps(config, indent=2))
        self.process.signal(signal.SIGHUP)

    def reload_text(self, text: str) -> None:
        self.config_path.write_text(text)
        self.process.signal(signal.SIGHUP)

    def alive(self) -> bool:
        return self.process.alive()

    def stop(self, timeout: float = 15.0):
        return self.process.stop(timeout)

    def wait_exit(self, timeout: float):
        """The exit code, or None if still running after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.process.alive():
                return self.process.popen.returncode
            time.sleep(0.05)
        return None


class SquidProcess:
    """Squid 5 as a plain forward proxy; no cache, logs in the scratch directory."""
    kind = "squid"
    emits_proxy_status = False

    def __init__(self):
        workdir = _world_writable_scratch("squid")
        self.workdir = workdir
        self.host = "127.0.0.1"
        self.port = free_port()
        config = workdir / "squid.conf"
        config.write_text(f"""
http_port 127.0.0.1:{self.port}
pid_filename {workdir}/squid.pid
cache_log {workdir}/cache.log
access_log stdio:{workdir}/access.log
coredump_dir {workdir}
cache deny all
cache_mem 8 MB
visible_hostname squid-stand-in
shutdown_lifetime 0 seconds
http_upgrade_request_protocols websocket allow all
http_access allow localhost
http_access deny all
""")
        self.process = start_listening([shutil.which("squid") or "/usr/sbin/squid", "-N", "-f", str(config)],
                                       workdir, "squid", [self.port], timeout=30)
        self.pid = self.process.pid

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def stop(self, timeout: float = 10.0):
        code = self.process.stop(timeout)
        shutil.rmtree(self.workdir, ignore_errors=True)
        return code


class TinyproxyProcess:
    kind = "tinyproxy"
    emits_proxy_status = False

    def __init__(self, basic_auth: tuple = None):
        """`basic_auth` = (user, password): it demands Basic proxy authentication, its 407 an
        HTTP/1.0 answer with `Connection: close` and a body that ends with the connection."""
        workdir = _world_writable_scratch("tinyproxy")
        self.workdir = workdir
        self.host = "127.0.0.1"
        self.port = free_port()
        config = workdir / "tinyproxy.conf"
        config.write_text(f"""
Port {self.port}
Listen 127.0.0.1
Timeout 60
MaxClients 100
LogFile "{workdir}/tinyproxy.log"
LogLevel Info
PidFile "{workdir}/tinyproxy.pid"
Allow 127.0.0.1
ViaProxyName "tinyproxy-stand-in"
""" + (f"BasicAuth {basic_auth[0]} {basic_auth[1]}\n" if basic_auth else ""))
        self.process = start_listening([shutil.which("tinyproxy") or "/usr/bin/tinyproxy", "-d", "-c", str(config)],
                                       workdir, "tinyproxy", [self.port])
        self.pid = self.process.pid

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def connections(self) -> int:
        """How many client connections it accepted (its log's `Connect` lines)."""
        log = self.workdir / "tinyproxy.log"
        return log.read_text(errors="replace").count("Connect (file descriptor") if log.exists() else 0

    def stop(self, timeout: float = 10.0):
        code = self.process.stop(timeout)
        shutil.rmtree(self.workdir, ignore_errors=True)
        return code


def _world_writable_scratch(name: str) -> Path:
    """Squid and tinyproxy drop root for an unprivileged user that must write their logs,
    and pytest's tmp dirs sit under a directory only root may enter; so use /tmp directly."""
    workdir = Path(tempfile.mkdtemp(prefix=f"countersign-interop-{name}-"))
    workdir.chmod(0o777)
    return workdir


STAND_INS = {"squid": SquidProcess, "tinyproxy": TinyproxyProcess}
