"""`reload.watch`: Countersign reloads when the configuration file or a file it names changes,
the way Kubernetes rotates a mounted Secret (an atomic swap of the `..data` symlink, no event on
the named file itself) and the way a person edits a file in place, exactly as SIGHUP would: a
bad change is logged with the file that triggered it and the running configuration stays."""
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from conftest_auth import SVC_PASSWORD, SVC_USER, WRONG_PASSWORD, rule, settle
from harness.certs import make_self_signed
from harness.ports import wait_until
from harness.proxies import merge
from harness.rawclient import exchange, forward_request

pytestmark = pytest.mark.countersign_only


class MountedSecret:
    """A directory laid out as the kubelet lays out a Secret volume: `..<timestamp>/` holds the
    files, `..data -> ..<timestamp>`, and each key is `key -> ..data/key`."""

    def __init__(self, directory: Path, files: dict):
        self.directory = directory
        directory.mkdir()
        self._generation = 0
        current = self._write_generation(files)
        os.symlink(current, directory / "..data")
        for name in files:
            os.symlink(f"..data/{name}", directory / name)

    def _write_generation(self, files: dict) -> str:
        self._generation += 1
        name = f"..2026_11_23_20_00_{self._generation:02d}.{os.getpid()}"
        (self.directory / name).mkdir()
        for key, value in files.items():
            (self.directory / name / key).write_text(value)
        return name

    def rotate(self, files: dict) -> float:
        """The kubelet's atomic update; returns the monotonic time of the rename."""
        old = os.readlink(self.directory / "..data")
        fresh = self._write_generation(files)
        os.symlink(fresh, self.directory / "..data_tmp")
        os.rename(self.directory / "..data_tmp", self.directory / "..data")
        renamed = time.monotonic()
        shutil.rmtree(self.directory / old)
        return renamed

    def path(self, key: str) -> Path:
        return self.directory / key


def _reload_lines(proxy, outcome: str) -> list:
    wanted = "configuration reloaded" if outcome == "ok" else "configuration reload failed"
    return [entry for entry in proxy.logs() if entry.get("msg", "").startswith(wanted)]


def _reload_count(proxy, trigger: str, result: str) -> int:
    status, body = proxy.admin_get("/metrics")
    assert status == 200
    match = re.search(rf'^countersign_reloads_total\{{trigger="{trigger}",result="{result}"\}} (\d+)$',
                      body.decode(), re.MULTILINE)
    assert match, f"no countersign_reloads_total series for trigger={trigger} result={result}"
    return int(match.group(1))


def test_kubelet_secret_rotation_reaches_the_next_request(auth_proxy, basic_nginx, tmp_path):
    secret = MountedSecret(tmp_path / "secret-volume", {"password": WRONG_PASSWORD + "\n"})
    credentials = {"rotating": {"user": SVC_USER, "password_file": str(secret.path("password"))}}
    hosts = {f"127.0.0.1:{basic_nginx.port}": {
        "intercept": False,
        "auth": [rule("rotating", ["basic"], persistence="none", max_failures=1, allow_plaintext=True)]}}
    proxy = auth_proxy(hosts, credentials=credentials)
    assert proxy.fetch(basic_nginx.url()).status == 401, "the first password is wrong: nginx refuses it"

    renamed = secret.rotate({"password": SVC_PASSWORD + "\n"})
    reloaded = None
    deadline = renamed + 5
    while time.monotonic() < deadline and not reloaded:
        reloaded = _reload_lines(proxy, "ok")
        time.sleep(0.005)
    latency = time.monotonic() - renamed
    assert reloaded, f"no reload within 5s of the ..data swap; log tail: {proxy.logs()[-3:]}"
    print(f"\nreload latency after the ..data symlink swap: {latency * 1000:.0f} ms")
    assert str(secret.path("password")) in reloaded[0].get("changed", ""), \
        f"the reload line does not name the rotated file: {reloaded[0]}"

    result = proxy.fetch(basic_nginx.url())
    assert result.status == 200, f"the rotated password was not used: {result.status} {result.body[:200]!r}"
    settle()
    assert basic_nginx.entries()[-1].user == SVC_USER
    assert _reload_count(proxy, "watch", "ok") == 1, "one rotation (several inotify events) must reload once"
    proxy.assert_no_secrets_in_output()


