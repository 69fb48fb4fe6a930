"""Negotiate (Kerberos through SPNEGO) answered by the real countersign binary against a real
MIT KDC (harness/kdc.py, a realm created per module on a loopback port) and a real acceptor
(harness/negotiate_origin.py: python-gssapi with the service keytab), plain and over TLS, the
TLS channel binding enforced, the server's final token checked, NTLM as the fallback when no
ticket can be had, preemptive first tokens on new connections, and `check`.

Countersign gets its Kerberos configuration only from the `krb5_conf` key, as a user writes it:
its environment has no KRB5_CONFIG."""
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from harness.checks import parse_proxy_status
from harness.curl import curl
from harness.kdc import KerberosRealm
from harness.negotiate_origin import NegotiateOrigin
from harness.ports import wait_until
from conftest_auth import CREDENTIALS, NTLM_DOMAIN, NTLM_PASSWORD, NTLM_USER, NTLM_WORKSTATION, rule, settle, tls_host
from conftest_intercept import intercepted_host_entry

pytestmark = pytest.mark.countersign_only

REALM = "COUNTERSIGN.TEST"
CLIENT = f"client@{REALM}"
KRB_PASSWORD = "Krb-Pa55-fe31-kdc-secret"


def _require_kerberos():
    if not KerberosRealm.available():
        pytest.skip("MIT KDC missing: run scripts/install-test-deps.sh (krb5-kdc, krb5-admin-server)")
    pytest.importorskip("gssapi", reason="python-gssapi missing: run scripts/install-test-deps.sh")


