"""`/status` for a person and `/status.json` for tools, with the same facts: per configured host
the requests, proxy errors by RFC 9209 type and auth outcomes; every certificate (served,
identity, interception CA) with days left, amber under 30 and red under 7; intercepted hosts
outside the CA's name constraints with the command that fixes it; the last refusals. The page
is rendered by headless Chromium (DOM dump and a screenshot); the per-host table stays bounded
however many hosts clients reach."""
import json
import re
import selectors
import socket
import ssl
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.revocation_pki import CertificateAuthority

from conftest_auth import SECRET_ENV, SVC_PASSWORD, SVC_USER, rule, settle, tls_host
from harness import browser
from harness.certs import make_self_signed
from harness.ports import free_port, wait_until
from harness.rawclient import RawConnection, exchange, forward_request

pytestmark = pytest.mark.countersign_only

OTHER = "(other)"


def _status_json(proxy) -> dict:
    status, body = proxy.admin_get("/status.json")
    assert status == 200
    return json.loads(body)


def _client_identity(directory: Path, name: str, days: int) -> dict:
    """A self-signed client certificate valid for `days` days, as a PEM identity credential."""
    directory.mkdir(parents=True, exist_ok=True)
    certificate, key = directory / f"{name}.pem", directory / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-days", str(days), "-subj", f"/CN={name}", "-keyout", str(key), "-out", str(certificate)],
                   check=True, capture_output=True)
    return {"certificate": str(certificate), "private_key": str(key)}


