"""A throwaway MIT Kerberos KDC on a loopback port, created per fixture in its own directory.

    kdc = KerberosRealm(tmp_path / "kdc", realm="COUNTERSIGN.TEST")
    kdc.start()
    kdc.add_principal("client", password="pw")            # client@COUNTERSIGN.TEST
    kdc.add_principal("HTTP/localhost")                   # random key
    kdc.export_keytab("HTTP/localhost", tmp_path / "http.keytab")
    env = kdc.environment()                               # KRB5_CONFIG for clients/acceptors
    ...
    kdc.stop()                                            # by PID

Everything (database, stash, krb5.conf, kdc.conf, log) lives under `directory`; the KDC listens
on 127.0.0.1:<ephemeral> over TCP and UDP, and the krb5.conf written for clients names only
that address (no DNS, no reverse lookups, no hostname canonicalisation), so nothing leaves
loopback. Needs krb5-kdc and krb5-admin-server (scripts/install-test-deps.sh installs them);
`KerberosRealm.available()` says whether they are there, so callers can skip."""
import os
import secrets
import shutil
import subprocess
from pathlib import Path

from harness.ports import free_port, wait_for_port
from harness.process import ManagedProcess

_SBIN = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]


def _tool(name: str):
    for directory in _SBIN:
        candidate = Path(directory) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


