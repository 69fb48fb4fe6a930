"""NEGOTIATE AGAINST REAL KERBEROS PEERS: an MIT KDC per module (harness/kdc.py), Apache httpd
with mod_auth_gssapi as the origin (plain HTTP, and HTTPS reached through an intercepted
CONNECT), and Squid with negotiate_kerberos_auth as an authenticating parent proxy
(absolute-form and CONNECT), all on loopback (harness/kerberos_peers.py).

First each peer is proved with curl itself (`--negotiate` with a ticket from kinit): it names
the user it accepted, and a client without a ticket gets 401/407. Then a client holding no
credentials at all gets the content through Countersign, which answers the challenge with the
keytab of its own principal; handshakes per upstream connection are counted in the peers'
access logs (each request that carried a Negotiate token is one).

mod_auth_gssapi cannot check a channel binding (harness/kerberos_peers.py says why): that the
tls-server-end-point binding is enforced is tested against python-gssapi in test_auth_negotiate.py;
here Apache over TLS shows that a token carrying the binding is accepted by a server that
ignores it."""
import re
import shutil
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from conftest_auth import rule, settle, tls_host
from conftest_intercept import intercepted_host_entry
from harness.curl import curl
from harness.kdc import KerberosRealm
from harness.rawclient import RawConnection
from harness.kerberos_peers import NEGOTIATE_KERBEROS_AUTH, APACHE_GSSAPI_MODULE, KerberosService, \
    NegotiateApache, NegotiateSquid

# Countersign's own principal (keytab), and the one curl uses in the proofs (ticket cache).
PROXY_PRINCIPAL = "svc-proxy"
CURL_PRINCIPAL = "curl-user"
SERVICE = "HTTP/localhost"
ALIAS_SERVICE = "HTTP/web-alias.countersign.test"
# A Negotiate token as it would appear in a header: never in Countersign's output.
TOKEN_IN_TEXT = re.compile(r"Negotiate\s+[A-Za-z0-9+/=]{16,}")


class Realm:
    """The module's KDC with the service key, Countersign's keytab and curl's ticket cache."""

    def __init__(self, directory: Path):
        self.kdc = KerberosRealm(directory).start()
        self.kdc.add_principal(SERVICE)
        self.kdc.add_principal(PROXY_PRINCIPAL)
        self.kdc.add_principal(CURL_PRINCIPAL)
        self.service = KerberosService(self.kdc.krb5_conf, self.kdc.export_keytab(SERVICE, directory / "http.keytab"),
                                       self.kdc.principal(SERVICE))
        self.proxy_keytab = self.kdc.export_keytab(PROXY_PRINCIPAL, directory / "proxy.keytab")
        curl_keytab = self.kdc.export_keytab(CURL_PRINCIPAL, directory / "curl.keytab")
        self.curl_ccache = self.kdc.kinit(CURL_PRINCIPAL, directory / "curl.ccache", keytab=curl_keytab)

    def user(self, name: str) -> str:
        return self.kdc.principal(name)

    def ticket_env(self) -> dict:
        """What curl needs to answer Negotiate from its ticket cache."""
        return {"KRB5_CONFIG": str(self.kdc.krb5_conf), "KRB5CCNAME": f"FILE:{self.curl_ccache}"}

    def no_ticket_env(self) -> dict:
        return {"KRB5_CONFIG": str(self.kdc.krb5_conf), "KRB5CCNAME": f"FILE:{self.kdc.directory}/no-such-ccache"}

    def credentials(self) -> dict:
        """Countersign's `credentials` table: its principal's keytab, and the realm's krb5.conf."""
        return {"krb": {"kerberos": {"principal": self.user(PROXY_PRINCIPAL), "keytab_file": str(self.proxy_keytab),
                                     "krb5_conf": str(self.kdc.krb5_conf)}}}


