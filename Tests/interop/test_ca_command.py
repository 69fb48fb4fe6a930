"""The interception CA as a user handles it: `countersign ca init` / `ca show`, `run` creating
it on first start, `check` warning about hosts it cannot cover, and the X.509 name constraints
that keep a stolen CA key from minting certificates clients accept for any other site (checked
with `openssl verify` and with curl)."""
import json
import secrets
import stat
import subprocess
from pathlib import Path

import pytest

from conftest_intercept import intercepted_host_entry
from harness.curl import curl
from harness.ports import free_port, wait_for_port, wait_until
from harness.process import ManagedProcess
from harness.proxies import base_config

pytestmark = pytest.mark.countersign_only

TRUST_INSTRUCTIONS = ("update-ca-certificates", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
                      "keytool", "--cacert")


# ------------------------------------------------------------------------------------ helpers


@pytest.fixture
def ca_command(workdir, countersign_executable):
    """ca_command(*args, cwd=workdir) runs `countersign ca ARGS`."""
    def run(*args, cwd: Path = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(countersign_executable), "ca", *map(str, args)], cwd=cwd or workdir,
                              capture_output=True, text=True, timeout=30)
    return run


def write_config(path: Path, hosts: dict, **extra) -> Path:
    """A configuration intercepting `hosts` with its CA at ca/ca.pem next to the file."""
    config = base_config(free_port(), free_port(), path.parent)
    config.update(interception={"ca_certificate": "ca/ca.pem", "ca_key": "ca/ca.key"}, hosts=hosts, **extra)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2))
    return path


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def openssl(*args, input_bytes: bytes = None, cwd: Path = None) -> subprocess.CompletedProcess:
    return subprocess.run(["openssl", *map(str, args)], input=input_bytes, capture_output=True, cwd=cwd, timeout=30)


def certificate_text(pem_file: Path) -> str:
    return openssl("x509", "-in", pem_file, "-noout", "-text").stdout.decode()


