"""Credentials without a challenge (SPEC "Injecting, signing and verifying"): `inject` sets a
host's API key on every request, placeholders (`countersign:NAME`) are swapped for the secret
only toward the hosts that list them, and anywhere else the request is refused before a byte
goes upstream. Plain forwards (the recording origin), a gateway listener, and an intercepted
tunnel (curl with HTTPS_PROXY) against origins that record what they got."""
import base64
import json

import pytest

from harness.checks import assert_proxy_error
from harness.curl import curl
from harness.ports import free_port, wait_for_port, wait_until
from harness.rawclient import exchange, forward_request, request_bytes
from test_interception import listed

pytestmark = pytest.mark.countersign_only

API_KEY = "k3y-7f1c/+=&"          # needs percent-encoding in a query
SVC_PASSWORD = "svc-pa55-0e4d"
CREDENTIALS = {"apikey": {"value_env": "CS_API_KEY"}, "svc": {"user": "svc", "password_env": "CS_SVC_PASSWORD"}}
ENV = {"CS_API_KEY": API_KEY, "CS_SVC_PASSWORD": SVC_PASSWORD}


def _start(countersign, hosts: dict, **overrides):
    """Plain hosts (no interception CA here): each entry gets intercept false."""
    hosts = {pattern: {"intercept": False, **entry} for pattern, entry in hosts.items()}
    return countersign({"credentials": CREDENTIALS, "hosts": hosts, **overrides}, env=ENV)


def test_inject_sets_header_and_query_replacing_the_clients(countersign, origin):
    hosts = {origin.authority: {"inject": [{"header": "X-Api-Key", "credential": "apikey"},
                                           {"header": "Authorization", "credential": "apikey", "prefix": "Token "},
                                           {"query": "api_key", "credential": "apikey"}]}}
    proxy = _start(countersign, hosts)
    request = forward_request(origin.url("/echo?api_key=mine&page=2"),
                              headers=[("X-Api-Key", "client-value"), ("Authorization", "Basic Y2xpZW50OmNsaWVudA==")])
    assert exchange("127.0.0.1", proxy.port, request).status == 200
    seen = origin.requests[-1]
    assert seen.header_values("X-Api-Key") == [API_KEY]
    assert seen.header_values("Authorization") == [f"Token {API_KEY}"], "the injected Authorization replaces the client's"
    assert seen.target == "/echo?page=2&api_key=k3y-7f1c%2F%2B%3D%26"
    proxy.stop()
    assert API_KEY not in proxy.stderr_text(), "the injected secret reached the log"


def test_placeholders_resolve_toward_the_host_that_lists_them(countersign, origin):
    proxy = _start(countersign, {origin.authority: {"placeholders": ["apikey", "svc"]}})
    basic = base64.b64encode(b"svc:countersign:svc").decode()
    request = forward_request(origin.url("/echo?key=countersign:apikey&alt=countersign%3Aapikey"),
                              headers=[("X-Api-Key", "countersign:apikey"), ("Authorization", f"Basic {basic}")])
    assert exchange("127.0.0.1", proxy.port, request).status == 200
    seen = origin.requests[-1]
    assert seen.header("X-Api-Key") == API_KEY
    assert seen.header("Authorization") == "Basic " + base64.b64encode(f"svc:{SVC_PASSWORD}".encode()).decode()
    assert seen.target == "/echo?key=k3y-7f1c%2F%2B%3D%26&alt=k3y-7f1c%2F%2B%3D%26"
    line = wait_until(lambda: proxy.access_logs(), timeout=5)[-1]
    assert line.get("placeholders") == "apikey,svc", line
    proxy.stop()
    assert API_KEY not in proxy.stderr_text() and SVC_PASSWORD not in proxy.stderr_text()


