"""RFC 9421 request signatures made by Countersign, judged by a verifier nobody here wrote:
the PyPI package `http-message-signatures` inside a recording origin (harness/signature_origin.py).
Each algorithm, with bodies by length and chunked (held whole, RFC 9530 Content-Digest added),
after a 401 answered (the replay is signed anew), plain and intercepted; the bounds on held bodies."""
import base64
import json
import os
import socket
import subprocess
import time

import pytest

from harness.checks import assert_proxy_error
from harness.curl import curl
from harness.ports import wait_for_port, wait_until
from harness.rawclient import RawConnection, exchange, forward_request, request_bytes
from harness.signature_origin import SignatureOrigin

pytestmark = pytest.mark.countersign_only

HMAC_SECRET = base64.b64encode(os.urandom(32)).decode()
COMPONENTS = ["@method", "@authority", "@path", "@query", "content-digest", "content-type", "authorization"]


@pytest.fixture(scope="module")
def signing_keys(tmp_path_factory):
    """keyid -> (algorithm, private key path or None, verifier key bytes)."""
    directory = tmp_path_factory.mktemp("signing-keys")
    keys = {"cs-hmac": ("hmac-sha256", None, HMAC_SECRET.encode())}
    specs = {"cs-ed25519": ("ed25519", ["-algorithm", "ed25519"]),
             "cs-p256": ("ecdsa-p256-sha256", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]),
             "cs-p384": ("ecdsa-p384-sha384", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"]),
             "cs-rsa-pss": ("rsa-pss-sha512", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]),
             "cs-rsa-v15": ("rsa-v1_5-sha256", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])}
    for key_id, (algorithm, options) in specs.items():
        private, public = directory / f"{key_id}.key", directory / f"{key_id}.pub"
        subprocess.run(["openssl", "genpkey", *options, "-out", str(private)], check=True, capture_output=True)
        subprocess.run(["openssl", "pkey", "-in", str(private), "-pubout", "-out", str(public)], check=True, capture_output=True)
        keys[key_id] = (algorithm, private, public.read_bytes())
    return keys


def _origin(signing_keys, **options):
    # The HMAC secret the verifier uses is the secret's raw bytes, as the SPEC says the signer's is.
    verifier_keys = {key_id: (algorithm, key) for key_id, (algorithm, _, key) in signing_keys.items()}
    return SignatureOrigin(verifier_keys, **options)


def _signing_config(signing_keys, key_id: str, authority: str, **sign):
    algorithm, private, _ = signing_keys[key_id]
    key = {"key_id": key_id}
    if private is None:
        key["hmac_secret_env"] = "CS_SIG_SECRET"
    else:
        key["private_key"] = str(private)
    entry = {"intercept": False, "sign": {"credential": "sig", "format": "rfc9421", "components": COMPONENTS, "tag": "countersign", **sign}}
    if algorithm == "rsa-v1_5-sha256":
        entry["sign"]["algorithm"] = "rsa-v1_5-sha256"
    return {"credentials": {"sig": {"signing": key}}, "hosts": {authority: entry}}


def _held_bytes(proxy) -> int:
    _, text = proxy.admin_get("/metrics")
    text = text.decode() if isinstance(text, bytes) else text
    return int(next(line.split()[1] for line in text.splitlines() if line.startswith("countersign_held_body_bytes ")))


def _verdict(response) -> dict:
    return json.loads(response.body)


@pytest.mark.parametrize("key_id", ["cs-hmac", "cs-ed25519", "cs-p256", "cs-p384", "cs-rsa-pss", "cs-rsa-v15"])
def test_each_algorithm_verifies_without_and_with_a_body(countersign, signing_keys, key_id):
    origin = _origin(signing_keys)
    try:
        proxy = countersign(_signing_config(signing_keys, key_id, origin.authority), env={"CS_SIG_SECRET": HMAC_SECRET})
        plain = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/items?page=2")))
        assert plain.status == 200, _verdict(plain)
        assert '"content-digest"' not in str(_verdict(plain)["covered"]), "a request without a body got a digest"
        body = b'{"hello": "world"}'
        posted = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/items"), "POST", body=body,
                                                                     headers=[("Content-Type", "application/json")]))
        verdict = _verdict(posted)
        assert posted.status == 200 and verdict["verified"], verdict
        assert any("content-digest" in component for component in verdict["covered"]), verdict
        assert verdict["parameters"].get("alg") == signing_keys[key_id][0]
        assert verdict["parameters"].get("keyid") == key_id and verdict["parameters"].get("nonce")
        assert verdict["body_length"] == len(body)
        proxy.stop()
        assert HMAC_SECRET not in proxy.stderr_text()
    finally:
        origin.stop()