@pytest.fixture(scope="module")
def realm(tmp_path_factory):
    if not KerberosRealm.available():
        pytest.skip("MIT KDC missing: run scripts/install-test-deps.sh (krb5-kdc, krb5-admin-server)")
    if shutil.which("kinit") is None:
        pytest.skip("kinit missing: run scripts/install-test-deps.sh (krb5-user)")
    created = Realm(tmp_path_factory.mktemp("negotiate-realm"))
    yield created
    created.kdc.stop()


@pytest.fixture
def negotiate_apache(realm):
    """Factory: negotiate_apache(service=None, tls=None, connection_bound=True) -> NegotiateApache
    holding the key of `service` (default: the realm's HTTP/localhost)."""
    if shutil.which("apache2") is None or not APACHE_GSSAPI_MODULE.exists():
        pytest.skip("Apache httpd or mod_auth_gssapi missing: run scripts/install-test-deps.sh "
                    "(apache2, libapache2-mod-auth-gssapi)")
    started = []

    def start(service: KerberosService = None, **options) -> NegotiateApache:
        server = NegotiateApache(service or realm.service, **options)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def negotiate_squid(realm):
    if shutil.which("squid") is None and not Path("/usr/sbin/squid").exists() or not NEGOTIATE_KERBEROS_AUTH.exists():
        pytest.skip("squid or its negotiate_kerberos_auth helper missing: run scripts/install-test-deps.sh")
    server = NegotiateSquid(realm.service)
    yield server
    server.stop()


@pytest.fixture
def impostor_service(tmp_path):
    """HTTP/localhost@COUNTERSIGN.TEST as another KDC made it: same name, another key."""
    impostor_realm = KerberosRealm(tmp_path / "impostor-realm").start()
    impostor_realm.add_principal(SERVICE)
    yield KerberosService(impostor_realm.krb5_conf, impostor_realm.export_keytab(SERVICE, tmp_path / "impostor.keytab"),
                          impostor_realm.principal(SERVICE))
    impostor_realm.stop()


def _curl(args: list, workdir: Path, env: dict, name: str):
    """curl with only `env`'s Kerberos settings added (harness.curl calls them env_proxy)."""
    return curl(args, workdir, env_proxy=env, name=name)


