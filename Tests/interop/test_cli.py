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


def _run(countersign_executable, *args, cwd, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(countersign_executable), *args], cwd=cwd, capture_output=True, text=True, timeout=30,
                          env=env if env is not None else {"PATH": "/usr/bin:/bin"})


def test_a_mistyped_command_or_option_gets_a_suggestion_and_exit_2(workdir, countersign_executable):
    typo = _run(countersign_executable, "chek", cwd=workdir)
    assert typo.returncode == 2 and 'unknown command "chek" (did you mean check?)' in typo.stderr, typo.stderr
    option = _run(countersign_executable, "check", "--confg", "x.json5", cwd=workdir)
    assert option.returncode == 2 and "unknown option --confg (did you mean --config?)" in option.stderr, option.stderr
    nothing_like = _run(countersign_executable, "frobnicate", cwd=workdir)
    assert nothing_like.returncode == 2 and "did you mean" not in nothing_like.stderr and "Usage:" in nothing_like.stderr


def test_pin_without_a_host_is_a_usage_error(workdir, countersign_executable):
    result = _run(countersign_executable, "pin", cwd=workdir)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "HOST[:PORT] is missing" in result.stderr and "usage: countersign pin" in result.stderr
    assert result.stdout == ""


def test_without_a_config_in_the_working_directory_the_installed_path_is_named(workdir, countersign_executable):
    """An installed package keeps its configuration in /etc/countersign; outside a checkout the
    error says where it looked (the image test proves the fallback loads it)."""
    result = _run(countersign_executable, "check", cwd=workdir)
    assert result.returncode == 2
    assert "/etc/countersign/countersign.json5" in result.stderr and "conf/countersign.json5" in result.stderr, result.stderr


def test_check_no_secrets_validates_everything_but_the_secret_values(workdir, countersign_executable):
    """CI has the configuration and its public files (anchors, certificates) but not the
    secrets: --no-secrets accepts absent env variables, secret files, private keys and keytabs,
    and still refuses what is wrong elsewhere, by key path."""
    from harness.certs import make_self_signed
    identity = make_self_signed(workdir / "ids", "client")
    config = base_config(3128, 9901, workdir)
    config["credentials"] = {
        "svc": {"user": "svc", "password_env": "CI_HAS_NO_SUCH_VARIABLE"},
        "other": {"user": "other", "password_file": "secrets/other.password"},
        "hash": {"user": "h", "nt_hash_file": "secrets/h.nthash"},
        "mtls": {"certificate": str(identity.certificate), "private_key": "secrets/client.key"},
        "krb": {"kerberos": {"principal": "HTTP/svc@EXAMPLE.TEST", "keytab_file": "secrets/svc.keytab"}},
    }
    config["hosts"] = {"api.example.test": {"intercept": False, "upstream_tls": True, "identity": "mtls",
                                            "auth": [{"credential": "svc", "schemes": ["basic"]}]}}
    path = workdir / "ci.json5"
    path.write_text(json.dumps(config, indent=2))

    without = _run(countersign_executable, "check", "-c", str(path), cwd=workdir)
    assert without.returncode == 2
    for missing in ("CI_HAS_NO_SUCH_VARIABLE", "other.password", "h.nthash", "client.key", "svc.keytab"):
        assert missing in without.stderr, f"a plain check does not name {missing}: {without.stderr}"

    checked = _run(countersign_executable, "check", "--no-secrets", "-c", str(path), cwd=workdir)
    assert checked.returncode == 0, checked.stderr
    assert "is valid (secret values not read: --no-secrets" in checked.stdout

    config["hosts"]["api.example.test"]["trust"] = {"anchors": ["certs/missing-ca.pem"]}
    config["credentials"]["svc"]["pasword_env"] = config["credentials"]["svc"].pop("password_env")
    path.write_text(json.dumps(config, indent=2))
    refused = _run(countersign_executable, "check", "--no-secrets", "-c", str(path), cwd=workdir)
    assert refused.returncode == 2, refused.stdout
    assert 'hosts."api.example.test".trust.anchors' in refused.stderr and "missing-ca.pem" in refused.stderr, refused.stderr
    assert "credentials.svc.pasword_env" in refused.stderr and "did you mean" in refused.stderr, refused.stderr

    both = _run(countersign_executable, "check", "--no-secrets", "--online", "-c", str(path), cwd=workdir)
    assert both.returncode == 2 and "--online" in both.stderr


def test_bash_completion_completes_commands_and_options(workdir, countersign_executable):
    script = _run(countersign_executable, "completion", "bash", cwd=workdir)
    assert script.returncode == 0, script.stderr

    def complete(*words) -> list:
        probe = (f"source {workdir / 'completion.bash'}\n"
                 f"COMP_WORDS=({' '.join(repr(w) for w in ('countersign',) + words)}); COMP_CWORD={len(words)}\n"
                 "_countersign; printf '%s\\n' \"${COMPREPLY[@]}\"\n")
        (workdir / "completion.bash").write_text(script.stdout)
        done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert complete("ch") == ["check"]
    assert "--no-secrets" in complete("check", "--n")
    assert complete("completion", "") == ["bash", "zsh", "fish"]
    for shell, marker in (("zsh", "#compdef countersign"), ("fish", "complete -c countersign")):
        other = _run(countersign_executable, "completion", shell, cwd=workdir)
        assert other.returncode == 0 and marker in other.stdout and "no-secrets" in other.stdout
    assert _run(countersign_executable, "completion", "tcsh", cwd=workdir).returncode == 2


def test_check_no_secrets_does_not_open_the_interception_ca_key(workdir, countersign_executable):
    """CI may hold the CA certificate but not its key (here: a key CI could not use)."""
    config = base_config(3128, 9901, workdir)
    config["interception"] = {"ca_certificate": "ca/ca.pem", "ca_key": "ca/ca.key"}
    config["hosts"] = {"api.example.test": {}}
    path = workdir / "ca.json5"
    path.write_text(json.dumps(config, indent=2))
    made = _run(countersign_executable, "ca", "init", "-c", str(path), cwd=workdir)
    assert made.returncode == 0, made.stderr
    (workdir / "ca" / "ca.key").write_text("not the key: CI has no access to it\n")
    plain = _run(countersign_executable, "check", "-c", str(path), cwd=workdir)
    assert plain.returncode == 2 and "interception" in plain.stderr, plain.stdout + plain.stderr
    checked = _run(countersign_executable, "check", "--no-secrets", "-c", str(path), cwd=workdir)
    assert checked.returncode == 0, checked.stderr
