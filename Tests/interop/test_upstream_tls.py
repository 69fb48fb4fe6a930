"""Upstream TLS through the running proxy, against nginx serving the test PKI: the trust policy
decides before any request byte is sent (a refusal is a 502 with details a person can act on,
and nginx's access log shows no request), identities answer nginx's client-certificate demand,
gateway listeners reach an https upstream, SIGHUP rotates anchors, connections are reused.
`countersign check` refuses contradictory or unreadable trust settings."""
import json
import shutil
import subprocess

import pytest

from harness.checks import assert_proxy_error, parse_proxy_status
from harness.openssl_server import OpenSSLServer
from harness.pki import (CLIENT_KEY_PASSPHRASE, CLIENT_SUBJECT, PKCS12_PASSPHRASE, ROOT_NAME, WRONG_NAMES,
                         file_pin)
from harness.ports import free_port, wait_until
from harness.proxies import base_config, merge
from harness.rawclient import RawConnection, exchange, forward_request, request_bytes

pytestmark = pytest.mark.countersign_only


def _host_entry(trust: dict, identity: str = None) -> dict:
    entry = {"upstream_tls": True, "intercept": False, "trust": trust}
    if identity:
        entry["identity"] = identity
    return entry


def _proxy_for(countersign, site, trust: dict, identity: str = None, credentials: dict = None, env=None):
    overrides = {"hosts": {site.authority: _host_entry(trust, identity)}}
    if credentials:
        overrides["credentials"] = credentials
    return countersign(overrides, env)


def _get(proxy, site, path: str = "/x"):
    return exchange("127.0.0.1", proxy.port, forward_request(site.url(path)))


def _anchored(test_pki, **trust) -> dict:
    return {"anchors": [str(test_pki.path("root.pem"))], **trust}


def _assert_served(response, site) -> None:
    assert response.status == 200, \
        f"expected nginx's 200, got {response.status} {response.header('Proxy-Status')}: {response.body[:300]!r}"
    assert response.body == f"served by {site.site.name}\n".encode()


def _assert_refused(response, proxy, site, requests_before: int, error: str, *phrases) -> str:
    """A 502 from the proxy with `error` and details naming each phrase; nginx saw no request.
    Returns the details."""
    assert_proxy_error(response, 502, proxy, error)
    _, parameters = parse_proxy_status(response.header("Proxy-Status"))
    details = parameters.get("details", "")
    for phrase in phrases:
        assert phrase in details, f"Proxy-Status details {details!r} do not mention {phrase!r}"
    reached = site.requests_since(requests_before)
    assert not reached, f"the refused upstream still received request(s): {reached}"
    # The operator reading the access log learns as much as the client's Proxy-Status says.
    logged = wait_until(lambda: [line for line in proxy.access_logs() if line.get("error") == error], timeout=5)
    assert logged, f"no access line with error {error}: {proxy.access_logs()[-3:]}"
    assert logged[-1].get("error_details") == details, \
        f"the access line does not name the failure: {logged[-1]} (Proxy-Status details {details!r})"
    return details


# --- chain and name ----------------------------------------------------------------------------

def test_chain_to_configured_anchor_is_accepted_with_sni(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["valid"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki))
    _assert_served(_get(proxy, site, "/anchored"), site)
    last = site.logged("/anchored")
    assert last.server_name == "localhost", "the proxy did not send the host name as SNI"
    assert last.protocol in ("TLSv1.2", "TLSv1.3")


def test_system_roots_refuse_private_root_naming_the_issuer(countersign, tls_upstreams):
    site = tls_upstreams["valid"]
    proxy = _proxy_for(countersign, site, {})
    before = len(site.access_entries())
    _assert_refused(_get(proxy, site), proxy, site, before, "tls_certificate_error",
                    "untrusted issuer", ROOT_NAME)


def test_chain_from_another_ca_is_refused_naming_that_issuer(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["evil"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki))
    before = len(site.access_entries())
    _assert_refused(_get(proxy, site), proxy, site, before, "tls_certificate_error",
                    "untrusted issuer", "Evil CA")


