"""Descriptors stay bounded under churn (SPEC "Proxy behaviour", ARCHITECTURE "Bounded by
construction"): the benchmark's CONNECT scenario, where the load generator abandons its
connection attempts while the proxy is still connecting upstream. Before the fix the proxy
stopped reading a client while it connected, so every abandoned CONNECT held two
descriptors until connect_timeout; it reached its descriptor limit within seconds and then
spun logging "Error from accept() call: Too many open files" for every accept attempt."""
import http.client
import json
import os
import resource
import socket
import threading
import time

import pytest

from harness.origin import OriginServer
from harness.ports import wait_until
from harness.rawclient import exchange, request_bytes

pytestmark = pytest.mark.countersign_only

DESCRIPTOR_LIMIT = 256
ROUNDS = 12
CLIENTS_PER_ROUND = 250


def low_descriptor_limit():
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTOR_LIMIT, DESCRIPTOR_LIMIT))


class SlowOrigin:
    """Listens with a one-slot backlog and never accepts: once the backlog is full every
    further connect hangs in SYN retries, like an origin swamped by abandoned connects."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]

    def fill_backlog(self) -> list:
        """Connects that take the backlog's slots, so the next connect hangs at once."""
        sockets = []
        for _ in range(4):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", self.port))
            sockets.append(sock)
        time.sleep(0.1)
        return sockets

    def close(self):
        self.sock.close()


