"""Real Kerberos peers for the Negotiate interop tests, on loopback, each in its own scratch
directory, started as a child process and stopped by its PID:

  NegotiateApache   Apache httpd with mod_auth_gssapi: `WWW-Authenticate: Negotiate` on every
                    path, over plain HTTP and (with `tls`) HTTPS. GET /whoami runs a CGI that
                    answers with the user Apache accepted; the final SPNEGO token (mutual
                    authentication) comes back in the 200's WWW-Authenticate.
  NegotiateSquid    Squid whose `negotiate_kerberos_auth` helper demands
                    `Proxy-Authenticate: Negotiate` from everyone (absolute-form and CONNECT):
                    an authenticating parent proxy.

Both take a `KerberosService`: the realm's krb5.conf and a keytab holding the service's
`HTTP/host@REALM` key, as the KDC fixture makes them. Neither log holds a header value: only
the request line, the status, the user accepted, and whether the request carried a Negotiate
token ("negotiate") or not ("-"), so tests count handshakes per connection.

Channel binding: mod_auth_gssapi (1.6.4 in Debian 12, and every release up to now: upstream
issue gssapi/mod_auth_gssapi#325) calls gss_accept_sec_context without channel bindings, and
MIT's acceptor then ignores whatever binding the initiator sent; so this Apache accepts a token
with or without the tls-server-end-point binding and cannot stand in for an Extended
Protection server: that takes an acceptor that passes the expected bindings itself."""
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from .auth_peers import APACHE_MODULE_DIR, AccessLine, LoggedPeer, _shared_scratch, _stop_and_remove, _tab_lines, \
    apache_preamble, start_apache, start_squid
from .ports import free_port

NEGOTIATE_KERBEROS_AUTH = Path("/usr/lib/squid/negotiate_kerberos_auth")
APACHE_GSSAPI_MODULE = APACHE_MODULE_DIR / "mod_auth_gssapi.so"


@dataclass(frozen=True)
class KerberosService:
    """What an acceptor needs from the realm: its configuration and the service's key."""
    krb5_conf: Path
    keytab: Path
    principal: str        # "HTTP/localhost@COUNTERSIGN.TEST"


def _private_copies(service: KerberosService, workdir: Path) -> dict:
    """Apache and Squid drop root before they read the keytab: they get their own readable
    copies (of a throwaway test realm's key), and a replay cache in their scratch directory,
    so a token replayed to the same server is refused as it would be in production."""
    keytab, krb5_conf = workdir / "service.keytab", workdir / "krb5.conf"
    shutil.copyfile(service.keytab, keytab)
    shutil.copyfile(service.krb5_conf, krb5_conf)
    for path in (keytab, krb5_conf):
        path.chmod(0o644)
    rcache = workdir / "rcache"
    rcache.mkdir()
    rcache.chmod(0o777)
    return {"KRB5_CONFIG": str(krb5_conf), "KRB5_KTNAME": f"FILE:{keytab}", "KRB5RCACHEDIR": str(rcache)}


class NegotiatePeer(LoggedPeer):
    """A peer whose access lines say in `extra["token"]` whether the request carried a token."""

    def tokens_per_connection(self, mark: int = 0) -> dict:
        """Connection -> how many of its requests carried a Negotiate token (each one is a
        handshake: Kerberos inside SPNEGO takes a single leg)."""
        counts = {}
        for entry in self.since(mark):
            counts[entry.connection] = counts.get(entry.connection, 0) + (entry.extra["token"] == "negotiate")
        return counts


# --------------------------------------------------------------------------------------- Apache

NEGOTIATE_APACHE_MODULES = ["mpm_prefork", "authn_core", "authz_core", "authz_user", "auth_gssapi", "alias",
                            "cgi", "mime", "setenvif", "ssl"]

WHOAMI_CGI = """#!/bin/sh
# Who Apache accepted, and over what: what a test asserts after the Negotiate exchange.
printf 'Content-Type: text/plain\\r\\n\\r\\n'
[ "$HTTPS" = on ] && scheme=https || scheme=http
printf 'negotiate ok for %s over %s\\n' "$REMOTE_USER" "$scheme"
"""


