"""SPEC "Trust evaluation", revocation by CRL (`trust.revocation.crl_files`) and
`max_chain_depth`, against `openssl s_server` serving chains of a per-test PKI made with
`openssl ca` (-revoke, -gencrl). Each verdict has its positive control: `openssl verify
-crl_check` (or `-crl_check_all`) with the same CRLs judges the chain the same way. A revoked certificate is
refused inside the handshake: the server gets a `certificate revoked` alert and never a
request byte, and Proxy-Status names the certificate, its serial and the revocation date."""
import datetime
import shutil

import pytest

from harness.checks import parse_proxy_status
from harness.curl import curl
from harness.openssl_server import OpenSSLServer
from harness.ports import wait_until
from harness.revocation_pki import CertificateAuthority, chain_file, openssl, openssl_verify

pytestmark = pytest.mark.countersign_only


@pytest.fixture
def pki(tmp_path):
    """root -> intermediate -> localhost leaf (serial 1000 under the intermediate)."""
    class PKI:
        root = CertificateAuthority(tmp_path / "root", "Revocation Test Root")
        intermediate = CertificateAuthority(tmp_path / "intermediate", "Revocation Test Intermediate", root)
        leaf, leaf_key = intermediate.server("localhost")
    return PKI


@pytest.fixture
def servers(tmp_path):
    started = []

    def start(name, certificate, key, chain=None, extra=(), www=True):
        server = OpenSSLServer(tmp_path, name, certificate, key, chain, extra, www)
        started.append(server)
        return server
    yield start
    for server in started:
        server.stop()


def _proxy(countersign, server, trust):
    return countersign({"hosts": {f"localhost:{server.port}": {"upstream_tls": True, "intercept": False, "trust": trust}}})


def _trust(pki, *crls, **more):
    trust = {"anchors": [str(pki.root.certificate)], "revocation": {"crl_files": [str(crl) for crl in crls]}}
    trust.update(more)
    return trust


def _get(proxy, server, tmp_path, path="/revocation"):
    return curl(["-x", f"http://127.0.0.1:{proxy.port}", f"http://localhost:{server.port}{path}"],
                tmp_path, timeout=15, name=f"curl-{server.port}")


def _details(result) -> str:
    assert result.status == 502, f"expected 502, got {result.status}: {result.body[:300]!r}"
    _, parameters = parse_proxy_status(result.header("Proxy-Status") or "")
    assert parameters.get("error") == "tls_certificate_error", f"Proxy-Status: {result.header('Proxy-Status')}"
    return parameters.get("details", "")


def _accepted(result):
    assert result.status == 200, f"expected s_server's 200, got {result.status} {result.header('Proxy-Status')}"
    assert b"s_server" in result.body


def _revocation_date(crl) -> str:
    """The revocation date `openssl crl -text` prints for the first entry, as RFC 3339."""
    text = openssl("crl", "-in", crl, "-noout", "-text")
    printed = text.split("Revocation Date:")[1].splitlines()[0].strip()
    moment = datetime.datetime.strptime(printed, "%b %d %H:%M:%S %Y GMT")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_revoked_leaf_is_refused_in_the_handshake_naming_serial_and_date(countersign, servers, pki, tmp_path):
    pki.intermediate.revoke(pki.leaf, "keyCompromise")
    crl = pki.intermediate.crl(tmp_path / "intermediate.crl")
    assert not openssl_verify(pki.root.certificate, pki.intermediate.certificate, pki.leaf, [crl]), \
        "positive control: openssl verify -crl_check_all accepts the revoked leaf"
    server = servers("revoked-leaf", pki.leaf, pki.leaf_key, chain=pki.intermediate.certificate, www=False)
    proxy = _proxy(countersign, server, _trust(pki, crl))
    before = len(server.output())
    details = _details(_get(proxy, server, tmp_path, "/secret-path"))
    assert details == (f"localhost: certificate revoked: CN=localhost (serial 1000) was revoked on {_revocation_date(crl)},"
                       " reason keyCompromise, according to the CRL of CN=Revocation Test Intermediate (intermediate.crl)"), details
    server.wait_for("ERROR", after=before)
    seen = server.output()[before:]
    assert "secret-path" not in seen, f"the refused server received the request:\n{seen}"
    assert "certificate revoked" in seen, f"the refused server got no certificate_revoked alert:\n{seen}"


