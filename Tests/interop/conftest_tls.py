"""Fixtures of the upstream-TLS tests: the test PKI (made once per session with the openssl
command line) and an nginx serving each of its certificates on its own port."""
import pytest

from harness.pki import make_test_pki
from harness.tls_servers import TlsUpstreams


@pytest.fixture(scope="session")
def test_pki(session_dir):
    return make_test_pki(session_dir / "pki")


@pytest.fixture(scope="session")
def tls_upstreams(session_dir, test_pki):
    upstreams = TlsUpstreams(session_dir / "nginx-tls", test_pki)
    yield upstreams
    upstreams.stop()


@pytest.fixture
def reload_applied():
    """reload_applied(proxy, config_text=None): SIGHUP (after writing `config_text` when given)
    and wait until the proxy logs that it reloaded, so the next request sees the new policy."""
    from harness.ports import wait_until

    def reload(proxy, config_text: str = None) -> None:
        def reloads() -> int:
            return sum(1 for entry in proxy.logs() if entry.get("msg") == "configuration reloaded")
        before = reloads()
        if config_text is None:
            proxy.reload(proxy.config)
        else:
            proxy.reload_text(config_text)
        assert wait_until(lambda: reloads() > before, timeout=5), \
            f"no 'configuration reloaded' within 5 s of SIGHUP: {proxy.stderr_text()[-1000:]}"
    return reload
