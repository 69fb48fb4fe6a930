"""Kerberos comes back within seconds of the KDC answering again (issue 19 item 9). During an
outage the Kerberos library waits out its own timeouts (about a minute per attempt on a KDC
that does not answer) on Countersign's KDC threads; requests that gave up or left meanwhile
must not keep their jobs queued, and a request made once the KDC answers must not wait behind
the threads still stuck in the outage. Through the real binary with one worker, a real acceptor
(harness/negotiate_origin.py) and a gate (harness/kdc_gate.py) in front of the realm's real KDC."""
import os
import socket
import time

import pytest

from harness.kdc_gate import KDCGate
from harness.ports import wait_until
from conftest_auth import CREDENTIALS, rule
from test_auth_negotiate import CLIENT, KRB_PASSWORD, REALM, origins, realm  # noqa: F401 (fixtures)

pytestmark = pytest.mark.countersign_only

# Requests made while the KDC is silent, then abandoned: more than the KDC threads.
ABANDONED = 4
# How soon after the KDC answers again a new request must be answered with Kerberos.
RECOVERY_SECONDS = 5.0
OUTAGE_SECONDS = float(os.environ.get("KDC_OUTAGE_SECONDS", "1.0"))


@pytest.fixture
def gate(realm):
    made = KDCGate(realm.kdc.port)
    yield made
    made.stop()


def _request(proxy, url: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    sock.sendall(f"GET {url} HTTP/1.1\r\nHost: {url.split('/')[2]}\r\n\r\n".encode())
    return sock


@pytest.mark.parametrize("source", ["keytab", "password"])
def test_kerberos_answers_within_seconds_after_an_outage(auth_proxy, realm, gate, origins, tmp_path, source):
    """With a password the initial ticket is asked for while the credential is acquired: a
    thread stuck there must not hold the others behind it either."""
    origin = origins(realm)
    kerberos = {"principal": CLIENT, "krb5_conf": str(gate.krb5_conf(tmp_path / "gated-krb5.conf", REALM)),
                **({"keytab_file": str(realm.client_keytab)} if source == "keytab" else {"password_env": "KRB_PASSWORD"})}
    proxy = auth_proxy({f"localhost:{origin.port}": {"intercept": False, "auth": [rule("krb", ["negotiate"])]}},
                       credentials=dict(CREDENTIALS, krb={"kerberos": kerberos}), env={"KRB_PASSWORD": KRB_PASSWORD})
    clients = [_request(proxy, origin.url(f"/during-outage-{index}")) for index in range(ABANDONED)]
    assert wait_until(lambda: gate.contacts >= 2, 10.0), "the requests during the outage never asked the KDC"
    for client in clients:
        client.close()   # they leave; the KDC threads stay inside the library's waits
    time.sleep(OUTAGE_SECONDS)   # the outage goes on: the library is inside its waits

    gate.open()
    opened = time.monotonic()
    result = proxy.fetch(origin.url("/after-outage"), timeout=120, name="after")
    elapsed = time.monotonic() - opened
    print(f"\nKerberos answered {elapsed:.1f} s after the KDC answered again (status {result.status})")
    assert result.status == 200, f"got {result.status} {elapsed:.1f} s after the KDC came back: {result.body[:200]!r}"
    assert result.body.decode().startswith("negotiate ok"), result.body[:200]
    assert elapsed < RECOVERY_SECONDS, f"Kerberos came back {elapsed:.1f} s after the KDC did"
    proxy.assert_no_secrets_in_output()