class _AlwaysChallenges(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", "Negotiate")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def _unused_token(realm, tmp_path: Path) -> str:
    """A fresh `Negotiate <token>` for HTTP@localhost that no acceptor has seen: curl makes it
    for a loopback server that only ever challenges (and says it in its -v output)."""
    server = HTTPServer(("127.0.0.1", 0), _AlwaysChallenges)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = _curl(["-v", "--negotiate", "-u", ":", f"http://localhost:{server.server_port}/"], tmp_path,
                       realm.ticket_env(), "mint-token")
    finally:
        server.shutdown()
        server.server_close()
    return re.search(r"^> Authorization: (Negotiate \S+)", result.stderr, re.MULTILINE).group(1)


def _assert_who(result, user: str, over: str) -> None:
    assert result.status == 200, f"expected 200, got {result.status}: {result.body[:300]!r} {result.stderr[-300:]}"
    assert result.body.decode() == f"negotiate ok for {user} over {over}\n", result.body[:300]


def _assert_one_handshake_per_connection(peer, mark: int = 0) -> dict:
    """Every upstream connection that was served carried exactly one Negotiate token."""
    settle()
    served = {entry.connection for entry in peer.since(mark) if entry.status == 200}
    tokens = peer.tokens_per_connection(mark)
    assert served, f"nothing was served: {[(e.request_line, e.status) for e in peer.since(mark)]}"
    assert {connection: tokens[connection] for connection in served} == {connection: 1 for connection in served}, \
        f"Negotiate tokens per upstream connection (each one a handshake): {tokens}"
    return tokens


def _assert_no_token_in_output(countersign) -> None:
    """`countersign`: the CountersignProcess."""
    output = countersign.stderr_text()
    stdout = countersign.process.stdout_path
    if stdout.exists():
        output += stdout.read_text(errors="replace")
    leaked = TOKEN_IN_TEXT.findall(output)
    assert not leaked, f"Countersign's output holds a Negotiate token: {leaked[0][:40]}…"


# ------------------------------------------------------------------------- the peers, with curl


def test_curl_proves_apache_negotiate_plain_and_tls(realm, negotiate_apache, auth_pki, tmp_path):
    apache = negotiate_apache(tls=(auth_pki / "leaf-chain.pem", auth_pki / "leaf.key"))
    anonymous = _curl([apache.url()], tmp_path, {}, "anonymous")
    assert anonymous.status == 401 and "Negotiate" in [value.split(" ")[0] for name, value in anonymous.headers
                                                       if name.lower() == "www-authenticate"]
    no_ticket = _curl(["--negotiate", "-u", ":", apache.url()], tmp_path, realm.no_ticket_env(), "no-ticket")
    assert no_ticket.status == 401, "without a ticket curl has nothing to answer with"
    for url, over in ((apache.url(), "http"), (apache.tls_url(), "https")):
        result = _curl(["--negotiate", "-u", ":", "--cacert", str(auth_pki / "root.pem"), url], tmp_path,
                       realm.ticket_env(), f"ticket-{over}")
        _assert_who(result, realm.user(CURL_PRINCIPAL), over)
        assert (result.header("WWW-Authenticate") or "").startswith("Negotiate "), \
            "Apache sends its final token (mutual authentication) with the 200"
    settle()
    assert {entry.user for entry in apache.entries() if entry.status == 200} == {realm.user(CURL_PRINCIPAL)}


def test_curl_proves_apache_refuses_a_replayed_token(realm, negotiate_apache, tmp_path):
    """What an attacker who saw one token would try: sending it again on a new connection.
    Apache's replay cache refuses it, so a proxy must make a fresh token every time."""
    apache = negotiate_apache()
    first = _curl(["-v", "--negotiate", "-u", ":", apache.url()], tmp_path, realm.ticket_env(), "first")
    _assert_who(first, realm.user(CURL_PRINCIPAL), "http")
    token = re.search(r"^> Authorization: (Negotiate \S+)", first.stderr, re.MULTILINE).group(1)
    replayed = _curl(["-H", f"Authorization: {token}", apache.url()], tmp_path, {}, "replayed")
    assert replayed.status == 401, f"a replayed token was accepted: {replayed.body[:200]!r}"


@pytest.mark.parametrize("connection_bound", [True, False])
def test_curl_token_proves_apache_connection_binding_modes(realm, negotiate_apache, tmp_path, connection_bound):
    """Connection-bound, a request without a token on an authenticated connection is served
    (what IIS does for Kerberos); unbound (Apache's default), it is challenged again."""
    apache = negotiate_apache(connection_bound=connection_bound)
    token = _unused_token(realm, tmp_path)
    with RawConnection("127.0.0.1", apache.port) as connection:
        connection.send(f"GET /whoami HTTP/1.1\r\nHost: localhost:{apache.port}\r\nAuthorization: {token}\r\n\r\n"
                        .encode())
        first = connection.read_response()
        connection.send(f"GET /whoami HTTP/1.1\r\nHost: localhost:{apache.port}\r\n\r\n".encode())
        second = connection.read_response()
    assert first.status == 200 and first.body == f"negotiate ok for {realm.user(CURL_PRINCIPAL)} over http\n".encode()
    assert second.status == (200 if connection_bound else 401)


def test_curl_token_proves_squid_keeps_the_connection_authenticated(realm, negotiate_squid, origin, tmp_path):
    """Squid, like for NTLM, serves later requests on a connection that authenticated without
    a new token; a new connection without one gets the 407."""
    squid = negotiate_squid
    request = f"GET {origin.url('/echo')} HTTP/1.1\r\nHost: 127.0.0.1:{origin.port}\r\n"
    token = _unused_token(realm, tmp_path)
    with RawConnection("127.0.0.1", squid.port) as connection:
        connection.send(f"{request}Proxy-Authorization: {token}\r\n\r\n".encode())
        statuses = [connection.read_response().status]
        connection.send(f"{request}\r\n".encode())
        statuses.append(connection.read_response().status)
    with RawConnection("127.0.0.1", squid.port) as connection:
        connection.send(f"{request}\r\n".encode())
        statuses.append(connection.read_response().status)
    assert statuses == [200, 200, 407]
    settle()
    assert squid.tokens_per_connection() and sorted(squid.tokens_per_connection().values()) == [0, 1]


def test_curl_proves_apache_without_the_service_key_refuses(realm, negotiate_apache, impostor_service, tmp_path):
    apache = negotiate_apache(service=impostor_service)
    result = _curl(["--negotiate", "-u", ":", apache.url()], tmp_path, realm.ticket_env(), "impostor")
    assert result.status == 401, f"a server without the key accepted the ticket: {result.body[:200]!r}"


def test_curl_proves_squid_negotiate_parent(realm, negotiate_squid, origin, tmp_path):
    squid = negotiate_squid
    anonymous = _curl(["-x", squid.url(), origin.url("/echo")], tmp_path, {}, "anonymous")
    assert anonymous.status == 407 and (anonymous.header("Proxy-Authenticate") or "").startswith("Negotiate")
    no_ticket = _curl(["--proxy-negotiate", "-U", ":", "-x", squid.url(), origin.url("/echo")], tmp_path,
                      realm.no_ticket_env(), "no-ticket")
    assert no_ticket.status == 407
    proxy_args = ["--proxy-negotiate", "-U", ":", "-x", squid.url()]
    absolute = _curl([*proxy_args, origin.url("/echo")], tmp_path, realm.ticket_env(), "absolute")
    tunnelled = _curl([*proxy_args, "-p", origin.url("/echo")], tmp_path, realm.ticket_env(), "connect")
    assert (absolute.status, tunnelled.status) == (200, 200), (absolute.stderr, tunnelled.stderr, squid.cache_log())
    settle()
    served = {entry.request_line.split(" ")[0]: entry.user for entry in squid.entries() if entry.status == 200}
    assert served == {"GET": realm.user(CURL_PRINCIPAL), "CONNECT": realm.user(CURL_PRINCIPAL)}, squid.entries()
    assert all(request.header("Proxy-Authorization") is None for request in origin.requests)


# ------------------------------------------------------------------------ through Countersign


@pytest.mark.countersign_only
def test_countersign_answers_apache_negotiate_plain(realm, negotiate_apache, auth_proxy):
    apache = negotiate_apache()
    proxy = auth_proxy({f"localhost:{apache.port}": {"intercept": False, "auth": [rule("krb", ["negotiate"])]}},
                       credentials=realm.credentials())
    for request in range(3):
        _assert_who(proxy.fetch(apache.url()), realm.user(PROXY_PRINCIPAL), "http")
    _assert_one_handshake_per_connection(apache)
    assert proxy.auth_outcomes(3)[0] == "negotiate:answered", proxy.auth_outcomes()
    _assert_no_token_in_output(proxy.process)


@pytest.mark.countersign_only
def test_countersign_answers_apache_negotiate_over_intercepted_connect(realm, negotiate_apache, intercept_pki,
                                                                        intercepting_countersign, tmp_path):
    apache = negotiate_apache(tls=(intercept_pki.path("leaf-chain.pem"), intercept_pki.path("leaf.key")))
    proxy = intercepting_countersign({f"localhost:{apache.tls_port}": intercepted_host_entry(
        intercept_pki, auth=[rule("krb", ["negotiate"])])}, credentials=realm.credentials())
    for request in range(2):
        result = curl(["-x", proxy.url, "--cacert", str(proxy.ca_certificate), apache.tls_url()], tmp_path,
                      name=f"intercepted-{request}")
        _assert_who(result, realm.user(PROXY_PRINCIPAL), "https")
    _assert_one_handshake_per_connection(apache)
    _assert_no_token_in_output(proxy.process)


@pytest.mark.countersign_only
def test_countersign_answers_every_request_when_apache_binds_nothing_to_the_connection(realm, negotiate_apache,
                                                                                       auth_proxy):
    """Apache's default (GssapiConnectionBound Off) wants a token on every request, and its
    replay cache refuses one seen before: every request still succeeds, each with a fresh token."""
    apache = negotiate_apache(connection_bound=False)
    proxy = auth_proxy({f"localhost:{apache.port}": {"intercept": False, "auth": [rule("krb", ["negotiate"])]}},
                       credentials=realm.credentials())
    for request in range(3):
        _assert_who(proxy.fetch(apache.url()), realm.user(PROXY_PRINCIPAL), "http")
    settle()
    served = [entry for entry in apache.entries() if entry.status == 200]
    assert len(served) == 3 and all(entry.extra["token"] == "negotiate" for entry in served), \
        [(e.status, e.extra) for e in apache.entries()]


@pytest.mark.countersign_only
def test_countersign_answers_squid_negotiate_for_absolute_form(realm, negotiate_squid, origin, auth_proxy):
    squid = negotiate_squid
    proxy = auth_proxy({}, parent_proxy={"url": squid.url(), "auth": {"credential": "krb", "schemes": ["negotiate"]}},
                       credentials=realm.credentials())
    for request in range(3):
        result = proxy.fetch(origin.url(f"/echo/{request}"))
        assert result.status == 200, f"got {result.status} {result.body[:300]!r}"
    _assert_one_handshake_per_connection(squid)
    assert {entry.user for entry in squid.entries() if entry.status == 200} == {realm.user(PROXY_PRINCIPAL)}
    assert len(origin.requests) == 3
    assert all(request.header("Proxy-Authorization") is None for request in origin.requests)
    _assert_no_token_in_output(proxy.process)


@pytest.mark.countersign_only
def test_countersign_answers_squid_negotiate_for_a_client_tunnel(realm, negotiate_squid, origin, auth_proxy):
    """A client's own CONNECT to a host Countersign only tunnels: the CONNECT to the parent is
    answered with Negotiate, and nothing of it reaches the client or the origin."""
    squid = negotiate_squid
    proxy = auth_proxy({}, parent_proxy={"url": squid.url(), "auth": {"credential": "krb", "schemes": ["negotiate"]}},
                       credentials=realm.credentials())
    result = proxy.fetch(origin.url("/echo"), "-p")
    assert result.status == 200, f"got {result.status} {result.body[:300]!r}"
    _assert_one_handshake_per_connection(squid)
    assert [entry.user for entry in squid.entries() if entry.status == 200] == [realm.user(PROXY_PRINCIPAL)]
    assert [request.header("Proxy-Authorization") for request in origin.requests] == [None]
    _assert_no_token_in_output(proxy.process)


@pytest.mark.countersign_only
def test_countersign_answers_squid_negotiate_for_connect_and_apache_inside(realm, negotiate_squid, negotiate_apache,
                                                                           auth_pki, auth_proxy):
    """Kerberos twice on one path: Negotiate to the parent for the CONNECT, then Negotiate to
    the origin over TLS inside that tunnel."""
    squid = negotiate_squid
    apache = negotiate_apache(tls=(auth_pki / "leaf-chain.pem", auth_pki / "leaf.key"))
    hosts = {f"localhost:{apache.tls_port}": tls_host(auth_pki, [rule("krb", ["negotiate"])])}
    proxy = auth_proxy(hosts, parent_proxy={"url": squid.url(), "auth": {"credential": "krb", "schemes": ["negotiate"]}},
                       credentials=realm.credentials())
    for request in range(2):
        _assert_who(proxy.fetch(apache.tls_url(scheme="http")), realm.user(PROXY_PRINCIPAL), "https")
    _assert_no_token_in_output(proxy.process)
    # Squid logs a CONNECT when its tunnel closes: Countersign keeps it pooled until it stops.
    proxy.process.stop()
    squid.wait_for_entries(2)
    _assert_one_handshake_per_connection(squid)
    _assert_one_handshake_per_connection(apache)
    tunnels = [entry.user for entry in squid.entries()
               if entry.request_line.startswith(f"CONNECT localhost:{apache.tls_port} ") and entry.status == 200]
    assert tunnels == [realm.user(PROXY_PRINCIPAL)], f"one tunnel carried both requests: {squid.entries()}"


@pytest.mark.countersign_only
def test_countersign_gives_the_client_the_401_when_apache_holds_another_key(realm, negotiate_apache, auth_proxy,
                                                                            impostor_service):
    """An origin that claims HTTP/localhost without its key (here: the key of a same-named
    principal in another KDC) cannot read the ticket and never sends a valid final token: the
    client gets Apache's 401 after at most 1 + max_failures tokens, and nothing is served."""
    apache = negotiate_apache(service=impostor_service)
    proxy = auth_proxy({f"localhost:{apache.port}": {"intercept": False, "auth": [rule("krb", ["negotiate"], max_failures=1)]}},
                       credentials=realm.credentials())
    result = proxy.fetch(apache.url())
    assert result.status == 401, f"got {result.status} {result.body[:200]!r}"
    settle()
    tokens = sum(apache.tokens_per_connection().values())
    assert 1 <= tokens <= 2, f"{tokens} Negotiate tokens for one client request (at most 1 + max_failures)"
    assert not [entry for entry in apache.entries() if entry.status == 200]
    _assert_no_token_in_output(proxy.process)


@pytest.mark.countersign_only
def test_countersign_asks_for_the_rule_spn(realm, negotiate_apache, auth_proxy, tmp_path):
    """A server known to Kerberos by another name than the one clients use (a load-balanced
    alias): the rule's `spn` names the ticket's service; Apache holds only that key."""
    realm.kdc.add_principal(ALIAS_SERVICE)
    alias = KerberosService(realm.kdc.krb5_conf, realm.kdc.export_keytab(ALIAS_SERVICE, tmp_path / "alias.keytab"),
                            realm.kdc.principal(ALIAS_SERVICE))
    apache = negotiate_apache(service=alias)
    proxy = auth_proxy({f"localhost:{apache.port}": {"intercept": False, "auth": [
        rule("krb", ["negotiate"], spn=ALIAS_SERVICE.replace("/", "@"))]}}, credentials=realm.credentials())
    _assert_who(proxy.fetch(apache.url()), realm.user(PROXY_PRINCIPAL), "http")


@pytest.mark.countersign_only
@pytest.mark.parametrize("rule_for_host", [False, True], ids=["no-rule", "own-credential-rule"])
def test_a_clients_own_negotiate_connection_is_never_handed_to_another_client(realm, negotiate_apache, auth_proxy,
                                                                                tmp_path, rule_for_host):
    """Apache, connection-bound, serves every later request on an authenticated connection as
    that user without a token. A client that negotiated with its own ticket leaves such a
    connection behind: a second client (no credentials) must never be served on it as the first
    one; it gets the 401, or Countersign's own principal where a rule answers for it."""
    apache = negotiate_apache(connection_bound=True)
    entry = {"intercept": False, "auth": [rule("krb", ["negotiate"])]} if rule_for_host else {"intercept": False}
    proxy = auth_proxy({f"localhost:{apache.port}": entry}, credentials=realm.credentials())
    own = _curl(["-x", proxy.url, "--negotiate", "-u", ":", apache.url()], tmp_path, realm.ticket_env(), "own-ticket")
    _assert_who(own, realm.user(CURL_PRINCIPAL), "http")
    for request in range(2):
        other = proxy.fetch(apache.url())
        if rule_for_host:
            _assert_who(other, realm.user(PROXY_PRINCIPAL), "http")
        else:
            assert other.status == 401, f"another client was served on the first one's connection: {other.body[:200]!r}"
    settle()
    users = [(entry.connection, entry.user) for entry in apache.entries() if entry.status == 200]
    first_connections = {connection for connection, user in users if user == realm.user(CURL_PRINCIPAL)}
    assert all(user != realm.user(CURL_PRINCIPAL) for connection, user in users[1:]), users
    assert not [user for connection, user in users if connection in first_connections
                and user != realm.user(CURL_PRINCIPAL)], users
