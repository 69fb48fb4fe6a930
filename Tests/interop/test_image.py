"""`make image`: an OCI image archive built here without a registry or a daemon. The archive's
structure is checked blob by blob (digests, sizes, diff_ids, media types), read once more by
skopeo, and its layer is unpacked into a directory where the binary runs with nothing but the
image's own files (chroot, or the image's dynamic loader with the image's libraries): its
version, `check` of the shipped configuration found by default, and a real exchange."""
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from harness.ports import free_port, wait_for_port, wait_until
from harness.rawclient import exchange, forward_request

pytestmark = pytest.mark.countersign_only

REPOSITORY = Path(__file__).resolve().parents[2]
USER = "65532:65532"


def run(command, timeout: float = 300, **options) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, **options)


@pytest.fixture(scope="module")
def archive(countersign_executable) -> Path:
    """`make image` with the binary under test (the release build it uses by default takes
    minutes; the packaging path, library closure included, is the same)."""
    built = run(["make", "-s", "--no-print-directory", "image", f"BIN={countersign_executable}"], cwd=REPOSITORY)
    assert built.returncode == 0, built.stdout + built.stderr
    path = REPOSITORY / built.stdout.strip().splitlines()[-1]
    version = run([str(countersign_executable), "--version"]).stdout.split()[-1]
    assert path == REPOSITORY / ".build" / "image" / f"countersign-{version}-oci.tar"
    return path


def _members(path: Path) -> dict:
    with tarfile.open(path) as outer:
        return {member.name: outer.extractfile(member).read() for member in outer.getmembers() if member.isfile()}


def _blob(members: dict, descriptor: dict) -> bytes:
    algorithm, digest = descriptor["digest"].split(":")
    assert algorithm == "sha256"
    data = members.get(f"blobs/sha256/{digest}")
    assert data is not None, f"{descriptor['digest']} is not in the archive"
    assert hashlib.sha256(data).hexdigest() == digest, f"blob {digest} does not hash to its name"
    assert len(data) == descriptor["size"], f"blob {digest}: {len(data)} bytes, descriptor says {descriptor['size']}"
    return data