class Realm:
    """The module's realm: client@ with a password and a keytab, HTTP/localhost's keytab."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.kdc = KerberosRealm(directory / "kdc", realm=REALM).start()
        self.kdc.add_principal("client", password=KRB_PASSWORD)
        self.kdc.add_principal("HTTP/localhost")
        self.client_keytab = self.kdc.export_keytab("client", directory / "client.keytab")
        self.service_keytab = self.kdc.export_keytab("HTTP/localhost", directory / "http.keytab")

    def kerberos(self, **source) -> dict:
        settings = {"principal": CLIENT, "krb5_conf": str(self.kdc.krb5_conf)}
        settings.update(source or {"keytab_file": str(self.client_keytab)})
        return settings


@pytest.fixture(scope="module")
def realm(tmp_path_factory):
    _require_kerberos()
    made = Realm(tmp_path_factory.mktemp("krb-realm"))
    yield made
    made.kdc.stop()


def _credentials(realm, **extra) -> dict:
    return dict(CREDENTIALS, krb={"kerberos": realm.kerberos()}, **extra)


@pytest.fixture
def origins(tmp_path):
    started = []

    def start(realm, **options) -> NegotiateOrigin:
        origin = NegotiateOrigin(tmp_path / f"origin-{len(started)}", realm.kdc, realm.service_keytab, **options)
        started.append(origin)
        return origin

    yield start
    for origin in started:
        origin.stop()


def _plain_hosts(origin, *rules) -> dict:
    return {f"localhost:{origin.port}": {"intercept": False, "auth": list(rules)}}


def _ok(result, origin, who: str = CLIENT):
    assert result.status == 200, f"expected the origin's 200, got {result.status} {result.body[:300]!r}; origin log {origin.entries()}"
    assert result.body.decode().startswith(f"negotiate ok for {who}"), result.body[:200]


def _assert_no_kerberos_secrets(proxy):
    text = proxy.stderr_text()
    assert KRB_PASSWORD not in text
    assert "Negotiate " not in text, "a Negotiate token reached Countersign's log"


def test_negotiate_answers_and_the_connection_stays_authenticated(auth_proxy, origins, realm):
    origin = origins(realm)
    proxy = auth_proxy(_plain_hosts(origin, rule("krb", ["negotiate"])), credentials=_credentials(realm))
    for _ in range(3):
        _ok(proxy.fetch(origin.url()), origin)
    settle()
    handshakes = origin.legs("negotiate")
    assert len(handshakes) == 1, f"one handshake for three sequential requests, log {origin.entries()}"
    assert handshakes[0]["mutual"], "Countersign must ask for mutual authentication"
    assert not handshakes[0]["channel_bound"], "no channel binding on plain HTTP"
    assert proxy.auth_outcomes(3)[0] == "negotiate:answered"
    _assert_no_kerberos_secrets(proxy)


def test_password_and_ccache_sources(auth_proxy, origins, realm, tmp_path):
    origin = origins(realm)
    ccache = realm.kdc.kinit("client", tmp_path / "ccache", password=KRB_PASSWORD)
    credentials = _credentials(realm, krbpw={"kerberos": realm.kerberos(password_env="KRB_PASSWORD")},
                               krbcc={"kerberos": realm.kerberos(ccache=f"FILE:{ccache}")})
    hosts = {f"localhost:{origin.port}": {"intercept": False, "auth": [rule("krbpw", ["negotiate"], persistence="none")]}}
    proxy = auth_proxy(hosts, credentials=credentials, env={"KRB_PASSWORD": KRB_PASSWORD})
    _ok(proxy.fetch(origin.url("/pw")), origin)
    _assert_no_kerberos_secrets(proxy)
    hosts[f"localhost:{origin.port}"]["auth"] = [rule("krbcc", ["negotiate"])]
    cached = auth_proxy(hosts, credentials=credentials, env={"KRB_PASSWORD": KRB_PASSWORD})
    _ok(cached.fetch(origin.url("/cc")), origin)


def test_a_server_that_closes_after_its_challenge_gets_the_token_on_a_new_connection(auth_proxy, origins, realm):
    """The first token does not belong to the connection that carried the bare challenge."""
    origin = origins(realm, close_on_challenge=True)
    proxy = auth_proxy(_plain_hosts(origin, rule("krb", ["negotiate"])), credentials=_credentials(realm))
    _ok(proxy.fetch(origin.url()), origin)
    settle()
    [challenge, handshake] = origin.entries()
    assert challenge["status"] == 401 and handshake["leg"] == "negotiate"
    assert challenge["connection"] != handshake["connection"]


# -- TLS: the channel binding of the certificate actually served ---------------------------------

def test_negotiate_over_intercepted_connect_carries_the_channel_binding(intercepting_countersign, intercept_pki,
                                                                        origins, realm):
    origin = origins(realm, tls=(intercept_pki.path("leaf-chain.pem"), intercept_pki.path("leaf.key")),
                     require_binding=True)
    proxy = intercepting_countersign({f"localhost:{origin.port}": intercepted_host_entry(
        intercept_pki, auth=[rule("krb", ["negotiate"])])}, credentials={"krb": {"kerberos": realm.kerberos()}})
    result = curl(["-x", proxy.url, "--cacert", str(proxy.ca_certificate), origin.https_url()], origin.workdir)
    _ok(result, origin)
    settle()
    [handshake] = origin.legs("negotiate")
    assert handshake["channel_bound"], "the origin enforces tls-server-end-point; the token must carry it"


def test_negotiate_over_upstream_tls_carries_the_channel_binding(auth_proxy, auth_pki, origins, realm):
    origin = origins(realm, tls=(auth_pki / "leaf-chain.pem", auth_pki / "leaf.key"), require_binding=True)
    proxy = auth_proxy({f"localhost:{origin.port}": tls_host(auth_pki, [rule("krb", ["negotiate"])])},
                       credentials=_credentials(realm))
    _ok(proxy.fetch(origin.url()), origin)


def test_the_acceptor_refuses_a_token_without_the_binding(origins, realm, auth_pki, tmp_path):
    """The enforcing origin is not lenient: curl's own Negotiate carries no channel binding."""
    origin = origins(realm, tls=(auth_pki / "leaf-chain.pem", auth_pki / "leaf.key"), require_binding=True)
    env = realm.kdc.environment()
    env["KRB5CCNAME"] = f"FILE:{realm.kdc.kinit('client', tmp_path / 'cc', password=KRB_PASSWORD)}"
    completed = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--negotiate", "-u", ":",
                                "--cacert", str(auth_pki / "root.pem"), origin.https_url()],
                               env=env, capture_output=True, text=True, timeout=30)
    assert completed.stdout.strip() == "401", completed
    settle()
    assert any(entry.get("error") == "token carries no channel binding" for entry in origin.entries()), origin.entries()


