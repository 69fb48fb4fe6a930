#!/usr/bin/env python3
"""Builds an OCI image archive of Countersign without a registry or a container daemon.

    scripts/build-image.py BINARY                 -> .build/image/countersign-VERSION-oci.tar
    scripts/build-image.py BINARY --rootfs DIR    -> the same files as a directory (the Dockerfile)

The image holds one layer: BINARY as /usr/bin/countersign; every shared library it needs,
with what it loads at run time (libgssapi_krb5 for Negotiate, OpenSSL's legacy provider for
NTLM) and their own libraries, each computed with ldd on this machine (never a fixed list);
the CA roots and the Public Suffix List; a non-root user `countersign` (65532); the default
configuration at /etc/countersign/countersign.json5; `ENTRYPOINT ["countersign", "run"]`.

It is reproducible: entries sorted, owners numeric, every mtime SOURCE_DATE_EPOCH (default 0),
gzip without a name or time, JSON with sorted keys; the same inputs give the same digests.
"""
import argparse
import datetime
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
USER_ID = 65532
CONFIG_SOURCE = REPOSITORY / "deploy" / "countersign.json5"
STATE_DIR = "/var/lib/countersign"
# Loaded with dlopen, so ldd of the binary does not list them: (soname, why).
RUNTIME_LIBRARIES = [("libgssapi_krb5.so.2", "Negotiate / Kerberos")]
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
PUBLIC_SUFFIX_LIST = "/usr/share/publicsuffix/public_suffix_list.dat"

LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
INDEX_TYPE = "application/vnd.oci.image.index.v1+json"


def fail(message: str) -> None:
    print(f"build-image: {message}", file=sys.stderr)
    sys.exit(2)


class Tree:
    """The image's files by absolute path: ("file", source, mode, uid), ("data", bytes, mode,
    uid), ("dir", mode, uid) or ("symlink", target)."""

    def __init__(self):
        self.entries = {}

    def add_dir(self, path: str, mode: int = 0o755, uid: int = 0) -> None:
        self.entries[path] = ("dir", mode, uid)

    def add_file(self, path: str, source: str, mode: int = 0o644) -> None:
        self.entries[path] = ("file", source, mode, 0)

    def add_data(self, path: str, data: bytes, mode: int = 0o644) -> None:
        self.entries[path] = ("data", data, mode, 0)

    def add_symlink(self, path: str, target: str) -> None:
        self.entries[path] = ("symlink", target)

    def with_parents(self) -> dict:
        """Every entry, plus the directories that hold them (root-owned, 0755)."""
        entries = dict(self.entries)
        for path in list(entries):
            parent = os.path.dirname(path)
            while parent not in ("/", "") and parent not in entries:
                entries[parent] = ("dir", 0o755, 0)
                parent = os.path.dirname(parent)
        return entries


def image_path(host_path: str) -> str:
    """Where a host file goes in the image: its directory with symlinks resolved (merged /usr:
    /lib/x86_64-linux-gnu is /usr/lib/x86_64-linux-gnu), its own name kept (a soname link)."""
    return os.path.join(os.path.realpath(os.path.dirname(host_path)), os.path.basename(host_path))


def library_closure(objects: list) -> set:
    """Every shared library (and the dynamic loader) the given ELF objects need, per ldd."""
    needed = set()
    for elf in objects:
        output = subprocess.run(["ldd", elf], capture_output=True, text=True)
        if output.returncode != 0:
            fail(f"ldd {elf} failed: {output.stderr.strip()}")
        for line in output.stdout.splitlines():
            if "not found" in line:
                fail(f"{elf} needs a library this machine lacks: {line.strip()}")
            match = re.search(r"=>\s+(/\S+)", line) or re.match(r"\s*(/\S+)\s+\(", line)
            if match:
                needed.add(match.group(1))
    return needed


