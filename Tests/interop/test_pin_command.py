"""`countersign pin HOST:PORT`: the served chain with each certificate's SPKI pin and SHA-256
fingerprint (checked against the openssl command line), whether it validates, and a `hosts`
snippet that works when pasted into a configuration."""
import re
import subprocess

import pytest

from harness.pki import certificates_in, file_pin, sha256_fingerprint, spki_pin
from harness.ports import free_port
from harness.rawclient import exchange, forward_request

pytestmark = pytest.mark.countersign_only

PIN = re.compile(r"sha256//[A-Za-z0-9+/]{43}=")


def _pin(countersign_executable, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(countersign_executable), "pin", *args], capture_output=True, text=True, timeout=30)


def _snippet(output: str) -> str:
    """The `hosts: { ... },` block the command prints last."""
    start = output.index("hosts: {")
    return output[start:].strip()


def test_pins_and_fingerprints_match_openssl(countersign_executable, tls_upstreams, test_pki):
    site = tls_upstreams["valid"]
    result = _pin(countersign_executable, site.authority, "--anchors", str(test_pki.path("root.pem")))
    assert result.returncode == 0, result.stderr
    served = certificates_in(test_pki.path("leaf-chain.pem"))
    printed_pins = [line.split(":", 1)[1].strip() for line in result.stdout.splitlines()
                    if line.strip().startswith("SPKI pin:")]
    assert printed_pins == [spki_pin(certificate) for certificate in served], result.stdout
    printed_fingerprints = [line.split(":", 1)[1].strip().replace(":", "").upper()
                            for line in result.stdout.splitlines() if line.strip().startswith("SHA-256:")]
    assert printed_fingerprints == [sha256_fingerprint(certificate) for certificate in served]
    assert "CN=leaf" in result.stdout and "CN=Countersign Test Intermediate" in result.stdout
    assert "validates against the configured anchors" in result.stdout
    assert "matches localhost" in result.stdout


def test_untrusted_chain_is_still_printed_and_says_why(countersign_executable, tls_upstreams, test_pki):
    site = tls_upstreams["valid"]
    result = _pin(countersign_executable, site.authority)  # the system roots do not hold the test root
    assert result.returncode == 0, result.stderr
    assert "does NOT validate against the system roots" in result.stdout
    assert "untrusted issuer" in result.stdout and "Countersign Test Root" in result.stdout
    assert file_pin(test_pki.path("leaf.pem")) in result.stdout


def test_expired_chain_reports_the_expiry(countersign_executable, tls_upstreams, test_pki):
    site = tls_upstreams["expired"]
    result = _pin(countersign_executable, site.authority, "--anchors", str(test_pki.path("root.pem")))
    assert result.returncode == 0, result.stderr
    assert "expired on 2024-01-01" in result.stdout
    assert file_pin(test_pki.path("expired.pem")) in result.stdout


def test_wrong_name_is_reported_with_the_served_names(countersign_executable, tls_upstreams, test_pki):
    site = tls_upstreams["wrong-name"]
    result = _pin(countersign_executable, site.authority, "--anchors", str(test_pki.path("root.pem")))
    assert result.returncode == 0, result.stderr
    assert "name mismatch" in result.stdout and "api.other.com" in result.stdout


def test_server_name_option_sets_the_name_checked_and_the_snippet(countersign_executable, tls_upstreams, test_pki):
    site = tls_upstreams["valid"]
    result = _pin(countersign_executable, f"127.0.0.1:{site.port}", "--anchors", str(test_pki.path("root.pem")),
                  "--server-name", "localhost")
    assert result.returncode == 0, result.stderr
    assert "server name localhost" in result.stdout
    assert "matches localhost" in result.stdout
    assert 'server_name: "localhost"' in _snippet(result.stdout)


def test_unreachable_port_fails_with_a_sentence(countersign_executable):
    port = free_port()
    result = _pin(countersign_executable, f"127.0.0.1:{port}")
    assert result.returncode == 1
    assert f"127.0.0.1:{port}" in result.stderr and "connect" in result.stderr


def _config_with_snippet(listen: str, admin: str, state_dir: str, snippet: str) -> str:
    """A JSON5 configuration around the pasted snippet. The host entry also gets `upstream_tls:
    true, intercept: false`, so plain-http clients reach it over TLS without an interception CA."""
    snippet = snippet.replace("    trust: {", "    upstream_tls: true, intercept: false,\n    trust: {", 1)
    return (f'{{\n  listen: [ {{ address: "{listen}" }} ],\n  admin: {{ address: "{admin}" }},\n'
            f'  workers: 1,\n  state_dir: "{state_dir}",\n  {snippet}\n}}\n')


