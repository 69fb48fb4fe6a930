"""A KDC that never answers must not stall the proxy: the first Kerberos token of an exchange
(credential acquisition, then the service ticket) is made on Countersign's KDC threads, so the
worker that answers keeps serving everyone else while the Kerberos library waits out its own
timeouts. Through the real binary with one worker, a real acceptor (harness/negotiate_origin.py)
and a "KDC" bound by the test on loopback that reads UDP and accepts TCP and never replies."""
import os
import select
import socket
import threading
import time
from pathlib import Path

import pytest

from harness.ports import wait_until
from conftest_auth import CREDENTIALS, NTLM_DOMAIN, NTLM_PASSWORD, NTLM_USER, NTLM_WORKSTATION, rule
from test_auth_negotiate import CLIENT, REALM, origins, realm  # noqa: F401 (fixtures)

pytestmark = pytest.mark.countersign_only


class SilentKDC:
    """One loopback port, UDP and TCP: datagrams are read and dropped, connections accepted and
    held open without a byte in reply. Counts what the Kerberos library sent."""

    def __init__(self):
        for _ in range(20):
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            udp.bind(("127.0.0.1", 0))
            port = udp.getsockname()[1]
            tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                tcp.bind(("127.0.0.1", port))
            except OSError:
                udp.close()
                tcp.close()
                continue
            tcp.listen(128)
            self.udp, self.tcp, self.port = udp, tcp, port
            break
        else:
            raise RuntimeError("no loopback port free on both UDP and TCP")
        self.datagrams = 0
        self.connections = []
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def contacts(self) -> int:
        return self.datagrams + len(self.connections)

    def _serve(self):
        while not self._stop:
            ready, _, _ = select.select([self.udp, self.tcp], [], [], 0.1)
            for sock in ready:
                if sock is self.udp:
                    self.udp.recvfrom(65536)
                    self.datagrams += 1
                else:
                    connection, _ = self.tcp.accept()
                    self.connections.append(connection)

    def krb5_conf(self, path: Path) -> Path:
        # The library's own timeouts (no udp_preference_limit, no kdc_timeout): UDP, then TCP.
        path.write_text(f"""[libdefaults]
 default_realm = {REALM}
 dns_lookup_kdc = false
 dns_lookup_realm = false
 rdns = false
 dns_canonicalize_hostname = false
[realms]
 {REALM} = {{
  kdc = 127.0.0.1:{self.port}
 }}
[domain_realm]
 localhost = {REALM}
""")
        return path

    def stop(self):
        self._stop = True
        self._thread.join(timeout=2)
        for sock in [self.udp, self.tcp, *self.connections]:
            sock.close()


@pytest.fixture
def silent_kdc():
    kdc = SilentKDC()
    yield kdc
    kdc.stop()


def _proxy(auth_proxy, realm, silent_kdc, tmp_path, negotiate_origin, plain_origin, schemes):
    kerberos = {"principal": CLIENT, "keytab_file": str(realm.client_keytab),
                "krb5_conf": str(silent_kdc.krb5_conf(tmp_path / "silent-krb5.conf"))}
    credentials = dict(CREDENTIALS, both={"user": f"{NTLM_DOMAIN}\\{NTLM_USER}", "password_env": "NTLM_PASSWORD",
                                          "workstation": NTLM_WORKSTATION, "kerberos": kerberos})
    hosts = {f"localhost:{negotiate_origin.port}": {"intercept": False, "auth": [rule("both", schemes)]},
             f"localhost:{plain_origin.port}": {"intercept": False}}
    proxy = auth_proxy(hosts, credentials=credentials)
    assert proxy.process.config["workers"] == 1, "the test is about one worker serving both clients"
    return proxy