def find_library(soname: str) -> str:
    cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in cache.splitlines():
        if line.strip().startswith(soname + " ") and "=>" in line:
            return line.split("=>", 1)[1].strip()
    fail(f"{soname} is not installed; install it (scripts/install-deps.sh) to build the image")


def openssl_modules_dir() -> str:
    output = subprocess.run(["openssl", "version", "-m"], capture_output=True, text=True).stdout
    match = re.search(r'MODULESDIR: "([^"]+)"', output)
    if not match:
        fail("cannot find OpenSSL's modules directory (openssl version -m)")
    return match.group(1)


def build_tree(binary: Path, stripped: Path) -> Tree:
    tree = Tree()
    tree.add_file("/usr/bin/countersign", str(stripped), 0o755)
    runtime = [find_library(soname) for soname, _ in RUNTIME_LIBRARIES]
    legacy = os.path.join(openssl_modules_dir(), "legacy.so")
    if not os.path.exists(legacy):
        fail(f"{legacy} is missing: NTLM needs OpenSSL's legacy provider")
    for library in sorted(library_closure([str(binary), *runtime, legacy]) | set(runtime) | {legacy}):
        tree.add_file(image_path(library), os.path.realpath(library), 0o755 if "ld-linux" in library else 0o644)
    # Merged /usr, as on the build machine: /lib and /lib64 lead to /usr (the loader's path).
    for top in ("/lib", "/lib64", "/bin", "/sbin"):
        if os.path.islink(top):
            tree.add_symlink(top, os.readlink(top))
    for required in (CA_BUNDLE, PUBLIC_SUFFIX_LIST):
        if not os.path.exists(required):
            fail(f"{required} is missing; install ca-certificates and publicsuffix")
    tree.add_file(CA_BUNDLE, CA_BUNDLE)
    # OpenSSL's default verify paths (OPENSSLDIR /usr/lib/ssl) lead to the bundle, as on Debian.
    tree.add_symlink("/usr/lib/ssl/cert.pem", CA_BUNDLE)
    tree.add_symlink("/usr/lib/ssl/certs", "/etc/ssl/certs")
    tree.add_file(PUBLIC_SUFFIX_LIST, PUBLIC_SUFFIX_LIST)
    tree.add_data("/etc/passwd", (f"root:x:0:0:root:/root:/sbin/nologin\n"
                                  f"countersign:x:{USER_ID}:{USER_ID}:Countersign:{STATE_DIR}:/sbin/nologin\n").encode())
    tree.add_data("/etc/group", f"root:x:0:\ncountersign:x:{USER_ID}:\n".encode())
    tree.add_data("/etc/nsswitch.conf", b"passwd: files\ngroup: files\nhosts: files dns\n")
    tree.add_file("/etc/countersign/countersign.json5", str(CONFIG_SOURCE))
    tree.add_dir(STATE_DIR, 0o700, USER_ID)
    tree.add_dir("/tmp", 0o1777)
    return tree


def layer_tar(tree: Tree, mtime: int) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path, entry in sorted(tree.with_parents().items()):
            info = tarfile.TarInfo(path.lstrip("/"))
            info.mtime = mtime
            info.uname = info.gname = ""
            kind = entry[0]
            if kind == "dir":
                info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, entry[1], entry[2], entry[2]
                archive.addfile(info)
            elif kind == "symlink":
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, entry[1], 0o777
                archive.addfile(info)
            else:
                data = Path(entry[1]).read_bytes() if kind == "file" else entry[1]
                info.size, info.mode, info.uid, info.gid = len(data), entry[2], entry[3], entry[3]
                archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def write_rootfs(tree: Tree, directory: Path) -> None:
    """The same files as a directory (for the Dockerfile's FROM scratch stage)."""
    for path, entry in sorted(tree.with_parents().items()):
        target = directory / path.lstrip("/")
        if entry[0] == "dir":
            target.mkdir(parents=True, exist_ok=True)
            target.chmod(entry[1])
            if os.geteuid() == 0:
                os.chown(target, entry[2], entry[2])
        elif entry[0] == "symlink":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(entry[1])
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(Path(entry[1]).read_bytes() if entry[0] == "file" else entry[1])
            target.chmod(entry[2])