def test_a_wrong_channel_binding_is_refused(auth_proxy, auth_pki, origins, realm):
    """The origin expects the binding of another certificate: Countersign's (right) binding
    does not match it, and the acceptor refuses the token; the 401 reaches the client."""
    origin = origins(realm, tls=(auth_pki / "leaf-chain.pem", auth_pki / "leaf.key"), require_binding=True,
                     binding_of=auth_pki / "root.pem")
    proxy = auth_proxy({f"localhost:{origin.port}": tls_host(auth_pki, [rule("krb", ["negotiate"])])},
                       credentials=_credentials(realm))
    result = proxy.fetch(origin.url())
    assert result.status == 401
    settle()
    errors = [entry.get("error", "") for entry in origin.legs("negotiate")]
    assert errors and all("Binding" in error for error in errors), errors


# -- mutual authentication ------------------------------------------------------------------------

def test_a_server_failing_mutual_authentication_is_refused(auth_proxy, origins, realm):
    origin = origins(realm, bogus_final=True)
    proxy = auth_proxy(_plain_hosts(origin, rule("krb", ["negotiate"])), credentials=_credentials(realm))
    result = proxy.fetch(origin.url())
    assert result.status == 502, f"got {result.status} {result.body[:200]!r}"
    assert b"negotiate ok" not in result.body, "what the impostor sent reached the client"
    _, parameters = parse_proxy_status(result.header("Proxy-Status") or "")
    assert parameters.get("error") == "http_protocol_error", result.headers
    assert "mutual authentication" in parameters.get("details", ""), parameters
    line = proxy.access_logs()[-1]
    assert line.get("auth") == "negotiate:mutual-auth-failed" and line.get("status") == 502, line


# -- when Kerberos cannot be used --------------------------------------------------------------------

def test_a_stale_keytab_gets_no_ticket_and_the_401_goes_to_the_client(auth_proxy, origins, realm, tmp_path):
    kdc = realm.kdc
    kdc.add_principal("rotated", password="Rotated-pw-1")
    stale = kdc.export_keytab("rotated", tmp_path / "stale.keytab", randomize=True)
    kdc.export_keytab("rotated", tmp_path / "current.keytab", randomize=True)   # the KDC's key moves on
    origin = origins(realm)
    credentials = dict(CREDENTIALS, old={"kerberos": {"principal": f"rotated@{REALM}", "keytab_file": str(stale),
                                                      "krb5_conf": str(kdc.krb5_conf)}})
    proxy = auth_proxy(_plain_hosts(origin, rule("old", ["negotiate"])), credentials=credentials)
    result = proxy.fetch(origin.url())
    assert result.status == 401, "no ticket: the origin's challenge goes to the client"
    assert origin.legs("negotiate") == [], "no token was sent"


def test_a_keytab_rotated_on_disk_takes_effect_at_the_reload(auth_proxy, origins, realm, tmp_path):
    kdc = realm.kdc
    kdc.add_principal("rotating", password="Rotating-pw-1")
    keytab = kdc.export_keytab("rotating", tmp_path / "svc.keytab", randomize=True)
    kdc.export_keytab("rotating", tmp_path / "next.keytab", randomize=True)   # the KDC moves on: svc.keytab is stale
    origin = origins(realm)
    credentials = dict(CREDENTIALS, svc_krb={"kerberos": {"principal": f"rotating@{REALM}", "keytab_file": str(keytab),
                                                          "krb5_conf": str(kdc.krb5_conf)}})
    proxy = auth_proxy(_plain_hosts(origin, rule("svc_krb", ["negotiate"], persistence="none")), credentials=credentials)
    assert proxy.fetch(origin.url("/before")).status == 401
    os.replace(tmp_path / "next.keytab", keytab)        # the rotated keytab arrives, as a secret mount swaps it
    assert wait_until(lambda: any(line.get("msg") == "configuration reloaded" for line in proxy.logs()), 5.0), \
        f"no reload after the keytab changed: {proxy.logs()[-3:]}"
    _ok(proxy.fetch(origin.url("/after")), origin, who=f"rotating@{REALM}")