@pytest.mark.parametrize("encoding", ["pem", "der"])
def test_a_leaf_not_on_a_current_crl_is_accepted(countersign, servers, pki, tmp_path, encoding):
    other, _ = pki.intermediate.server("someone-else")
    pki.intermediate.revoke(other)
    crl = pki.intermediate.crl(tmp_path / f"intermediate.{encoding}.crl", der=encoding == "der")
    pem = tmp_path / f"intermediate.{encoding}.crl.pem" if encoding == "der" else crl
    assert openssl_verify(pki.root.certificate, pki.intermediate.certificate, pki.leaf, [pem])
    server = servers(f"good-{encoding}", pki.leaf, pki.leaf_key, chain=pki.intermediate.certificate)
    _accepted(_get(_proxy(countersign, server, _trust(pki, crl)), server, tmp_path))


@pytest.mark.parametrize("encoding", ["pem", "der"])
def test_a_revoked_leaf_is_refused_with_a_der_or_pem_crl(countersign, servers, pki, tmp_path, encoding):
    pki.intermediate.revoke(pki.leaf, "superseded")
    crl = pki.intermediate.crl(tmp_path / f"revoking.{encoding}.crl", der=encoding == "der")
    server = servers(f"revoked-{encoding}", pki.leaf, pki.leaf_key, chain=pki.intermediate.certificate)
    details = _details(_get(_proxy(countersign, server, _trust(pki, crl)), server, tmp_path))
    assert "certificate revoked: CN=localhost (serial 1000)" in details and "reason superseded" in details, details


def test_a_revoked_intermediate_is_refused(countersign, servers, pki, tmp_path):
    pki.root.revoke(pki.intermediate.certificate, "cACompromise")
    root_crl = pki.root.crl(tmp_path / "root.crl")
    intermediate_crl = pki.intermediate.crl(tmp_path / "intermediate.crl")
    assert not openssl_verify(pki.root.certificate, pki.intermediate.certificate, pki.leaf, [root_crl, intermediate_crl],
                              all_levels=True)
    server = servers("revoked-intermediate", pki.leaf, pki.leaf_key, chain=pki.intermediate.certificate)
    # Both CRLs in one PEM file: several CRLs per file are read.
    both = chain_file(tmp_path / "both.crl", intermediate_crl, root_crl)
    details = _details(_get(_proxy(countersign, server, _trust(pki, both)), server, tmp_path))
    assert "certificate revoked: CN=Revocation Test Intermediate (serial 1000)" in details, details
    assert "reason cACompromise, according to the CRL of CN=Revocation Test Root (both.crl)" in details, details


def test_a_crl_signed_by_another_key_fails_closed(countersign, servers, pki, tmp_path):
    # Same issuer name, another key: an attacker's "empty CRL" must not vouch for anything.
    impostor = CertificateAuthority(tmp_path / "impostor", "Revocation Test Intermediate")
    forged = impostor.crl(tmp_path / "forged.crl")
    assert not openssl_verify(pki.root.certificate, pki.intermediate.certificate, pki.leaf, [forged])
    server = servers("forged-crl", pki.leaf, pki.leaf_key, chain=pki.intermediate.certificate)
    details = _details(_get(_proxy(countersign, server, _trust(pki, forged)), server, tmp_path))
    assert details == ("localhost: revocation unknown for CN=localhost (serial 1000): the CRL of CN=Revocation Test Intermediate"
                       " (forged.crl) is not signed by the key of CN=Revocation Test Intermediate on the verified path"), details


def test_an_expired_crl_fails_closed_naming_its_next_update(countersign, servers, pki, tmp_path):
    next_update = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=2)).replace(microsecond=0)
    crl = pki.intermediate.crl(tmp_path / "stale.crl", next_update=next_update)
    assert not openssl_verify(pki.root.certificate, pki.intermediate.certificate, pki.leaf, [crl])
    server = servers("stale-crl", pki.leaf, pki.leaf_key, chain=pki.intermediate.certificate)
    details = _details(_get(_proxy(countersign, server, _trust(pki, crl)), server, tmp_path))
    expected = next_update.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert details.endswith(f"the CRL of CN=Revocation Test Intermediate (stale.crl) expired: its nextUpdate was {expected};"
                            " install a fresh CRL"), details