def test_leaf_that_is_a_ca_certificate_is_refused_naming_why(countersign, tls_upstreams, test_pki):
    """OpenSSL's own verification accepts a cA=TRUE leaf for serverAuth; the policy does not."""
    site = tls_upstreams["ca-leaf"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki))
    before = len(site.access_entries())
    _assert_refused(_get(proxy, site), proxy, site, before, "tls_certificate_error",
                    "not a server certificate", "is a CA certificate (basicConstraints cA=TRUE)")


def test_wrong_name_is_refused_listing_the_served_names(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["wrong-name"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki))
    before = len(site.access_entries())
    _assert_refused(_get(proxy, site), proxy, site, before, "tls_certificate_error",
                    "name mismatch", *WRONG_NAMES)


def test_wrong_name_is_accepted_without_domain_validation(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["wrong-name"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki, validate_domain=False))
    _assert_served(_get(proxy, site), site)


def test_expired_certificate_is_refused_with_its_date(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["expired"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki))
    before = len(site.access_entries())
    _assert_refused(_get(proxy, site), proxy, site, before, "tls_certificate_error",
                    "expired", "2024-01-01")


def test_expired_certificate_stays_refused_when_only_the_name_check_is_off(countersign, tls_upstreams, test_pki):
    # validate_domain governs the name, not the validity period (AFSecurityPolicy does the same).
    site = tls_upstreams["expired"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki, validate_domain=False))
    before = len(site.access_entries())
    _assert_refused(_get(proxy, site), proxy, site, before, "tls_certificate_error", "expired")


