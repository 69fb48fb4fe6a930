"""Session resumption on the client leg of an intercepted CONNECT: a client that comes back with
the session it was given skips the full handshake (TLS 1.3 tickets, TLS 1.2 too), and a TLS 1.3
client whose PSK modes allow resuming is given exactly one ticket per connection (each ticket
costs the proxy a write; one is what a returning client uses), naming a session the proxy keeps;
other clients are given none."""
import re
import ssl
import subprocess
import time

import pytest
import tlslite.tlsconnection
from tlslite.api import HandshakeSettings, TLSConnection
from tlslite.extensions import PskKeyExchangeModesExtension
from tlslite.errors import TLSAbruptCloseError

from conftest_intercept import intercepted_host_entry
from harness.ports import wait_until
from harness.rawclient import RawConnection, request_bytes

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


def test_tls13_ticket_names_a_session_kept_by_the_proxy_and_serves_a_second_resumption(
        intercepting_countersign, intercept_tls_origin, intercept_pki, tmp_path):
    """The proxy keeps TLS 1.3 sessions itself (stateful tickets: no session encoded and encrypted
    per connection), so its ticket is the 32-octet name of a kept session, not a sealed session.
    A client that offers the same ticket on two connections (parallel connections sharing one
    cached session) resumes on both."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    session = tmp_path / "session.pem"
    first = s_client_get(proxy, authority, "-tls1_3", "-sess_out", str(session))
    assert "HTTP/1.1 200" in first, first[-3000:]
    described = subprocess.run(["openssl", "sess_id", "-in", str(session), "-noout", "-text"],
                               capture_output=True, timeout=10).stdout.decode(errors="replace")
    assert "TLS session ticket:" in described, described
    dump = described.split("TLS session ticket:", 1)[1].split("Start Time", 1)[0]
    # Lines of "0000 - 1d 52 67 1a b3 49 a5 74-89 e1 ...   ascii": up to 16 octets each.
    octets = [octet for row in re.findall(r"^\s*[0-9a-f]{4} - ((?:[0-9a-f]{2}[ -]){0,15}[0-9a-f]{2})", dump, re.M)
              for octet in re.split(r"[ -]", row)]
    assert len(octets) == 32, f"expected a 32-octet session name, got {len(octets)} octets:\n{described}"
    for attempt in ("second", "third"):
        again = s_client_get(proxy, authority, "-tls1_3", "-sess_in", str(session))
        assert "Reused, TLSv1.3" in again and "HTTP/1.1 200" in again, \
            f"the {attempt} connection offering the same ticket did not resume:\n{again[-3000:]}"


def tls13_tickets_given(proxy, authority: str, psk_modes: list) -> int:
    """One GET inside a CONNECT to `authority`, over TLS 1.3 from tlslite-ng offering `psk_modes`
    (psk_key_exchange_modes) and read to the end: how many tickets the proxy gave."""
    raw = RawConnection("127.0.0.1", proxy.port)
    raw.send(request_bytes("CONNECT", authority, [("Host", authority)]))
    assert raw.read_response("CONNECT").status == 200
    tunnel = raw.sock
    settings = HandshakeSettings()
    settings.minVersion = settings.maxVersion = (3, 4)
    settings.psk_modes = psk_modes
    connection = TLSConnection(tunnel)
    try:
        connection.handshakeClientCert(settings=settings, serverName="localhost")
        connection.write(request_bytes("GET", "/echo", [("Host", authority), ("Connection", "close")]))
        response = b""
        try:
            while chunk := connection.read():
                response += chunk
        except TLSAbruptCloseError:
            pass  # the proxy ends a Connection: close exchange without close_notify
        assert response.startswith(b"HTTP/1.1 200"), response[:200]
        return len(connection.tickets)
    finally:
        tunnel.close()


class PskModesNotSent(PskKeyExchangeModesExtension):
    """tlslite-ng always sends psk_key_exchange_modes; Go's TLS without a session cache does not."""

    def write(self):
        return bytearray()