def sign_leaf(directory: Path, name: str, san: str, ca_certificate: Path, ca_key: Path):
    """What an attacker holding the CA key would do: a serverAuth leaf for `san`, signed with
    the openssl command line. Returns (certificate, key)."""
    key, csr, certificate = directory / f"{name}.key", directory / f"{name}.csr", directory / f"{name}.pem"
    extensions = directory / f"{name}.ext"
    extensions.write_text("basicConstraints = critical, CA:false\nkeyUsage = critical, digitalSignature\n"
                          f"extendedKeyUsage = serverAuth\nsubjectAltName = {san}\n")
    for step in (("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                  "-keyout", key, "-subj", f"/CN={name}", "-out", csr),
                 ("x509", "-req", "-in", csr, "-CA", ca_certificate, "-CAkey", ca_key, "-set_serial",
                  str(secrets.randbits(63)), "-days", "2", "-sha256", "-extfile", extensions,
                  "-out", certificate)):
        done = openssl(*step)
        assert done.returncode == 0, f"openssl {step[0]} failed: {done.stderr.decode()}"
    return certificate, key


def verify(ca_certificate: Path, leaf: Path) -> str:
    done = openssl("verify", "-CAfile", ca_certificate, leaf)
    return (done.stdout + done.stderr).decode()


class TlsTestServer:
    """`openssl s_server -www` presenting one certificate on a loopback port; stopped by PID."""

    def __init__(self, workdir: Path, certificate: Path, key: Path):
        self.port = free_port()
        self.process = ManagedProcess(["openssl", "s_server", "-accept", f"127.0.0.1:{self.port}",
                                       "-cert", str(certificate), "-key", str(key), "-www", "-quiet"],
                                      workdir, f"s_server-{certificate.stem}")
        wait_for_port("127.0.0.1", self.port, timeout=10, alive=self.process.alive)

    def stop(self) -> None:
        self.process.stop()


# ----------------------------------------------------------------------------------- ca init


def test_ca_init_writes_p256_ca_constrained_to_configured_hosts(ca_command, workdir):
    config = write_config(workdir / "conf" / "countersign.json5", {"localhost:8443": {}})
    result = ca_command("init", "--dir", workdir / "made", "-c", config)
    assert result.returncode == 0, result.stdout + result.stderr
    certificate, key = workdir / "made" / "ca.pem", workdir / "made" / "ca.key"
    assert mode_of(key) == 0o600, f"the CA key is readable by others: mode {oct(mode_of(key))}"
    assert "prime256v1" in openssl("pkey", "-in", key, "-noout", "-text").stdout.decode(), "the CA key is not P-256"
    text = certificate_text(certificate)
    assert "CA:TRUE" in text and "Certificate Sign" in text, f"not a CA certificate:\n{text}"
    assert "X509v3 Name Constraints: critical" in text, f"the CA is not constrained:\n{text}"
    permitted = text.split("Permitted:", 1)[1].split("Excluded:", 1)[0].split()
    assert permitted == ["DNS:localhost"], f"permitted subtrees are {permitted}, expected only the configured host"
    assert str(certificate) in result.stdout, "ca init does not say where the certificate is"


def test_ca_init_without_dir_uses_interception_paths_relative_to_the_config(ca_command, workdir):
    config = write_config(workdir / "conf" / "countersign.json5", {"localhost": {}})
    elsewhere = workdir / "elsewhere"
    elsewhere.mkdir()
    result = ca_command("init", "-c", config, cwd=elsewhere)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (workdir / "conf" / "ca" / "ca.pem").exists() and (workdir / "conf" / "ca" / "ca.key").exists()
    assert list(elsewhere.iterdir()) == [], "files were written relative to the working directory"


def test_ca_init_refuses_to_overwrite_naming_the_files_and_force_replaces(ca_command, workdir):
    config = write_config(workdir / "countersign.json5", {"localhost": {}})
    directory = workdir / "ca-dir"
    assert ca_command("init", "--dir", directory, "-c", config).returncode == 0
    certificate, key = directory / "ca.pem", directory / "ca.key"
    first_certificate, first_key = certificate.read_bytes(), key.read_bytes()

    again = ca_command("init", "--dir", directory, "-c", config)
    output = again.stdout + again.stderr
    assert again.returncode != 0, f"a second ca init overwrote or accepted silently: {output}"
    assert str(certificate) in output and str(key) in output, f"the refusal does not name both files: {output}"
    assert "--force" in output, f"the refusal does not say how to replace the CA: {output}"
    assert (certificate.read_bytes(), key.read_bytes()) == (first_certificate, first_key), "the CA changed"

    forced = ca_command("init", "--dir", directory, "--force", "-c", config)
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert certificate.read_bytes() != first_certificate and key.read_bytes() != first_key, "--force kept the old CA"
    assert mode_of(key) == 0o600, f"the replaced key has mode {oct(mode_of(key))}"


def test_ca_init_unconstrained_has_no_name_constraints(ca_command, workdir):
    result = ca_command("init", "--dir", workdir / "open", "--unconstrained")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Name Constraints" not in certificate_text(workdir / "open" / "ca.pem")
    assert mode_of(workdir / "open" / "ca.key") == 0o600


# ----------------------------------------------------------------------------------- ca show


def test_ca_show_prints_the_certificate_and_how_to_trust_it(ca_command, workdir):
    config = write_config(workdir / "countersign.json5", {"localhost": {}})
    assert ca_command("init", "-c", config).returncode == 0
    result = ca_command("show", "-c", config)
    assert result.returncode == 0, result.stdout + result.stderr
    pem = (workdir / "ca" / "ca.pem").read_text().strip()
    assert pem in result.stdout, "ca show does not print the CA certificate as it is on disk"
    missing = [word for word in TRUST_INSTRUCTIONS if word not in result.stdout]
    assert not missing, f"ca show says nothing about {missing}:\n{result.stdout}"


def test_ca_show_without_a_ca_says_how_to_create_one(ca_command, workdir):
    result = ca_command("show", "--dir", workdir / "nothing-here")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "ca init" in output and str(workdir / "nothing-here" / "ca.pem") in output, output


# -------------------------------------------------------------------- the constraint holds


@pytest.fixture
def localhost_only_ca(ca_command, workdir):
    """A CA from `ca init` for a configuration that intercepts only localhost."""
    config = write_config(workdir / "countersign.json5", {"localhost:8443": {}})
    assert ca_command("init", "--dir", workdir / "ca", "-c", config).returncode == 0
    return workdir / "ca" / "ca.pem", workdir / "ca" / "ca.key"


def test_openssl_verify_rejects_a_leaf_for_an_unlisted_name(localhost_only_ca, workdir):
    ca_certificate, ca_key = localhost_only_ca
    allowed, _ = sign_leaf(workdir, "localhost", "DNS:localhost", ca_certificate, ca_key)
    assert verify(ca_certificate, allowed).strip().endswith("OK"), "a leaf inside the constraints must verify"
    for name, san in (("evil.example", "DNS:evil.example"), ("loopback-ip", "IP:127.0.0.1")):
        forged, _ = sign_leaf(workdir, name, san, ca_certificate, ca_key)
        output = verify(ca_certificate, forged)
        assert "subtree violation" in output, f"openssl verify accepted a leaf for {san}:\n{output}"


def test_curl_refuses_a_server_presenting_a_leaf_for_an_unlisted_name(localhost_only_ca, workdir):
    ca_certificate, ca_key = localhost_only_ca
    forged = TlsTestServer(workdir, *sign_leaf(workdir, "evil.example", "DNS:evil.example", ca_certificate, ca_key))
    allowed = TlsTestServer(workdir, *sign_leaf(workdir, "localhost", "DNS:localhost", ca_certificate, ca_key))
    try:
        refused = curl(["--cacert", str(ca_certificate), "--resolve", f"evil.example:{forged.port}:127.0.0.1",
                        f"https://evil.example:{forged.port}/"], workdir, name="curl-evil")
        accepted = curl(["--cacert", str(ca_certificate), f"https://localhost:{allowed.port}/"], workdir,
                        name="curl-localhost")
    finally:
        forged.stop()
        allowed.stop()
    assert refused.returncode == 60, f"curl did not refuse the forged leaf: rc={refused.returncode} {refused.stderr}"
    assert "subtree" in refused.stderr, f"curl refused for another reason: {refused.stderr}"
    assert accepted.returncode == 0, f"the control leaf for localhost was refused: {accepted.stderr}"


def test_wildcard_and_ip_literal_hosts_become_dns_and_ip_subtrees(ca_command, workdir):
    config = write_config(workdir / "countersign.json5", {"*.example.com": {}, "10.1.2.3": {}, "localhost": {}})
    assert ca_command("init", "--dir", workdir / "ca", "-c", config).returncode == 0
    ca_certificate, ca_key = workdir / "ca" / "ca.pem", workdir / "ca" / "ca.key"
    expectations = {"DNS:api.example.com": True, "DNS:a.b.example.com": True, "IP:10.1.2.3": True,
                    "DNS:example.org": False, "DNS:evil.example": False, "IP:10.1.2.4": False,
                    "IP:::1": False}
    outcomes = {}
    for index, san in enumerate(expectations):
        leaf, _ = sign_leaf(workdir, f"leaf{index}", san, ca_certificate, ca_key)
        outcomes[san] = verify(ca_certificate, leaf).strip().endswith("OK")
    assert outcomes == expectations


# ------------------------------------------------------------------------------- run, check


def test_run_creates_the_ca_on_first_start_and_logs_where_it_is(intercepting_countersign, intercept_tls_origin,
                                                                  intercept_pki):
    host = f"localhost:{intercept_tls_origin.port}"
    proxy = intercepting_countersign({host: intercepted_host_entry(intercept_pki)})
    assert proxy.ca_certificate.exists(), "run did not create the CA named by `interception`"
    assert mode_of(proxy.ca_key) == 0o600, f"the CA key has mode {oct(mode_of(proxy.ca_key))}"
    assert "Name Constraints" in certificate_text(proxy.ca_certificate)
    created = wait_until(lambda: [entry for entry in proxy.logs()
                                  if str(proxy.ca_certificate) in json.dumps(entry)], timeout=5)
    assert created, f"no log line says where the new CA is: {proxy.logs()[:5]}"
    assert "ca show" in created[0]["msg"], f"the log line does not say how to trust it: {created[0]}"


def test_run_keeps_an_existing_ca(countersign, intercept_tls_origin, intercept_pki, workdir):
    shared = workdir / "shared-ca"
    config = {"interception": {"ca_certificate": str(shared / "ca.pem"), "ca_key": str(shared / "ca.key")},
              "hosts": {f"localhost:{intercept_tls_origin.port}": intercepted_host_entry(intercept_pki)}}
    first = countersign(config)
    made = (shared / "ca.pem").read_bytes()
    first.stop()
    second = countersign(config)
    assert (shared / "ca.pem").read_bytes() == made, "a restart replaced the CA clients already trust"
    assert not [entry for entry in second.logs() if "created" in entry.get("msg", "")], \
        "the second start claims to have created a CA"


def test_check_warns_when_an_intercepted_host_is_outside_the_constraints(ca_command, countersign_executable,
                                                                         workdir):
    narrow = write_config(workdir / "countersign.json5", {"localhost": {}})
    assert ca_command("init", "-c", narrow).returncode == 0
    write_config(workdir / "countersign.json5", {"localhost": {}, "api.example.com": {}, "plain.example.com":
                                                 {"intercept": False}})
    result = subprocess.run([str(countersign_executable), "check", "-c", str(workdir / "countersign.json5")],
                            cwd=workdir, capture_output=True, text=True, timeout=30)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"a host outside the constraints is a warning, not an error: {output}"
    warnings = [line for line in output.splitlines() if "warning" in line.lower() and "constraint" in line.lower()]
    assert len(warnings) == 1 and "api.example.com" in warnings[0], \
        f"expected one warning, for api.example.com only (localhost is covered, plain.example.com is not " \
        f"intercepted): {warnings}"


# ------------------------------------------------- ca show / init read only what they need


def _config_with_absent_secrets(path: Path) -> Path:
    """Intercepts localhost, with a credential whose variable is unset, a password file and an
    identity that do not exist: what a workstation or a build step without the secrets sees."""
    return write_config(path, {"localhost": {"identity": "mtls", "auth": [{"credential": "svc", "schemes": ["basic"]}]},
                               "other.test": {"intercept": False}},
                        credentials={"svc": {"user": "svc", "password_env": "COUNTERSIGN_TEST_UNSET_VARIABLE"},
                                     "corp": {"user": "CORP\\svc", "password_file": "/nonexistent/corp-password"},
                                     "mtls": {"certificate": "missing/client.pem", "private_key": "missing/client.key"}})


def test_ca_init_and_show_need_no_secret_of_the_configuration(ca_command, workdir):
    config = _config_with_absent_secrets(workdir / "countersign.json5")
    created = ca_command("init", "-c", config)
    assert created.returncode == 0, created.stdout + created.stderr
    assert "DNS:localhost" in certificate_text(workdir / "ca" / "ca.pem"), "constrained to the intercepted host"
    assert "other.test" not in certificate_text(workdir / "ca" / "ca.pem"), "intercept: false is not in the constraints"
    shown = ca_command("show", "-c", config)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert (workdir / "ca" / "ca.pem").read_text().strip() in shown.stdout


def test_ca_show_prints_the_real_load_error(ca_command, workdir):
    broken = workdir / "broken.json5"
    broken.write_text('{\n  interception: { ca_certificate: "ca.pem", ca_key: "ca.pem" },\n}\n')
    result = ca_command("show", "-c", broken)
    assert result.returncode != 0
    assert "interception.ca_key" in result.stderr and "must be different files" in result.stderr, result.stderr
    assert "or could not be loaded" not in result.stderr

    syntax = workdir / "syntax.json5"
    syntax.write_text('{\n  interception: { ca_certificate: "ca.pem" \n  oops\n}\n')
    result = ca_command("show", "-c", syntax)
    assert result.returncode != 0
    assert f"{syntax}:3:" in result.stderr, f"the syntax error's line is not shown: {result.stderr}"

    missing = ca_command("init", "-c", workdir / "no-such-file.json5")
    assert missing.returncode != 0
    assert "does not exist" in missing.stderr and "no-such-file.json5" in missing.stderr, missing.stderr


def test_ca_show_without_interception_section_says_so(ca_command, workdir):
    config = workdir / "plain.json5"
    config.write_text(json.dumps(base_config(free_port(), free_port(), workdir)))
    result = ca_command("show", "-c", config)
    assert result.returncode != 0
    assert "has no `interception` section" in result.stderr and "--dir" in result.stderr, result.stderr
    assert str(config) in result.stderr and "or could not be loaded" not in result.stderr, \
        f"the message must name the file and say this, not hedge: {result.stderr}"