class DescriptorWatch:
    """Samples /proc/PID/fd every 10 ms in a thread; `peak` is the most seen."""

    def __init__(self, pid: int):
        self.pid = pid
        self.peak = 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def count(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def _run(self):
        while not self.stopped.is_set():
            try:
                self.peak = max(self.peak, self.count())
            except OSError:
                return
            time.sleep(0.01)

    def stop(self):
        self.stopped.set()
        self.thread.join()


def abandon_connects(proxy_port: int, target: str) -> None:
    """Rounds of clients that each send a CONNECT and give up a moment later."""
    request = request_bytes("CONNECT", target, [("Host", target)])
    for _ in range(ROUNDS):
        clients = []
        for _ in range(CLIENTS_PER_ROUND):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                sock.connect(("127.0.0.1", proxy_port))
            except BlockingIOError:
                pass
            clients.append(sock)
        time.sleep(0.02)
        for sock in clients:
            try:
                sock.send(request)
            except OSError:
                pass
        time.sleep(0.05)
        for sock in clients:
            sock.close()


def log_lines_other_than_access(proxy) -> list:
    lines = []
    for line in proxy.stderr_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            lines.append(line)  # libevent's own warnings are plain text
            continue
        if entry.get("msg") not in ("access", "countersign started"):
            lines.append(line)
    return lines


def test_abandoned_connects_keep_descriptors_bounded_and_drain(countersign, origin):
    slow = SlowOrigin()
    proxy = countersign({"limits": {"connect_timeout": "10s", "max_connections": 10000}},
                        preexec_fn=low_descriptor_limit)
    proxy.settled_fd_count()  # the harness's readiness probes' connections close
    try:
        baseline = DescriptorWatch(proxy.pid).count()
        watch = DescriptorWatch(proxy.pid)
        abandon_connects(proxy.port, f"127.0.0.1:{slow.port}")
        loaded_at = time.monotonic()
        drained = False
        while time.monotonic() - loaded_at < 1.5:
            if watch.count() <= baseline + 4:
                drained = True
                break
            time.sleep(0.05)
        watch.stop()
        after = watch.count()
    finally:
        slow.close()

    assert watch.peak < DESCRIPTOR_LIMIT - 8, \
        f"the proxy used {watch.peak} of its {DESCRIPTOR_LIMIT} descriptors under abandoned CONNECTs"
    assert drained, f"{after} descriptors open 1.5 s after the load stopped (baseline {baseline})"
    noise = log_lines_other_than_access(proxy)
    assert len(noise) < 20, f"{len(noise)} log lines besides access lines, e.g. {noise[:3]}"
    assert proxy.alive()
    # Still serving.
    response = exchange("127.0.0.1", proxy.port,
                        request_bytes("GET", origin.url("/after-churn"), [("Host", origin.authority)]))
    assert response.status == 200


@pytest.mark.parametrize("method", ["CONNECT", "GET"])
def test_request_abandoned_mid_connect_releases_both_descriptors_at_once(countersign, method):
    """One client gives up while the upstream connect hangs (a CONNECT, or a plain request
    forwarded): both sockets close right away, not after connect_timeout."""
    slow = SlowOrigin()
    filler = slow.fill_backlog()
    proxy = countersign({"limits": {"connect_timeout": "30s"}})
    try:
        baseline = proxy.settled_fd_count()  # the harness's readiness probes' connections close
        target = f"127.0.0.1:{slow.port}"
        client = socket.create_connection(("127.0.0.1", proxy.port))
        if method == "CONNECT":
            client.sendall(request_bytes("CONNECT", target, [("Host", target)]))
        else:
            client.sendall(request_bytes("GET", f"http://{target}/", [("Host", target)]))
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and len(os.listdir(f"/proc/{proxy.pid}/fd")) < baseline + 2:
            time.sleep(0.02)
        assert len(os.listdir(f"/proc/{proxy.pid}/fd")) >= baseline + 2, "the proxy is not connecting upstream"
        time.sleep(0.2)
        client.close()
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline and len(os.listdir(f"/proc/{proxy.pid}/fd")) > baseline:
            time.sleep(0.02)
        assert len(os.listdir(f"/proc/{proxy.pid}/fd")) <= baseline, f"the abandoned {method} still holds descriptors 1 s later"
    finally:
        for sock in filler:
            sock.close()
        slow.close()
    # The access line is written as the connection ends, which may be just after the client saw it end.
    logged = wait_until(lambda: [entry for entry in proxy.access_logs() if entry.get("method") == method], timeout=3)
    assert logged and logged[-1].get("error") == "client_closed", logged


class SilentOrigin:
    """Accepts and reads, but never answers and never closes: a peer that ignores a half-close."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.accepted = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(connection)

    def close(self):
        self.sock.close()
        for connection in self.accepted:
            connection.close()


def test_half_closed_tunnel_ends_after_the_half_close_timeout(countersign):
    """The client ends its half; the origin never ends its own. The tunnel closes after
    half_close_timeout (1 s here), not after tunnel_idle_timeout (60 s)."""
    origin = SilentOrigin()
    proxy = countersign({"limits": {"half_close_timeout": "1s", "tunnel_idle_timeout": "60s"}})
    try:
        target = f"127.0.0.1:{origin.port}"
        client = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
        client.sendall(request_bytes("CONNECT", target, [("Host", target)]))
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            head += client.recv(1)
        assert head.startswith(b"HTTP/1.1 200"), head
        client.sendall(b"last words")
        client.shutdown(socket.SHUT_WR)
        started = time.monotonic()
        assert client.recv(100) == b"", "the tunnel sent bytes nobody wrote"
        elapsed = time.monotonic() - started
        client.close()
    finally:
        origin.close()
    assert elapsed < 3, f"the half-closed tunnel lived {elapsed:.1f} s"
    # The access line is written as the connection ends, which may be just after the client saw it end.
    logged = wait_until(lambda: [entry for entry in proxy.access_logs() if entry.get("method") == "CONNECT"], timeout=3)
    assert logged and logged[-1].get("error") == "half_close_timeout", logged


def test_max_connections_pauses_accepting_instead_of_refusing_each_client(countersign, origin):
    """At max_connections the proxy stops accepting: the clients that wait are served once a
    connection closes, and the log says so once instead of once per client."""
    proxy = countersign({"limits": {"max_connections": 3}})
    holders = [socket.create_connection(("127.0.0.1", proxy.port)) for _ in range(3)]
    time.sleep(0.3)
    waiting = []
    for index in range(30):
        sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
        sock.sendall(request_bytes("GET", origin.url(f"/waiting-{index}"), [("Host", origin.authority), ("Connection", "close")]))
        waiting.append(sock)
    time.sleep(0.5)
    for sock in holders:
        sock.close()
    statuses = []
    for sock in waiting:
        try:
            statuses.append(sock.recv(12)[9:12])
        except OSError as error:
            statuses.append(repr(error))
        sock.close()
    assert statuses == [b"200"] * 30, statuses
    refusals = [entry for entry in proxy.logs() if "max_connections" in entry.get("msg", "")]
    assert len(refusals) <= 2, f"{len(refusals)} log lines about max_connections"


def test_check_warns_when_max_connections_cannot_fit_the_descriptor_limit(workdir, countersign_executable):
    from harness.proxies import base_config

    def check(max_connections: int) -> str:
        config = base_config(3128, 9901, workdir)
        config["limits"]["max_connections"] = max_connections
        path = workdir / "checked.json5"
        path.write_text(json.dumps(config))
        result = __import__("subprocess").run([str(countersign_executable), "check", "-c", str(path)], cwd=workdir,
                                              capture_output=True, text=True, timeout=30, preexec_fn=low_descriptor_limit)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout + result.stderr

    warned = check(10000)
    assert "limits.max_connections" in warned and "RLIMIT_NOFILE 256" in warned, warned
    assert "limits.max_connections" not in check(50)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_accept_failing_for_want_of_descriptors_pauses_instead_of_spinning(countersign):
    """A process with no descriptor left for accept(2) (EMFILE): the listener pauses and
    retries a few times a second, logging once, instead of retrying at full CPU and logging
    every attempt."""
    probe = countersign()
    idle = probe.settled_fd_count()
    probe.stop()

    def exactly_idle():
        resource.setrlimit(resource.RLIMIT_NOFILE, (idle, idle))

    proxy = countersign(preexec_fn=exactly_idle)
    time.sleep(0.3)
    clients = [socket.create_connection(("127.0.0.1", proxy.port)) for _ in range(3)]
    cpu_before, started = cpu_seconds(proxy.pid), time.monotonic()
    time.sleep(2)
    cpu = cpu_seconds(proxy.pid) - cpu_before
    for client in clients:
        client.close()
    noise = log_lines_other_than_access(proxy)
    assert cpu < 0.5 * (time.monotonic() - started), f"{cpu:.2f} s of CPU in 2 s while accept(2) kept failing"
    assert 1 <= len(noise) <= 3, f"{len(noise)} log lines about failing accepts, e.g. {noise[:3]}"
    assert any("accept failed" in line and "Too many open files" in line for line in noise), noise


def _metric(proxy, name: str) -> float:
    status, body = proxy.admin_get("/metrics")
    assert status == 200
    for line in body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


def test_a_new_host_gets_a_descriptor_from_a_parked_connection_when_the_budget_is_spent(countersign):
    """With every descriptor of the budget held by one client and its parked keep-alive
    upstreams, a request to yet another origin closes the longest-parked connection and is
    served. Before, it was refused with 502 connection_limit_reached, so a few idle spare
    connections to one host could lock every other host out."""
    budget = 10
    reserve = 64 + 8 * 1  # DescriptorBudget.reserve(workers: 1)

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (reserve + budget, reserve + budget))

    origins = [OriginServer() for _ in range(budget)]
    proxy = countersign(preexec_fn=limit)
    proxy.settled_fd_count()  # the harness's readiness probes' connections close
    try:
        assert _metric(proxy, "countersign_descriptor_budget") == budget
        client = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
        # The client's socket and one parked upstream per origin spend the budget...
        for origin in origins[:-1]:
            client.request("GET", origin.url("/fill"))
            response = client.getresponse()
            response.read()
            assert response.status == 200
        assert wait_until(lambda: _metric(proxy, "countersign_descriptors_in_use") == budget, timeout=5), \
            _metric(proxy, "countersign_descriptors_in_use")
        # ...and the next origin still gets its connection, from the longest-parked one.
        client.request("GET", origins[-1].url("/one-more"))
        response = client.getresponse()
        body = response.read()
        assert response.status == 200, (response.status, response.getheader("Proxy-Status"), body)
        assert origins[-1].snapshot()[1] == 1
        assert wait_until(lambda: _metric(proxy, "countersign_descriptors_in_use") <= budget, timeout=5), \
            _metric(proxy, "countersign_descriptors_in_use")
        # The origin whose connection was given up is served again on a new one.
        client.request("GET", origins[0].url("/again"))
        response = client.getresponse()
        response.read()
        assert response.status == 200
        assert origins[0].snapshot()[0] == 2, "the longest-parked connection should have been the one closed"
        client.close()
    finally:
        for origin in origins:
            origin.stop()


def test_a_token_fetch_with_no_descriptor_left_fails_at_once_naming_the_endpoint(countersign, token_endpoint,
                                                                                   bearer_origin, auth_pki):
    """The budget pays for the client and its origin connection only: when the origin's `401`
    needs an OAuth2 token, the token endpoint cannot get a descriptor. The client hears so at
    once, with a Proxy-Status naming the endpoint; before, it waited for the connect and header
    timeouts (here 7 s) and was told the endpoint had timed out."""
    budget = 2
    reserve = 64 + 8 * 1

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (reserve + budget, reserve + budget))

    oauth2 = {"token_url": token_endpoint.url, "client_id": "app", "client_secret_env": "IDP_SECRET", "scope": "read"}
    rule = {"credential": "idp", "schemes": ["oauth2"], "allow_plaintext": True}
    proxy = countersign({"credentials": {"idp": {"oauth2": oauth2}},
                         "hosts": {bearer_origin.authority: {"intercept": False, "auth": [rule]},
                                   token_endpoint.authority: {"intercept": False,
                                                              "trust": {"anchors": [str(auth_pki / "root.pem")]}}},
                         "limits": {"connect_timeout": "5s", "header_timeout": "2s"}},
                        env={"IDP_SECRET": "s3cret"}, preexec_fn=limit)
    proxy.settled_fd_count()  # the harness's readiness probes' connections close
    assert _metric(proxy, "countersign_descriptor_budget") == budget
    client = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=15)
    started = time.monotonic()
    client.request("GET", bearer_origin.url())
    response = client.getresponse()
    response.read()
    elapsed = time.monotonic() - started
    client.close()
    status = response.getheader("Proxy-Status") or ""
    assert response.status == 502, (response.status, status)
    assert "connection_limit_reached" in status and "OAuth2 token endpoint" in status, status
    assert elapsed < 2, f"the client waited {elapsed:.1f} s for a token fetch that could not start"
    assert token_endpoint.requests() == []