def test_a_chunked_body_is_held_digested_and_sent_by_length(countersign, signing_keys):
    origin = _origin(signing_keys)
    try:
        proxy = countersign(_signing_config(signing_keys, "cs-ed25519", origin.authority, content_digest="sha-512"))
        body = os.urandom(300_000)
        chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 70_000]), body[i:i + 70_000]) for i in range(0, len(body), 70_000)) + b"0\r\n\r\n"
        request = request_bytes("POST", origin.url("/upload"), [("Host", origin.authority), ("Transfer-Encoding", "chunked"),
                                                                ("Content-Type", "application/octet-stream")], chunks)
        response = exchange("127.0.0.1", proxy.port, request)
        verdict = _verdict(response)
        assert response.status == 200 and verdict["verified"], verdict
        assert verdict["body_length"] == len(body)
        seen = dict((name.lower(), value) for name, value in origin.seen[-1].headers)
        assert seen.get("content-length") == str(len(body)) and "transfer-encoding" not in seen
        assert seen["content-digest"].startswith("sha-512=:")
    finally:
        origin.stop()


def test_expect_100_continue_client_is_told_to_send(countersign, signing_keys, workdir):
    origin = _origin(signing_keys)
    try:
        proxy = countersign(_signing_config(signing_keys, "cs-hmac", origin.authority), env={"CS_SIG_SECRET": HMAC_SECRET})
        (workdir / "payload").write_bytes(b"x" * 5000)
        result = curl(["-H", "Expect: 100-continue", "--data-binary", f"@{workdir / 'payload'}", origin.url("/expect")],
                      workdir, env_proxy={"http_proxy": proxy.url})
        assert result.status == 200, result.stderr
        assert json.loads(result.body)["verified"]
    finally:
        origin.stop()


def test_the_replay_after_a_401_is_signed_anew_and_covers_the_answer(countersign, signing_keys):
    origin = _origin(signing_keys, basic="svc:svc-secret-91")
    try:
        config = _signing_config(signing_keys, "cs-p256", origin.authority)
        config["credentials"]["svc"] = {"user": "svc", "password_env": "CS_SVC"}
        config["hosts"][origin.authority]["auth"] = [{"credential": "svc", "schemes": ["basic"], "allow_plaintext": True}]
        proxy = countersign(config, env={"CS_SVC": "svc-secret-91"})
        body = b"replayed body"
        response = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/guarded"), "POST", body=body))
        verdict = _verdict(response)
        assert response.status == 200 and verdict["verified"], verdict
        assert origin.challenges == 1
        assert any("authorization" in component for component in verdict["covered"]), "the answer was not covered"
    finally:
        origin.stop()


def test_intercepted_requests_are_signed(intercepting_countersign, intercept_pki, signing_keys, workdir):
    origin = _origin(signing_keys, certificate=str(intercept_pki.path("leaf-chain.pem")), key=str(intercept_pki.path("leaf.key")))
    try:
        authority = f"localhost:{origin.port}"
        config = _signing_config(signing_keys, "cs-rsa-pss", authority)
        entry = config["hosts"][authority]
        entry.update({"intercept": True, "trust": {"anchors": [str(intercept_pki.path("root.pem"))]}})
        proxy = intercepting_countersign(config["hosts"], credentials=config["credentials"])
        result = curl(["--cacert", str(proxy.ca_certificate), "--data-binary", "intercepted", origin.url("/x", host="localhost")],
                      workdir, env_proxy={"HTTPS_PROXY": proxy.url})
        assert result.returncode == 0 and result.status == 200, (result.stderr, result.body)
        verdict = json.loads(result.body)
        assert verdict["verified"], verdict
    finally:
        origin.stop()


def test_a_body_over_signed_body_bytes_is_refused_with_413_and_nothing_is_sent(countersign, signing_keys):
    origin = _origin(signing_keys)
    try:
        config = _signing_config(signing_keys, "cs-hmac", origin.authority)
        config["limits"] = {"signed_body_bytes": 10_000, "held_bodies_bytes": 10_000}
        proxy = countersign(config, env={"CS_SIG_SECRET": HMAC_SECRET})
        by_length = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/big"), "POST", body=b"y" * 10_001))
        assert_proxy_error(by_length, 413, proxy, "http_request_error")
        assert "signed_body_bytes" in by_length.header("Proxy-Status")
        chunked = request_bytes("POST", origin.url("/big"), [("Host", origin.authority), ("Transfer-Encoding", "chunked")],
                                b"2710\r\n" + b"z" * 10_000 + b"\r\n1\r\nz\r\n0\r\n\r\n")
        assert_proxy_error(exchange("127.0.0.1", proxy.port, chunked), 413, proxy, "http_request_error")
        assert origin.seen == [], "a refused body reached the origin"
    finally:
        origin.stop()