def test_expired_certificate_is_accepted_with_allow_invalid_and_a_pin(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["expired"]
    trust = _anchored(test_pki, allow_invalid_certificates=True, pinning="public-key",
                      pins=[file_pin(test_pki.path("expired.pem"))])
    proxy = _proxy_for(countersign, site, trust)
    _assert_served(_get(proxy, site), site)


def test_expired_certificate_is_accepted_with_allow_invalid_and_no_name_check(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["expired"]
    proxy = _proxy_for(countersign, site,
                       _anchored(test_pki, allow_invalid_certificates=True, validate_domain=False))
    _assert_served(_get(proxy, site), site)


def test_certificate_not_yet_valid_is_refused(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["future"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki))
    before = len(site.access_entries())
    _assert_refused(_get(proxy, site), proxy, site, before, "tls_certificate_error", "2090")


# --- public-key and certificate pinning --------------------------------------------------------

@pytest.mark.parametrize("pinned", ["leaf.pem", "intermediate.pem", "root.pem"])
def test_spki_pin_of_any_chain_certificate_is_accepted(countersign, tls_upstreams, test_pki, pinned):
    site = tls_upstreams["valid"]
    trust = _anchored(test_pki, pinning="public-key", pins=[file_pin(test_pki.path(pinned))])
    proxy = _proxy_for(countersign, site, trust)
    _assert_served(_get(proxy, site), site)


def test_single_slash_pin_form_is_accepted(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["valid"]
    single_slash = "sha256/" + file_pin(test_pki.path("leaf.pem"))[len("sha256//"):]
    proxy = _proxy_for(countersign, site, _anchored(test_pki, pinning="public-key", pins=[single_slash]))
    _assert_served(_get(proxy, site), site)


def test_wrong_pin_is_refused_listing_served_pins_and_nothing_reaches_nginx(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["valid"]
    wrong = file_pin(test_pki.path("evil-root.pem"))
    proxy = _proxy_for(countersign, site, _anchored(test_pki, pinning="public-key", pins=[wrong]))
    before = len(site.access_entries())
    _assert_refused(_get(proxy, site), proxy, site, before, "tls_certificate_error", "pin mismatch",
                    file_pin(test_pki.path("leaf.pem")), file_pin(test_pki.path("intermediate.pem")))


def test_pinned_self_signed_certificate_is_accepted(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["self-signed"]
    trust = {"pinning": "certificate", "pinned_certificates": [str(test_pki.path("self-signed.pem"))]}
    proxy = _proxy_for(countersign, site, trust)
    _assert_served(_get(proxy, site), site)


def test_self_signed_certificate_without_a_pin_is_refused(countersign, tls_upstreams):
    site = tls_upstreams["self-signed"]
    proxy = _proxy_for(countersign, site, {})
    before = len(site.access_entries())
    _assert_refused(_get(proxy, site), proxy, site, before, "tls_certificate_error", "self-signed")


def test_certificate_pinning_refuses_a_different_certificate(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["self-signed"]
    trust = {"pinning": "certificate", "pinned_certificates": [str(test_pki.path("leaf.pem"))]}
    proxy = _proxy_for(countersign, site, trust)
    before = len(site.access_entries())
    _assert_refused(_get(proxy, site), proxy, site, before, "tls_certificate_error")


# --- client identities -------------------------------------------------------------------------

def _identities(test_pki) -> dict:
    return {
        "pem": {"certificate": str(test_pki.path("client-chain.pem")),
                "private_key": str(test_pki.path("client.key"))},
        "encrypted_pem": {"certificate": str(test_pki.path("client-chain.pem")),
                          "private_key": str(test_pki.path("client-encrypted.key")),
                          "passphrase_env": "CLIENT_KEY_PASS"},
        "p12": {"pkcs12": str(test_pki.path("client.p12")), "passphrase_env": "P12_PASS"},
    }


IDENTITY_ENV = {"CLIENT_KEY_PASS": CLIENT_KEY_PASSPHRASE, "P12_PASS": PKCS12_PASSPHRASE}


@pytest.mark.parametrize("identity", ["pem", "encrypted_pem", "p12"])
def test_identity_answers_nginx_client_certificate_demand(countersign, tls_upstreams, test_pki, identity):
    site = tls_upstreams["mtls"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki), identity, _identities(test_pki), IDENTITY_ENV)
    response = _get(proxy, site, f"/whoami-{identity}")
    assert response.status == 200, f"{response.status} {response.header('Proxy-Status')}: {response.body[:300]!r}"
    assert response.body.decode() == CLIENT_SUBJECT, "nginx did not see the configured client certificate"
    assert site.logged(f"/whoami-{identity}").client_subject == CLIENT_SUBJECT


def test_without_identity_nginx_refusal_passes_through(countersign, tls_upstreams, test_pki):
    # nginx completes the handshake and answers 400 itself; the proxy relays that answer.
    site = tls_upstreams["mtls"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki))
    response = _get(proxy, site, "/anonymous")
    assert response.status == 400
    assert b"No required SSL certificate was sent" in response.body
    assert response.header("Proxy-Status") is None, "nginx's own answer was dressed up as a proxy error"
    assert site.logged("/anonymous").status == 400


# --- handshake failures ------------------------------------------------------------------------

def test_minimum_tls_version_above_the_upstream_is_a_protocol_error(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["tls12-only"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki, min_tls_version="1.3"))
    before = len(site.access_entries())
    _assert_refused(_get(proxy, site), proxy, site, before, "tls_protocol_error", "protocol version")


def test_minimum_tls_version_the_upstream_meets_is_accepted(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["tls12-only"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki, min_tls_version="1.2"))
    _assert_served(_get(proxy, site, "/tls12"), site)
    assert site.logged("/tls12").protocol == "TLSv1.2"


# --- gateway listeners -------------------------------------------------------------------------

def _gateway(countersign, site, trust: dict):
    gateway_port = free_port()
    proxy = countersign({
        "listen": [{}, {"address": f"127.0.0.1:{gateway_port}", "mode": "gateway",
                        "upstream": f"https://{site.authority}"}],
        "hosts": {site.authority: _host_entry(trust)},
    })
    return proxy, gateway_port


def test_gateway_listener_sends_origin_form_requests_to_its_https_upstream(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["valid"]
    proxy, gateway_port = _gateway(countersign, site, _anchored(test_pki))
    response = exchange("127.0.0.1", gateway_port,
                        request_bytes("GET", "/through-gateway?q=1", [("Host", "app.internal")]))
    _assert_served(response, site)
    last = site.logged("/through-gateway?q=1")
    assert last.server_name == "localhost"


def test_gateway_listener_applies_the_upstream_trust_policy(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["wrong-name"]
    proxy, gateway_port = _gateway(countersign, site, _anchored(test_pki))
    before = len(site.access_entries())
    response = exchange("127.0.0.1", gateway_port, request_bytes("GET", "/", [("Host", "app.internal")]))
    _assert_refused(response, proxy, site, before, "tls_certificate_error", "name mismatch")


# --- reload and connection reuse ---------------------------------------------------------------

def test_sighup_after_replacing_the_anchors_file_applies_to_new_connections(countersign, tls_upstreams,
                                                                          test_pki, tmp_path, reload_applied):
    # nginx closes after each response on this site, so every request needs a new connection.
    site = tls_upstreams["one-shot"]
    anchors = tmp_path / "rotating-anchors.pem"
    shutil.copy(test_pki.path("evil-root.pem"), anchors)
    proxy = _proxy_for(countersign, site, {"anchors": [str(anchors)]})
    before = len(site.access_entries())
    _assert_refused(_get(proxy, site), proxy, site, before, "tls_certificate_error", "untrusted issuer")

    shutil.copy(test_pki.path("root.pem"), anchors)
    reload_applied(proxy)
    _assert_served(_get(proxy, site, "/rotated"), site)

    shutil.copy(test_pki.path("evil-root.pem"), anchors)
    reload_applied(proxy)
    before = len(site.access_entries())
    _assert_refused(_get(proxy, site, "/revoked"), proxy, site, before, "tls_certificate_error", "untrusted issuer")


def test_upstream_connection_is_reused_across_client_connections(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["valid"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki))
    for index in range(3):
        with RawConnection("127.0.0.1", proxy.port) as client:
            client.send(forward_request(site.url(f"/pooled-{index}")))
            assert client.read_response().status == 200
    mine = [site.logged(f"/pooled-{index}") for index in range(3)]
    assert len({entry.connection for entry in mine}) == 1, \
        f"three client connections used {len({e.connection for e in mine})} upstream TLS connections"


def test_new_upstream_connection_resumes_the_tls_session(countersign, tls_upstreams, test_pki):
    site = tls_upstreams["one-shot"]
    proxy = _proxy_for(countersign, site, _anchored(test_pki))
    for index in range(3):
        assert _get(proxy, site, f"/resume-{index}").status == 200
    mine = [site.logged(f"/resume-{index}") for index in range(3)]
    assert len({entry.connection for entry in mine}) == 3, "nginx was meant to close after each response"
    assert [entry.session_reused for entry in mine] == [False, True, True], \
        "the second and third connections did a full handshake instead of resuming"


# --- configuration errors at check and at start ------------------------------------------------

def _trust_config(workdir, trust: dict, identity: str = None, credentials: dict = None) -> dict:
    config = merge(base_config(3128, 9901, workdir), {"hosts": {"localhost:8443": _host_entry(trust, identity)}})
    if credentials:
        config["credentials"] = credentials
    return config


def _run_command(countersign_executable, workdir, command: str, config: dict, env=None):
    path = workdir / "trust-check.json5"
    path.write_text(json.dumps(config, indent=2))
    return subprocess.run([str(countersign_executable), command, "-c", str(path)], cwd=workdir,
                          capture_output=True, text=True, timeout=15, env=env)


def _bad_trust_cases(test_pki, workdir):
    not_a_certificate = workdir / "notes.pem"
    not_a_certificate.write_text("these are notes, not a certificate\n")
    leaf_pin = file_pin(test_pki.path("leaf.pem"))
    mismatched_key = {"certificate": str(test_pki.path("client.pem")),
                      "private_key": str(test_pki.path("other.key"))}
    return {
        "missing anchors file": ({"anchors": [str(workdir / "missing.pem")]}, None, None,
                                 ["missing.pem", "does not exist"]),
        "anchors file without certificates": ({"anchors": [str(not_a_certificate)]}, None, None,
                                              ["notes.pem", "no PEM certificate"]),
        "pin that is not base64": ({"pinning": "public-key", "pins": ["sha256//not*base64"]}, None, None,
                                   ["trust.pins[0]", "base64"]),
        "pin of the wrong length": ({"pinning": "public-key", "pins": ["sha256//AAAA"]}, None, None,
                                    ["trust.pins[0]", "32"]),
        "pins with pinning none": ({"pinning": "none", "pins": [leaf_pin]}, None, None,
                                   ["trust.pins", "pinning"]),
        "allow invalid with name check and no pins": ({"allow_invalid_certificates": True}, None, None,
                                                      ["allow_invalid_certificates", "pins"]),
        "certificate pinning without certificates": ({"pinning": "certificate"}, None, None,
                                                     ["pinned_certificates"]),
        "key not matching its certificate": ({}, "mismatched", {"mismatched": mismatched_key},
                                             ["other.key", "does not match"]),
    }


BAD_TRUST_CASES = ["missing anchors file", "anchors file without certificates", "pin that is not base64",
                   "pin of the wrong length", "pins with pinning none",
                   "allow invalid with name check and no pins", "certificate pinning without certificates",
                   "key not matching its certificate"]


@pytest.mark.parametrize("case", BAD_TRUST_CASES)
def test_check_refuses_bad_trust_settings_naming_the_problem(countersign_executable, test_pki, workdir, case):
    trust, identity, credentials, phrases = _bad_trust_cases(test_pki, workdir)[case]
    result = _run_command(countersign_executable, workdir, "check",
                          _trust_config(workdir, trust, identity, credentials))
    output = result.stdout + result.stderr
    assert result.returncode == 2, f"check exited {result.returncode} for {case}: {output}"
    for phrase in phrases:
        assert phrase in output, f"check's complaint about {case} does not mention {phrase!r}: {output}"


def test_check_refuses_a_wrong_pkcs12_passphrase(countersign_executable, test_pki, workdir):
    credentials = {"p12": {"pkcs12": str(test_pki.path("client.p12")), "passphrase_env": "P12_PASS"}}
    env = {"PATH": "/usr/bin:/bin", "P12_PASS": "not-the-passphrase"}
    result = _run_command(countersign_executable, workdir, "check",
                          _trust_config(workdir, {}, "p12", credentials), env)
    assert result.returncode == 2
    assert "passphrase" in result.stdout + result.stderr
    assert "not-the-passphrase" not in result.stdout + result.stderr, "the passphrase was printed"


def test_check_accepts_every_trust_feature_together(countersign_executable, test_pki, workdir):
    trust = _anchored(test_pki, anchors_only=True, pinning="public-key",
                      pins=[file_pin(test_pki.path("leaf.pem")), file_pin(test_pki.path("intermediate.pem"))],
                      validate_domain=True, server_name="localhost", min_tls_version="1.3")
    result = _run_command(countersign_executable, workdir, "check",
                          _trust_config(workdir, trust, "p12", _identities(test_pki)),
                          {"PATH": "/usr/bin:/bin", **IDENTITY_ENV})
    assert result.returncode == 0, result.stdout + result.stderr


def test_run_refuses_to_start_with_contradictory_trust(countersign_executable, test_pki, workdir):
    config = _trust_config(workdir, {"pinning": "none", "pins": [file_pin(test_pki.path("leaf.pem"))]})
    config["listen"] = [{"address": f"127.0.0.1:{free_port()}"}]
    config["admin"] = {"address": f"127.0.0.1:{free_port()}"}
    result = _run_command(countersign_executable, workdir, "run", config)
    assert result.returncode == 2, f"run exited {result.returncode}: {result.stdout + result.stderr}"
    assert "trust.pins" in result.stdout + result.stderr


def test_tls13_suites_are_offered_in_our_order(countersign, tmp_path):
    """An origin that takes the client's order (as `openssl s_server` and nginx do by default)
    settles on AES-128-GCM with us, where OpenSSL's own default order would give AES-256-GCM."""
    key, certificate = tmp_path / "origin.key", tmp_path / "origin.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(key), "-out", str(certificate), "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost"], check=True, capture_output=True)
    server = OpenSSLServer(tmp_path, "suites", certificate, key, extra=["-tls1_3"])
    try:
        proxy = countersign({"hosts": {f"localhost:{server.port}": _host_entry({"anchors": [str(certificate)]})}})
        response = exchange("127.0.0.1", proxy.port, forward_request(f"http://localhost:{server.port}/"))
        assert response.status == 200, (response.status, response.header("Proxy-Status"))
        assert b"Cipher is TLS_AES_128_GCM_SHA256" in response.body, response.body[-800:]
    finally:
        server.stop()
