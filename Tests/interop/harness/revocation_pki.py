"""A small PKI per test made with `openssl ca` (index file, serials, CRL numbers), for the
revocation tests: root -> intermediate -> leaves, CRLs from `openssl ca -gencrl` (after
`-revoke`), OCSP responses from `openssl ocsp -respout` (signed by the issuer, by a delegated
responder with id-kp-OCSPSigning, or by a key nobody certified), and OpenSSL's own verdicts
(`openssl verify -crl_check`) as the positive control."""
import datetime
import subprocess
from pathlib import Path

CA_CONFIG = """\
[ca]
default_ca = this_ca
[this_ca]
dir = {dir}
database = $dir/index.txt
new_certs_dir = $dir/issued
serial = $dir/serial
crlnumber = $dir/crlnumber
certificate = $dir/ca.pem
private_key = $dir/ca.key
default_md = sha256
default_days = 30
default_crl_days = 7
policy = any_name
unique_subject = no
[any_name]
commonName = supplied
[intermediate]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[server]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:localhost, IP:127.0.0.1
[responder]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = OCSPSigning
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[crl]
authorityKeyIdentifier = keyid
"""

ROOT_EXTENSIONS = """\
[root]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
"""


def openssl(*args, cwd=None) -> str:
    done = subprocess.run(["openssl", *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(map(str, args))} failed: {done.stderr[-2000:]}")
    return done.stdout + done.stderr


def _key(path: Path) -> Path:
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path)
    return path


class CertificateAuthority:
    """One CA directory for `openssl ca`: its certificate, key, index and CRL number."""

    def __init__(self, directory: Path, name: str, issuer: "CertificateAuthority" = None):
        self.directory = directory
        self.name = name
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "issued").mkdir(exist_ok=True)
        (directory / "index.txt").write_text("")
        (directory / "serial").write_text("1000\n")
        (directory / "crlnumber").write_text("01\n")
        self.config = directory / "ca.cnf"
        self.config.write_text(CA_CONFIG.format(dir=directory) + ROOT_EXTENSIONS)
        self.key = _key(directory / "ca.key")
        self.certificate = directory / "ca.pem"
        if issuer is None:
            openssl("req", "-x509", "-new", "-key", self.key, "-subj", f"/CN={name}", "-days", "30",
                    "-config", self.config, "-extensions", "root", "-out", self.certificate)
        else:
            issuer.issue(self.key, name, "intermediate", self.certificate)

    def issue(self, key: Path, common_name: str, extensions: str, out: Path) -> Path:
        csr = out.with_suffix(".csr")
        openssl("req", "-new", "-key", key, "-subj", f"/CN={common_name}", "-out", csr)
        openssl("ca", "-batch", "-config", self.config, "-extensions", extensions, "-in", csr, "-out", out, "-notext")
        return out

    def server(self, name: str) -> tuple:
        """A localhost server certificate and its key, issued by this CA: (certificate, key)."""
        key = _key(self.directory / f"{name}.key")
        return self.issue(key, name, "server", self.directory / f"{name}.pem"), key

    def responder(self, name: str = "OCSP responder") -> tuple:
        key = _key(self.directory / "responder.key")
        return self.issue(key, name, "responder", self.directory / "responder.pem"), key

    def revoke(self, certificate: Path, reason: str = "keyCompromise") -> None:
        openssl("ca", "-batch", "-config", self.config, "-revoke", certificate, "-crl_reason", reason)

    def crl(self, out: Path, der: bool = False, next_update: datetime.datetime = None) -> Path:
        """`openssl ca -gencrl` (7 days, or until `next_update`), PEM or DER."""
        pem = out.with_suffix(".crl.pem") if der else out
        args = ["ca", "-batch", "-config", self.config, "-gencrl", "-crlexts", "crl", "-out", pem]
        if next_update is not None:
            last = next_update - datetime.timedelta(days=1)
            args += ["-crl_lastupdate", _generalized(last), "-crl_nextupdate", _generalized(next_update)]
        openssl(*args)
        if der:
            openssl("crl", "-in", pem, "-outform", "DER", "-out", out)
        return out

    def ocsp_response(self, certificate: Path, out: Path, signer: Path = None, signer_key: Path = None) -> Path:
        """`openssl ocsp -respout`: this CA's index answers for `certificate`, signed by the CA
        itself or by `signer`."""
        openssl("ocsp", "-index", self.directory / "index.txt", "-CA", self.certificate,
                "-rsigner", signer or self.certificate, "-rkey", signer_key or self.key,
                "-issuer", self.certificate, "-cert", certificate, "-respout", out, "-ndays", "1")
        return out


