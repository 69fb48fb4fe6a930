"""Service packaging as an operator meets it: `make deb` builds a package that `dpkg -i`
installs (binary, hardened systemd unit, man page, /etc/countersign config as a conffile),
the installed binary accepts the installed configuration, the unit passes
`systemd-analyze verify`, and `dpkg -r` / `dpkg -P` take it all away again. The unit's system
call filter is checked against what the proxy really calls, traced with strace."""
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from harness.curl import curl
from harness.ports import free_port, wait_for_port, wait_until
from harness.process import ManagedProcess
from harness.proxies import base_config
from conftest_intercept import intercepted_host_entry

pytestmark = pytest.mark.countersign_only

REPOSITORY = Path(__file__).resolve().parents[2]
UNIT = REPOSITORY / "deploy" / "systemd" / "countersign.service"
INSTALLED = {
    "binary": Path("/usr/bin/countersign"),
    "unit": Path("/lib/systemd/system/countersign.service"),
    "man page": Path("/usr/share/man/man1/countersign.1.gz"),
    "schema": Path("/usr/share/countersign/countersign.schema.json"),
}
CONFFILE = Path("/etc/countersign/countersign.json5")
DOCUMENTED = [Path("/usr/share/doc/countersign/README.md"), Path("/usr/share/doc/countersign/copyright"),
              Path("/usr/share/doc/countersign/docs/configuration.md"), Path("/usr/share/doc/countersign/docs/operations.md")]
COMPLETIONS = {
    "bash": Path("/usr/share/bash-completion/completions/countersign"),
    "zsh": Path("/usr/share/zsh/vendor-completions/_countersign"),
    "fish": Path("/usr/share/fish/vendor_completions.d/countersign.fish"),
}


def as_root(command: list) -> list:
    if os.geteuid() == 0:
        return command
    if shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0:
        return ["sudo", "-n", *command]
    pytest.skip("installing a package needs root or passwordless sudo")


def run(command: list, **options) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=300, **options)


@pytest.fixture(scope="module")
def package(countersign_executable, tmp_path_factory) -> Path:
    """The .deb built by `make deb` from the binary under test (the release build that `make
    deb` uses by default takes minutes; the package's contents are the same)."""
    built = run(["make", "-s", "--no-print-directory", "deb", f"BIN={countersign_executable}"], cwd=REPOSITORY)
    assert built.returncode == 0, built.stdout + built.stderr
    path = REPOSITORY / built.stdout.strip().splitlines()[-1]
    assert path.suffix == ".deb" and path.exists(), built.stdout
    return path


def test_package_metadata_and_contents(package):
    info = run(["dpkg-deb", "--field", str(package), "Package", "Version", "Depends"])
    assert "Package: countersign" in info.stdout
    assert re.search(r"Version: \d+\.\d+\.\d+", info.stdout), info.stdout
    # The libraries the binary links, as Debian packages: libevent and OpenSSL at least.
    assert "libssl3" in info.stdout and "libevent-openssl-2.1-7" in info.stdout, info.stdout
    listing = run(["dpkg-deb", "--contents", str(package)]).stdout
    for path in [*INSTALLED.values(), CONFFILE, *DOCUMENTED]:
        assert f".{path}" in listing, f"{path} missing from the package:\n{listing}"


def test_package_is_native_no_placeholders_recommends_docs_copyright_completions(package, tmp_path):
    control = run(["dpkg-deb", "--field", str(package)]).stdout
    fields = dict(line.split(": ", 1) for line in control.splitlines() if ": " in line and not line.startswith(" "))
    # Loaded at run time (Negotiate, the Public Suffix List), so recommended, not linked.
    assert fields.get("Recommends") == "libgssapi-krb5-2, publicsuffix", control
    assert fields.get("Maintainer") == "Countersign developers", control
    assert not re.search(r"localhost|\.invalid|example\.", control), f"a placeholder is left in the control file:\n{control}"
    assert "Homepage" not in fields or fields["Homepage"].startswith("https://"), control

    unpacked = tmp_path / "unpacked"
    assert run(["dpkg-deb", "-x", str(package), str(unpacked)]).returncode == 0
    copyright_text = (unpacked / "usr/share/doc/countersign/copyright").read_text()
    paragraphs = [p for p in copyright_text.split("\n\n") if p.strip()]
    assert paragraphs[0].startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
    files = next(p for p in paragraphs if p.startswith("Files:"))
    assert "Copyright:" in files and "License:" in files, copyright_text
    # The installed README's links to docs/ resolve inside the package.
    doc = unpacked / "usr/share/doc/countersign"
    for link in re.findall(r"\]\((docs/[^)#]+)", (doc / "README.md").read_text()):
        assert (doc / link).exists(), f"README.md links {link}, which the package does not ship"

    # The completion scripts are what the packaged binary prints, where each shell looks.
    binary = unpacked / "usr/bin/countersign"
    for shell, path in COMPLETIONS.items():
        printed = run([str(binary), "completion", shell])
        assert printed.returncode == 0 and (unpacked / path.relative_to("/")).read_text() == printed.stdout, shell
    probe = f"source {unpacked}/usr/share/bash-completion/completions/countersign; COMP_WORDS=(countersign ch); COMP_CWORD=1; _countersign; echo ${{COMPREPLY[@]}}"
    assert run(["bash", "-c", probe]).stdout.split() == ["check"]
    conffiles = run(["dpkg-deb", "--info", str(package), "conffiles"]).stdout.split()
    assert conffiles == [str(CONFFILE)]