class KerberosRealm:
    TOOLS = ("kdb5_util", "kadmin.local", "krb5kdc")

    @classmethod
    def available(cls) -> bool:
        return all(_tool(name) for name in cls.TOOLS)

    def __init__(self, directory: Path, realm: str = "COUNTERSIGN.TEST",
                 domain_realm=("localhost", "127.0.0.1"), ticket_lifetime: str = "10h", clockskew: int = 300):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.realm = realm
        self.port = free_port()
        self.domain_realm = list(domain_realm)
        self.ticket_lifetime = ticket_lifetime
        # How late a ticket is still honoured (KDC and acceptors): a few seconds lets a test see
        # an expired ticket refused without waiting the default five minutes.
        self.clockskew = clockskew
        self.process = None
        self.krb5_conf = self.directory / "krb5.conf"
        self.kdc_conf = self.directory / "kdc.conf"
        self._write_configs()

    # -- configuration -------------------------------------------------------------------------

    def _write_configs(self) -> None:
        d = self.directory
        mapping = "\n".join(f" {host} = {self.realm}" for host in self.domain_realm)
        self.krb5_conf.write_text(f"""[libdefaults]
 default_realm = {self.realm}
 dns_lookup_kdc = false
 dns_lookup_realm = false
 rdns = false
 dns_canonicalize_hostname = false
 udp_preference_limit = 1
 ticket_lifetime = {self.ticket_lifetime}
 clockskew = {self.clockskew}
 default_ccache_name = FILE:{d}/ccache-default
[realms]
 {self.realm} = {{
  kdc = 127.0.0.1:{self.port}
  database_name = {d}/principal
  key_stash_file = {d}/stash
 }}
[domain_realm]
{mapping}
""")
        self.kdc_conf.write_text(f"""[kdcdefaults]
 kdc_tcp_listen = 127.0.0.1:{self.port}
 kdc_listen = 127.0.0.1:{self.port}
[realms]
 {self.realm} = {{
  database_name = {d}/principal
  key_stash_file = {d}/stash
  acl_file = {d}/kadm5.acl
  max_life = 24h
  max_renewable_life = 7d
 }}
[logging]
 kdc = FILE:{d}/kdc.log
""")

    def environment(self, base=None) -> dict:
        """An environment for processes of this realm: KRB5_CONFIG (clients, acceptors) and
        KRB5_KDC_PROFILE (the KDC tools), plus `base` (default: this process's environment)."""
        env = dict(os.environ if base is None else base)
        env["KRB5_CONFIG"] = str(self.krb5_conf)
        env["KRB5_KDC_PROFILE"] = str(self.kdc_conf)
        env.pop("KRB5CCNAME", None)
        env.pop("KRB5_KTNAME", None)
        env.pop("KRB5_CLIENT_KTNAME", None)
        return env

    def principal(self, name: str) -> str:
        """`name` with this realm appended unless it already names one."""
        return name if "@" in name else f"{name}@{self.realm}"

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> "KerberosRealm":
        if not self.available():
            raise RuntimeError("MIT KDC tools missing: install krb5-kdc and krb5-admin-server")
        if not (self.directory / "principal").exists():
            self._run("kdb5_util", "create", "-s", "-P", "master-" + secrets.token_hex(8), "-r", self.realm)
        (self.directory / "kadm5.acl").touch()
        self.process = ManagedProcess([_tool("krb5kdc"), "-n", "-P", str(self.directory / "kdc.pid")],
                                      self.directory, "krb5kdc", env=self.environment())
        wait_for_port("127.0.0.1", self.port, timeout=15, alive=self.process.alive)
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None

    def running(self) -> bool:
        return self.process is not None and self.process.alive()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- principals and keytabs ----------------------------------------------------------------

    def add_principal(self, name: str, password: str = None) -> str:
        """Creates `name` (realm appended when missing) with `password`, or a random key when
        None. Returns the full principal name."""
        principal = self.principal(name)
        if password is None:
            self.kadmin(f"addprinc -randkey {principal}")
        else:
            self.kadmin(f"addprinc -pw {password} {principal}")
        return principal

    def change_password(self, name: str, password: str) -> None:
        self.kadmin(f"cpw -pw {password} {self.principal(name)}")

    def set_max_life(self, name: str, lifetime: str) -> None:
        """Tickets for `name` last at most `lifetime` ("15 seconds", "1 hour")."""
        self.kadmin(f'modprinc -maxlife "{lifetime}" {self.principal(name)}')

    def delete_principal(self, name: str) -> None:
        self.kadmin(f"delprinc -force {self.principal(name)}")

    def export_keytab(self, name: str, path: Path, randomize: bool = False) -> Path:
        """Writes `name`'s keys to the keytab `path` (appending when it exists). With
        `randomize` the KDC's key is changed too (a new kvno), like a rotation; without it
        the current key is exported as is (-norandkey), so a password principal keeps its
        password."""
        path = Path(path)
        flag = "" if randomize else "-norandkey "
        self.kadmin(f"ktadd -k {path} {flag}{self.principal(name)}")
        os.chmod(path, 0o600)
        return path

    def kadmin(self, query: str) -> str:
        return self._run("kadmin.local", "-q", query)

    def kinit(self, name: str, ccache: Path, password: str = None, keytab: Path = None) -> Path:
        """A ticket cache at `ccache` for `name`, from its password or keytab."""
        principal = self.principal(name)
        env = self.environment()
        env["KRB5CCNAME"] = f"FILE:{ccache}"
        if keytab is not None:
            argv = [_tool("kinit"), "-k", "-t", str(keytab), principal]
            result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
        else:
            argv = [_tool("kinit"), principal]
            result = subprocess.run(argv, env=env, input=f"{password}\n", capture_output=True, text=True, timeout=30)
        if result.returncode != 0:
            raise RuntimeError(f"kinit {principal} failed: {result.stderr.strip()}")
        return Path(ccache)

    def _run(self, tool: str, *argv: str) -> str:
        path = _tool(tool)
        if path is None:
            raise RuntimeError(f"{tool} not installed (krb5-kdc / krb5-admin-server)")
        result = subprocess.run([path, *argv], env=self.environment(), cwd=self.directory,
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise RuntimeError(f"{tool} {' '.join(argv)} failed ({result.returncode}): {result.stderr.strip()}")
        return result.stdout

    def log_text(self) -> str:
        path = self.directory / "kdc.log"
        return path.read_text(errors="replace") if path.exists() else ""
