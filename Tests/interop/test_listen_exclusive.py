"""No silent port sharing: Countersign's listening sockets are its own. A second instance (or
any process of the same user, with or without SO_REUSEPORT) that holds an address makes
`countersign run` fail with "Address already in use" naming it, and a reload that adds such an
address is refused while the running configuration keeps serving."""
import json
import socket
import subprocess
import time

import pytest

from harness.ports import free_port, wait_until
from harness.proxies import base_config, merge

pytestmark = pytest.mark.countersign_only


def _hold(port: int, reuseport: bool) -> socket.socket:
    """A listening socket on 127.0.0.1:`port`, as another program of this user would hold it."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if reuseport:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    holder.bind(("127.0.0.1", port))
    holder.listen(16)
    return holder


def _run_expecting_failure(binary, workdir, config: dict):
    """`countersign run` on `config`: (exit status, stderr), or None when it kept running."""
    workdir.mkdir(exist_ok=True)
    path = workdir / "countersign.json5"
    path.write_text(json.dumps(config))
    process = subprocess.Popen([str(binary), "run", "-c", str(path)], cwd=workdir,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, stderr = process.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return None
    return process.returncode, stderr.decode(errors="replace")


def _assert_refused(outcome, address: str):
    assert outcome is not None, f"a second countersign started on {address}, which another process holds"
    status, stderr = outcome
    # A clean refusal (exit 1 with the error), never a crash on the way out (an abort, 134,
    # also "fails the start": the listeners freed after a held admin address crashed).
    assert status == 1, f"exit status {status}: {stderr[-1500:]}"
    assert "Fatal error" not in stderr and "crashed" not in stderr, stderr[-1500:]
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    failures = [entry for entry in lines if entry.get("level") == "error"]
    assert any("Address already in use" in json.dumps(entry) and address in json.dumps(entry) for entry in failures), \
        f"no error naming {address} as already in use: {stderr[-800:]}"


def _config(tmp_path, name: str, listen_port: int, admin_port: int) -> dict:
    return base_config(listen_port, admin_port, tmp_path / name)


def test_a_second_instance_on_the_same_address_fails(countersign, countersign_executable, tmp_path, origin):
    first = countersign()
    config = _config(tmp_path, "second", first.port, free_port())
    _assert_refused(_run_expecting_failure(countersign_executable, tmp_path / "second", config), f"127.0.0.1:{first.port}")
    # The first one still has every connection.
    for _ in range(8):
        with socket.create_connection(("127.0.0.1", first.port), timeout=5) as client:
            client.sendall(f"GET {origin.url('/echo')} HTTP/1.1\r\nHost: {origin.authority}\r\nConnection: close\r\n\r\n".encode())
            assert client.recv(64).startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize("reuseport", [False, True], ids=["plain", "so_reuseport"])
def test_a_listen_address_held_by_another_process_fails_the_start(countersign_executable, tmp_path, reuseport):
    port = free_port()
    holder = _hold(port, reuseport)
    try:
        config = _config(tmp_path, "run", port, free_port())
        _assert_refused(_run_expecting_failure(countersign_executable, tmp_path / "run", config), f"127.0.0.1:{port}")
    finally:
        holder.close()


def test_an_admin_address_held_by_another_process_fails_the_start(countersign_executable, tmp_path):
    admin_port = free_port()
    holder = _hold(admin_port, reuseport=True)
    try:
        config = _config(tmp_path, "run", free_port(), admin_port)
        _assert_refused(_run_expecting_failure(countersign_executable, tmp_path / "run", config), f"127.0.0.1:{admin_port}")
    finally:
        holder.close()


@pytest.mark.parametrize("what", ["listen", "admin"])
def test_a_reload_adding_a_held_address_is_refused(countersign, origin, what):
    proxy = countersign({"reload": {"watch": False}})
    held_port = free_port()
    holder = _hold(held_port, reuseport=True)
    try:
        if what == "listen":
            fresh = merge(proxy.config, {"listen": proxy.config["listen"] + [{"address": f"127.0.0.1:{held_port}"}]})
        else:
            fresh = merge(proxy.config, {"admin": {"address": f"127.0.0.1:{held_port}"}})
        proxy.reload(fresh)
        address = f"127.0.0.1:{held_port}"
        refusals = wait_until(lambda: [e for e in proxy.logs() if e.get("level") == "error" and address in json.dumps(e)
                                       and "Address already in use" in json.dumps(e)], timeout=10)
        assert refusals, f"no error naming {address}: {proxy.logs()[-3:]}"
        assert "keeping the running configuration" in refusals[0]["msg"], refusals[0]
        # Nothing of ours joined the holder's socket: every connection to it reaches the holder.
        holder.settimeout(2.0)
        for _ in range(8):
            with socket.create_connection(("127.0.0.1", held_port), timeout=2):
                holder.accept()[0].close()
    finally:
        holder.close()
    # The running configuration still serves, and the admin listener still answers.
    assert proxy.admin_get("/healthz")[0] == 200
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as client:
        client.sendall(f"GET {origin.url('/echo')} HTTP/1.1\r\nHost: {origin.authority}\r\nConnection: close\r\n\r\n".encode())
        assert client.recv(64).startswith(b"HTTP/1.1 200")
