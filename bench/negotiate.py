#!/usr/bin/env python3
"""Negotiate answered vs no auth, through Countersign: requests/s and Kerberos handshakes per
upstream connection. A measurement, not a test (exit 0 whatever it finds).

A per-run MIT KDC (Tests/interop/harness/kdc.py) and the python-gssapi origin
(Tests/interop/harness/negotiate_origin.py, plain HTTP, keep-alive, IIS-like: a connection
stays authenticated) on loopback; wrk sends absolute-form requests through Countersign
(bench/wrk-absolute-form.lua). Two runs with the same origin code: `--open-access` (no
auth rule, the origin asks for nothing) and Negotiate (a keytab credential, persistence
session). The origin is a threaded Python server on core 1 with wrk; Countersign (one
worker) on core 0. The origin's speed caps both figures; the ratio and the handshake count
are what this measures.

usage: bench/negotiate.py [--seconds 10] [--connections 8]
       COUNTERSIGN_BIN=.build/release/countersign bench/negotiate.py
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "Tests" / "interop"))

from harness.kdc import KerberosRealm                 # noqa: E402
from harness.negotiate_origin import NegotiateOrigin  # noqa: E402
from harness.ports import free_port, wait_for_port    # noqa: E402
from harness.process import ManagedProcess            # noqa: E402

REALM = "COUNTERSIGN.BENCH"


def binary() -> Path:
    given = os.environ.get("COUNTERSIGN_BIN")
    for candidate in ([Path(given)] if given else []) + [REPO / ".build/release/countersign", REPO / ".build/debug/countersign"]:
        if candidate.exists():
            return candidate
    sys.exit("no countersign binary: swift build -c release, or set COUNTERSIGN_BIN")


def start_countersign(workdir: Path, origin_port: int, kdc: KerberosRealm, keytab: Path, negotiate: bool) -> ManagedProcess:
    port = free_port()
    host = {"intercept": False}
    if negotiate:
        host["auth"] = [{"credential": "krb", "schemes": ["negotiate"]}]
    config = {
        "listen": [{"address": f"127.0.0.1:{port}"}], "workers": 1, "state_dir": str(workdir / "state"),
        "credentials": {"krb": {"kerberos": {"principal": f"client@{REALM}", "keytab_file": str(keytab),
                                             "krb5_conf": str(kdc.krb5_conf)}}},
        "hosts": {f"localhost:{origin_port}": host},
        "log": {"level": "warn", "access": False},
    }
    path = workdir / "countersign.json5"
    path.write_text(json.dumps(config))
    process = ManagedProcess(["taskset", "-c", "0", str(binary()), "run", "-c", str(path)], workdir, "countersign")
    wait_for_port("127.0.0.1", port, alive=process.alive)
    process.port = port
    return process


def wrk(proxy_port: int, target: str, seconds: int, connections: int) -> float:
    env = dict(os.environ, BENCH_TARGET_URL=target)
    completed = subprocess.run(["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds}s",
                                "-s", str(REPO / "bench/wrk-absolute-form.lua"), f"http://127.0.0.1:{proxy_port}"],
                               env=env, capture_output=True, text=True, timeout=seconds + 60)
    found = re.search(r"Requests/sec:\s+([\d.]+)", completed.stdout)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", completed.stdout)
    if non2xx:
        print(f"  warning: {non2xx.group(1)} non-2xx responses: figure not comparable")
    return float(found.group(1)) if found else 0.0


def measure(workdir: Path, kdc, keytab, negotiate: bool, seconds: int, connections: int):
    origin = NegotiateOrigin(workdir / ("origin-neg" if negotiate else "origin-open"), kdc, keytab, open_access=not negotiate)
    proxy = start_countersign(workdir / ("cs-neg" if negotiate else "cs-open"), origin.port, kdc,
                              workdir / "client.keytab", negotiate)
    try:
        target = origin.url("/1k")
        subprocess.run(["curl", "-sS", "-o", "/dev/null", "-x", f"http://127.0.0.1:{proxy.port}", target], check=True, timeout=30)
        rate = wrk(proxy.port, target, seconds, connections)
        time.sleep(0.5)
        per_connection = origin.handshakes_per_connection()
        served = sum(1 for entry in origin.entries() if entry.get("status") == 200)
        handshakes = sum(per_connection.values())
        return rate, served, handshakes, len(per_connection)
    finally:
        proxy.stop()
        origin.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=8)
    options = parser.parse_args()
    if not KerberosRealm.available():
        sys.exit("MIT KDC missing: scripts/install-test-deps.sh installs krb5-kdc and krb5-admin-server")
    with tempfile.TemporaryDirectory(prefix="countersign-bench-negotiate.") as scratch:
        workdir = Path(scratch)
        kdc = KerberosRealm(workdir / "kdc", realm=REALM).start()
        try:
            kdc.add_principal("client")
            kdc.add_principal("HTTP/localhost")
            kdc.export_keytab("client", workdir / "client.keytab")
            service = kdc.export_keytab("HTTP/localhost", workdir / "http.keytab")
            print(f"countersign {binary()}, {options.seconds}s per run, {options.connections} connections, wrk -t1")
            open_rate, _, _, _ = measure(workdir, kdc, service, False, options.seconds, options.connections)
            rate, served, handshakes, connections = measure(workdir, kdc, service, True, options.seconds, options.connections)
            print(f"no auth:            {open_rate:9.0f} req/s")
            print(f"negotiate answered: {rate:9.0f} req/s  ({rate / open_rate * 100 if open_rate else 0:.0f}% of no auth)")
            print(f"handshakes: {handshakes} for {served} requests served on {connections} upstream connections "
                  f"= {handshakes / connections if connections else 0:.2f} per connection")
        finally:
            kdc.stop()


if __name__ == "__main__":
    main()
