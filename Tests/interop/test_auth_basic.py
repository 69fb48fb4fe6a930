"""Basic (nginx auth_basic, httpbin) and Bearer (httpbin /bearer) answered by Countersign: the
client sends a plain request without credentials and gets the upstream's 200 and body.
Preemption and failure limits are counted from the upstream's own access log."""
import base64
import os
import shutil
import subprocess
import time

import pytest

from conftest_auth import (API_TOKEN, CLIENT_PASSWORD, CLIENT_USER, SVC_PASSWORD, SVC_USER,
                           assert_no_secret_in, assert_state_saved_privately, json_body, rule, settle,
                           tls_host)
from harness.auth_peers import BasicNginx

pytestmark = pytest.mark.countersign_only


def _host(server, *rules) -> dict:
    return {f"127.0.0.1:{server.port}": {"intercept": False, "auth": list(rules)}}


def _get_secret(proxy, server, times: int):
    for attempt in range(times):
        result = proxy.fetch(server.url())
        assert result.status == 200, \
            f"request {attempt + 1}: expected nginx's 200, got {result.status} {result.body[:200]!r}"
        assert result.body == BasicNginx.SECRET_BODY


def test_basic_answered_once_then_preemptive(auth_proxy, basic_nginx):
    proxy = auth_proxy(_host(basic_nginx, rule("svc", ["basic"], allow_plaintext=True)))
    _get_secret(proxy, basic_nginx, 3)
    settle()
    assert basic_nginx.statuses() == [401, 200, 200, 200], \
        "after the first exchange in the space nginx should see no more 401s"
    assert {entry.user for entry in basic_nginx.entries() if entry.status == 200} == {SVC_USER}
    assert proxy.auth_outcomes(3) == ["basic:answered", "basic:preemptive", "basic:preemptive"]
    proxy.assert_no_secrets_in_output()


def test_persistence_none_answers_every_challenge(auth_proxy, basic_nginx):
    proxy = auth_proxy(_host(basic_nginx, rule("svc", ["basic"], persistence="none", allow_plaintext=True)))
    _get_secret(proxy, basic_nginx, 3)
    settle()
    assert basic_nginx.statuses() == [401, 200] * 3
    assert proxy.auth_outcomes(3) == ["basic:answered"] * 3


def test_basic_withheld_over_plaintext_without_allow_plaintext(auth_proxy, basic_nginx):
    proxy = auth_proxy(_host(basic_nginx, rule("svc", ["basic"])))
    for _ in range(2):
        result = proxy.fetch(basic_nginx.url())
        assert result.status == 401, "the password must not go over http:// without allow_plaintext"
        assert result.header("WWW-Authenticate", "").lower().startswith("basic"), \
            "the client should get nginx's challenge untouched"
    settle()
    assert basic_nginx.statuses() == [401, 401], "one upstream request per client request, no answer"
    assert all(entry.user == "-" for entry in basic_nginx.entries())
    proxy.assert_no_secrets_in_output()


def test_basic_over_upstream_tls_needs_no_allow_plaintext(auth_proxy, basic_nginx, auth_pki):
    hosts = {f"localhost:{basic_nginx.tls_port}": tls_host(auth_pki, [rule("svc", ["basic"])])}
    proxy = auth_proxy(hosts)
    for _ in range(2):
        result = proxy.fetch(basic_nginx.tls_url(scheme="http"))
        assert result.status == 200, f"got {result.status} {result.body[:200]!r}"
        assert result.body == BasicNginx.SECRET_BODY
    settle()
    assert basic_nginx.statuses() == [401, 200, 200]


@pytest.mark.parametrize("max_failures", [1, 2])
def test_wrong_password_costs_at_most_one_plus_max_failures(auth_proxy, basic_nginx, max_failures):
    proxy = auth_proxy(_host(basic_nginx, rule("wrong", ["basic"], max_failures=max_failures,
                                               allow_plaintext=True)))
    result = proxy.fetch(basic_nginx.url())
    assert result.status == 401, "the client gets the final 401"
    settle()
    attempts = len(basic_nginx.entries())
    assert 1 < attempts <= 1 + max_failures, \
        f"{attempts} upstream requests for one client request (allowed: 2..{1 + max_failures})"
    assert proxy.auth_outcomes(1)[-1] == "basic:rejected"

    # The space is not answered preemptively any more: a second client request starts
    # without an answer, and still cannot cause a burst.
    mark = basic_nginx.mark()
    assert proxy.fetch(basic_nginx.url()).status == 401
    settle()
    again = basic_nginx.since(mark)
    assert len(again) <= 1 + max_failures, f"second request cost {len(again)} upstream attempts"
    proxy.assert_no_secrets_in_output()