def test_tls13_client_that_cannot_resume_with_dhe_gets_no_ticket(intercepting_countersign, intercept_tls_origin,
                                                                 intercept_pki, monkeypatch):
    """A ticket is sent only to a client whose PSK modes allow resuming with (EC)DHE, the one mode
    the proxy accepts (RFC 8446 4.2.9): Go's TLS without a session cache lists none, and its
    ticket would be a session kept for nothing and a write of its own."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    assert tls13_tickets_given(proxy, authority, ["psk_dhe_ke", "psk_ke"]) == 1
    assert tls13_tickets_given(proxy, authority, ["psk_ke"]) == 0
    monkeypatch.setattr(tlslite.tlsconnection, "PskKeyExchangeModesExtension", PskModesNotSent)
    assert tls13_tickets_given(proxy, authority, ["psk_dhe_ke"]) == 0


def open_client_connections(proxy) -> int:
    status, body = proxy.process.admin_get("/metrics")
    assert status == 200
    return int(re.search(rb"^countersign_client_connections (\d+)", body, re.M).group(1))


def get_over_kept_tls(proxy, authority: str, context: ssl.SSLContext, session=None, path: str = "/echo") -> ssl.SSLSocket:
    """One GET of `path` inside a CONNECT to `authority` over TLS offering `session`, the
    connection kept open after the response; the TLS socket, its response read whole."""
    raw = RawConnection("127.0.0.1", proxy.port)
    raw.send(request_bytes("CONNECT", authority, [("Host", authority)]))
    assert raw.read_response("CONNECT").status == 200
    tls = context.wrap_socket(raw.sock, server_hostname="localhost", session=session)
    tls.sendall(request_bytes("GET", path, [("Host", authority)]))
    response = b""
    while b"\r\n\r\n" not in response or len(response) < response.index(b"\r\n\r\n") + 4 + int(
            re.search(rb"(?im)^content-length:\s*(\d+)", response).group(1)):
        chunk = tls.recv(65536)
        assert chunk, f"the proxy closed before the response was whole: {response[:300]!r}"
        response += chunk
    assert response.startswith(b"HTTP/1.1 200"), response[:300]
    return tls


def test_client_that_leaves_without_close_notify_keeps_its_session(intercepting_countersign, intercept_tls_origin,
                                                                   intercept_pki):
    """Most HTTP clients (Python's, Go's, many pools) close an idle TLS connection with no
    close_notify. That is the client leaving, not an attack on a close-delimited message (a
    request never is one), so its session stays resumable: OpenSSL 3 would otherwise treat the
    bare end of the socket as a fatal error and drop the session from the cache, and every such
    client's next connection would pay a full handshake."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    context = ssl.create_default_context(cafile=str(proxy.ca_certificate))
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    session = None
    for attempt in range(3):
        tls = get_over_kept_tls(proxy, authority, context, session)
        assert tls.session_reused == (attempt > 0), \
            f"connection {attempt + 1} {'did not resume' if attempt else 'resumed'} (session given back after a close without close_notify)"
        session = tls.session
        tls.close()   # the socket's end, no close_notify
        deadline = time.monotonic() + 5
        while open_client_connections(proxy) and time.monotonic() < deadline:
            time.sleep(0.02)   # until the proxy has read that end
        assert open_client_connections(proxy) == 0


def test_upstream_session_outlives_an_origin_dropping_an_idle_connection(intercepting_countersign,
                                                                         intercept_tls_origin, intercept_pki):
    """Servers often end an idle kept connection with no close_notify (nginx at its keepalive
    timeout). Reading that end fails the connection, and OpenSSL 3 then marks the connection's
    session as not resumable; when it is also the session the proxy keeps for the host, every new
    upstream connection after it would pay a full handshake (RFC 5246 7.2.1: a connection not
    properly closed does not forbid resuming its session)."""
    proxy = intercepting_countersign(listed(intercept_pki, intercept_tls_origin))
    authority = f"localhost:{intercept_tls_origin.port}"
    context = ssl.create_default_context(cafile=str(proxy.ca_certificate))
    descriptors = proxy.process.settled_fd_count()
    tls = get_over_kept_tls(proxy, authority, context, path="/then-drop")
    tls.close()
    # Until the proxy has read the origin's end and closed that connection (and the client's).
    assert wait_until(lambda: proxy.process.fd_count() <= descriptors, timeout=5), \
        f"{proxy.process.fd_count()} descriptors open, {descriptors} before"
    get_over_kept_tls(proxy, authority, context).close()
    assert intercept_tls_origin.sessions_reused == [False, True], \
        f"upstream connections resumed: {intercept_tls_origin.sessions_reused}"