def test_install_check_verify_remove(package):
    if run(["dpkg-query", "-W", "countersign"]).returncode == 0:
        pytest.skip("a countersign package is already installed here; not touching it")
    installed = run(as_root(["dpkg", "-i", str(package)]))
    try:
        assert installed.returncode == 0, installed.stdout + installed.stderr
        for what, path in INSTALLED.items():
            assert path.exists(), f"the {what} was not installed at {path}"
        assert CONFFILE.exists()
        assert os.access(INSTALLED["binary"], os.X_OK)

        # The installed binary accepts the installed configuration.
        checked = run([str(INSTALLED["binary"]), "check", "-c", str(CONFFILE)])
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert f"configuration {CONFFILE} is valid" in checked.stdout
        # Without -c, outside a checkout, the installed configuration is the default.
        default = run([str(INSTALLED["binary"]), "check"], cwd="/")
        assert default.returncode == 0 and f"configuration {CONFFILE} is valid" in default.stdout, default.stdout + default.stderr

        # The unit is well-formed (unknown directives are reported on stderr with exit 0, so
        # both must be clean), its ExecStart exists, and its hardening scores as systemd's own
        # "OK" band (below 2.0 of 10).
        verified = run(["systemd-analyze", "verify", str(INSTALLED["unit"])])
        assert verified.returncode == 0 and verified.stderr.strip() == "", verified.stderr
        unit = INSTALLED["unit"].read_text()
        for directive in ["DynamicUser=yes", "StateDirectory=countersign", "ProtectSystem=strict",
                          "NoNewPrivileges=yes", "ExecReload=/bin/kill -HUP $MAINPID", "LimitNOFILE=",
                          "ExecStart=/usr/bin/countersign run -c /etc/countersign/countersign.json5"]:
            assert directive in unit
        security = run(["systemd-analyze", "security", "--offline=true", str(INSTALLED["unit"])])
        exposure = re.search(r"Overall exposure level for countersign.service: ([0-9.]+)", security.stdout)
        assert exposure and float(exposure.group(1)) < 2.0, security.stdout[-2000:]

        # The man page is installed where man finds it.
        manual = run(["man", "--warnings", "-P", "cat", "countersign"], env={**os.environ, "MANWIDTH": "80"})
        assert manual.returncode == 0 and "countersign check" in manual.stdout, manual.stderr
        assert manual.stderr.strip() == "", manual.stderr

        # Removing keeps the edited configuration (a conffile); purging takes that too.
        removed = run(as_root(["dpkg", "-r", "countersign"]))
        assert removed.returncode == 0, removed.stdout + removed.stderr
        for what, path in INSTALLED.items():
            assert not path.exists(), f"the {what} is still at {path} after dpkg -r"
        assert CONFFILE.exists(), "dpkg -r must keep the configuration"
        purged = run(as_root(["dpkg", "-P", "countersign"]))
        assert purged.returncode == 0, purged.stdout + purged.stderr
        assert not CONFFILE.exists() and not CONFFILE.parent.exists()
        assert run(["dpkg-query", "-W", "countersign"]).returncode != 0
    finally:
        run(as_root(["dpkg", "-P", "countersign"]))


def test_make_install_honours_prefix_and_destdir(countersign_executable, tmp_path):
    root = tmp_path / "root"
    installed = run(["make", "-s", "--no-print-directory", "install", f"BIN={countersign_executable}",
                     f"DESTDIR={root}", "PREFIX=/opt/cs"], cwd=REPOSITORY)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    for path in ["opt/cs/bin/countersign", "opt/cs/share/man/man1/countersign.1",
                 "opt/cs/lib/systemd/system/countersign.service", "etc/countersign/countersign.json5"]:
        assert (root / path).exists(), path
    unit = (root / "opt/cs/lib/systemd/system/countersign.service").read_text()
    assert "ExecStart=/opt/cs/bin/countersign run -c /etc/countersign/countersign.json5" in unit
    # A second install never overwrites a configuration the operator edited.
    config = root / "etc/countersign/countersign.json5"
    config.write_text("// edited\n")
    again = run(["make", "-s", "--no-print-directory", "install", f"BIN={countersign_executable}",
                 f"DESTDIR={root}", "PREFIX=/opt/cs"], cwd=REPOSITORY)
    assert again.returncode == 0 and config.read_text() == "// edited\n"


def syscall_groups() -> dict:
    """`systemd-analyze syscall-filter`: group name -> its members (system calls and groups)."""
    groups, current = {}, None
    for line in run(["systemd-analyze", "syscall-filter"]).stdout.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), set())
        elif current is not None and line.strip() and not line.strip().startswith("#"):
            current.add(line.strip())
    return groups