def test_a_crl_rotated_on_disk_takes_effect_without_a_signal(countersign, servers, pki, tmp_path):
    crl = pki.intermediate.crl(tmp_path / "live.crl")
    server = servers("rotation", pki.leaf, pki.leaf_key, chain=pki.intermediate.certificate)
    proxy = _proxy(countersign, server, _trust(pki, crl))
    _accepted(_get(proxy, server, tmp_path))
    pki.intermediate.revoke(pki.leaf)
    fresh = pki.intermediate.crl(tmp_path / "fresh.crl")
    shutil.move(fresh, crl)  # an atomic rename over the watched file, as a CRL publisher does
    refused = wait_until(lambda: _get(proxy, server, tmp_path).status == 502, timeout=10)
    assert refused, "the rotated CRL did not take effect"
    assert "certificate revoked: CN=localhost" in _details(_get(proxy, server, tmp_path))


@pytest.mark.parametrize("depth,accepted", [(0, False), (1, True)])
def test_max_chain_depth_bounds_the_verified_path(countersign, servers, pki, tmp_path, depth, accepted):
    # The server pads the chain with the root: only the verified path's one intermediate counts.
    server = servers(f"depth-{depth}", pki.leaf, pki.leaf_key,
                     chain=chain_file(tmp_path / "padded.pem", pki.intermediate.certificate, pki.root.certificate))
    result = _get(_proxy(countersign, server, {"anchors": [str(pki.root.certificate)], "max_chain_depth": depth}), server, tmp_path)
    if accepted:
        _accepted(result)
    else:
        assert _details(result) == ("localhost: chain too deep: the verified path has 1 intermediate"
                                    " (CN=Revocation Test Intermediate), max_chain_depth is 0")


def test_a_crl_close_to_its_next_update_is_warned_about_on_status_and_in_metrics(countersign, servers, pki, tmp_path):
    import json
    next_update = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=12)).replace(microsecond=0)
    crl = pki.intermediate.crl(tmp_path / "soon.crl", next_update=next_update)
    server = servers("soon", pki.leaf, pki.leaf_key, chain=pki.intermediate.certificate)
    proxy = _proxy(countersign, server, _trust(pki, crl))
    _accepted(_get(proxy, server, tmp_path))  # still current: trusted, but the warning is already up
    status, body = proxy.admin_get("/status.json")
    assert status == 200
    rows = [row for row in json.loads(body)["certificates"] if row["kind"] == "crl"]
    assert [(row["name"], row["subject"], row["level"]) for row in rows] == \
        [(str(crl), "CN=Revocation Test Intermediate", "red")], rows
    status, metrics = proxy.admin_get("/metrics")
    line = f'countersign_crl_next_update_timestamp_seconds{{file="{crl}",issuer="CN=Revocation Test Intermediate"}}'
    values = [row.split()[-1] for row in metrics.decode().splitlines() if row.startswith(line)]
    assert values and float(values[0]) == next_update.timestamp(), f"{line} not in /metrics: {values}"


def _check_chain(countersign_executable, workdir, trust, chain, *args):
    import json
    import subprocess
    from harness.proxies import base_config, merge
    path = workdir / "chain-check.json5"
    path.write_text(json.dumps(merge(base_config(3128, 9901, workdir), {"hosts": {"localhost:8443": {"intercept": False, "trust": trust}}})))
    return subprocess.run([str(countersign_executable), "check", "-c", str(path), "--host", "localhost:8443", "--chain", str(chain), *args],
                          cwd=workdir, capture_output=True, text=True, timeout=30)


def test_check_chain_applies_the_crls_now_and_at_a_later_time(countersign_executable, pki, tmp_path):
    other, _ = pki.intermediate.server("someone-else")
    pki.intermediate.revoke(other)
    crl = pki.intermediate.crl(tmp_path / "intermediate.crl")  # nextUpdate in 7 days
    chain = chain_file(tmp_path / "chain.pem", pki.leaf, pki.intermediate.certificate)
    accepted = _check_chain(countersign_executable, tmp_path, _trust(pki, crl), chain)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "revocation (CRLs): ok: CN=localhost (serial 1000) not on the CRL of CN=Revocation Test Intermediate" in accepted.stdout
    # Ten days on, that CRL has expired: the preview says the handshake would fail closed.
    later = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    stale = _check_chain(countersign_executable, tmp_path, _trust(pki, crl), chain, "--at", later)
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "verdict: REFUSED: revocation unknown for CN=localhost (serial 1000)" in stale.stdout, stale.stdout
    # The revoked certificate itself is refused with its serial.
    revoked_chain = chain_file(tmp_path / "revoked.pem", other, pki.intermediate.certificate)
    revoked = _check_chain(countersign_executable, tmp_path, _trust(pki, crl), revoked_chain)
    assert revoked.returncode == 1 and "certificate revoked: CN=someone-else (serial 1001)" in revoked.stdout, revoked.stdout