def test_kdc_down_falls_back_to_ntlm_and_says_why(auth_proxy, origins, tmp_path):
    _require_kerberos()
    pytest.importorskip("spnego")
    down = Realm(tmp_path / "down-realm")
    down.kdc.stop()
    origin = origins(down, ntlm_users=[(NTLM_DOMAIN, NTLM_USER, NTLM_PASSWORD)])
    credentials = dict(CREDENTIALS, both={"user": f"{NTLM_DOMAIN}\\{NTLM_USER}", "password_env": "NTLM_PASSWORD",
                                          "workstation": NTLM_WORKSTATION, "kerberos": down.kerberos()})
    proxy = auth_proxy(_plain_hosts(origin, rule("both", ["negotiate", "ntlm"])), credentials=credentials)
    result = proxy.fetch(origin.url())
    assert result.status == 200, f"{result.status} {result.body[:200]!r}"
    assert result.body.decode().startswith("negotiate ok for ntlm:"), result.body[:200]
    line = proxy.access_logs()[-1]
    assert line.get("auth") == "ntlm:answered", line
    assert "negotiate" in line.get("auth_fallback", "") and "KDC" in line["auth_fallback"], line
    proxy.assert_no_secrets_in_output()


def _config_file(tmp_path, credentials: dict, hosts: dict) -> Path:
    path = tmp_path / "check.json5"
    path.write_text(json.dumps({"listen": [{"address": "127.0.0.1:0"}], "credentials": credentials, "hosts": hosts}))
    return path


def _check(countersign_executable, path, *args, env=None):
    return subprocess.run([str(countersign_executable), "check", "-c", str(path), *args], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ, **(env or {})))


def test_check_without_the_gssapi_library_names_the_package(countersign_executable, realm, tmp_path):
    path = _config_file(tmp_path, {"krb": {"kerberos": realm.kerberos()}},
                        {"localhost:8080": {"intercept": False, "auth": [rule("krb", ["negotiate"])]}})
    missing = {"COUNTERSIGN_GSSAPI_LIBRARY": str(tmp_path / "no-such-libgssapi_krb5.so.2")}
    checked = _check(countersign_executable, path, env=missing)
    assert checked.returncode == 2, checked
    assert "libgssapi-krb5-2" in checked.stderr and "credentials.krb.kerberos" in checked.stderr, checked.stderr
    started = subprocess.run([str(countersign_executable), "run", "-c", str(path)], capture_output=True, text=True,
                             timeout=30, env=dict(os.environ, **missing))
    assert started.returncode == 2 and "libgssapi-krb5-2" in started.stderr, started
    assert _check(countersign_executable, path).returncode == 0


def test_check_refuses_a_keytab_without_the_principal(countersign_executable, realm, tmp_path):
    path = _config_file(tmp_path, {"krb": {"kerberos": realm.kerberos(keytab_file=str(realm.service_keytab))}}, {})
    checked = _check(countersign_executable, path)
    assert checked.returncode == 2, checked
    assert "credentials.krb.kerberos.keytab_file" in checked.stderr and f"holds no key for {CLIENT}" in checked.stderr, checked.stderr
    assert "HTTP/localhost@" in checked.stderr, "the message says what the keytab holds"


def test_check_warns_about_a_keytab_others_can_read(countersign_executable, realm, tmp_path):
    readable = tmp_path / "readable.keytab"
    readable.write_bytes(realm.client_keytab.read_bytes())
    readable.chmod(0o644)
    path = _config_file(tmp_path, {"krb": {"kerberos": realm.kerberos(keytab_file=str(readable))}}, {})
    checked = _check(countersign_executable, path)
    assert checked.returncode == 0, checked
    assert "warning: credentials.krb.kerberos.keytab_file" in checked.stdout and "chmod 600" in checked.stdout, checked.stdout
    readable.chmod(0o600)
    assert "keytab_file" not in _check(countersign_executable, path).stdout.split("warning:", 1)[-1]


def test_check_online_gets_a_ticket(countersign_executable, realm, tmp_path):
    hosts = {"localhost:8080": {"intercept": False, "auth": [rule("krb", ["negotiate"])]}}
    path = _config_file(tmp_path, {"krb": {"kerberos": realm.kerberos()}}, hosts)
    checked = _check(countersign_executable, path, "--online")
    assert checked.returncode == 0, checked
    assert f"{CLIENT} got a ticket for HTTP@localhost" in checked.stdout, checked.stdout
    hosts["localhost:8080"]["auth"] = [rule("krb", ["negotiate"], spn="HTTP/nowhere.invalid@" + REALM)]
    path = _config_file(tmp_path, {"krb": {"kerberos": realm.kerberos()}}, hosts)
    refused = _check(countersign_executable, path, "--online")
    assert refused.returncode == 2 and "cannot get a ticket for HTTP/nowhere.invalid" in refused.stderr, refused