def _image(archive: Path):
    members = _members(archive)
    assert json.loads(members["oci-layout"]) == {"imageLayoutVersion": "1.0.0"}
    index = json.loads(members["index.json"])
    assert index["schemaVersion"] == 2 and len(index["manifests"]) == 1
    entry = index["manifests"][0]
    assert entry["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
    manifest = json.loads(_blob(members, entry))
    config_bytes = _blob(members, manifest["config"])
    assert manifest["config"]["mediaType"] == "application/vnd.oci.image.config.v1+json"
    config = json.loads(config_bytes)
    layers = []
    for descriptor, diff_id in zip(manifest["layers"], config["rootfs"]["diff_ids"], strict=True):
        assert descriptor["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip"
        uncompressed = gzip.decompress(_blob(members, descriptor))
        assert diff_id == "sha256:" + hashlib.sha256(uncompressed).hexdigest(), "diff_id is not the uncompressed layer's digest"
        layers.append(uncompressed)
    return entry, config, layers


def test_archive_is_a_valid_oci_layout_with_the_runtime_settings(archive):
    entry, config, layers = _image(archive)
    assert entry["annotations"]["org.opencontainers.image.ref.name"] == config["config"]["Labels"]["org.opencontainers.image.version"]
    settings = config["config"]
    assert settings["Entrypoint"] == ["countersign", "run"]
    assert settings["User"] == USER, "the image must not run as root"
    assert "PATH=/usr/bin:/bin" in settings["Env"]
    assert config["os"] == "linux" and config["architecture"] in ("amd64", "arm64")
    names = set()
    for layer in layers:
        with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
            for member in tar.getmembers():
                names.add(member.name)
                assert member.mtime == 0, f"{member.name} has mtime {member.mtime}: not reproducible"
                if member.name == "var/lib/countersign":
                    assert (member.uid, member.mode & 0o777) == (65532, 0o700)
    for path in ("usr/bin/countersign", "etc/countersign/countersign.json5", "etc/passwd",
                 "etc/ssl/certs/ca-certificates.crt", "usr/share/publicsuffix/public_suffix_list.dat"):
        assert path in names, f"{path} is not in the image"


def test_archive_is_reproducible(archive, countersign_executable):
    first = hashlib.sha256(archive.read_bytes()).hexdigest()
    again = run(["make", "-s", "--no-print-directory", "image", f"BIN={countersign_executable}"], cwd=REPOSITORY)
    assert again.returncode == 0, again.stderr
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == first, "two builds of the same inputs differ"


@pytest.mark.skipif(shutil.which("skopeo") is None, reason="skopeo is missing: run scripts/install-test-deps.sh")
def test_skopeo_reads_the_archive_as_a_registry_client_would(archive, tmp_path):
    inspected = run(["skopeo", "inspect", "--config", f"oci-archive:{archive}"])
    assert inspected.returncode == 0, inspected.stderr
    assert json.loads(inspected.stdout)["config"]["Entrypoint"] == ["countersign", "run"]
    # A copy verifies every blob's digest and size on the way, as a push would.
    copied = run(["skopeo", "copy", "--quiet", f"oci-archive:{archive}", f"dir:{tmp_path / 'copy'}"])
    assert copied.returncode == 0, copied.stderr


@pytest.fixture(scope="module")
def rootfs(archive, tmp_path_factory) -> Path:
    """The image's layers unpacked, in order, into one directory."""
    root = tmp_path_factory.mktemp("image-rootfs")
    root.chmod(0o755)  # what a container runtime gives the image's root directory
    _, _, layers = _image(archive)
    for layer in layers:
        with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
            tar.extractall(root, filter="fully_trusted" if os.geteuid() == 0 else "tar")
    # A container runtime mounts /proc; the Swift runtime reads the arguments from it.
    proc = root / "proc"
    mounted = False
    if os.geteuid() == 0:
        proc.mkdir(exist_ok=True)
        mounted = run(["mount", "--bind", "/proc", str(proc)]).returncode == 0
    if os.geteuid() == 0 and not mounted:
        pytest.skip("cannot bind-mount /proc into the unpacked image")
    yield root
    if mounted:
        run(["umount", str(proc)])


def _in_image(rootfs: Path, *arguments: str) -> list:
    """A command line running the image's binary with only the image's files: chroot as the
    image's user when root, else the image's dynamic loader restricted to its libraries."""
    if os.geteuid() == 0:
        chroot = shutil.which("chroot") or shutil.which("chroot", path="/usr/sbin:/sbin")
        return [chroot, f"--userspec={USER}", str(rootfs), "/usr/bin/countersign", *arguments]
    loader = next((rootfs / "usr/lib64").glob("ld-linux-*.so.*"))
    directories = sorted({str(p.parent) for p in rootfs.rglob("*.so*") if p.is_file()})
    return [str(loader), "--inhibit-cache", "--library-path", ":".join(directories),
            str(rootfs / "usr/bin/countersign"), *arguments]


def test_the_unpacked_image_runs_version_and_checks_its_default_configuration(rootfs, countersign_executable):
    version = run(_in_image(rootfs, "--version"), env={}, cwd=rootfs, timeout=30)
    assert version.returncode == 0, f"the binary does not run from the image alone: {version.stderr}"
    assert version.stdout == run([str(countersign_executable), "--version"]).stdout
    if os.geteuid() != 0:
        pytest.skip("the default-path check needs chroot (root)")
    # No -c: the image's /etc/countersign/countersign.json5 is the default outside a checkout.
    checked = run(_in_image(rootfs, "check"), env={}, cwd="/", timeout=30)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "configuration /etc/countersign/countersign.json5 is valid" in checked.stdout


def test_the_unpacked_image_serves_an_exchange_and_drains(rootfs, origin):
    """`run` from the image: TLS and event libraries load, the admin answers, a forward works,
    SIGTERM drains and exits 0."""
    if os.geteuid() != 0:
        pytest.skip("running the proxy from the image needs chroot (root)")
    port, admin = free_port(), free_port()
    config = rootfs / "tmp" / "test.json5"
    config.write_text(json.dumps({"listen": [{"address": f"127.0.0.1:{port}"}], "admin": {"address": f"127.0.0.1:{admin}"},
                                  "state_dir": "/var/lib/countersign/state", "workers": 1}))
    process = subprocess.Popen(_in_image(rootfs, "run", "-c", "/tmp/test.json5"), env={}, cwd=rootfs,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for_port("127.0.0.1", admin, timeout=15, alive=lambda: process.poll() is None)
        assert exchange("127.0.0.1", admin, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status == 200
        assert exchange("127.0.0.1", port, forward_request(origin.url("/echo?from=image"))).status == 200
        process.terminate()
        assert wait_until(lambda: process.poll() is not None, timeout=10), "the image's proxy did not stop on SIGTERM"
        assert process.returncode == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def test_dockerfile_builds_the_same_image(archive):
    """No daemon here to run it: the Dockerfile must lay out the files with the same script and
    declare the same runtime settings as the archive's config."""
    _, config, _ = _image(archive)
    settings = config["config"]
    lines = [line.strip() for line in (REPOSITORY / "Dockerfile").read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert any("scripts/build-image.py" in line and "--rootfs" in line for line in lines)
    assert "--static-swift-stdlib" in " ".join(lines), "the image's binary must not need the Swift toolchain"
    final = lines[max(i for i, line in enumerate(lines) if line.startswith("FROM ")):]
    assert final[0] == "FROM scratch"
    directives = {line.split(None, 1)[0]: line.split(None, 1)[1] for line in final[1:] if not line.startswith("COPY")}
    assert json.loads(directives["ENTRYPOINT"]) == settings["Entrypoint"]
    assert directives["USER"] == settings["User"]
    assert f"ENV {directives['ENV']}".split(None, 1)[1] in settings["Env"]
    assert {f"{port}/tcp" for port in directives["EXPOSE"].split()} == set(settings["ExposedPorts"])
    assert directives["STOPSIGNAL"] == settings["StopSignal"]


def test_without_proc_the_binary_refuses_instead_of_starting_the_proxy(archive, tmp_path):
    """The Swift runtime reads the arguments from /proc: with none mounted, `check` must not
    fall through to the default command and start the proxy; it says what is missing."""
    if os.geteuid() != 0:
        pytest.skip("needs chroot (root)")
    root = tmp_path / "bare"
    root.mkdir(mode=0o755)
    root.chmod(0o755)
    for layer in _image(archive)[2]:
        with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
            tar.extractall(root, filter="fully_trusted")
    refused = run(_in_image(root, "check"), env={}, cwd=root, timeout=30)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "mount /proc" in refused.stderr and "countersign started" not in refused.stderr