def _raw_request(proxy, url: str) -> socket.socket:
    """A client that sends its request and then waits (or leaves, when the test closes it)."""
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    host = url.split("/")[2]
    sock.sendall(f"GET {url} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    return sock


def _timed_fetch(proxy, url: str, name: str):
    started = time.monotonic()
    result = proxy.fetch(url, timeout=10, name=name)
    return result, time.monotonic() - started


def test_a_silent_kdc_stalls_no_other_client_of_the_worker_and_ntlm_answers(auth_proxy, realm, silent_kdc, origins, tmp_path):
    negotiate_origin = origins(realm, ntlm_users=[(NTLM_DOMAIN, NTLM_USER, NTLM_PASSWORD)])
    plain_origin = origins(realm, open_access=True)
    proxy = _proxy(auth_proxy, realm, silent_kdc, tmp_path, negotiate_origin, plain_origin, ["negotiate", "ntlm"])
    outcome = {}

    def client_a():
        outcome["a"] = proxy.fetch(negotiate_origin.url(), timeout=120, name="client-a")

    waiting = threading.Thread(target=client_a)
    waiting.start()
    assert wait_until(lambda: silent_kdc.contacts > 0, 10.0), "client A's request never asked the KDC"
    time.sleep(0.3)   # the library is inside its wait now
    for attempt in range(3):
        result, elapsed = _timed_fetch(proxy, plain_origin.url("/plain"), f"client-b-{attempt}")
        assert result.status == 200, f"client B got {result.status} {result.body[:200]!r}"
        assert elapsed < 1.0, f"client B waited {elapsed:.2f}s behind client A's KDC wait on the same worker"
        assert "a" not in outcome, "client A was answered before the KDC wait could overlap client B"
    waiting.join(timeout=120)
    a = outcome["a"]
    assert a.status == 200, f"{a.status} {a.body[:200]!r}"
    assert a.body.decode().startswith("negotiate ok for ntlm:"), a.body[:200]
    line = next(entry for entry in proxy.access_logs() if str(entry.get("target", entry.get("url", ""))).endswith("/secret.txt")
                or entry.get("auth", "").startswith("ntlm"))
    assert line.get("auth") == "ntlm:answered", line
    assert "negotiate" in line.get("auth_fallback", "") and "KDC" in line["auth_fallback"], line
    proxy.assert_no_secrets_in_output()


def test_with_negotiate_alone_the_origins_401_goes_to_the_client_after_the_kdc_wait(auth_proxy, realm, silent_kdc, origins, tmp_path):
    negotiate_origin = origins(realm)
    plain_origin = origins(realm, open_access=True)
    proxy = _proxy(auth_proxy, realm, silent_kdc, tmp_path, negotiate_origin, plain_origin, ["negotiate"])
    outcome = {}
    waiting = threading.Thread(target=lambda: outcome.update(a=proxy.fetch(negotiate_origin.url(), timeout=120, name="client-a")))
    waiting.start()
    assert wait_until(lambda: silent_kdc.contacts > 0, 10.0)
    result, elapsed = _timed_fetch(proxy, plain_origin.url("/plain"), "client-b")
    assert result.status == 200 and elapsed < 1.0, f"client B: {result.status} after {elapsed:.2f}s"
    waiting.join(timeout=120)
    assert outcome["a"].status == 401, "no ticket: the origin's challenge goes to the client, body and all"
    assert negotiate_origin.legs("negotiate") == [], "no token was sent"


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def test_clients_leaving_while_the_kdc_is_silent_leave_the_proxy_healthy(auth_proxy, realm, silent_kdc, origins, tmp_path):
    negotiate_origin = origins(realm, ntlm_users=[(NTLM_DOMAIN, NTLM_USER, NTLM_PASSWORD)])
    plain_origin = origins(realm, open_access=True)
    proxy = _proxy(auth_proxy, realm, silent_kdc, tmp_path, negotiate_origin, plain_origin, ["negotiate", "ntlm"])
    # One abandoned request first, so the KDC threads exist before the baseline is taken.
    first = _raw_request(proxy, negotiate_origin.url())
    abandoned_at = time.monotonic()
    assert wait_until(lambda: silent_kdc.contacts > 0, 10.0)
    first.close()
    assert proxy.fetch(plain_origin.url("/warm")).status == 200
    time.sleep(0.3)
    fds, threads = proxy.fd_count(), _threads(proxy.pid)
    for index in range(20):
        sock = _raw_request(proxy, negotiate_origin.url(f"/abandoned-{index}"))
        time.sleep(0.05)   # the proxy read it and asked for the token
        sock.close()
    # The proxy stays responsive and does not grow while the KDC threads are still waiting.
    result, elapsed = _timed_fetch(proxy, plain_origin.url("/after"), "after")
    assert result.status == 200 and elapsed < 1.0, f"{result.status} after {elapsed:.2f}s"
    time.sleep(0.5)
    print(f"\nafter 20 abandoned requests: threads {threads} -> {_threads(proxy.pid)}, descriptors {fds} -> {proxy.fd_count()}, "
          f"a plain request {elapsed * 1000:.0f} ms")
    assert _threads(proxy.pid) == threads, f"threads went from {threads} to {_threads(proxy.pid)}"
    # The KDC threads hold their own sockets to the silent KDC while they wait: a few, not 20.
    assert proxy.fd_count() <= fds + 6, f"descriptors went from {fds} to {proxy.fd_count()}"
    # The first abandoned request's result comes back to an exchange that is gone once the
    # library gives up (about 54 s with this krb5.conf: two rounds of UDP retries then TCP).
    while time.monotonic() - abandoned_at < 58:
        assert proxy.alive(), "the proxy died when a result came back for a client that left"
        time.sleep(0.5)
    assert proxy.alive(), "the proxy died when a result came back for a client that left"
    assert proxy.fetch(plain_origin.url("/later")).status == 200
    assert _threads(proxy.pid) == threads