def _generalized(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.timezone.utc).strftime("%Y%m%d%H%M%SZ")


def chain_file(out: Path, *pems: Path) -> Path:
    out.write_bytes(b"".join(path.read_bytes() for path in pems))
    return out


def openssl_verify(root: Path, untrusted: Path, leaf: Path, crls=(), all_levels: bool = False) -> bool:
    """OpenSSL's own verdict with the leaf's CRL checked (-crl_check), or every certificate's
    (-crl_check_all, which then needs a CRL of every CA): the positive control."""
    args = ["openssl", "verify", "-no-CApath", "-no-CAstore", "-CAfile", str(root), "-untrusted", str(untrusted)]
    if crls:
        args += ["-crl_check_all" if all_levels else "-crl_check"]
        for crl in crls:
            args += ["-CRLfile", str(crl)]
    return subprocess.run(args + [str(leaf)], capture_output=True).returncode == 0


def expired_ocsp_response(issuer: CertificateAuthority, certificate: Path, out: Path) -> Path:
    """A good OCSP response for `certificate` whose nextUpdate passed an hour ago, signed by the
    issuer (`openssl ocsp` only makes current ones, so this one is built with pyca/cryptography)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509 import ocsp

    leaf = x509.load_pem_x509_certificate(certificate.read_bytes())
    ca = x509.load_pem_x509_certificate(issuer.certificate.read_bytes())
    key = serialization.load_pem_private_key(issuer.key.read_bytes(), password=None)
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = ocsp.OCSPResponseBuilder().add_response(
        cert=leaf, issuer=ca, algorithm=hashes.SHA1(), cert_status=ocsp.OCSPCertStatus.GOOD,
        this_update=now - datetime.timedelta(days=2), next_update=now - datetime.timedelta(hours=1),
        revocation_time=None, revocation_reason=None).responder_id(ocsp.OCSPResponderEncoding.HASH, ca)
    out.write_bytes(builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.DER))
    return out


def openssl_ocsp_verdict(response: Path, issuer: Path, leaf: Path, root: Path) -> str:
    """What OpenSSL's own `openssl ocsp -respin` says of a response for `leaf` (its signature
    and signer against `root`, the CertID, the times): the positive control for staples."""
    done = subprocess.run(["openssl", "ocsp", "-respin", str(response), "-issuer", str(issuer), "-cert", str(leaf),
                           "-CAfile", str(root), "-verify_other", str(issuer), "-no-CApath", "-no-CAstore", "-no_nonce"],
                          capture_output=True, text=True)
    return done.stdout + done.stderr


def unusable_crl(issuer: CertificateAuthority, out: Path, kind: str) -> Path:
    """A CRL Countersign must refuse to load, signed by `issuer` (pyca/cryptography, since
    `openssl ca` makes only well-formed ones): "no-crl-number", or "partitioned" (a critical
    issuingDistributionPoint that limits it to end-entity certificates)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization

    ca = x509.load_pem_x509_certificate(issuer.certificate.read_bytes())
    key = serialization.load_pem_private_key(issuer.key.read_bytes(), password=None)
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = x509.CertificateRevocationListBuilder().issuer_name(ca.subject) \
        .last_update(now - datetime.timedelta(hours=1)).next_update(now + datetime.timedelta(days=1))
    if kind != "no-crl-number":
        builder = builder.add_extension(x509.CRLNumber(7), critical=False)
    if kind == "partitioned":
        point = x509.IssuingDistributionPoint(full_name=None, relative_name=None, only_contains_user_certs=True,
                                              only_contains_ca_certs=False, only_some_reasons=None,
                                              indirect_crl=False, only_contains_attribute_certs=False)
        builder = builder.add_extension(point, critical=True)
    out.write_bytes(builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM))
    return out