def test_config_errors_name_the_key_and_the_fix(countersign_executable, realm, tmp_path):
    both = realm.kerberos(password_env="KRB_PASSWORD")
    both["keytab_file"] = str(realm.client_keytab)
    other_conf = tmp_path / "other-krb5.conf"
    other_conf.write_text(realm.kdc.krb5_conf.read_text())
    cases = [
        ({"k": {"kerberos": both}}, "credentials.k.kerberos.", "give exactly one of keytab_file"),
        ({"k": {"kerberos": {"principal": "no-realm", "keytab_file": str(realm.client_keytab)}}},
         "credentials.k.kerberos.principal", "name@REALM"),
        ({"k": {"kerberos": {"principal": CLIENT}}}, "credentials.k.kerberos", "add keytab_file"),
        ({"k": {"kerberos": realm.kerberos()}, "j": {"kerberos": dict(realm.kerberos(), krb5_conf=str(other_conf))}},
         "krb5_conf", "one process reads one krb5.conf"),
        ({"k": {"token_env": "X", "kerberos": realm.kerberos()}}, "credentials.k", "mixes kerberos with token_env"),
    ]
    for credentials, path_text, fix in cases:
        checked = _check(countersign_executable, _config_file(tmp_path, credentials, {}), env={"KRB_PASSWORD": "x", "X": "y"})
        assert checked.returncode == 2, (credentials, checked)
        assert path_text in checked.stderr and fix in checked.stderr, checked.stderr
    spn_without_negotiate = {"localhost:8080": {"intercept": False, "auth": [rule("svc", ["basic"], spn="HTTP@x")]}}
    checked = _check(countersign_executable, _config_file(tmp_path, CREDENTIALS, spn_without_negotiate),
                     env={"SVC_PASSWORD": "x", "WRONG_PASSWORD": "x", "NTLM_PASSWORD": "x", "API_TOKEN": "x", "PARENT_PASSWORD": "x"})
    assert checked.returncode == 2 and "auth[0].spn" in checked.stderr and "negotiate" in checked.stderr, checked.stderr


# -- preemptive first tokens ---------------------------------------------------------------------------

@pytest.mark.parametrize("persistence", ["session", "none"])
def test_preemptive_first_token_on_each_new_connection(auth_proxy, origins, realm, persistence):
    origin = origins(realm, close_after=1)      # every response closes its connection
    proxy = auth_proxy(_plain_hosts(origin, rule("krb", ["negotiate"], persistence=persistence)),
                       credentials=_credentials(realm))
    for index in range(3):
        _ok(proxy.fetch(origin.url(f"/r{index}")), origin)
    settle()
    per_connection = origin.handshakes_per_connection()
    challenges = [entry for entry in origin.entries() if entry["status"] == 401]
    outcomes = proxy.auth_outcomes(3)
    if persistence == "session":
        assert len(challenges) == 1, f"only the first connection is challenged: {origin.entries()}"
        assert outcomes == ["negotiate:answered", "negotiate:preemptive", "negotiate:preemptive"], outcomes
    else:
        assert len(challenges) == 3, f"persistence none remembers nothing: {origin.entries()}"
        assert outcomes == ["negotiate:answered"] * 3, outcomes
    assert list(per_connection.values()) == [1, 1, 1], f"one handshake on each of three connections: {per_connection}"


def test_permanent_state_keeps_nothing_of_kerberos(auth_proxy, origins, realm, tmp_path):
    origin = origins(realm, close_after=1)
    state_dir = tmp_path / "state"
    proxy = auth_proxy(_plain_hosts(origin, rule("krb", ["negotiate"], persistence="permanent")),
                       credentials=_credentials(realm), state_dir=state_dir)
    _ok(proxy.fetch(origin.url()), origin)
    assert wait_until(lambda: list(state_dir.glob("*.json")), 5.0)
    [state] = list(state_dir.glob("*.json"))
    text = state.read_text()
    assert '"negotiate"' in text
    for forbidden in (KRB_PASSWORD, "krbtgt", "Negotiate ", CLIENT, str(realm.client_keytab)):
        assert forbidden not in text, f"the state file holds {forbidden!r}: {text}"
    assert state.stat().st_mode & 0o777 == 0o600
    proxy.stop()
    again = auth_proxy(_plain_hosts(origin, rule("krb", ["negotiate"], persistence="permanent")),
                       credentials=_credentials(realm), state_dir=state_dir)
    _ok(again.fetch(origin.url("/after-restart")), origin)
    assert again.auth_outcomes(1) == ["negotiate:preemptive"], "the learned space survives a restart"


