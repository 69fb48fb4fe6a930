"""The test PKI (Tests/fixtures/pki/make-pki.sh) and the facts tests compare the proxy with:
SPKI pins and fingerprints computed independently with the openssl command line."""
import subprocess
from dataclasses import dataclass
from pathlib import Path

MAKE_PKI = Path(__file__).resolve().parents[2] / "fixtures" / "pki" / "make-pki.sh"

CLIENT_KEY_PASSPHRASE = "client-pass"
PKCS12_PASSPHRASE = "p12-pass"
CLIENT_SUBJECT = "CN=client,O=Countersign Tests"  # as nginx prints $ssl_client_s_dn
ROOT_NAME = "Countersign Test Root"
WRONG_NAMES = ("api.other.com", "www.other.com")


@dataclass(frozen=True)
class TestPKI:
    """File names follow make-pki.sh; see its header for what each one is."""
    __test__ = False  # not a pytest test class despite the name
    directory: Path

    def path(self, name: str) -> Path:
        found = self.directory / name
        assert found.exists(), f"the test PKI has no {name} in {self.directory}"
        return found


def make_test_pki(directory: Path) -> TestPKI:
    completed = subprocess.run(["sh", str(MAKE_PKI), str(directory)], capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"make-pki.sh failed: {completed.stderr[-2000:]}")
    return TestPKI(directory)


def _openssl(args, data: bytes) -> bytes:
    return subprocess.run(["openssl", *args], input=data, capture_output=True, check=True).stdout


def certificates_in(pem_file: Path) -> list:
    """Each PEM certificate block of a file, in order, as bytes."""
    text = pem_file.read_bytes()
    end = b"-----END CERTIFICATE-----"
    return [block.strip() + b"\n" + end + b"\n" for block in text.split(end)[:-1]]


def spki_pin(certificate_pem: bytes) -> str:
    """`sha256//BASE64` of the certificate's SubjectPublicKeyInfo, the way curl's docs compute it:
    x509 -pubkey | pkey -pubin -outform der | dgst -sha256 -binary | base64."""
    public_key = _openssl(["x509", "-pubkey", "-noout"], certificate_pem)
    der = _openssl(["pkey", "-pubin", "-outform", "der"], public_key)
    digest = _openssl(["dgst", "-sha256", "-binary"], der)
    return "sha256//" + _openssl(["base64", "-A"], digest).decode().strip()


def file_pin(pem_file: Path) -> str:
    """The SPKI pin of the first certificate in a PEM file."""
    return spki_pin(certificates_in(pem_file)[0])


def sha256_fingerprint(certificate_pem: bytes) -> str:
    """Hex digits of the DER certificate's SHA-256, without colons, upper case."""
    line = _openssl(["x509", "-noout", "-fingerprint", "-sha256"], certificate_pem).decode()
    return line.split("=", 1)[1].strip().replace(":", "").upper()
