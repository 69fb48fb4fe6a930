"""Fixtures for the tests of answering 401/407 challenges (test_auth_*.py): servers that demand
authentication (harness/auth_peers.py), the secrets Countersign is given through its
environment, and a factory starting Countersign with credentials and per-host auth rules.

Every secret below is a distinctive string so that a test can grep Countersign's output for
it; the client (curl) never holds any of them."""
import base64
import importlib.util
import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from harness.auth_peers import BasicNginx, DigestApache, Httpbin, NtlmServer, SquidParent
from harness.curl import curl
from harness.ports import wait_until

# What `from conftest_auth import *` in conftest.py brings in: the fixtures only.
__all__ = ["auth_proxy", "auth_pki", "basic_nginx", "apache_digest_factory", "digest_apache",
           "httpbin", "ntlm_server", "squid_parent"]

SVC_USER = "svc-user"
SVC_PASSWORD = "Svc-c0rrect-h0rse-41d7"
WRONG_PASSWORD = "Wr0ng-battery-staple-9e2b"
CLIENT_USER = "client-user"
CLIENT_PASSWORD = "Client-own-pass-5c1a"
NTLM_DOMAIN = "CORP"
NTLM_USER = "ntsvc"
NTLM_PASSWORD = "Ntlm-Secret-93fa-Ωx"
NTLM_WORKSTATION = "APPHOST"
NTLM_UPN_DOMAIN = "corp.example"
API_TOKEN = "tok-e1c0-bearer-secret-5a7d"
PARENT_USER = "parent-user"
PARENT_PASSWORD = "Squid-parent-pw-2c8e"

SECRET_ENV = {
    "SVC_PASSWORD": SVC_PASSWORD,
    "WRONG_PASSWORD": WRONG_PASSWORD,
    "NTLM_PASSWORD": NTLM_PASSWORD,
    "API_TOKEN": API_TOKEN,
    "PARENT_PASSWORD": PARENT_PASSWORD,
}

CREDENTIALS = {
    "svc": {"user": SVC_USER, "password_env": "SVC_PASSWORD"},
    "wrong": {"user": SVC_USER, "password_env": "WRONG_PASSWORD"},
    "corp": {"user": f"{NTLM_DOMAIN}\\{NTLM_USER}", "password_env": "NTLM_PASSWORD",
             "workstation": NTLM_WORKSTATION},
    "corp_wrong": {"user": f"{NTLM_DOMAIN}\\{NTLM_USER}", "password_env": "WRONG_PASSWORD",
                   "workstation": NTLM_WORKSTATION},
    "tok": {"token_env": "API_TOKEN"},
    "parent": {"user": PARENT_USER, "password_env": "PARENT_PASSWORD"},
}


def secret_forms() -> dict:
    """Every way a secret could leak into output: plain, and as the Basic token68."""
    forms = {name: value for name, value in SECRET_ENV.items()}
    for user, password in ((SVC_USER, SVC_PASSWORD), (SVC_USER, WRONG_PASSWORD),
                           (PARENT_USER, PARENT_PASSWORD)):
        forms[f"basic({user}:{password[:4]}…)"] = base64.b64encode(f"{user}:{password}".encode()).decode()
    return forms


def assert_no_secret_in(text: str, where: str) -> None:
    leaked = [name for name, value in secret_forms().items() if value in text]
    assert not leaked, f"{where} contains the secret(s) {leaked}"


def rule(credential: str, schemes: list, **options) -> dict:
    """An auth rule: rule("svc", ["basic"], persistence="none", allow_plaintext=True)."""
    return {"credential": credential, "schemes": schemes, **options}


def _require_module(name: str) -> None:
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"python module {name} is missing: run scripts/install-test-deps.sh")


def _require_command(command: str) -> None:
    if shutil.which(command) is None and not Path(f"/usr/sbin/{command}").exists():
        pytest.skip(f"{command} is missing: run scripts/install-test-deps.sh")


class AuthProxy:
    """A running Countersign plus the client side of a test: `get`/`post` run curl through it,
    and the access log's `auth` outcomes are read back in order."""

    def __init__(self, process, workdir: Path):
        self.process = process
        self.workdir = workdir
        self._requests = 0

    def __getattr__(self, name):
        return getattr(self.process, name)

    def fetch(self, url: str, *curl_args, timeout: float = 30.0, name: str = None):
        """curl through the proxy; give a `name` when fetching from several threads at once."""
        self._requests += 1
        return curl(["-x", self.process.url, *curl_args, url], self.workdir,
                    timeout=timeout, name=name or f"client-{self._requests}")

    def auth_outcomes(self, expected_count: int = None) -> list:
        """The `auth` field of every access line, "-" when absent. Waits for `expected_count`
        lines first, since the line is written once the exchange ends."""
        if expected_count is not None:
            wait_until(lambda: len(self.process.access_logs()) >= expected_count, 5.0)
        return [entry.get("auth", "-") for entry in self.process.access_logs()]

    def assert_no_secrets_in_output(self) -> None:
        assert_no_secret_in(self.process.stderr_text(), "Countersign's stderr")
        stdout = self.process.process.stdout_path
        if stdout.exists():
            assert_no_secret_in(stdout.read_text(errors="replace"), "Countersign's stdout")