@pytest.mark.parametrize("where", ["header", "query", "percent-query", "basic"])
def test_a_placeholder_toward_a_host_that_does_not_list_it_is_refused_and_nothing_is_sent(countersign, origin, where):
    """The secret is bound to its host: the same placeholder sent to another host (listed
    without it, or not listed at all) gets 403 naming the placeholder and the host, and the
    upstream sees no request."""
    other = f"localhost:{origin.port}"   # the same server under another name: a host of its own
    proxy = _start(countersign, {origin.authority: {"placeholders": ["apikey"]}, other: {"placeholders": ["svc"]}})
    headers, path = [], "/echo"
    if where == "header":
        headers = [("X-Api-Key", "countersign:apikey")]
    elif where == "query":
        path = "/echo?key=countersign:apikey"
    elif where == "percent-query":
        path = "/echo?key=countersign%3aapikey"
    else:
        headers = [("Authorization", "Basic " + base64.b64encode(b"u:countersign:apikey").decode())]
    for authority in (other, f"127.0.0.2:{origin.port}"):
        before = origin.snapshot()[1]
        response = exchange("127.0.0.1", proxy.port, forward_request(f"http://{authority}{path}", headers=headers))
        assert_proxy_error(response, 403, proxy, "http_request_denied")
        details = response.header("Proxy-Status")
        assert "countersign:apikey" in details and authority in details, details
        assert origin.snapshot()[1] == before, "a refused request reached the upstream"
    # Toward its own host the very same request is resolved.
    response = exchange("127.0.0.1", proxy.port, forward_request(origin.url(path), headers=headers))
    assert response.status == 200


def test_gateway_listener_injects_too(countersign, origin):
    gateway_port = free_port()
    proxy = _start(countersign, {origin.authority: {"inject": [{"header": "X-Api-Key", "credential": "apikey"}]}},
                   listen=[{}, {"address": f"127.0.0.1:{gateway_port}", "mode": "gateway", "upstream": origin.url("")}])
    wait_for_port("127.0.0.1", gateway_port)
    response = exchange("127.0.0.1", gateway_port, request_bytes("GET", "/echo", [("Host", "gateway.local")]))
    assert response.status == 200
    assert origin.requests[-1].header("X-Api-Key") == API_KEY


def test_intercepted_requests_get_injection_and_placeholders(intercepting_countersign, intercept_tls_origin, intercept_pki, workdir):
    hosts = listed(intercept_pki, intercept_tls_origin, inject=[{"header": "X-Api-Key", "credential": "apikey"}],
                   placeholders=["svc"])
    proxy = intercepting_countersign(hosts, env=ENV, credentials=CREDENTIALS)
    result = curl(["--cacert", str(proxy.ca_certificate), "-H", "X-Secret: countersign:svc",
                   intercept_tls_origin.https_url("/echo?k=countersign:svc")], workdir, env_proxy={"HTTPS_PROXY": proxy.url})
    assert result.returncode == 0 and result.status == 200, result.stderr
    seen = intercept_tls_origin.requests[-1]
    assert seen.header("X-Api-Key") == API_KEY
    assert seen.header("X-Secret") == SVC_PASSWORD
    assert seen.target == f"/echo?k={SVC_PASSWORD}"
    refused = curl(["--cacert", str(proxy.ca_certificate), "-H", "X-Secret: countersign:apikey",
                    intercept_tls_origin.https_url("/echo")], workdir, env_proxy={"HTTPS_PROXY": proxy.url})
    assert refused.status == 403, (refused.status, refused.body)
    assert len(intercept_tls_origin.requests) == 1


@pytest.mark.parametrize("secret,problem", [("abc\r\nX-Evil: 1", "carriage return"), ("abc\ndef", "line feed"), ("a\x01b", "control character")])
def test_a_secret_that_would_split_a_header_is_a_configuration_error(countersign_executable, tmp_path, secret, problem):
    import subprocess
    config = {"credentials": CREDENTIALS, "hosts": {"api.example.com": {"placeholders": ["apikey"]}}}
    path = tmp_path / "countersign.json5"
    path.write_text(json.dumps(config))
    result = subprocess.run([str(countersign_executable), "check", "-c", str(path)], capture_output=True, text=True,
                            env={"CS_API_KEY": secret, "CS_SVC_PASSWORD": SVC_PASSWORD, "PATH": "/usr/bin:/bin"})
    assert result.returncode == 2, result.stdout + result.stderr
    output = result.stdout + result.stderr
    assert "hosts" in output and "placeholders" in output and problem in output, output
    assert secret not in output


def test_a_bearer_token_that_would_split_a_header_is_a_configuration_error(countersign_executable, tmp_path):
    import subprocess
    config = {"credentials": {"token": {"token_env": "CS_TOKEN"}},
              "hosts": {"api.example.com": {"auth": [{"credential": "token", "schemes": ["bearer"]}]}}}
    path = tmp_path / "countersign.json5"
    path.write_text(json.dumps(config))
    result = subprocess.run([str(countersign_executable), "check", "-c", str(path)], capture_output=True, text=True,
                            env={"CS_TOKEN": "t0ken\r\nX-Injected: yes", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 2, result.stdout + result.stderr
    assert "carriage return" in result.stdout + result.stderr
