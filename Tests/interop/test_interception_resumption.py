"""Session resumption on the client leg of an intercepted CONNECT: a client that comes back with
the session it was given skips the full handshake (TLS 1.3 tickets, TLS 1.2 too), and a TLS 1.3
client is given exactly one ticket per connection (each ticket costs the proxy a session
encoding, its encryption and a write; one is what a returning client uses)."""
import subprocess

import pytest

from conftest_intercept import intercepted_host_entry
from harness.rawclient import request_bytes

pytestmark = pytest.mark.countersign_only


def listed(pki, origin) -> dict:
    return {f"localhost:{origin.port}": intercepted_host_entry(pki)}


def s_client_get(proxy, authority: str, *options) -> str:
    """`openssl s_client -proxy` to `authority` sending one GET that asks to close, reading until
    the proxy closes; its stdout and stderr together."""
    command = ["openssl", "s_client", "-proxy", f"127.0.0.1:{proxy.port}", "-connect", authority,
               "-servername", "localhost", "-CAfile", str(proxy.ca_certificate), "-ign_eof", *options]
    request = request_bytes("GET", "/echo", [("Host", authority), ("Connection", "close")])
    completed = subprocess.run(command, input=request, capture_output=True, timeout=20)
    return completed.stdout.decode(errors="replace") + completed.stderr.decode(errors="replace")


def test_tls13_client_gets_one_ticket_and_resumes_with_it(intercepting_countersign, intercept_tls_origin,
                                                         intercept_pki, tmp_path):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    session = tmp_path / "session.pem"
    first = s_client_get(proxy, authority, "-tls1_3", "-msg", "-sess_out", str(session))
    assert "Verify return code: 0 (ok)" in first and "HTTP/1.1 200" in first, first[-3000:]
    assert first.count("NewSessionTicket") == 1, \
        f"expected one session ticket, got {first.count('NewSessionTicket')}:\n{first[-3000:]}"
    again = s_client_get(proxy, authority, "-tls1_3", "-sess_in", str(session))
    assert "Reused, TLSv1.3" in again and "HTTP/1.1 200" in again, \
        f"the returning client did not resume its session:\n{again[-3000:]}"


def test_tls12_client_resumes_its_session(intercepting_countersign, intercept_tls_origin, intercept_pki, tmp_path):
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    session = tmp_path / "session.pem"
    first = s_client_get(proxy, authority, "-tls1_2", "-sess_out", str(session))
    assert "Verify return code: 0 (ok)" in first and "HTTP/1.1 200" in first, first[-3000:]
    again = s_client_get(proxy, authority, "-tls1_2", "-sess_in", str(session))
    assert "Reused, TLSv1.2" in again and "HTTP/1.1 200" in again, \
        f"the returning client did not resume its session:\n{again[-3000:]}"
