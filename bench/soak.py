#!/usr/bin/env python3
"""Soak and faults: pushes SOAK_REQUESTS requests through one Countersign and watches whether it
stays flat. Run through bench/soak.sh (`make soak`); see bench/README.md.

Traffic, from SOAK_CLIENTS load processes, each on keep-alive connections, in a fixed mix:
  plain        GET http://127.0.0.1:NGINX/1k, absolute-form, forwarded
  connect      CONNECT to nginx's plain port, then requests inside the tunnel
  intercepted  CONNECT localhost:NGINX_TLS, TLS with the proxy's interception CA (verified), GET /1k
  basic        GET on nginx auth_basic; the proxy answers the 401 with Basic
  digest       GET on Apache mod_auth_digest; the proxy answers the 401 with Digest
Every answer is checked (status and body length); anything else is an error.

Faults, injected beside it all run long from one more process, and counted by kind:
  origin-reset   the origin announces a body and resets mid-body      -> client sees it cut or a 502
  origin-stall   the origin never answers (past header_timeout)        -> 504
  refused        the origin port refuses connections                   -> 502
  client-vanish  the client resets mid-download of a 1 MiB body        -> the proxy frees it
  sighup         SIGHUP every SOAK_HUP_SECONDS (config rewritten)      -> reload, nothing dropped

Samples RSS (the proxy's process tree), open descriptors and upstream connections (ESTABLISHED
TCP from the proxy to the origins) at start, every SOAK_SAMPLE_EVERY requests and at the end.
Exit 1 when a regular request failed, a fault got an answer it should not, or the proxy died."""
import json
import multiprocessing as mp
import os
import shutil
import ssl
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "Tests" / "interop"))

from harness.auth_peers import BasicNginx, DigestApache  # noqa: E402
from harness.certs import make_self_signed  # noqa: E402
from harness.nginx import NginxServer  # noqa: E402
from harness.origin import OriginServer  # noqa: E402
from harness.ports import free_port  # noqa: E402
from harness.proxies import CountersignProcess, base_config  # noqa: E402
from harness.rawclient import RawConnection, forward_request, request_bytes  # noqa: E402
from harness.wire import PeerClosed  # noqa: E402