def expand(groups: dict, name: str) -> set:
    calls = set()
    for member in groups.get(name, ()):
        calls |= expand(groups, member) if member.startswith("@") else {member}
    return calls


def unit_syscall_filter() -> tuple:
    """The groups the unit allows and the ones it takes away again."""
    allowed, denied = [], []
    for line in UNIT.read_text().splitlines():
        if line.startswith("SystemCallFilter="):
            value = line.split("=", 1)[1]
            (denied if value.startswith("~") else allowed).extend(value.lstrip("~").split())
    return allowed, denied


def test_unit_system_call_filter_allows_what_the_proxy_calls(countersign_executable, tmp_path, origin,
                                                            intercept_pki, intercept_tls_origin):
    """Runs the proxy under strace through start (creating the interception CA), a forward
    request, a blind CONNECT tunnel, an intercepted HTTPS exchange (name resolution, leaf
    minting, upstream TLS with trust evaluation), the admin pages, a reload and a drained
    stop; every system call it made must pass the unit's SystemCallFilter, or it would fail with EPERM there."""
    if not shutil.which("strace"):
        pytest.skip("strace is not installed (scripts/install-test-deps.sh installs it)")
    groups = syscall_groups()
    allowed_groups, denied_groups = unit_syscall_filter()
    assert allowed_groups == ["@system-service"], allowed_groups
    allowed = set().union(*(expand(groups, g) for g in allowed_groups))
    allowed -= set().union(*(expand(groups, g) for g in denied_groups))
    assert "read" in allowed and "reboot" not in allowed

    port, admin = free_port(), free_port()
    config = base_config(port, admin, tmp_path)
    config["workers"] = 2
    config["interception"] = {"ca_certificate": str(tmp_path / "ca.pem"), "ca_key": str(tmp_path / "ca.key")}
    config["hosts"] = {f"localhost:{intercept_tls_origin.port}": intercepted_host_entry(intercept_pki)}
    config_path = tmp_path / "countersign.json5"
    config_path.write_text(json.dumps(config))
    trace = tmp_path / "strace.out"
    process = ManagedProcess(["strace", "-f", "-qq", "-o", str(trace), str(countersign_executable), "run",
                              "-c", str(config_path)], tmp_path, "traced")
    traced = None
    try:
        wait_for_port("127.0.0.1", port, timeout=30, alive=process.alive)
        # Signals go to the traced proxy itself: strace, signalled, would detach and leave it.
        traced = int(Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()[0])
        proxy = {"http_proxy": f"http://127.0.0.1:{port}"}
        assert curl([origin.url("/hello")], tmp_path, proxy, name="forward").status == 200
        tunnelled = curl(["-p", "-x", f"http://127.0.0.1:{port}", origin.url("/tunnel")], tmp_path, name="tunnel")
        assert tunnelled.status == 200, tunnelled.stderr
        intercepted = curl(["--cacert", str(tmp_path / "ca.pem"), intercept_tls_origin.https_url("/echo")], tmp_path,
                           {"HTTPS_PROXY": f"http://127.0.0.1:{port}"}, name="intercepted")
        assert intercepted.status == 200, intercepted.stderr
        for page in ["/healthz", "/readyz", "/metrics", "/status"]:
            assert curl([f"http://127.0.0.1:{admin}{page}"], tmp_path, name="admin").status == 200, page
        os.kill(traced, signal.SIGHUP)
        assert wait_until(lambda: "reloaded" in process.stderr_text(), timeout=10), process.output_tail()
        assert (tmp_path / "ca.pem").exists()
        os.kill(traced, signal.SIGTERM)
        process.popen.wait(30)
    finally:
        if traced is not None and process.alive():
            os.kill(traced, signal.SIGKILL)
        code = process.stop(timeout=20)
    assert code == 0, process.output_tail()
    lines = trace.read_text(errors="replace").splitlines()
    made = set()
    for line in lines:
        match = re.match(r"^\d+\s+([a-z0-9_]+)\(", line)
        if match:
            made.add(match.group(1))
    assert {"accept4", "connect"} & made, "the trace saw no network calls; is strace following threads?"
    assert sorted(made - allowed) == [], "system calls the unit's SystemCallFilter would refuse"

    # RestrictAddressFamilies= and MemoryDenyWriteExecute= must not get in the way either.
    families = set(re.findall(r"\bsocket\((AF_[A-Z0-9]+)", "\n".join(lines)))
    permitted = set(re.search(r"^RestrictAddressFamilies=(.*)$", UNIT.read_text(), re.M).group(1).split())
    assert "AF_INET" in families and families <= permitted, families
    assert "MemoryDenyWriteExecute=yes" in UNIT.read_text()
    writable_code = [line for line in lines if re.search(r"\b(mmap|mprotect)\(.*PROT_WRITE\|PROT_EXEC", line)]
    assert writable_code == [], writable_code[:3]
