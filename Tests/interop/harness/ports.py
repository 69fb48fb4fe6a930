"""Ephemeral loopback ports and waiting for a listener to come up."""
import socket
import time


def free_port(host: str = "127.0.0.1") -> int:
    """A port the kernel just handed out on `host`; free again once this returns."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


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
