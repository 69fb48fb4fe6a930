"""SPEC "Trust evaluation", stapled OCSP (`trust.revocation.ocsp_stapling`): `openssl s_server
-status_file` staples responses made by `openssl ocsp -respout` from a per-test `openssl ca`
index. "prefer" refuses a valid staple saying revoked, and any staple that fails verification
(foreign signer, another certificate, expired); "require" also refuses a missing one. Each
staple's verdict has its positive control: `openssl ocsp -respin` judges it the same way, and
`openssl s_client -status` shows the server really staples it. Refusals happen inside the
handshake: the server gets an alert and never a request byte."""
import subprocess

import pytest

from harness.checks import parse_proxy_status
from harness.curl import curl
from harness.openssl_server import OpenSSLServer
from harness.revocation_pki import CertificateAuthority, expired_ocsp_response, openssl_ocsp_verdict

pytestmark = pytest.mark.countersign_only


@pytest.fixture
def pki(tmp_path):
    class PKI:
        root = CertificateAuthority(tmp_path / "root", "OCSP Test Root")
        intermediate = CertificateAuthority(tmp_path / "intermediate", "OCSP Test Intermediate", root)
        leaf, leaf_key = intermediate.server("localhost")
    return PKI


@pytest.fixture
def stapling_server(tmp_path, pki):
    """stapling_server(name, response=None, extra=()) -> s_server serving the leaf and the
    intermediate, stapling `response` (a DER file) when given."""
    started = []

    def start(name, response=None, extra=(), www=True):
        options = list(extra) + (["-status_file", str(response)] if response else [])
        server = OpenSSLServer(tmp_path, name, pki.leaf, pki.leaf_key, pki.intermediate.certificate, options, www)
        started.append(server)
        return server
    yield start
    for server in started:
        server.stop()


def _proxy(countersign, server, pki, mode):
    trust = {"anchors": [str(pki.root.certificate)], "revocation": {"ocsp_stapling": mode}}
    return countersign({"hosts": {f"localhost:{server.port}": {"upstream_tls": True, "intercept": False, "trust": trust}}})


def _get(proxy, server, tmp_path, path="/stapled"):
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


def _stapled_by(server, pki) -> str:
    """`openssl s_client -status` against the server: what it staples (positive control)."""
    done = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{server.port}", "-servername", "localhost",
                           "-status", "-CAfile", str(pki.root.certificate)],
                          input=b"", capture_output=True, timeout=15)
    return done.stdout.decode(errors="replace")


@pytest.mark.parametrize("mode", ["prefer", "require"])
@pytest.mark.parametrize("signer", ["issuer", "delegated responder"])
def test_a_good_staple_is_accepted(countersign, stapling_server, pki, tmp_path, mode, signer):
    responder = pki.intermediate.responder() if signer == "delegated responder" else (None, None)
    response = pki.intermediate.ocsp_response(pki.leaf, tmp_path / "good.der", *responder)
    assert "Response verify OK" in openssl_ocsp_verdict(response, pki.intermediate.certificate, pki.leaf, pki.root.certificate)
    server = stapling_server(f"good-{mode}", response)
    assert "Cert Status: good" in _stapled_by(server, pki)
    _accepted(_get(_proxy(countersign, server, pki, mode), server, tmp_path))


@pytest.mark.parametrize("version", ["-tls1_2", "-tls1_3"])
@pytest.mark.parametrize("mode", ["prefer", "require"])
def test_a_staple_saying_revoked_is_refused_in_the_handshake(countersign, stapling_server, pki, tmp_path, mode, version):
    pki.intermediate.revoke(pki.leaf, "keyCompromise")
    response = pki.intermediate.ocsp_response(pki.leaf, tmp_path / "revoked.der")
    verdict = openssl_ocsp_verdict(response, pki.intermediate.certificate, pki.leaf, pki.root.certificate)
    assert "revoked" in verdict and "Response verify OK" in verdict, verdict
    server = stapling_server(f"revoked-{mode}{version}", response, extra=[version], www=False)
    before = len(server.output())
    details = _details(_get(_proxy(countersign, server, pki, mode), server, tmp_path, "/secret-path"))
    assert details.startswith("localhost: certificate revoked: CN=localhost (serial 1000) was revoked on "), details
    assert details.endswith(", reason keyCompromise, according to the stapled OCSP response"), details
    server.wait_for("ERROR", after=before)
    seen = server.output()[before:]
    assert "secret-path" not in seen, f"the refused server received the request:\n{seen}"
    assert "alert" in seen, f"the refused server got no TLS alert:\n{seen}"


def test_no_staple_is_accepted_under_prefer_and_refused_under_require(countersign, stapling_server, pki, tmp_path):
    server = stapling_server("none")
    assert "OCSP response: no response sent" in _stapled_by(server, pki)
    _accepted(_get(_proxy(countersign, server, pki, "prefer"), server, tmp_path))
    details = _details(_get(_proxy(countersign, server, pki, "require"), server, tmp_path))
    assert details == ('localhost: revocation unknown for CN=localhost (serial 1000): the server stapled no OCSP response,'
                       ' and ocsp_stapling requires one'), details