@pytest.fixture
def populated(countersign, countersign_executable, basic_nginx, origin, auth_pki, tmp_path):
    """A Countersign with several hosts, identities 5 and 20 days from expiry, an interception
    CA constrained to one intercepted host while two are intercepted, and traffic that made
    answered challenges, a trust refusal and a denied request."""
    workdir = tmp_path / "populated"
    workdir.mkdir()
    ca_dir = workdir / "ca"
    # The CA is made for a.intercepted.test alone; b.intercepted.test is added afterwards.
    first = workdir / "first.json5"
    first.write_text(json.dumps({"listen": [{"address": "127.0.0.1:1"}], "interception": {
        "ca_certificate": str(ca_dir / "ca.pem"), "ca_key": str(ca_dir / "ca.key")},
        "hosts": {"a.intercepted.test": {}}}))
    made = subprocess.run([str(countersign_executable), "ca", "init", "-c", str(first)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    crl_ca = CertificateAuthority(workdir / "crl-ca", "Populated CRL CA")
    crl = crl_ca.crl(workdir / "populated.crl")
    credentials = {
        "svc": {"user": SVC_USER, "password_env": "SVC_PASSWORD"},
        "soon": _client_identity(workdir / "ids", "soon-client", 5),
        "later": _client_identity(workdir / "ids", "later-client", 20),
    }
    hosts = {
        f"127.0.0.1:{basic_nginx.port}": {"intercept": False, "auth": [rule("svc", ["basic"], allow_plaintext=True)]},
        f"localhost:{basic_nginx.tls_port}": tls_host(auth_pki, []),
        f"127.0.0.1:{origin.port}": {"intercept": False},
        "expiring.test": {"intercept": False, "upstream_tls": True, "identity": "soon"},
        "amber.test": {"intercept": False, "upstream_tls": True, "identity": "later"},
        "a.intercepted.test": {},
        "b.intercepted.test": {},
        # A host whose policy names a CRL, so the CRL's nextUpdate is on /status and /metrics too.
        "revoking.test": {"intercept": False, "upstream_tls": True,
                          "trust": {"anchors": [str(crl_ca.certificate)], "revocation": {"crl_files": [str(crl)]}}},
    }
    proxy = countersign({"credentials": credentials, "hosts": hosts, "unlisted_hosts": "deny",
                         "interception": {"ca_certificate": str(ca_dir / "ca.pem"), "ca_key": str(ca_dir / "ca.key")}},
                        env=SECRET_ENV)

    def get(url):
        return exchange("127.0.0.1", proxy.port, forward_request(url))
    for _ in range(3):
        assert get(basic_nginx.url()).status == 200
    assert get(origin.url("/echo")).status == 200
    # The TLS nginx is trusted through the test root: its certificate becomes a "served" row.
    assert get(basic_nginx.tls_url("/secret.txt", scheme="http")).status == 401
    denied = get("http://not-listed.test/?token=hunter2")
    assert denied.status == 403
    settle()
    return proxy, {"nginx": f"127.0.0.1:{basic_nginx.port}", "tls": f"localhost:{basic_nginx.tls_port}",
                   "origin": f"127.0.0.1:{origin.port}"}


def test_status_json_counts_per_host_certificates_constraints_and_refusals(populated, countersign_executable):
    proxy, names = populated
    report = _status_json(proxy)
    hosts = {host["pattern"]: host for host in report["hosts"]}
    assert hosts[names["nginx"]]["requests"] == 3
    assert hosts[names["nginx"]]["auth_outcomes"] == {"basic:answered": 1, "basic:preemptive": 2}
    assert hosts[names["origin"]]["requests"] == 1 and hosts[names["origin"]]["errors"] == {}
    assert hosts[OTHER]["errors"] == {"http_request_denied": 1}, "the denied unlisted host counts in the aggregate row"
    assert hosts[OTHER]["mode"].startswith("deny"), f"(other) says {hosts[OTHER]['mode']!r} while unlisted_hosts is deny"
    assert hosts[names["origin"]]["mode"] == "tunnel" and hosts["a.intercepted.test"]["mode"] == "intercept"

    certificates = {(c["kind"], c["name"]): c for c in report["certificates"]}
    soon, later = certificates[("identity", "soon")], certificates[("identity", "later")]
    assert (soon["level"], soon["days_left"]) == ("red", 4), soon
    assert (later["level"], later["days_left"]) == ("amber", 19), later
    assert soon["subject"] == "CN=soon-client"
    served = [c for c in report["certificates"] if c["kind"] == "served"]
    assert [c["name"] for c in served] == [names["tls"]]
    assert any(c["kind"] == "interception-ca" for c in report["certificates"])

    assert [p["host"] for p in report["constraint_problems"]] == ["b.intercepted.test"]
    assert "countersign ca init --force" in report["constraint_problems"][0]["fix"]
    assert hosts["b.intercepted.test"]["outside_ca_constraints"] and not hosts["a.intercepted.test"]["outside_ca_constraints"]

    # The command shown fixes it: the CA is re-created for both hosts and reloaded by the watch.
    fixed = subprocess.run(report["constraint_problems"][0]["fix"].replace("countersign", str(countersign_executable), 1).split(),
                           capture_output=True, text=True)
    assert fixed.returncode == 0, fixed.stderr
    assert wait_until(lambda: not _status_json(proxy)["constraint_problems"], timeout=5), \
        "after the shown command the host is still outside the CA's constraints"

    refusal = report["refusals"][0]
    assert (refusal["host"], refusal["status"], refusal["error_type"]) == ("not-listed.test:80", 403, "http_request_denied")
    text = json.dumps(report)
    assert SVC_PASSWORD not in text and "hunter2" not in text, "a secret or a query string reached /status.json"


@pytest.mark.skipif(browser.chromium_binary() is None, reason="chromium is missing: run scripts/install-test-deps.sh")
def test_status_page_rendered_by_chromium_shows_the_same_facts(populated, tmp_path):
    proxy, names = populated
    url = f"http://127.0.0.1:{proxy.admin_port}/status?refresh=5"
    dom = browser.parse(browser.dump_dom(url, tmp_path / "profile"))
    report = _status_json(proxy)

    refresh = dom.find("meta", http_equiv="refresh")
    assert refresh is not None and refresh.attributes["content"] == "5"
    assert dom.find(id="state").text() == report["state"] == "serving"

    for host in report["hosts"]:
        row = dom.find("tr", cls="host", data_host=host["pattern"])
        assert row is not None, f"no row for {host['pattern']}"
        assert int(row.find("td", cls="requests").text()) == host["requests"]
        for cell, facts in (("errors", host["errors"]), ("auth", host["auth_outcomes"])):
            shown = {span.attributes["data-key"]: int(span.attributes["data-count"])
                     for span in row.find("td", cls=cell).find_all("span", cls="count")}
            assert shown == facts, f"{host['pattern']} {cell}: page {shown}, json {facts}"
        assert ("level-red" in row.classes) == host["outside_ca_constraints"]
        assert row.find("td", cls="mode").text() == host["mode"]
        pins = row.find("td", cls="pins").text()
        assert all(pin in pins for pin in host["served_pins"]), f"{host['pattern']}: served pins missing from the page"
    assert next(h for h in report["hosts"] if h["pattern"] == names["tls"])["served_pins"], "the TLS host's pins are shown"

    for certificate in report["certificates"]:
        row = dom.find("tr", cls="cert", data_kind=certificate["kind"], data_name=certificate["name"])
        assert row is not None, f"no certificate row for {certificate['kind']} {certificate['name']}"
        assert f"level-{certificate['level']}" in row.classes
        assert row.find("td", cls="days").text() == str(certificate["days_left"])
    levels = [row.classes & {"level-ok", "level-amber", "level-red"}
              for row in dom.find_all("tr", cls="cert")]
    assert levels[0] == {"level-red"}, "the most urgent certificate comes first"

    problem = dom.find("div", cls="problem", data_host="b.intercepted.test")
    assert problem is not None and "countersign ca init --force" in problem.find("code", cls="fix").text()

    rows = dom.find_all("tr", cls="refusal")
    assert len(rows) == len(report["refusals"])
    first = report["refusals"][0]
    assert [rows[0].find("td", cls=c).text() for c in ("host", "status", "type")] == \
        [first["host"], str(first["status"]), first["error_type"]]

    shot = browser.screenshot(url, tmp_path / "status.png", tmp_path / "profile")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20000
    keep = Path("/tmp/countersign-status.png")
    keep.write_bytes(shot.read_bytes())   # for a person to look at after the run
    print(f"\nscreenshot of /status: {keep}")


def test_refresh_only_when_asked_and_bounded(countersign):
    proxy = countersign()
    for query, expected in (("", None), ("?refresh=5", "5"), ("?refresh=0", None), ("?refresh=99999", None),
                            ("?refresh=x", None)):
        status, body = proxy.admin_get(f"/status{query}")
        assert status == 200
        found = re.search(rb'<meta http-equiv="refresh" content="(\d+)">', body)
        assert (found.group(1).decode() if found else None) == expected, query


def test_pipelined_pages_each_keep_their_own_refresh(countersign):
    """Pages asked in one read are rendered once, but each answer still carries the refresh
    period its own request asked for, and `/status.json` stays JSON among them."""
    proxy = countersign()
    asked = ["/status?refresh=5", "/status.json", "/status?refresh=7", "/status", "/status?refresh=5"]
    with RawConnection("127.0.0.1", proxy.admin_port) as conn:
        conn.send(b"".join(f"GET {target} HTTP/1.1\r\nHost: a\r\n\r\n".encode() for target in asked))
        answers = [conn.read_response() for _ in asked]
    for target, answer in zip(asked, answers):
        assert answer.status == 200, target
        if target == "/status.json":
            assert json.loads(answer.body)["state"], answer.body[:200]
            continue
        found = re.search(rb'<meta http-equiv="refresh" content="(\d+)">', answer.body)
        expected = target.partition("refresh=")[2] or None
        assert (found.group(1).decode() if found else None) == expected, target
        assert answer.body.rstrip().endswith(b"</body></html>"), target


class ManyAddressTLSServer:
    """One TLS server answering on `count` loopback addresses (127.0.1.1, 127.0.1.2, ...) on one
    port, with a self-signed certificate no system root trusts."""

    def __init__(self, workdir: Path, count: int):
        certificate = make_self_signed(workdir / "many-tls")
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(certificate.certificate, certificate.key)
        self.port = free_port()
        self.addresses = [f"127.0.{1 + index // 250}.{1 + index % 250}" for index in range(count)]
        self.selector = selectors.DefaultSelector()
        self.sockets = []
        for address in self.addresses:
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((address, self.port))
            listener.listen(16)
            listener.setblocking(False)
            self.selector.register(listener, selectors.EVENT_READ)
            self.sockets.append(listener)
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while self.running:
            for key, _ in self.selector.select(timeout=0.2):
                try:
                    connection, _ = key.fileobj.accept()
                except OSError:
                    continue
                threading.Thread(target=self._handshake, args=(connection,), daemon=True).start()

    def _handshake(self, connection):
        connection.settimeout(5)
        try:
            with self.context.wrap_socket(connection, server_side=True) as tls:
                tls.recv(1)
        except (OSError, ssl.SSLError):
            pass
        finally:
            connection.close()

    def stop(self):
        self.running = False
        self.thread.join(timeout=2)
        for listener in self.sockets:
            listener.close()


def _series(metrics_text: str) -> list:
    return [line for line in metrics_text.splitlines() if line and not line.startswith("#")]


def test_host_table_stays_bounded_with_500_unlisted_hosts(countersign, tmp_path):
    server = ManyAddressTLSServer(tmp_path, 500)
    try:
        proxy = countersign()
        before = len(_series(proxy.admin_get("/metrics")[1].decode()))

        def fetch(address):
            return exchange("127.0.0.1", proxy.port, forward_request(f"https://{address}:{server.port}/"), timeout=15).status
        with ThreadPoolExecutor(16) as pool:
            statuses = list(pool.map(fetch, server.addresses))
        assert statuses == [502] * 500, "each upstream's self-signed certificate must be refused"

        metrics = proxy.admin_get("/metrics")[1].decode()
        series = _series(metrics)
        assert len(series) < before + 20, \
            f"/metrics grew from {before} to {len(series)} series after 500 distinct hosts"
        assert f'countersign_upstream_trust_refusals_total{{host="{OTHER}"}} 500' in metrics
        report = _status_json(proxy)
        assert [host["pattern"] for host in report["hosts"]] == [OTHER]
        assert report["hosts"][0]["requests"] == 500
        assert report["hosts"][0]["errors"] == {"tls_certificate_error": 500}
        assert len(report["refusals"]) == 50, "the refusal list keeps the last 50"
    finally:
        server.stop()


def test_failed_reload_is_shown_on_status_until_a_reload_succeeds(countersign, tmp_path):
    """A reload refused for a broken file is shown on /status.json and /status (when, why,
    which generation from which file still runs), without a secret from the file; a good
    reload clears it. The page is rendered by Chromium and kept as a screenshot."""
    secret = tmp_path / "svc.password"
    secret.write_text("s3cr3t-of-the-broken-file\n")
    proxy = countersign({"credentials": {"svc": {"user": "svc", "password_file": str(secret)}}})
    assert "last_reload_failed" not in _status_json(proxy)
    good_config = dict(proxy.config)
    broken = json.dumps(good_config, indent=2).replace(f'"{secret}"', f'"{secret}" oops')
    proxy.reload_text(broken)
    failed = wait_until(lambda: _status_json(proxy).get("last_reload_failed"), timeout=5)
    assert failed, "a refused reload left /status.json without a sign of it"
    path = str(proxy.config_path)
    assert failed["reason"].startswith(f"{path}:") and "expected" in failed["reason"], f"the reason does not say where: {failed}"
    assert failed["message"] == (f"last reload failed at {failed['time']}: {failed['reason']} "
                                 f"(the running configuration is generation 1 from {path})")
    report = _status_json(proxy)
    assert report["state"] == "serving" and report["configuration_generation"] == 1

    status, html = proxy.admin_get("/status")
    page = browser.parse(html.decode())
    notice = page.find("div", id="reload-failed")
    assert notice is not None, "/status does not show the failed reload"
    assert failed["time"] in notice.text() and "generation 1" in notice.text() and path in notice.text()
    assert notice.find("pre", cls="reason").text().strip() == failed["reason"]
    for text in (html.decode(), json.dumps(report)):
        assert "s3cr3t-of-the-broken-file" not in text, "a secret from the broken file reached /status"

    if browser.chromium_binary() is not None:
        shot = browser.screenshot(f"http://127.0.0.1:{proxy.admin_port}/status", tmp_path / "failed.png", tmp_path / "profile")
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        keep = Path("/tmp/countersign-status-reload-failed.png")
        keep.write_bytes(shot.read_bytes())   # for a person to look at after the run
        print(f"\nscreenshot of /status with a failed reload: {keep}")

    proxy.reload(good_config)
    assert wait_until(lambda: _status_json(proxy)["configuration_generation"] == 2, timeout=20), "the fixed file was not loaded"
    assert "last_reload_failed" not in _status_json(proxy), "the notice stayed after a successful reload"
    assert proxy.admin_get("/status")[1].decode().find('id="reload-failed"') == -1