REQUESTS = int(os.environ.get("SOAK_REQUESTS", "1000000"))
CLIENTS = int(os.environ.get("SOAK_CLIENTS", "4"))
SAMPLE_EVERY = int(os.environ.get("SOAK_SAMPLE_EVERY", str(max(REQUESTS // 10, 1))))
HUP_SECONDS = float(os.environ.get("SOAK_HUP_SECONDS", "10"))
WORKERS = int(os.environ.get("SOAK_WORKERS", "2"))
BINARY = Path(os.environ.get("COUNTERSIGN_BIN", REPO / ".build" / "release" / "countersign"))
USER, PASSWORD = "soak-user", "Soak-pass-8d1e"
# One round of the mix per load process: (kind, weight).
MIX = [("plain", 12), ("connect", 3), ("intercepted", 2), ("basic", 2), ("digest", 2)]
ONE_KIB, ONE_MIB = 1024, 1 << 20


# ------------------------------------------------------------------------------------- the peers


class Peers:
    def __init__(self, work: Path):
        www = work / "www"
        www.mkdir()
        (www / "1k").write_bytes(os.urandom(ONE_KIB))
        (www / "1m").write_bytes(os.urandom(ONE_MIB))
        self.certificate = make_self_signed(work / "tls")
        self.nginx = NginxServer(work / "nginx", www, self.certificate)
        self.basic = BasicNginx(work / "basic", {USER: PASSWORD})
        self.digest = DigestApache({USER: PASSWORD})
        self.faulty = OriginServer("127.0.0.1")
        self.closed_port = free_port()

    def stop(self):
        for peer in (self.faulty, self.digest, self.basic, self.nginx):
            peer.stop()

    @property
    def ports(self) -> set:
        return {self.nginx.port, self.nginx.tls_port, self.basic.port, self.digest.port, self.faulty.port}


def proxy_config(work: Path, peers: Peers) -> dict:
    config = base_config(free_port(), free_port(), work)
    rule = lambda scheme: {"credential": "soak", "schemes": [scheme], "allow_plaintext": True}
    config.update({
        "workers": WORKERS,
        "log": {"level": "warn"},
        "credentials": {"soak": {"user": USER, "password_env": "SOAK_PASSWORD"}},
        "interception": {"ca_certificate": "ca/ca.pem", "ca_key": "ca/ca.key"},
        "hosts": {
            f"127.0.0.1:{peers.basic.port}": {"intercept": False, "auth": [rule("basic")]},
            f"127.0.0.1:{peers.digest.port}": {"intercept": False, "auth": [rule("digest")]},
            f"localhost:{peers.nginx.tls_port}": {"trust": {"anchors": [str(peers.certificate.certificate)]}},
        },
    })
    # A stalled origin is answered 504 at the header timeout: short, so each stall costs seconds.
    config["limits"]["header_timeout"] = "2s"
    return config


# ------------------------------------------------------------------------------------------ load


class LoadClient:
    """One load process: keep-alive connections through the proxy, the mix in order."""

    def __init__(self, proxy_port: int, peers: dict, ca_file: str):
        self.proxy_port = proxy_port
        self.peers = peers
        self.tls = ssl.create_default_context(cafile=ca_file)
        self.plain = None
        self.intercepted = None
        self.intercepted_uses = 0

    def _plain(self) -> RawConnection:
        if self.plain is None:
            self.plain = RawConnection("127.0.0.1", self.proxy_port, timeout=30)
        return self.plain

    def _get(self, connection, request: bytes, length: int) -> None:
        connection.send(request)
        response = connection.read_response()
        if response.status != 200 or response.body_length != length:
            raise RuntimeError(f"{response.status} with {response.body_length} bytes")

    def plain_get(self):
        self._get(self._plain(), self.peers["plain"], ONE_KIB)
        return 1

    def basic_get(self):
        self._get(self._plain(), self.peers["basic"], self.peers["basic_length"])
        return 1

    def digest_get(self):
        self._get(self._plain(), self.peers["digest"], self.peers["digest_length"])
        return 1

    def connect(self):
        """A tunnel to nginx's plain port carrying 5 requests."""
        with RawConnection("127.0.0.1", self.proxy_port, timeout=30) as tunnel:
            authority = f"127.0.0.1:{self.peers['nginx_port']}"
            tunnel.send(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
            if tunnel.read_response("CONNECT").status != 200:
                raise RuntimeError("CONNECT refused")
            inner = request_bytes("GET", "/1k", [("Host", authority)])
            for _ in range(5):
                self._get(tunnel, inner, ONE_KIB)
        return 5

    def intercepted_get(self):
        """Requests inside an intercepted tunnel, verified against the interception CA; a new
        tunnel (and a new handshake) every 50 requests."""
        if self.intercepted is None or self.intercepted_uses >= 50:
            if self.intercepted is not None:
                self.intercepted.close()
            self.intercepted = self._open_intercepted()
            self.intercepted_uses = 0
        self.intercepted_uses += 1
        self._get(self.intercepted, self.peers["intercepted"], ONE_KIB)
        return 1

    def _open_intercepted(self) -> RawConnection:
        authority = f"localhost:{self.peers['tls_port']}"
        connection = RawConnection("127.0.0.1", self.proxy_port, timeout=30)
        connection.send(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
        if connection.read_response("CONNECT").status != 200:
            raise RuntimeError("CONNECT for interception refused")
        connection.sock = self.tls.wrap_socket(connection.sock, server_hostname="localhost")
        connection.reader.sock = connection.sock
        return connection

    def reset(self):
        for connection in (self.plain, self.intercepted):
            if connection is not None:
                connection.close()
        self.plain = self.intercepted = None


def load_process(index, proxy_port, peers, ca_file, counters, errors, stop, error_log):
    client = LoadClient(proxy_port, peers, ca_file)
    operations = {"plain": client.plain_get, "connect": client.connect, "intercepted": client.intercepted_get,
                  "basic": client.basic_get, "digest": client.digest_get}
    schedule = [kind for kind, weight in MIX for _ in range(weight)]
    done = 0
    while not stop.is_set():
        for kind in schedule:
            try:
                done = operations[kind]()
                with counters.get_lock():
                    counters.value += done
            except Exception as failure:  # noqa: BLE001 - every failure is counted and logged
                with errors.get_lock():
                    errors.value += 1
                with open(error_log, "a") as log:
                    log.write(f"{time.time():.3f} client {index} {kind}: {failure!r}\n")
                client.reset()
            if stop.is_set():
                break


# ---------------------------------------------------------------------------------------- faults


FAULTS = ("origin-reset", "origin-stall", "refused", "client-vanish")


def fault_process(proxy_port, peers, fault_counts, fault_unexpected, stop, error_log):
    """Injects one fault at a time, round robin; each must get its expected outcome."""
    def record(kind, ok, detail=""):
        (fault_counts if ok else fault_unexpected)[FAULTS.index(kind)] += 1
        if not ok:
            with open(error_log, "a") as log:
                log.write(f"{time.time():.3f} fault {kind}: {detail}\n")

    def one(kind):
        try:
            with RawConnection("127.0.0.1", proxy_port, timeout=15) as connection:
                if kind == "origin-reset":
                    connection.send(forward_request(f"http://{peers['faulty']}/reset"))
                    response = connection.read_response()
                    record(kind, response.status == 502 or not response.complete, f"{response.status} complete")
                elif kind == "origin-stall":
                    connection.send(forward_request(f"http://{peers['faulty']}/stall"))
                    response = connection.read_response()
                    record(kind, response.status == 504, str(response.status))
                elif kind == "refused":
                    connection.send(forward_request(f"http://127.0.0.1:{peers['closed_port']}/"))
                    response = connection.read_response()
                    record(kind, response.status == 502, str(response.status))
                elif kind == "client-vanish":
                    connection.send(forward_request(f"http://127.0.0.1:{peers['nginx_port']}/1m"))
                    connection.reader.read_head()
                    connection.reader.read_exact(4096)
                    connection.abort()
                    record(kind, True)
        except (PeerClosed, OSError) as failure:
            record(kind, kind == "origin-reset", repr(failure))

    index = 0
    stalls = []
    while not stop.is_set():
        kind = FAULTS[index % len(FAULTS)]
        index += 1
        # Stalls take header_timeout: run them beside the others, and see the last ones answered.
        if kind == "origin-stall":
            stalls = [thread for thread in stalls if thread.is_alive()]
            stalls.append(threading.Thread(target=one, args=(kind,), daemon=True))
            stalls[-1].start()
        else:
            one(kind)
        time.sleep(0.2)
    for thread in stalls:
        thread.join(10)


# -------------------------------------------------------------------------------------- sampling


def tree_pids(pid: int) -> list:
    pids, frontier = [pid], [pid]
    while frontier:
        parent = frontier.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            children = []
        pids += map(int, children)
        frontier += map(int, children)
    return pids


def sample(proxy_pid: int, origin_ports: set) -> dict:
    rss = fds = 0
    inodes = set()
    for pid in tree_pids(proxy_pid):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            rss += int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
            for fd in os.listdir(f"/proc/{pid}/fd"):
                fds += 1
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except (OSError, StopIteration):
            continue
    upstream = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            parts = row.split()
            remote_port = int(parts[2].rsplit(":", 1)[1], 16)
            if parts[3] == "01" and remote_port in origin_ports and parts[9] in inodes:
                upstream += 1
    return {"rss_kib": rss, "fds": fds, "upstream_connections": upstream}


# ------------------------------------------------------------------------------------------ main


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="countersign-soak-"))
    work.chmod(0o755)
    error_log = work / "errors.log"
    error_log.touch()
    if not BINARY.exists():
        print(f"[soak] no binary at {BINARY}: build it (swift build -c release) or set COUNTERSIGN_BIN", file=sys.stderr)
        return 2
    peers = Peers(work)
    proxy = None
    try:
        (work / "proxy").mkdir()
        config = proxy_config(work / "proxy", peers)
        proxy = CountersignProcess(BINARY, work / "proxy", config, dict(os.environ, SOAK_PASSWORD=PASSWORD))
        peer_info = {
            "plain": forward_request(peers.nginx.url("/1k")),
            "basic": forward_request(f"http://127.0.0.1:{peers.basic.port}/secret.txt"),
            "basic_length": len(BasicNginx.SECRET_BODY),
            "digest": forward_request(peers.digest.url("/secret.txt")),
            "digest_length": len(DigestApache.SECRET_BODY),
            "intercepted": request_bytes("GET", "/1k", [("Host", f"localhost:{peers.nginx.tls_port}")]),
            "nginx_port": peers.nginx.port, "tls_port": peers.nginx.tls_port,
            "faulty": peers.faulty.authority, "closed_port": peers.closed_port,
        }
        ca_file = str(work / "proxy" / "ca" / "ca.pem")
        counters, errors = mp.Value("q", 0), mp.Value("q", 0)
        fault_counts, fault_unexpected = mp.Array("q", len(FAULTS)), mp.Array("q", len(FAULTS))
        stop = mp.Event()
        processes = [mp.Process(target=load_process, args=(i, proxy.port, peer_info, ca_file, counters, errors, stop, error_log))
                     for i in range(CLIENTS)]
        processes.append(mp.Process(target=fault_process,
                                    args=(proxy.port, peer_info, fault_counts, fault_unexpected, stop, error_log)))
        origin_ports = peers.ports
        samples = [{"requests": 0, "seconds": 0.0, **sample(proxy.pid, origin_ports)}]
        print(f"[soak] {REQUESTS} requests, {CLIENTS} load processes, mix {MIX}, proxy workers {WORKERS}", flush=True)
        print(f"[soak] {'requests':>9} {'seconds':>8} {'rss_kib':>8} {'fds':>5} {'upstream':>8} {'errors':>6} {'hups':>5}", flush=True)
        print(f"[soak] {0:>9} {0:>8.1f} {samples[0]['rss_kib']:>8} {samples[0]['fds']:>5} {samples[0]['upstream_connections']:>8} {0:>6} {0:>5}", flush=True)
        started = time.monotonic()
        for process in processes:
            process.start()
        next_sample, next_hup, hups = SAMPLE_EVERY, started + HUP_SECONDS, 0
        while counters.value < REQUESTS and proxy.alive():
            time.sleep(0.05)
            now = time.monotonic()
            if now >= next_hup:
                proxy.reload(config)  # rewrites the same configuration and sends SIGHUP
                hups += 1
                next_hup += HUP_SECONDS
            if counters.value >= next_sample and next_sample < REQUESTS:
                figures = {"requests": counters.value, "seconds": round(now - started, 1), **sample(proxy.pid, origin_ports)}
                samples.append(figures)
                print(f"[soak] {figures['requests']:>9} {figures['seconds']:>8.1f} {figures['rss_kib']:>8} {figures['fds']:>5} "
                      f"{figures['upstream_connections']:>8} {errors.value:>6} {hups:>5}", flush=True)
                next_sample += SAMPLE_EVERY
        stop.set()
        for process in processes:
            process.join(20)
            if process.is_alive():
                process.kill()
        time.sleep(1)  # let the last connections close before the final sample
        figures = {"requests": counters.value, "seconds": round(time.monotonic() - started, 1), **sample(proxy.pid, origin_ports)}
        samples.append(figures)
        print(f"[soak] {figures['requests']:>9} {figures['seconds']:>8.1f} {figures['rss_kib']:>8} {figures['fds']:>5} "
              f"{figures['upstream_connections']:>8} {errors.value:>6} {hups:>5}  (end, clients gone)", flush=True)
        alive = proxy.alive()
        report = {
            "requests": counters.value, "errors": errors.value, "seconds": figures["seconds"],
            "requests_per_second": round(counters.value / max(figures["seconds"], 0.1)),
            "sighups": hups, "proxy_alive": alive, "samples": samples,
            "faults": {kind: fault_counts[i] for i, kind in enumerate(FAULTS)},
            "faults_unexpected": {kind: fault_unexpected[i] for i, kind in enumerate(FAULTS)},
        }
        warm = samples[1] if len(samples) > 2 else samples[0]
        peak_rss = max(s["rss_kib"] for s in samples[1:])
        report["rss_growth_after_warmup_percent"] = round(100.0 * (peak_rss - warm["rss_kib"]) / max(warm["rss_kib"], 1), 1)
        report["fd_growth_after_warmup"] = max(s["fds"] for s in samples[1:-1] or samples) - warm["fds"]
        print(f"[soak] {report['requests']} requests in {report['seconds']} s ({report['requests_per_second']}/s), "
              f"{report['errors']} errors, {hups} SIGHUPs, faults injected {report['faults']}, "
              f"faults answered wrongly {report['faults_unexpected']}", flush=True)
        print(f"[soak] RSS {warm['rss_kib']} KiB after warm-up, peak {peak_rss} KiB "
              f"({report['rss_growth_after_warmup_percent']:+}%); descriptors {warm['fds']} -> {figures['fds']} at the end", flush=True)
        results = REPO / "bench" / "results"
        results.mkdir(exist_ok=True)
        out = results / f"soak-{time.strftime('%Y%m%dT%H%M%S')}.json"
        out.write_text(json.dumps(report, indent=2))
        print(f"[soak] report in {out}", flush=True)
        if errors.value or any(fault_unexpected[:]):
            print("[soak] errors (first 20):\n" + "".join(error_log.read_text().splitlines(True)[:20]), flush=True)
        ok = alive and errors.value == 0 and not any(fault_unexpected[:])
        return 0 if ok else 1
    finally:
        if proxy is not None:
            proxy.process.stop()
        peers.stop()
        if os.environ.get("SOAK_KEEP_WORK") != "1":
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
