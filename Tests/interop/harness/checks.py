"""Assertions shared by the test files, phrased as what a client of the proxy sees."""
import hashlib
import re

from .ports import wait_until
from .rawclient import Response

# The error types registered by RFC 9209 section 2.3.
RFC9209_ERROR_TYPES = {
    "dns_timeout", "dns_error", "destination_not_found", "destination_unavailable",
    "destination_ip_prohibited", "destination_ip_unroutable", "connection_refused",
    "connection_terminated", "connection_timeout", "connection_read_timeout",
    "connection_write_timeout", "connection_limit_reached", "tls_protocol_error",
    "tls_certificate_error", "tls_alert_received", "http_request_error", "http_request_denied",
    "http_response_incomplete", "http_response_header_section_size", "http_response_header_size",
    "http_response_body_size", "http_response_trailer_section_size", "http_response_trailer_size",
    "http_response_transfer_coding", "http_response_content_coding", "http_response_timeout",
    "http_upgrade_failed", "http_protocol_error", "proxy_internal_response", "proxy_internal_error",
    "proxy_configuration_error", "proxy_loop_detected",
}

_PARAMETER = re.compile(r';\s*([a-z][a-z0-9_.*-]*)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)')


def parse_proxy_status(value: str):
    """The first member of a Proxy-Status field: (proxy name, {parameter: value})."""
    name, _, rest = value.partition(";")
    parameters = {key: raw.strip().strip('"') for key, raw in _PARAMETER.findall(";" + rest)}
    return name.strip(), parameters


def assert_proxy_error(response: Response, status: int, proxy, *error_types) -> None:
    """The proxy itself refused: the status, an RFC 9209 Proxy-Status field whose `error` is a
    registered type (one of `error_types` when given), and a one-line plain-text body."""
    assert response.status == status, \
        f"expected {status}, got {response.status} {response.reason}: {response.body[:200]!r}"
    if not proxy.emits_proxy_status:
        return
    proxy_status = response.header("Proxy-Status")
    assert proxy_status, f"the {status} carries no Proxy-Status field: {response.headers}"
    _, parameters = parse_proxy_status(proxy_status)
    error = parameters.get("error")
    assert error in RFC9209_ERROR_TYPES, f"Proxy-Status {proxy_status!r} has no RFC 9209 error type"
    if error_types:
        assert error in error_types, f"Proxy-Status error is {error!r}, expected one of {error_types}"
    content_type = response.header("Content-Type") or ""
    assert content_type.startswith("text/plain"), f"error body is {content_type!r}, not text/plain"
    assert response.body.strip() and b"\n" not in response.body.strip(), \
        f"error body is not one line: {response.body!r}"


def assert_nothing_reached(origin, before) -> None:
    """Not one byte reached the origin since `before` (an origin.snapshot())."""
    _, requests_before, bytes_before = before
    _, requests_now, bytes_now = origin.snapshot()
    assert requests_now == requests_before, \
        f"{requests_now - requests_before} request(s) reached the origin: {origin.requests[requests_before:]}"
    assert bytes_now == bytes_before, f"{bytes_now - bytes_before} bytes reached the origin"


def sha256_of_file(path) -> str:
    """Hex SHA-256 of a file read in 1 MiB blocks (bodies of 100 MB are compared this way)."""
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def assert_vanishing_frees_descriptors(proxy, baseline: int, connection) -> None:
    """The client of an open transfer resets its connection; within 10 s the proxy's open
    descriptors are back to `baseline` (sockets, and pipes of a spliced tunnel, all closed)."""
    assert proxy.fd_count() > baseline, "the descriptor count does not see the open transfer; the check would prove nothing"
    connection.abort()
    settled = wait_until(lambda: proxy.fd_count() <= baseline, timeout=10)
    assert settled, f"{proxy.fd_count()} descriptors open 10s after the client vanished; baseline {baseline}"
