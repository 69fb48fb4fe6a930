"""`countersign check --host NAME[:PORT] --chain FILE [--at TIME]`: a PEM chain judged by the
policy a request for NAME:PORT would get (host:port, host, longest *.suffix, else the default
policy), with the evaluation the handshake runs; exit 0 accepted, 1 refused, 2 usage/config.
This is how an operator checks a certificate rotation against the pins before it goes live."""
import json
import subprocess

import pytest

from harness.pki import file_pin
from harness.proxies import base_config, merge

pytestmark = pytest.mark.countersign_only


@pytest.fixture
def check_chain(workdir, countersign_executable, test_pki):
    """check_chain(hosts, *args, env=None): writes a config with `hosts` and runs
    `countersign check -c CONFIG ARGS`; chain arguments are file names of the test PKI."""
    def run(hosts: dict, *args, env=None) -> subprocess.CompletedProcess:
        path = workdir / "chain-check.json5"
        path.write_text(json.dumps(merge(base_config(3128, 9901, workdir), {"hosts": hosts}), indent=2))
        return subprocess.run([str(countersign_executable), "check", "-c", str(path), *map(str, args)],
                              cwd=workdir, capture_output=True, text=True, timeout=30, env=env)
    return run


def _pinned(test_pki, *pinned, **trust) -> dict:
    return {"intercept": False, "trust": {"anchors": [str(test_pki.path("root.pem"))], "pinning": "public-key",
                                          "pins": [file_pin(test_pki.path(name)) for name in pinned], **trust}}


def test_an_accepted_chain_shows_each_check_and_exits_0(check_chain, test_pki):
    result = check_chain({"localhost:8443": _pinned(test_pki, "intermediate.pem")},
                         "--host", "localhost:8443", "--chain", test_pki.path("leaf-chain.pem"))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert 'policy:       hosts."localhost:8443".trust' in out
    assert "chain: ok: validates against the configured anchors" in out
    assert "name: ok: certificate matches localhost" in out
    assert f"pins: ok: pinned key on the verified path: {file_pin(test_pki.path('intermediate.pem'))}" in out
    assert out.rstrip().endswith("verdict: ACCEPTED")


def test_a_rotation_to_an_unpinned_key_is_refused_listing_the_pins_and_exits_1(check_chain, test_pki):
    # The pins name the self-signed key; the new chain carries the leaf and intermediate keys.
    result = check_chain({"localhost:8443": _pinned(test_pki, "self-signed.pem")},
                         "--host", "localhost:8443", "--chain", test_pki.path("leaf-chain.pem"))
    assert result.returncode == 1, result.stdout + result.stderr
    verdict = result.stdout.strip().splitlines()[-1]
    assert verdict.startswith("verdict: REFUSED: pin mismatch"), verdict
    for served in ("leaf.pem", "intermediate.pem", "root.pem"):
        assert file_pin(test_pki.path(served)) in verdict, f"{served}'s pin is not listed: {verdict}"
    assert "chain: ok" in result.stdout and "name: ok" in result.stdout


def test_a_pinned_certificate_appended_to_the_chain_does_not_count(check_chain, test_pki, workdir):
    chain = workdir / "self-signed-then-leaf.pem"
    chain.write_bytes(test_pki.path("self-signed.pem").read_bytes() + test_pki.path("leaf.pem").read_bytes())
    hosts = {"localhost:8443": {"intercept": False, "trust": {"allow_invalid_certificates": True, "pinning": "public-key",
                                                              "pins": [file_pin(test_pki.path("leaf.pem"))]}}}
    result = check_chain(hosts, "--host", "localhost:8443", "--chain", chain)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "(NOT on the verified path: cannot satisfy a pin)" in result.stdout
    assert "chain: not checked (allow_invalid_certificates)" in result.stdout
    assert "verdict: REFUSED: pin mismatch" in result.stdout