def test_held_bodies_share_one_process_wide_budget(countersign, signing_keys):
    """One client holding most of held_bodies_bytes makes another's signed upload wait for a
    503, not for memory; once the first completes, the budget is free again."""
    origin = _origin(signing_keys)
    try:
        config = _signing_config(signing_keys, "cs-hmac", origin.authority)
        config["limits"] = {"signed_body_bytes": 100_000, "held_bodies_bytes": 100_000}
        proxy = countersign(config, env={"CS_SIG_SECRET": HMAC_SECRET})
        wait_for_port("127.0.0.1", proxy.admin_port)
        first = RawConnection("127.0.0.1", proxy.port)
        head = request_bytes("POST", origin.url("/first"), [("Host", origin.authority), ("Content-Length", "90000")])
        first.send(head + b"a" * 80_000)
        assert wait_until(lambda: _held_bytes(proxy) == 80_000, timeout=10), f"held {_held_bytes(proxy)} bytes of the first body"
        second = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/second"), "POST", body=b"b" * 30_000))
        assert_proxy_error(second, 503, proxy, "connection_limit_reached")
        assert _held_bytes(proxy) == 80_000, "the refused upload kept part of the budget"
        first.send(b"a" * 10_000)
        assert first.read_response("POST").status == 200
        first.close()
        third = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/third"), "POST", body=b"c" * 30_000))
        assert third.status == 200, _verdict(third)
        assert wait_until(lambda: _held_bytes(proxy) == 0, timeout=5), "held bodies were not released"
    finally:
        origin.stop()


def test_a_response_to_verify_while_the_held_budget_is_spent_is_a_503(countersign, signing_keys):
    """The budget is the process's, for requests and responses alike: a response that cannot be
    held to be verified while another client holds the budget gets 503 (try again), not 502."""
    origin = _origin(signing_keys, response_signer=_signer_for(signing_keys, "cs-hmac"))
    try:
        config = _signing_config(signing_keys, "cs-hmac", origin.authority)
        config["credentials"]["origin"] = {"verifying": {"key_id": "cs-hmac", "hmac_secret_env": "CS_SIG_SECRET"}}
        config["hosts"][origin.authority]["verify_responses"] = {"credential": "origin"}
        config["limits"] = {"signed_body_bytes": 100_000, "held_bodies_bytes": 100_000}
        proxy = countersign(config, env={"CS_SIG_SECRET": HMAC_SECRET})
        wait_for_port("127.0.0.1", proxy.admin_port)
        first = RawConnection("127.0.0.1", proxy.port)
        first.send(request_bytes("POST", origin.url("/first"), [("Host", origin.authority), ("Content-Length", "100000")]) + b"a" * 99_990)
        assert wait_until(lambda: _held_bytes(proxy) == 99_990, timeout=10), f"held {_held_bytes(proxy)} bytes of the first body"
        second = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/signed/second")))
        assert_proxy_error(second, 503, proxy, "connection_limit_reached")
        assert b"answer" not in second.body
        first.send(b"a" * 10)
        # Its own request body holds the budget until its exchange ends (kept for a replay), so
        # its response cannot be held either.
        assert first.read_response("POST").status == 503
        first.close()
        third = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/signed/third")))
        assert third.status == 200, (third.status, third.header("Proxy-Status"))
    finally:
        origin.stop()


@pytest.mark.parametrize("sign,message", [
    ({"components": ["@method", "content-digest"], "content_digest": "none"}, "content-digest"),
    ({"label": "Sig 1"}, "structured-field key"),
    ({"components": ['"content-type";tr']}, "trailers are not signed"),
    ({"components": ["@nonsense"]}, "not a derived component"),
    ({"format": "jws"}, "format"),
])
def test_sign_configuration_errors_name_the_key(countersign_executable, tmp_path, sign, message):
    config = {"listen": [{"address": "127.0.0.1:3128"}],
              "credentials": {"sig": {"signing": {"key_id": "k", "hmac_secret_env": "CS_SIG_SECRET"}}},
              "hosts": {"api.example.com": {"intercept": False, "sign": {"credential": "sig", "format": "rfc9421", **sign}}}}
    path = tmp_path / "countersign.json5"
    path.write_text(json.dumps(config))
    result = subprocess.run([str(countersign_executable), "check", "-c", str(path)], capture_output=True, text=True,
                            env={"CS_SIG_SECRET": "s3cret", "PATH": "/usr/bin:/bin"})
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert 'hosts."api.example.com".sign' in output and message in output, output