class NegotiateApache(NegotiatePeer):
    """Apache httpd with mod_auth_gssapi (`AuthType GSSAPI`, Kerberos inside SPNEGO) on every
    path. GET /whoami -> "negotiate ok for USER@REALM over http|https".

    `connection_bound` (GssapiConnectionBound): once a connection has authenticated, later
    requests on it need no token (IIS's default for Kerberos); off, every request must carry
    its own. `tls` = (certificate chain, key) adds an HTTPS listener on `tls_port`."""

    def __init__(self, service: KerberosService, tls: tuple = None, connection_bound: bool = True):
        self.workdir = workdir = _shared_scratch("negotiate-apache")
        self.service = service
        self.port = free_port()
        self.tls_port = free_port() if tls else None
        cgi = workdir / "cgi"
        (workdir / "htdocs").mkdir()
        cgi.mkdir()
        whoami = cgi / "whoami"
        whoami.write_text(WHOAMI_CGI)
        whoami.chmod(0o755)
        kerberos_env = _private_copies(service, workdir)
        self.access_log = workdir / "access.log"
        self.error_log = workdir / "error.log"
        (workdir / "httpd.conf").write_text(self._config(kerberos_env["KRB5_KTNAME"], tls, connection_bound))
        self.process = start_apache(workdir, [self.port] + ([self.tls_port] if tls else []), self.error_log,
                                    kerberos_env)

    def url(self, path: str = "/whoami", host: str = "localhost") -> str:
        return f"http://{host}:{self.port}{path}"

    def tls_url(self, path: str = "/whoami", host: str = "localhost", scheme: str = "https") -> str:
        """The HTTPS listener; with scheme "http" the URL a client gives a proxy whose host
        entry for localhost:tls_port says upstream_tls."""
        return f"{scheme}://{host}:{self.tls_port}{path}"

    def entries(self) -> list:
        """`extra["token"]`: "negotiate" when the request carried a Negotiate token;
        `extra["listener"]`: the Apache port it came in on."""
        return [AccessLine(parts[0], parts[2], int(parts[3]), parts[4],
                           {"keepalive_count": parts[1], "token": parts[5], "listener": parts[6]})
                for parts in _tab_lines(self.access_log, 7)]

    def error_text(self) -> str:
        return self.error_log.read_text(errors="replace")[-3000:] if self.error_log.exists() else ""

    def stop(self) -> None:
        _stop_and_remove(self.process, self.workdir)

    def _config(self, keytab: str, tls: tuple, connection_bound: bool) -> str:
        workdir = self.workdir
        tls_listener = ""
        if tls:
            tls_listener = f"""
Listen 127.0.0.1:{self.tls_port}
SSLSessionCache none
<VirtualHost 127.0.0.1:{self.tls_port}>
    SSLEngine on
    SSLCertificateFile {tls[0]}
    SSLCertificateKeyFile {tls[1]}
</VirtualHost>
"""
        return apache_preamble(workdir, self.port, self.error_log, NEGOTIATE_APACHE_MODULES, server_name="localhost",
                               log_level="warn auth_gssapi:info") + f"""
StartServers 2
MinSpareServers 2
MaxSpareServers 16
MaxRequestWorkers 16
KeepAlive On
KeepAliveTimeout 30
MaxKeepAliveRequests 0
TypesConfig /dev/null
# Whether the request carried a Negotiate token, never the token.
SetEnvIfNoCase Authorization "^Negotiate " NEGOTIATE_TOKEN=negotiate
# Client port (identifies the connection), keep-alive count, request line, status, user,
# token seen, listener port.
LogFormat "%{{remote}}p\\t%k\\t%r\\t%>s\\t%u\\t%{{NEGOTIATE_TOKEN}}e\\t%{{local}}p" negotiate
CustomLog {self.access_log} negotiate
DocumentRoot {workdir}/htdocs
ScriptAlias /whoami {workdir}/cgi/whoami
{tls_listener}
<Location />
    AuthType GSSAPI
    AuthName "countersign-negotiate"
    GssapiCredStore keytab:{keytab.removeprefix("FILE:")}
    GssapiAcceptorName {_host_based(self.service.principal)}
    GssapiAllowedMech krb5
    GssapiConnectionBound {"On" if connection_bound else "Off"}
    GssapiBasicAuth Off
    Require valid-user
</Location>
"""


def _host_based(principal: str) -> str:
    """"HTTP/localhost@REALM" -> "HTTP@localhost", the form GssapiAcceptorName takes."""
    service, _, rest = principal.partition("/")
    return f"{service}@{rest.rsplit('@', 1)[0]}"


# ---------------------------------------------------------------------------------------- Squid


class NegotiateSquid(NegotiatePeer):
    """Squid as a parent proxy demanding Negotiate (Kerberos) proxy authentication from
    everyone, checked by `negotiate_kerberos_auth -k KEYTAB -s PRINCIPAL`. Like NTLM in Squid,
    a connection that authenticated stays authenticated for the requests that follow on it."""

    def __init__(self, service: KerberosService):
        self.workdir = workdir = _shared_scratch("negotiate-squid")
        self.service = service
        self.port = free_port()
        self.access_log = workdir / "access.log"
        kerberos_env = _private_copies(service, workdir)
        keytab = kerberos_env["KRB5_KTNAME"].removeprefix("FILE:")
        config = workdir / "squid.conf"
        config.write_text(f"""
http_port 127.0.0.1:{self.port}
pid_filename {workdir}/squid.pid
cache_log {workdir}/cache.log
# Whether the request carried a Negotiate token, never the token.
acl negotiate_token req_header Proxy-Authorization ^Negotiate\\s
note token negotiate negotiate_token
logformat negotiate %>a:%>p\t%rm %ru HTTP/%rv\t%>Hs\t%un\t%>lp\t%note{{token}}
access_log stdio:{self.access_log} negotiate
coredump_dir {workdir}
cache deny all
cache_mem 8 MB
visible_hostname squid-negotiate-parent
shutdown_lifetime 0 seconds
auth_param negotiate program {NEGOTIATE_KERBEROS_AUTH} -k {keytab} -s {service.principal}
auth_param negotiate children 2
auth_param negotiate keep_alive on
acl authenticated proxy_auth REQUIRED
http_access allow authenticated
http_access deny all
""")
        self.process = start_squid(config, self.port, {**os.environ, **kerberos_env})

    def url(self, host: str = "localhost") -> str:
        return f"http://{host}:{self.port}"

    def entries(self) -> list:
        """`extra["token"]`: "negotiate" when the request carried a Negotiate token. The line
        Squid writes for the readiness probe (a connection closed before any request) is left out."""
        return [AccessLine(parts[0], parts[1], int(parts[2]) if parts[2].isdigit() else 0, parts[3],
                           {"listener": parts[4], "token": "negotiate" if parts[5] == "negotiate" else "-"})
                for parts in _tab_lines(self.access_log, 6) if not parts[1].startswith("-")]

    def cache_log(self) -> str:
        path = self.workdir / "cache.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def stop(self) -> None:
        _stop_and_remove(self.process, self.workdir)