@pytest.mark.parametrize("revoked", [False, True])
def test_an_https_parent_proxy_is_held_to_its_crls(countersign, servers, pki, tmp_path, revoked):
    # parent_proxy.trust reuses the trust policy: s_server -www stands in for the parent (it
    # answers any GET with its status page once the handshake was trusted).
    if revoked:
        pki.intermediate.revoke(pki.leaf)
    crl = pki.intermediate.crl(tmp_path / "parent.crl")
    parent = servers(f"parent-{revoked}", pki.leaf, pki.leaf_key, chain=pki.intermediate.certificate)
    proxy = countersign({"parent_proxy": {"url": f"https://localhost:{parent.port}", "trust": _trust(pki, crl)}})
    result = curl(["-x", f"http://127.0.0.1:{proxy.port}", "http://upstream.invalid/through-parent"], tmp_path, timeout=15,
                  name=f"curl-parent-{revoked}")
    if revoked:
        assert "certificate revoked: CN=localhost (serial 1000)" in _details(result)
    else:
        _accepted(result)


@pytest.mark.parametrize("kind,message", [
    ("no-crl-number", "has no cRLNumber extension, which RFC 5280 (5.2.3) requires"),
    ("partitioned", "has a critical issuingDistributionPoint extension, which Countersign does not process"),
])
def test_a_crl_that_cannot_be_used_honestly_is_a_configuration_error_naming_the_file(countersign_executable, pki, tmp_path,
                                                                                   kind, message):
    from harness.revocation_pki import unusable_crl
    crl = unusable_crl(pki.intermediate, tmp_path / f"{kind}.crl", kind)
    chain = chain_file(tmp_path / "chain.pem", pki.leaf, pki.intermediate.certificate)
    result = _check_chain(countersign_executable, tmp_path, _trust(pki, crl), chain)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"CRL {crl} (issuer CN=Revocation Test Intermediate) {message}" in result.stderr + result.stdout, result.stderr


def test_a_damaged_crl_after_a_good_one_in_the_same_file_is_an_error(countersign_executable, pki, tmp_path):
    # Were it skipped, the root's certificates would silently go unchecked.
    good = pki.intermediate.crl(tmp_path / "intermediate.crl")
    damaged = pki.root.crl(tmp_path / "root.crl").read_text().replace("\n", "\n!", 3)
    both = tmp_path / "both.crl"
    both.write_text(good.read_text() + damaged)
    chain = chain_file(tmp_path / "chain.pem", pki.leaf, pki.intermediate.certificate)
    result = _check_chain(countersign_executable, tmp_path, _trust(pki, both), chain)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{both} has 2 CRL blocks, but only the first 1 can be read: block 2 is damaged" in result.stderr + result.stdout, result.stderr


def test_check_warns_about_a_crl_that_expired_or_expires_soon(countersign_executable, pki, tmp_path):
    import json
    from harness.proxies import base_config, merge
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    stale = pki.intermediate.crl(tmp_path / "stale.crl", next_update=now - datetime.timedelta(hours=1))
    soon = pki.root.crl(tmp_path / "soon.crl", next_update=now + datetime.timedelta(hours=30))
    path = tmp_path / "check.json5"
    hosts = {"a.example": {"intercept": False, "trust": _trust(pki, stale, soon)}}
    path.write_text(json.dumps(merge(base_config(3128, 9901, tmp_path), {"hosts": hosts})))
    import subprocess
    result = subprocess.run([str(countersign_executable), "check", "-c", str(path)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
    stamp = lambda moment: moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert (f"warning: CRL {stale} (issuer CN=Revocation Test Intermediate) is past its nextUpdate"
            f" {stamp(now - datetime.timedelta(hours=1))}") in result.stdout, result.stdout
    assert (f"warning: CRL {soon} (issuer CN=Revocation Test Root) reaches its nextUpdate at"
            f" {stamp(now + datetime.timedelta(hours=30))}") in result.stdout, result.stdout
