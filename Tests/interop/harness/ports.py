"""Loopback ports for test listeners, and waiting for a listener to come up."""
import errno
import fcntl
import os
import random
import socket
import threading
import time

# Ports are taken from below the kernel's ephemeral range (32768-60999 by default), so that
# the kernel never hands one of them to another bind(port 0) or to an outgoing connection's
# source port between the moment we choose it and the moment its listener binds it. Each is
# handed out at most once per run, so two listeners of one test (a proxy's listen and admin
# addresses, say) can never be given the same port. Runs side by side (two pytest processes, a
# test and a benchmark) never hand out the same port either: each port handed out is claimed by
# a lock on a file of its own in _CLAIMS, held until the process ends (the kernel lets go of it
# then, however the process ends), and a port another process claims is skipped, as is one in
# use. Each process starts at its own offset, so runs side by side rarely probe the same ports.
_RANGE = range(20000, 32000)
_CLAIMS = os.path.join(os.environ.get("TMPDIR", "/tmp"), "countersign-test-ports")
_lock = threading.Lock()
_handed_out: set = set()
_claims: list = []   # the open lock files: closing one would give its port back
_cursor = random.Random(os.getpid() ^ time.monotonic_ns()).randrange(len(_RANGE))


def _claim(port: int) -> bool:
    """Whether this process now holds `port`'s claim (no other process holds it)."""
    os.makedirs(_CLAIMS, mode=0o1777, exist_ok=True)
    descriptor = os.open(os.path.join(_CLAIMS, str(port)), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        return False
    _claims.append(descriptor)
    return True


def _bindable(host: str, port: int) -> bool:
    """Whether nobody holds `host:port`; a loopback family this machine lacks holds nothing."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        probe = socket.socket(family, socket.SOCK_STREAM)
    except OSError:
        return True
    with probe:
        try:
            probe.bind((host, port))
            return True
        except OSError as error:
            return error.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT)


def free_port(host: str = "127.0.0.1") -> int:
    """A port no listener holds on `host` (nor on the other loopback family), never handed
    out before in this run nor claimed by another run, and outside the kernel's ephemeral range."""
    global _cursor
    with _lock:
        for _ in range(len(_RANGE)):
            port = _RANGE[_cursor % len(_RANGE)]
            _cursor += 1
            if port in _handed_out:
                continue
            other = {"127.0.0.1": "::1", "::1": "127.0.0.1"}.get(host, host)
            if _bindable(host, port) and _bindable(other, port) and _claim(port):
                _handed_out.add(port)
                return port
    raise RuntimeError("no free test port left in %d-%d" % (_RANGE.start, _RANGE.stop - 1))


def port_accepts(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_for_port(host: str, port: int, timeout: float = 15.0, alive=lambda: True) -> None:
    """Polls until `host:port` accepts a connection. `alive` lets the caller stop early
    when the process that should listen has already died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_accepts(host, port):
            return
        if not alive():
            raise RuntimeError(f"the process meant to listen on {host}:{port} exited before it did")
        time.sleep(0.05)
    raise TimeoutError(f"nothing accepted connections on {host}:{port} within {timeout:.0f}s")


def wait_until(predicate, timeout: float = 5.0, interval: float = 0.05):
    """Returns the first truthy value of `predicate()`, or its last value after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)