# ---------------------------------------------------------------------------- verified responses

def _verifying_proxy(countersign, signing_keys, origin, key_id: str, **verify):
    algorithm, _, key = signing_keys[key_id]
    verifying = {"key_id": key_id}
    if algorithm == "hmac-sha256":
        verifying["hmac_secret_env"] = "CS_SIG_SECRET"
    else:
        verifying["public_key"] = str(signing_keys[key_id][1]).replace(".key", ".pub")
    config = {"credentials": {"origin": {"verifying": verifying}},
              "hosts": {origin.authority: {"intercept": False, "verify_responses": {"credential": "origin", **verify}}}}
    return countersign(config, env={"CS_SIG_SECRET": HMAC_SECRET})


def _signer_for(signing_keys, key_id: str) -> tuple:
    algorithm, private, key = signing_keys[key_id]
    return key_id, algorithm, key if private is None else private.read_bytes()


@pytest.mark.parametrize("key_id", ["cs-hmac", "cs-ed25519", "cs-p256", "cs-rsa-pss"])
def test_responses_signed_by_the_origin_are_verified_and_released(countersign, signing_keys, key_id):
    origin = _origin(signing_keys, response_signer=_signer_for(signing_keys, key_id))
    try:
        proxy = _verifying_proxy(countersign, signing_keys, origin, key_id)
        response = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/signed/a")))
        assert response.status == 200, (response.status, response.header("Proxy-Status"), response.body)
        assert json.loads(response.body)["answer"] == 42
        head = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/signed/h"), "HEAD"), method="HEAD")
        assert head.status == 200, head.header("Proxy-Status")
        line = wait_until(lambda: [entry for entry in proxy.access_logs() if entry.get("verified")], timeout=5)
        assert line, proxy.access_logs()
    finally:
        origin.stop()


@pytest.mark.parametrize("tamper,reason", [("body", "does not match its body"), ("old", "max_age"),
                                           ("unsigned", "no signature"), ("uncovered", "does not cover")])
def test_a_response_that_does_not_verify_is_a_502_and_nothing_of_it_reaches_the_client(countersign, signing_keys, tamper, reason):
    origin = _origin(signing_keys, response_signer=_signer_for(signing_keys, "cs-ed25519"))
    origin.tamper = tamper
    try:
        proxy = _verifying_proxy(countersign, signing_keys, origin, "cs-ed25519", max_age="5m")
        response = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/signed/x")))
        assert_proxy_error(response, 502, proxy, "http_protocol_error")
        assert reason in response.header("Proxy-Status"), response.header("Proxy-Status")
        assert b"answer" not in response.body, "the unverified body reached the client"
    finally:
        origin.stop()


def test_a_response_signed_by_another_key_is_refused(countersign, signing_keys):
    # The origin signs with the P-256 key under the keyid the proxy knows as the Ed25519 one.
    _, algorithm, key = _signer_for(signing_keys, "cs-p256")
    origin = _origin(signing_keys, response_signer=("cs-ed25519", algorithm, key))
    try:
        proxy = _verifying_proxy(countersign, signing_keys, origin, "cs-ed25519")
        response = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/signed/x")))
        assert_proxy_error(response, 502, proxy, "http_protocol_error")
    finally:
        origin.stop()


def test_a_verified_response_over_signed_body_bytes_is_a_502_body_size(countersign, signing_keys):
    origin = _origin(signing_keys, response_signer=_signer_for(signing_keys, "cs-hmac"))
    try:
        config = {"credentials": {"origin": {"verifying": {"key_id": "cs-hmac", "hmac_secret_env": "CS_SIG_SECRET"}}},
                  "hosts": {origin.authority: {"intercept": False, "verify_responses": {"credential": "origin"}}},
                  "limits": {"signed_body_bytes": 10, "held_bodies_bytes": 10}}
        proxy = countersign(config, env={"CS_SIG_SECRET": HMAC_SECRET})
        response = exchange("127.0.0.1", proxy.port, forward_request(origin.url("/signed/too-big")))
        assert_proxy_error(response, 502, proxy, "http_response_body_size")
    finally:
        origin.stop()