@pytest.fixture
def auth_proxy(countersign, tmp_path):
    """Factory: auth_proxy(hosts, parent_proxy=None, limits=None, credentials=CREDENTIALS,
    state_dir=None) starts Countersign with the test credentials, the secrets in its
    environment and `hosts` as its host table."""
    clients = tmp_path / "client"
    clients.mkdir()

    def start(hosts: dict, parent_proxy: dict = None, limits: dict = None,
              credentials: dict = None, state_dir: Path = None, env: dict = None) -> AuthProxy:
        overrides = {"credentials": credentials or CREDENTIALS, "hosts": hosts}
        if parent_proxy:
            overrides["parent_proxy"] = parent_proxy
        if limits:
            overrides["limits"] = limits
        if state_dir:
            overrides["state_dir"] = str(state_dir)
        return AuthProxy(countersign(overrides, env={**SECRET_ENV, **(env or {})}), clients)

    return start


@pytest.fixture(scope="session")
def auth_pki(session_dir) -> Path:
    """Tests/fixtures/pki/make-pki.sh output: root.pem, leaf-chain.pem + leaf.key (localhost)."""
    directory = session_dir / "auth-pki"
    script = Path(__file__).resolve().parents[1] / "fixtures" / "pki" / "make-pki.sh"
    subprocess.run(["sh", str(script), str(directory)], check=True, capture_output=True)
    return directory


@pytest.fixture
def basic_nginx(tmp_path, auth_pki):
    """nginx auth_basic knowing svc-user (Countersign's) and client-user (the client's own),
    on HTTP and on HTTPS (localhost leaf of the test PKI)."""
    _require_command("nginx")
    server = BasicNginx(tmp_path / "nginx-basic", {SVC_USER: SVC_PASSWORD, CLIENT_USER: CLIENT_PASSWORD},
                        tls=(auth_pki / "leaf-chain.pem", auth_pki / "leaf.key"))
    yield server
    server.stop()


@pytest.fixture
def apache_digest_factory():
    """Factory: apache_digest_factory(nonce_lifetime=300) -> DigestApache knowing svc-user."""
    _require_command("apache2")
    started = []

    def start(**options) -> DigestApache:
        server = DigestApache({SVC_USER: SVC_PASSWORD}, **options)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def digest_apache(apache_digest_factory):
    return apache_digest_factory()


@pytest.fixture(scope="session")
def httpbin(session_dir):
    """One httpbin for the session (it keeps no state between requests); tests count from a
    mark() taken before their first request."""
    _require_module("httpbin")
    _require_module("gunicorn")
    server = Httpbin(session_dir / "httpbin")
    yield server
    server.stop()


@pytest.fixture
def ntlm_server(tmp_path, auth_pki):
    """HTTPS on the test PKI's localhost leaf, NTLM with the channel binding enforced."""
    _require_module("spnego")
    # The UPN line serves credentials written user@domain (sent with an empty domain, as
    # MS-NLMP says); the second line, a client that splits them into domain and user.
    users = [(NTLM_DOMAIN, NTLM_USER, NTLM_PASSWORD), ("", f"{NTLM_USER}@{NTLM_UPN_DOMAIN}", NTLM_PASSWORD),
             (NTLM_UPN_DOMAIN, NTLM_USER, NTLM_PASSWORD)]
    server = NtlmServer(tmp_path / "ntlm", users,
                        auth_pki / "leaf-chain.pem", auth_pki / "leaf.key", require_binding=True)
    yield server
    server.stop()


@pytest.fixture
def squid_parent():
    """Factory: squid_parent("basic" | "digest" | "ntlm", tls=None, challenge_body_bytes=0) ->
    SquidParent knowing parent-user; with tls=(certificate, key) it is an https:// parent."""
    _require_command("squid")
    started = []

    def start(scheme: str, tls: tuple = None, challenge_body_bytes: int = 0) -> SquidParent:
        server = SquidParent(scheme, {PARENT_USER: PARENT_PASSWORD}, tls=tls, challenge_body_bytes=challenge_body_bytes)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def tls_host(auth_pki: Path, auth: list) -> dict:
    """A host entry for an upstream reached over TLS, trusting only the test PKI's root."""
    return {"upstream_tls": True, "intercept": False,
            "trust": {"anchors": [str(auth_pki / "root.pem")]}, "auth": auth}


def assert_state_saved_privately(state_dir: Path) -> None:
    """`permanent` state was written to state_dir: mode 0600, no secret in any form."""
    files = sorted(path for path in state_dir.rglob("*") if path.is_file()) if state_dir.exists() else []
    assert [path for path in files if not path.name.endswith(".tmp")], \
        f"no state file in state_dir, only {[path.name for path in files]}; see Countersign's warnings"
    for path in files:
        mode = path.stat().st_mode & 0o777
        assert mode == 0o600, f"state file {path.name} has mode {oct(mode)}, not 0o600"
        assert_no_secret_in(path.read_text(errors="replace"), f"state file {path.name}")


def json_body(result) -> dict:
    try:
        return json.loads(result.body)
    except ValueError:
        raise AssertionError(f"the body is not JSON: {result.body[:300]!r}") from None


def settle(seconds: float = 0.2) -> None:
    """Upstream access logs are written after the response is sent."""
    time.sleep(seconds)