def canonical_json(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def descriptor(media_type: str, data: bytes, **extra) -> dict:
    return {"mediaType": media_type, "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data), **extra}


def oci_archive(layer: bytes, version: str, mtime: int) -> bytes:
    compressed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=compressed, mtime=0, compresslevel=6) as stream:
        stream.write(layer)
    layer_gz = compressed.getvalue()
    created = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc)
    config = canonical_json({
        "architecture": {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine),
        "os": "linux",
        "created": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "config": {
            "User": f"{USER_ID}:{USER_ID}",
            "Entrypoint": ["countersign", "run"],
            "Env": ["PATH=/usr/bin:/bin"],
            "WorkingDir": "/",
            "ExposedPorts": {"3128/tcp": {}, "9901/tcp": {}},
            "StopSignal": "SIGTERM",
            "Labels": {"org.opencontainers.image.title": "countersign",
                       "org.opencontainers.image.version": version,
                       "org.opencontainers.image.description": "An authenticating forward proxy, meant to run as a sidecar"},
        },
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]},
        "history": [{"created": created.strftime("%Y-%m-%dT%H:%M:%SZ"), "created_by": "scripts/build-image.py"}],
    })
    manifest = canonical_json({
        "schemaVersion": 2, "mediaType": MANIFEST_TYPE,
        "config": descriptor(CONFIG_TYPE, config),
        "layers": [descriptor(LAYER_TYPE, layer_gz)],
    })
    index = canonical_json({
        "schemaVersion": 2, "mediaType": INDEX_TYPE,
        "manifests": [descriptor(MANIFEST_TYPE, manifest, annotations={"org.opencontainers.image.ref.name": version})],
    })
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        def add(name: str, data: bytes = None) -> None:
            info = tarfile.TarInfo(name)
            info.mtime, info.uname, info.gname = mtime, "", ""
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                archive.addfile(info)
            else:
                info.size, info.mode = len(data), 0o644
                archive.addfile(info, io.BytesIO(data))
        add("oci-layout", canonical_json({"imageLayoutVersion": "1.0.0"}))
        add("index.json", index)
        add("blobs")
        add("blobs/sha256")
        for blob in sorted((config, manifest, layer_gz), key=lambda data: hashlib.sha256(data).hexdigest()):
            add("blobs/sha256/" + hashlib.sha256(blob).hexdigest(), blob)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", type=Path)
    parser.add_argument("--out", type=Path, default=REPOSITORY / ".build" / "image")
    parser.add_argument("--rootfs", type=Path, help="write the files to this directory instead of an archive")
    options = parser.parse_args()
    if not os.access(options.binary, os.X_OK):
        fail(f"{options.binary} is not an executable; build it first")
    version = subprocess.run([str(options.binary), "--version"], capture_output=True, text=True).stdout.split()[-1]
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    with tempfile.TemporaryDirectory() as scratch:
        stripped = Path(scratch) / "countersign"
        shutil.copyfile(options.binary, stripped)
        subprocess.run(["strip", "--strip-unneeded", str(stripped)], check=True)
        tree = build_tree(options.binary, stripped)
        if options.rootfs:
            write_rootfs(tree, options.rootfs)
            print(options.rootfs)
            return
        archive = oci_archive(layer_tar(tree, mtime), version, mtime)
    options.out.mkdir(parents=True, exist_ok=True)
    path = options.out / f"countersign-{version}-oci.tar"
    path.write_bytes(archive)
    print(path.relative_to(REPOSITORY) if path.is_relative_to(REPOSITORY) else path)


if __name__ == "__main__":
    main()
