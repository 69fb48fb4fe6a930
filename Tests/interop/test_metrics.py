"""/metrics as an operator reads it: every metric the binary exposes is documented in
docs/operations.md with exactly the labels it carries (and nothing documented is missing from
the output); the client byte counters count forwarded and intercepted exchanges, not only
blind tunnels."""
import json
import re
from pathlib import Path

import pytest

from conftest_intercept import intercepted_host_entry
from harness.curl import curl
from harness.rawclient import exchange, forward_request
from test_status_page import populated  # noqa: F401  (the fixture: hosts, identities, CA, traffic)

pytestmark = pytest.mark.countersign_only

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
RECEIVED, SENT = "countersign_client_bytes_received_total", "countersign_client_bytes_sent_total"


def _families(text: str) -> dict:
    """{metric name: set of label names seen on its samples} from the Prometheus text."""
    families = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            families.setdefault(line.split()[2], set())
        elif line and not line.startswith("#"):
            match = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ', line)
            assert match, f"not a sample line: {line!r}"
            labels = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', match.group(2) or ""))
            families.setdefault(match.group(1), set()).update(labels)
    return families


def _documented() -> dict:
    """{metric name: set of label names} from the Metrics table of docs/operations.md."""
    section = OPERATIONS.read_text().split("## Metrics", 1)[1].split("\n## ", 1)[0]
    documented = {}
    for row in section.splitlines():
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`countersign_"):
            continue
        labels = set(re.findall(r"`([a-z_]+)`", cells[1]))
        for name in re.findall(r"`(countersign_[a-z0-9_]+)`", cells[0]):
            assert name not in documented, f"{name} is documented twice"
            documented[name] = labels
    return documented


def _metric(proxy, name: str) -> float:
    status, body = proxy.admin_get("/metrics")
    assert status == 200
    for line in body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


def test_every_metric_in_the_output_is_documented_with_its_labels_and_back(populated):  # noqa: F811
    proxy, _ = populated
    status, body = proxy.admin_get("/metrics")
    assert status == 200
    exposed, documented = _families(body.decode()), _documented()
    assert documented, "no metrics table found in docs/operations.md"
    undocumented = sorted(set(exposed) - set(documented))
    assert not undocumented, f"in /metrics but not in docs/operations.md: {undocumented}"
    missing = sorted(set(documented) - set(exposed))
    assert not missing, f"documented but never in /metrics (even with hosts, identities, a CA and traffic): {missing}"
    wrong = {name: (sorted(exposed[name]), sorted(labels)) for name, labels in documented.items() if exposed[name] != labels}
    assert not wrong, f"labels (output, docs) differ: {wrong}"


def test_client_byte_counters_count_forwarded_exchanges(countersign, origin):
    proxy = countersign()
    received, sent = _metric(proxy, RECEIVED), _metric(proxy, SENT)
    body = b"r" * 10_000
    reply = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/upload"), method="POST", body=body,
                                                               headers=[("Content-Type", "application/octet-stream")]))
    assert reply.status == 200 and json.loads(reply.body)["body_length"] == len(body)
    assert _metric(proxy, RECEIVED) - received == len(body), "a forwarded request body was not counted"
    assert _metric(proxy, SENT) - sent == len(reply.body), "a forwarded response body was not counted"


def test_client_byte_counters_count_intercepted_exchanges(countersign, intercept_pki, intercept_tls_origin, workdir):
    proxy = countersign({"interception": {"ca_certificate": "ca/ca.pem", "ca_key": "ca/ca.key"},
                         "hosts": {f"localhost:{intercept_tls_origin.port}": intercepted_host_entry(intercept_pki)}})
    received, sent = _metric(proxy, RECEIVED), _metric(proxy, SENT)
    body = b"i" * 7_000
    result = curl(["--cacert", str(proxy.workdir / "ca" / "ca.pem"), "--data-binary", body.decode(),
                   "-H", "Content-Type: application/octet-stream", intercept_tls_origin.https_url("/upload")],
                  workdir, env_proxy={"HTTPS_PROXY": proxy.url})
    assert result.returncode == 0 and result.status == 200, result.stderr
    assert json.loads(result.body)["body_length"] == len(body)
    assert _metric(proxy, RECEIVED) - received == len(body), "an intercepted request body was not counted"
    assert _metric(proxy, SENT) - sent == len(result.body), "an intercepted response body was not counted"