def test_anchor_file_rewritten_in_place_takes_effect(countersign, basic_nginx, auth_pki, tmp_path):
    anchor = tmp_path / "anchor.pem"
    anchor.write_text(make_self_signed(tmp_path / "unrelated").certificate.read_text())
    inode = anchor.stat().st_ino
    hosts = {f"localhost:{basic_nginx.tls_port}": {
        "upstream_tls": True, "intercept": False, "trust": {"anchors": [str(anchor)], "anchors_only": True}}}
    proxy = countersign({"hosts": hosts})
    url = basic_nginx.tls_url("/public.txt", scheme="http")

    def fetch():
        return exchange("127.0.0.1", proxy.port, forward_request(url))
    refused = fetch()
    assert refused.status == 502, "nginx's chain must not verify against an unrelated anchor"

    with open(anchor, "w") as rewritten:       # in place: same inode, truncated and written
        rewritten.write((auth_pki / "root.pem").read_text())
    assert anchor.stat().st_ino == inode
    assert wait_until(lambda: _reload_lines(proxy, "ok"), timeout=5), "no reload after the anchor was rewritten"
    reply = fetch()
    assert reply.status != 502, f"the rewritten anchor was not used: {reply.status} {reply.body[:200]!r}"


def test_bad_change_keeps_the_running_configuration_and_is_logged(countersign, origin, tmp_path):
    proxy = countersign()
    assert exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo"))).status == 200
    # An editor's save: a new file renamed over the old one.
    staged = proxy.config_path.with_suffix(".swp")
    staged.write_text('{ listen: [ { address: "127.0.0.1:1" ], oops }')
    os.rename(staged, proxy.config_path)
    assert wait_until(lambda: _reload_lines(proxy, "failed"), timeout=5), "the broken change was not logged"
    failure = _reload_lines(proxy, "failed")[0]
    assert failure.get("level") == "error"
    assert str(proxy.config_path) in failure.get("changed", ""), f"the log does not name the file: {failure}"
    assert proxy.alive()
    assert exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo"))).status == 200, \
        "the running configuration was not kept"
    assert _reload_count(proxy, "watch", "failed") == 1
    assert _reload_count(proxy, "watch", "ok") == 0

    # Fixed again: the watch still works after a failed reload.
    proxy.config_path.write_text(__import__("json").dumps(
        merge(proxy.config, {"unlisted_hosts": "deny", "hosts": {"listed.example": {"intercept": False}}})))
    denied = wait_until(lambda: exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo"))).status == 403,
                        timeout=5)
    assert denied, "the fixed configuration was not picked up"


def test_a_file_the_failed_change_names_is_awaited(countersign, origin, tmp_path):
    proxy = countersign()
    token = tmp_path / "mounted-later" / "token"
    token.parent.mkdir()        # the volume is mounted; its file comes later
    config = merge(proxy.config, {"unlisted_hosts": "deny", "credentials": {"tok": {"token_file": str(token)}},
                                  "hosts": {"listed.example": {"intercept": False,
                                                               "auth": [{"credential": "tok", "schemes": ["bearer"]}]}}})
    proxy.config_path.write_text(__import__("json").dumps(config))
    assert wait_until(lambda: _reload_lines(proxy, "failed"), timeout=5), "the change naming a missing file did not fail"
    assert exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo"))).status == 200, "old config kept"
    token.write_text("tok-value\n")
    assert wait_until(lambda: _reload_lines(proxy, "ok"), timeout=5), \
        "the secret file appearing did not trigger another attempt"
    assert str(token) in _reload_lines(proxy, "ok")[0].get("changed", "")
    assert exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo"))).status == 403


def test_a_change_announced_by_sighup_too_is_loaded_once(countersign, origin):
    """A file written and then signalled (what a deploy script or an operator does with the watch
    on) is one reload: the SIGHUP's reload read the change, so the watch's look at it after its
    debounce finds nothing new. Loading it twice rebuilt every snapshot and moved the
    generation past the one the change made."""
    proxy = countersign()
    config = merge(proxy.config, {"unlisted_hosts": "deny", "hosts": {"listed.example": {"intercept": False}}})
    proxy.reload(config)
    assert wait_until(lambda: _reload_lines(proxy, "ok"), timeout=5), "the signalled change was not loaded"
    # What is tested is that nothing more happens: wait out the watch's debounce, with margin.
    time.sleep(4 * 0.3)
    assert len(_reload_lines(proxy, "ok")) == 1, [entry.get("trigger") for entry in _reload_lines(proxy, "ok")]
    assert _reload_count(proxy, "signal", "ok") == 1
    assert exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo"))).status == 403


def test_watch_false_does_not_reload(countersign, origin):
    proxy = countersign({"reload": {"watch": False}})
    config = merge(proxy.config, {"unlisted_hosts": "deny", "hosts": {"listed.example": {"intercept": False}}})
    proxy.config_path.write_text(__import__("json").dumps(config))
    time.sleep(1.5)
    assert exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo"))).status == 200, \
        "with reload.watch false a changed file must wait for SIGHUP"
    assert not _reload_lines(proxy, "ok")
    proxy.process.signal(__import__("signal").SIGHUP)
    assert wait_until(lambda: exchange("127.0.0.1", proxy.port, forward_request(origin.url("/echo"))).status == 403,
                      timeout=5), "SIGHUP still reloads"
    assert _reload_count(proxy, "signal", "ok") == 1
    assert _reload_count(proxy, "watch", "ok") == 0