def _foreign(pki, tmp_path):
    # A CA with the issuer's very name and its own key signs a "good" answer from the real index.
    impostor = CertificateAuthority(tmp_path / "impostor", "OCSP Test Intermediate")
    return pki.intermediate.ocsp_response(pki.leaf, tmp_path / "foreign.der", impostor.certificate, impostor.key)


def _wrong_certificate(pki, tmp_path):
    other, _ = pki.intermediate.server("someone-else")
    return pki.intermediate.ocsp_response(other, tmp_path / "wrong.der")


def _signed_by_a_sibling_leaf(pki, tmp_path):
    # Any server the issuer certified holds a key the issuer signed: without OCSPSigning it
    # must not vouch for its siblings.
    sibling, sibling_key = pki.intermediate.server("sibling")
    return pki.intermediate.ocsp_response(pki.leaf, tmp_path / "sibling.der", sibling, sibling_key)


def _expired(pki, tmp_path):
    return expired_ocsp_response(pki.intermediate, pki.leaf, tmp_path / "expired.der")


INVALID_STAPLES = {
    "foreign-signed": (_foreign, "Response Verify Failure",
                       "is signed by a certificate for CN=OCSP Test Intermediate that is neither the issuer's own"
                       " nor one the issuer CN=OCSP Test Intermediate certified"),
    "wrong-certificate": (_wrong_certificate, "No Status found",
                          "is for another certificate (no CertID matches CN=localhost, serial 1000, issued by CN=OCSP Test Intermediate)"),
    "expired": (_expired, "status expired", "the stapled OCSP response expired: its nextUpdate was "),
    "signed-by-a-sibling": (_signed_by_a_sibling_leaf, "Response Verify Failure",
                            "is signed by CN=sibling, certified by the issuer but not for OCSP signing"),
}


@pytest.mark.parametrize("mode", ["prefer", "require"])
@pytest.mark.parametrize("case", sorted(INVALID_STAPLES))
def test_a_staple_failing_verification_is_refused_with_the_reason(countersign, stapling_server, pki, tmp_path, mode, case):
    make, openssl_says, reason = INVALID_STAPLES[case]
    response = make(pki, tmp_path)
    verdict = openssl_ocsp_verdict(response, pki.intermediate.certificate, pki.leaf, pki.root.certificate)
    assert openssl_says in verdict, f"positive control: openssl ocsp does not say {openssl_says!r}:\n{verdict}"
    server = stapling_server(f"{case}-{mode}", response)
    assert "OCSP Response Status: successful" in _stapled_by(server, pki)
    details = _details(_get(_proxy(countersign, server, pki, mode), server, tmp_path))
    assert details.startswith("localhost: stapled OCSP response refused for CN=localhost (serial 1000): "), details
    assert reason in details, details


def _check_chain(countersign_executable, workdir, pki, mode, *args):
    import json
    from harness.proxies import base_config, merge
    from harness.revocation_pki import chain_file
    trust = {"anchors": [str(pki.root.certificate)], "revocation": {"ocsp_stapling": mode}}
    path = workdir / "chain-check.json5"
    path.write_text(json.dumps(merge(base_config(3128, 9901, workdir), {"hosts": {"localhost:8443": {"intercept": False, "trust": trust}}})))
    chain = chain_file(workdir / "chain.pem", pki.leaf, pki.intermediate.certificate)
    return subprocess.run([str(countersign_executable), "check", "-c", str(path), "--host", "localhost:8443", "--chain", str(chain), *map(str, args)],
                          cwd=workdir, capture_output=True, text=True, timeout=30)


def test_check_chain_judges_a_given_ocsp_response_as_the_staple(countersign_executable, pki, tmp_path):
    good = pki.intermediate.ocsp_response(pki.leaf, tmp_path / "good.der")
    accepted = _check_chain(countersign_executable, tmp_path, pki, "require", "--ocsp-response", good)
    assert accepted.returncode == 0 and "stapled OCSP (require): ok: good" in accepted.stdout, accepted.stdout + accepted.stderr
    # Two days on, that response (nextUpdate one day out) has expired.
    later = int(time_now()) + 2 * 86400
    stale = _check_chain(countersign_executable, tmp_path, pki, "prefer", "--ocsp-response", good, "--at", later)
    assert stale.returncode == 1 and "verdict: REFUSED: stapled OCSP response refused for CN=localhost (serial 1000):" \
        " the stapled OCSP response expired" in stale.stdout, stale.stdout
    missing = _check_chain(countersign_executable, tmp_path, pki, "require")
    assert missing.returncode == 1 and "the server stapled no OCSP response" in missing.stdout, missing.stdout
    pki.intermediate.revoke(pki.leaf)
    revoked = _check_chain(countersign_executable, tmp_path, pki, "prefer", "--ocsp-response",
                           pki.intermediate.ocsp_response(pki.leaf, tmp_path / "revoked.der"))
    assert revoked.returncode == 1 and "according to the stapled OCSP response" in revoked.stdout, revoked.stdout


def time_now() -> float:
    import time
    return time.time()
