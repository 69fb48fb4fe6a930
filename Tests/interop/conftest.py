"""Fixtures of the interop tier: real peers (nginx, curl, a raw-socket Python origin) around
the proxy under test. Every process listens on loopback ephemeral ports, lives in a pytest
tmp dir and is stopped by its PID at teardown.

PROXY_UNDER_TEST=countersign (default) | squid | tinyproxy selects what `proxy` is;
COUNTERSIGN_BIN overrides the binary (default .build/debug/countersign)."""
import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.certs import make_self_signed
from harness.nginx import NginxServer
from harness.origin import OriginServer
from harness.ports import free_port
from harness.proxies import STAND_INS, CountersignProcess, base_config, countersign_binary, merge
from conftest_auth import *  # noqa: F401,F403  fixtures for test_auth_*.py
from conftest_tls import *  # noqa: F401,F403  fixtures for test_upstream_tls.py and test_pin_command.py
from conftest_intercept import *  # noqa: F401,F403  fixtures for test_interception.py
from conftest_oauth2 import *  # noqa: F401,F403  fixtures for test_auth_oauth2.py

BIG_FILE_BYTES = 100 * 1024 * 1024
UPLOAD_FILE_BYTES = 10 * 1024 * 1024


def proxy_kind() -> str:
    return os.environ.get("PROXY_UNDER_TEST", "countersign").strip().lower()


def pytest_collection_modifyitems(config, items):
    if proxy_kind() == "countersign":
        return
    skip = pytest.mark.skip(reason=f"needs Countersign itself; PROXY_UNDER_TEST={proxy_kind()}")
    for item in items:
        if "countersign_only" in item.keywords:
            item.add_marker(skip)


@dataclass
class GeneratedFile:
    path: Path
    size: int
    sha256: str


def _random_file(path: Path, size: int) -> GeneratedFile:
    digest = hashlib.sha256()
    with open(path, "wb") as out:
        remaining = size
        while remaining:
            block = os.urandom(min(remaining, 1 << 20))
            digest.update(block)
            out.write(block)
            remaining -= len(block)
    return GeneratedFile(path, size, digest.hexdigest())


@pytest.fixture(scope="session")
def session_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("interop")


@pytest.fixture(scope="session")
def www(session_dir) -> Path:
    root = session_dir / "www"
    root.mkdir()
    return root


@pytest.fixture(scope="session")
def small_file(www) -> GeneratedFile:
    """/1k on nginx."""
    return _random_file(www / "1k", 1024)


@pytest.fixture(scope="session")
def big_file(www) -> GeneratedFile:
    """/100m on nginx: 100 MB of random bytes, made once per session."""
    return _random_file(www / "100m", BIG_FILE_BYTES)


@pytest.fixture(scope="session")
def upload_file(session_dir) -> GeneratedFile:
    return _random_file(session_dir / "upload-10m.bin", UPLOAD_FILE_BYTES)


@pytest.fixture(scope="session")
def tls_certificate(session_dir):
    return make_self_signed(session_dir / "tls")


@pytest.fixture(scope="session")
def nginx(session_dir, www, small_file, big_file, tls_certificate):
    server = NginxServer(session_dir / "nginx", www, tls_certificate)
    yield server
    server.stop()


@pytest.fixture
def origin():
    server = OriginServer("127.0.0.1")
    yield server
    server.stop()


@pytest.fixture
def origin_v6():
    server = OriginServer("::1")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def countersign_executable(session_dir) -> Path:
    """A copy of the binary taken once per session, so a rebuild during the run cannot swap
    the program under test halfway through. Skips when there is no binary."""
    binary = countersign_binary()
    if not binary.exists():
        pytest.skip(f"no Countersign binary at {binary}: build it with `swift build` "
                    f"or point COUNTERSIGN_BIN at one")
    copy = session_dir / "bin" / "countersign"
    copy.parent.mkdir(exist_ok=True)
    shutil.copy2(binary, copy)
    return copy


@pytest.fixture
def countersign(tmp_path, countersign_executable):
    """Factory: countersign(overrides=None, env=None, preexec_fn=None) starts the binary with
    the base config deep-merged with `overrides` (listen and admin ports are filled in) and
    returns a CountersignProcess; `preexec_fn` runs in the child before exec (resource limits).
    Every one started is stopped at teardown."""
    binary = countersign_executable
    started = []

    def start(overrides: dict = None, env: dict = None, preexec_fn=None) -> CountersignProcess:
        workdir = tmp_path / f"countersign-{len(started)}"
        workdir.mkdir()
        config = merge(base_config(free_port(), free_port(), workdir), overrides or {})
        for entry in config["listen"]:
            entry.setdefault("address", f"127.0.0.1:{free_port()}")
        process_env = dict(os.environ)
        process_env.update(env or {})
        process = CountersignProcess(binary, workdir, config, process_env, preexec_fn)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def proxy(request, tmp_path):
    """The proxy under test with its default configuration (unlisted hosts tunnelled)."""
    kind = proxy_kind()
    if kind == "countersign":
        yield request.getfixturevalue("countersign")()
        return
    if kind not in STAND_INS:
        raise pytest.UsageError(f"PROXY_UNDER_TEST must be countersign, squid or tinyproxy, not {kind!r}")
    stand_in = STAND_INS[kind]()
    yield stand_in
    stand_in.stop()


@pytest.fixture
def workdir(tmp_path) -> Path:
    return tmp_path