def test_client_authorization_passes_untouched(auth_proxy, basic_nginx):
    proxy = auth_proxy(_host(basic_nginx, rule("svc", ["basic"], allow_plaintext=True)))
    _get_secret(proxy, basic_nginx, 1)       # the space is now known to Countersign
    mark = basic_nginx.mark()

    result = proxy.fetch(basic_nginx.url(), "-u", f"{CLIENT_USER}:{CLIENT_PASSWORD}")
    assert result.status == 200 and result.body == BasicNginx.SECRET_BODY
    settle()
    assert [(entry.status, entry.user) for entry in basic_nginx.since(mark)] == [(200, CLIENT_USER)], \
        "nginx must see the client's own credentials, not Countersign's"

    mark = basic_nginx.mark()
    result = proxy.fetch(basic_nginx.url(), "-u", f"{CLIENT_USER}:not-the-password")
    assert result.status == 401, "a client's own wrong Authorization gets nginx's 401, not a substitute"
    settle()
    # nginx logs the user a request claimed even when it refuses it.
    assert [(entry.status, entry.user) for entry in basic_nginx.since(mark)] == [(401, CLIENT_USER)], \
        "Countersign must neither replace nor retry the client's own Authorization"


def test_client_proxy_authorization_never_reaches_upstream(auth_proxy, basic_nginx):
    proxy = auth_proxy(_host(basic_nginx, rule("svc", ["basic"], allow_plaintext=True)))
    token = base64.b64encode(b"someone:proxy-pass").decode()
    for _ in range(2):
        result = proxy.fetch(basic_nginx.url(), "-H", f"Proxy-Authorization: Basic {token}")
        assert result.status == 200
    settle()
    seen = [entry.extra["proxy_authorization"] for entry in basic_nginx.entries()]
    assert seen and set(seen) == {"-"}, "a Proxy-Authorization field reached nginx"


def test_basic_state_is_permanent_across_restart(auth_proxy, basic_nginx, tmp_path):
    state_dir = tmp_path / "auth-state"
    hosts = _host(basic_nginx, rule("svc", ["basic"], persistence="permanent", allow_plaintext=True))
    first = auth_proxy(hosts, state_dir=state_dir)
    _get_secret(first, basic_nginx, 1)
    first.stop()

    assert_state_saved_privately(state_dir)

    mark = basic_nginx.mark()
    second = auth_proxy(hosts, state_dir=state_dir)
    _get_secret(second, basic_nginx, 1)
    settle()
    assert basic_nginx.statuses(mark) == [200], "the first request after a restart should be preemptive"
    assert second.auth_outcomes(1) == ["basic:preemptive"]


