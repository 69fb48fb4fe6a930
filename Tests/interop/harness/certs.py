"""A self-signed certificate for the HTTPS nginx, made with the openssl command line."""
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass
class SelfSignedCertificate:
    certificate: Path
    key: Path

    def der(self) -> bytes:
        return ssl.PEM_cert_to_DER_cert(self.certificate.read_text())


def make_self_signed(directory: Path, common_name: str = "localhost") -> SelfSignedCertificate:
    directory.mkdir(parents=True, exist_ok=True)
    certificate, key = directory / "server.pem", directory / "server.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-days", "2", "-subj", f"/CN={common_name}",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1",
         "-keyout", str(key), "-out", str(certificate)],
        check=True, capture_output=True)
    return SelfSignedCertificate(certificate, key)