# The test leaf is valid for 825 days from today, its CAs for ten years: 2031 is past the
# leaf's expiry only.
@pytest.mark.parametrize("at", ["2031-01-01T00:00:00Z", "1924992000", "2031-01-01T01:00:00+01:00"])
def test_at_a_time_after_the_leafs_expiry_the_chain_is_refused(check_chain, test_pki, at):
    hosts = {"localhost:8443": _pinned(test_pki, "leaf.pem")}
    args = ("--host", "localhost:8443", "--chain", test_pki.path("leaf-chain.pem"))
    assert check_chain(hosts, *args).returncode == 0
    result = check_chain(hosts, *args, "--at", at)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "evaluated at: 2031-01-01T00:00:00Z" in result.stdout
    assert "(EXPIRED at 2031-01-01T00:00:00Z)" in result.stdout
    assert "verdict: REFUSED: certificate expired on" in result.stdout


def test_the_longest_wildcard_entry_is_the_one_used(check_chain, test_pki):
    evil = {"intercept": False, "trust": {"anchors": [str(test_pki.path("evil-root.pem"))], "validate_domain": False}}
    good = {"intercept": False, "trust": {"anchors": [str(test_pki.path("root.pem"))], "validate_domain": False}}
    hosts = {"*.example.com": good, "*.api.example.com": evil}
    result = check_chain(hosts, "--host", "v2.api.example.com", "--chain", test_pki.path("evil-leaf-chain.pem"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'policy:       hosts."*.api.example.com".trust' in result.stdout
    result = check_chain(hosts, "--host", "www.example.com", "--chain", test_pki.path("evil-leaf-chain.pem"))
    assert result.returncode == 1
    assert 'hosts."*.example.com".trust' in result.stdout and "untrusted issuer: CN=Evil CA" in result.stdout


def test_an_unlisted_host_is_judged_by_the_default_policy(check_chain, test_pki):
    hosts = {"localhost:8443": _pinned(test_pki, "leaf.pem")}
    args = ("--host", "localhost:9443", "--chain", test_pki.path("leaf-chain.pem"))
    result = check_chain(hosts, *args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "no hosts entry matches localhost:9443" in result.stdout
    assert "default policy (system roots, name validation, no pins)" in result.stdout
    assert "not among the system roots" in result.stdout
    # The default policy is the system roots: with the test root made a system root, accepted.
    result = check_chain(hosts, *args, env={"PATH": "/usr/bin:/bin", "SSL_CERT_FILE": str(test_pki.path("root.pem"))})
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("args, phrase", [
    (["--host", "localhost:8443"], "--host and --chain go together"),
    (["--chain", "leaf-chain.pem"], "--host and --chain go together"),
    (["--host", "localhost:0", "--chain", "leaf-chain.pem"], "invalid port"),
    (["--host", "localhost", "--chain", "leaf-chain.pem", "--at", "next tuesday"], "is not a time"),
    (["--host", "localhost", "--chain", "leaf-chain.pem", "--at", "2027-02-30T00:00:00Z"], "is not a time"),
    (["--host", "localhost", "--chain", "missing.pem"], "missing.pem"),
    (["--host", "localhost", "--chain", "leaf.key"], "no PEM certificate"),
    (["--host", "localhost", "--chain", "leaf-chain.pem", "--bogus"], "unknown option --bogus"),
])
def test_bad_usage_exits_2_saying_what_is_wrong(check_chain, test_pki, args, phrase):
    args = [str(test_pki.directory / arg) if arg.endswith((".pem", ".key")) else arg for arg in args]
    result = check_chain({"localhost:8443": _pinned(test_pki, "leaf.pem")}, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert phrase in result.stderr, result.stderr


def test_a_configuration_that_does_not_compile_exits_2(check_chain, test_pki):
    hosts = {"localhost:8443": {"intercept": False, "trust": {"pinning": "public-key"}}}
    result = check_chain(hosts, "--host", "localhost:8443", "--chain", test_pki.path("leaf-chain.pem"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "pinning" in result.stderr