def test_state_file_is_private_from_its_first_byte(auth_proxy, basic_nginx, tmp_path):
    """With umask 0, the state directory is 0700 and the file 0600 from creation on: it is
    written to a fresh name opened with O_EXCL, so a symlink planted at a predictable
    temporary name is never followed (nothing is written through it) and no reader ever
    sees a world-readable file."""
    if not shutil.which("strace"):
        pytest.skip("strace is not installed (scripts/install-test-deps.sh installs it)")
    state_dir = tmp_path / "auth-state"
    victim = tmp_path / "elsewhere" / "victim"
    victim.parent.mkdir()
    state_dir.mkdir(mode=0o755)
    state_dir.chmod(0o755)
    for name in ("auth-state.json.tmp", "auth-state.json.tmp.0"):
        (state_dir / name).symlink_to(victim)
    hosts = _host(basic_nginx, rule("svc", ["basic"], persistence="permanent", allow_plaintext=True))
    previous = os.umask(0)
    try:
        proxy = auth_proxy(hosts, state_dir=state_dir)
    finally:
        os.umask(previous)
    trace = tmp_path / "strace.txt"
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=open,openat,creat,mkdir,mkdirat",
                               "-o", str(trace), "-p", str(proxy.pid)], stderr=subprocess.DEVNULL)
    time.sleep(0.5)    # strace attaches to every thread
    _get_secret(proxy, basic_nginx, 1)
    proxy.stop()
    tracer.wait(timeout=10)
    creations = [line for line in trace.read_text().splitlines() if str(state_dir) in line and "O_CREAT" in line]
    assert creations, f"strace saw no file created in state_dir: {trace.read_text()[-2000:]}"
    for line in creations:
        assert "O_EXCL" in line and line.split("O_CREAT", 1)[1].split(")")[0].endswith(", 0600"), \
            f"a state file was not created exclusively with mode 0600: {line}"
    assert not victim.exists(), "the state was written through a symlink planted in state_dir"
    state = state_dir / "auth-state.json"
    assert state.is_file() and not state.is_symlink()
    assert oct(state.stat().st_mode & 0o777) == oct(0o600)
    assert oct(state_dir.stat().st_mode & 0o777) == oct(0o700), "state_dir must be 0700"


def test_httpbin_basic(auth_proxy, httpbin):
    path = f"/basic-auth/{SVC_USER}/{SVC_PASSWORD}"
    proxy = auth_proxy(_host(httpbin, rule("svc", ["basic"], allow_plaintext=True)))
    mark = httpbin.mark()
    for _ in range(2):
        result = proxy.fetch(httpbin.url(path))
        assert result.status == 200, f"got {result.status} {result.body[:200]!r}"
        assert json_body(result) == {"authenticated": True, "user": SVC_USER}
    settle()
    assert httpbin.statuses(mark) == [401, 200, 200]


def test_bearer_token_answered_then_preemptive(auth_proxy, httpbin):
    proxy = auth_proxy(_host(httpbin, rule("tok", ["bearer"], allow_plaintext=True)))
    mark = httpbin.mark()
    for _ in range(3):
        result = proxy.fetch(httpbin.url("/bearer"))
        assert result.status == 200, f"got {result.status} {result.body[:200]!r}"
        assert json_body(result) == {"authenticated": True, "token": API_TOKEN}
    settle()
    assert httpbin.statuses(mark) == [401, 200, 200, 200]
    assert proxy.auth_outcomes(3) == ["bearer:answered", "bearer:preemptive", "bearer:preemptive"]
    # httpbin echoes the token in its body, so only the log may not carry it.
    assert_no_secret_in(proxy.stderr_text(), "Countersign's stderr")


def test_bearer_withheld_over_plaintext_without_allow_plaintext(auth_proxy, httpbin):
    proxy = auth_proxy(_host(httpbin, rule("tok", ["bearer"])))
    mark = httpbin.mark()
    result = proxy.fetch(httpbin.url("/bearer"))
    assert result.status == 401, "a bearer token must not go over http:// without allow_plaintext"
    settle()
    assert httpbin.statuses(mark) == [401]


def test_rule_for_another_realm_is_not_answered(auth_proxy, basic_nginx):
    proxy = auth_proxy(_host(basic_nginx, rule("svc", ["basic"], realm="some-other-realm", allow_plaintext=True)))
    result = proxy.fetch(basic_nginx.url())
    assert result.status == 401, "no rule names nginx's realm, so its challenge goes to the client"
    settle()
    assert basic_nginx.statuses() == [401]

    proxy = auth_proxy(_host(basic_nginx, rule("svc", ["basic"], realm=basic_nginx.realm, allow_plaintext=True)))
    _get_secret(proxy, basic_nginx, 1)


def test_host_no_rule_names_gets_no_answer(auth_proxy, basic_nginx, digest_apache):
    """Countersign knows the svc password for Apache's port only; nginx's challenge on
    another port of the same address goes to the client unanswered."""
    proxy = auth_proxy(_host(digest_apache, rule("svc", ["basic", "digest"], allow_plaintext=True)))
    result = proxy.fetch(basic_nginx.url())
    assert result.status == 401
    settle()
    assert [(entry.status, entry.user) for entry in basic_nginx.entries()] == [(401, "-")]