def _paste_into_running_proxy(proxy, snippet: str, site, reload_applied):
    """Reloads `proxy` with the snippet pasted into its configuration; returns the answer to a
    request for the pinned host."""
    config = proxy.config
    reload_applied(proxy, _config_with_snippet(config["listen"][0]["address"], config["admin"]["address"],
                                               config["state_dir"], snippet))
    return exchange("127.0.0.1", proxy.port, forward_request(site.url("/pasted")))


def test_snippet_passes_check_and_lets_requests_through(countersign_executable, countersign, tls_upstreams,
                                                        test_pki, workdir, reload_applied):
    site = tls_upstreams["valid"]
    result = _pin(countersign_executable, site.authority, "--anchors", str(test_pki.path("root.pem")))
    snippet = _snippet(result.stdout)
    assert set(PIN.findall(snippet)) == {file_pin(test_pki.path("leaf.pem")),
                                         file_pin(test_pki.path("intermediate.pem"))}
    pasted = workdir / "pasted.json5"
    pasted.write_text(_config_with_snippet("127.0.0.1:3128", "127.0.0.1:9901", str(workdir / "state"),
                                           snippet))
    checked = subprocess.run([str(countersign_executable), "check", "-c", str(pasted)],
                             capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, f"the printed snippet does not pass check: {checked.stderr}\n{pasted.read_text()}"

    response = _paste_into_running_proxy(countersign(), snippet, site, reload_applied)
    assert response.status == 200, f"{response.status} {response.header('Proxy-Status')}: {response.body[:200]!r}"


def test_snippet_for_a_self_signed_server_lets_requests_through(countersign_executable, countersign,
                                                                tls_upstreams, reload_applied):
    site = tls_upstreams["self-signed"]
    result = _pin(countersign_executable, site.authority)
    assert result.returncode == 0, result.stderr
    response = _paste_into_running_proxy(countersign(), _snippet(result.stdout), site, reload_applied)
    assert response.status == 200, f"{response.status} {response.header('Proxy-Status')}"


def _root_and_direct_leaf(directory):
    """A root CA and a localhost leaf it signed directly: the verified path is leaf, root."""
    directory.mkdir(parents=True, exist_ok=True)
    root, root_key = directory / "root.pem", directory / "root.key"
    leaf, leaf_key = directory / "leaf.pem", directory / "leaf.key"
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2"]
    subprocess.run(["openssl", "req", "-x509", *ec, "-subj", "/CN=Pin Direct Root", "-keyout", str(root_key),
                    "-out", str(root), "-addext", "basicConstraints=critical,CA:TRUE",
                    "-addext", "keyUsage=critical,keyCertSign,cRLSign"], check=True, capture_output=True)
    subprocess.run(["openssl", "req", "-x509", *ec, "-subj", "/CN=localhost", "-CA", str(root), "-CAkey", str(root_key),
                    "-keyout", str(leaf_key), "-out", str(leaf), "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-addext", "basicConstraints=CA:FALSE", "-addext", "extendedKeyUsage=serverAuth"],
                   check=True, capture_output=True)
    return root, leaf, leaf_key


def test_root_is_labelled_root_and_anchors_are_read_like_the_configuration(countersign_executable, workdir):
    """`pin -c conf/countersign.json5 --anchors anchors/root.pem`, run from elsewhere, reads the
    anchors from the configuration's directory (as `anchors` in it would), labels the root pin
    as the root, and its snippet pasted into that configuration passes check."""
    from harness.openssl_server import OpenSSLServer
    conf = workdir / "conf"
    root, leaf, leaf_key = _root_and_direct_leaf(conf / "anchors")
    config = conf / "countersign.json5"
    config.write_text('{ listen: [ { address: "127.0.0.1:3128" } ] }\n')
    server = OpenSSLServer(workdir, "direct", leaf, leaf_key)
    try:
        elsewhere = workdir / "elsewhere"
        elsewhere.mkdir()
        result = subprocess.run([str(countersign_executable), "pin", f"localhost:{server.port}", "-c", str(config),
                                 "--anchors", "anchors/root.pem"], cwd=elsewhere, capture_output=True, text=True, timeout=30)
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    assert "validates against the configured anchors" in result.stdout, result.stdout
    snippet = _snippet(result.stdout)
    root_line = next(line for line in snippet.splitlines() if file_pin(root) in line)
    assert "// root CN=Pin Direct Root" in root_line, f"the root's pin is not labelled root: {root_line}"
    assert "intermediate" not in snippet, snippet
    assert "pins of the leaf and its issuer, the root" in result.stdout
    assert 'anchors: ["anchors/root.pem"]' in snippet, snippet

    pasted = conf / "pasted.json5"
    pasted.write_text(_config_with_snippet("127.0.0.1:3128", "127.0.0.1:9901", str(workdir / "state"), snippet))
    checked = subprocess.run([str(countersign_executable), "check", "-c", str(pasted)], cwd=elsewhere,
                             capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, f"the snippet does not pass check where it was made for: {checked.stderr}"