# -- a parent proxy that demands Negotiate (407) ----------------------------------------------------

def test_parent_proxy_negotiate_absolute_form(auth_proxy, origins, realm):
    parent = origins(realm, proxy=True)
    proxy = auth_proxy({}, parent_proxy={"url": f"http://localhost:{parent.port}",
                                         "auth": {"credential": "krb", "schemes": ["negotiate"]}},
                       credentials=_credentials(realm))
    for index in range(2):
        result = proxy.fetch(f"http://origin.invalid/abs/{index}")
        assert result.status == 200, f"{result.status} {result.body[:200]!r}; parent log {parent.entries()}"
        assert result.body.decode().startswith(f"negotiate ok for {CLIENT}")
    settle()
    handshakes = parent.legs("negotiate")
    assert len(handshakes) == 1 and handshakes[0]["mutual"], parent.entries()
    assert [entry["request"].split(" ")[1] for entry in parent.entries()][-1] == "http://origin.invalid/abs/1"


def test_parent_proxy_negotiate_on_connect_then_origin_negotiate_inside_tls(auth_proxy, auth_pki, origins, realm):
    """Two layers: the parent's 407 on the CONNECT (HTTP@ the parent's host), then the TLS
    origin's 401 inside the tunnel (HTTP@ the origin's host, with the channel binding)."""
    parent = origins(realm, proxy=True)
    origin = origins(realm, tls=(auth_pki / "leaf-chain.pem", auth_pki / "leaf.key"), require_binding=True)
    hosts = {f"localhost:{origin.port}": tls_host(auth_pki, [rule("krb", ["negotiate"])])}
    proxy = auth_proxy(hosts, parent_proxy={"url": f"http://localhost:{parent.port}",
                                            "auth": {"credential": "krb", "schemes": ["negotiate"]}},
                       credentials=_credentials(realm))
    _ok(proxy.fetch(origin.url()), origin)
    settle()
    connects = [entry for entry in parent.entries() if entry["request"].startswith("CONNECT")]
    assert [entry["status"] for entry in connects] == [407, 200], connects
    assert origin.legs("negotiate")[0]["channel_bound"]


# -- tickets that run out ------------------------------------------------------------------------------

@pytest.mark.slow
def test_tickets_from_a_password_are_renewed_before_they_run_out(auth_proxy, origins, tmp_path):
    """client's tickets last 12 s (and the realm honours an expired one for 1 s only): a request
    after that still gets a fresh ticket, without a restart or reload."""
    _require_kerberos()
    short = Realm.__new__(Realm)
    short.directory = tmp_path / "short-realm"
    short.kdc = KerberosRealm(short.directory / "kdc", realm=REALM, clockskew=1).start()
    short.kdc.add_principal("client", password=KRB_PASSWORD)
    short.kdc.add_principal("HTTP/localhost")
    short.kdc.set_max_life("client", "12 seconds")
    short.service_keytab = short.kdc.export_keytab("HTTP/localhost", short.directory / "http.keytab")
    try:
        origin = origins(short, close_after=1)
        credentials = dict(CREDENTIALS, krbpw={"kerberos": short.kerberos(password_env="KRB_PASSWORD")})
        proxy = auth_proxy(_plain_hosts(origin, rule("krbpw", ["negotiate"], persistence="none")),
                           credentials=credentials, env={"KRB_PASSWORD": KRB_PASSWORD})
        _ok(proxy.fetch(origin.url("/early")), origin)
        time.sleep(15)
        _ok(proxy.fetch(origin.url("/late")), origin)
        settle()
        assert [entry.get("error") for entry in origin.legs("negotiate")] == [None, None], origin.entries()
        assert short.kdc.log_text().count("AS_REQ") >= 2, "the second ticket-granting ticket came from the KDC"
    finally:
        short.kdc.stop()
