"""`countersign check`: exit 0 on a good configuration, 2 naming the key path on a bad one."""
import json
import subprocess

import pytest

from harness.proxies import base_config

pytestmark = pytest.mark.countersign_only


@pytest.fixture
def check(workdir, countersign_executable):
    def run(config) -> subprocess.CompletedProcess:
        path = workdir / "checked.json5"
        path.write_text(config if isinstance(config, str) else json.dumps(config, indent=2))
        return subprocess.run([str(countersign_executable), "check", "-c", str(path)], cwd=workdir,
                              capture_output=True, text=True, timeout=30)
    return run


def test_check_accepts_good_config(check, workdir):
    result = check(base_config(3128, 9901, workdir))
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_accepts_json5_syntax(check, workdir):
    result = check("""// comments, unquoted keys and trailing commas are JSON5
{
  listen: [ { address: "127.0.0.1:3128" }, ],
  admin: { address: "127.0.0.1:9901" },
  unlisted_hosts: "tunnel",
}
""")
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_names_unknown_key_path(check, workdir):
    config = base_config(3128, 9901, workdir)
    config["limits"]["max_conectionz"] = 5
    result = check(config)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "limits" in output and "max_conectionz" in output, f"the key path is not named: {output}"


def test_check_names_wrongly_typed_key(check, workdir):
    config = base_config(3128, 9901, workdir)
    config["workers"] = "many"
    result = check(config)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "workers" in output, f"the key path is not named: {output}"


def test_check_rejects_bad_unlisted_hosts_value(check, workdir):
    config = base_config(3128, 9901, workdir)
    config["unlisted_hosts"] = "sometimes"
    result = check(config)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "unlisted_hosts" in output, output


@pytest.mark.parametrize("command", ["check", "run"])
def test_basic_to_a_plain_parent_needs_allow_plaintext(workdir, countersign_executable, command):
    """Basic to an http:// parent would send the password in clear: `check` and start refuse
    it, naming parent_proxy.auth.allow_plaintext and the ways out."""
    config = base_config(3128, 9901, workdir)
    config["credentials"] = {"corp": {"user": "CORP\\svc", "password_env": "CS_PARENT_PW"}}
    config["parent_proxy"] = {"url": "http://127.0.0.1:3128", "auth": {"credential": "corp", "schemes": ["basic"]}}
    path = workdir / "plain-parent.json5"
    path.write_text(json.dumps(config, indent=2))
    env = {"PATH": "/usr/bin:/bin", "CS_PARENT_PW": "Parent-pw-1d2e"}
    result = subprocess.run([str(countersign_executable), command, "-c", str(path)], cwd=workdir,
                            capture_output=True, text=True, timeout=30, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "parent_proxy.auth.allow_plaintext" in output, output
    assert "allow_plaintext: true" in output and "https://" in output, output
    assert "Parent-pw-1d2e" not in output

    # Next to NTLM, Basic is only withheld: `check` accepts it and warns by key path.
    config["parent_proxy"]["auth"]["schemes"] = ["ntlm", "basic"]
    path.write_text(json.dumps(config, indent=2))
    warned = subprocess.run([str(countersign_executable), "check", "-c", str(path)], cwd=workdir,
                            capture_output=True, text=True, timeout=30, env=env)
    assert warned.returncode == 0, warned.stdout + warned.stderr
    assert "warning: parent_proxy.auth.allow_plaintext is off: basic is never sent" in warned.stdout + warned.stderr

    config["parent_proxy"]["auth"]["allow_plaintext"] = True
    path.write_text(json.dumps(config, indent=2))
    accepted = subprocess.run([str(countersign_executable), "check", "-c", str(path)], cwd=workdir,
                              capture_output=True, text=True, timeout=30, env=env)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "allow_plaintext" not in accepted.stdout + accepted.stderr
