"""How far an upstream (or a client) can push challenge answering (SPEC "Answering challenges" 5):
one client request draws at most `1 + max_failures` answers in all, whatever realms the server
names, and only the protection space whose credential was really rejected `max_failures` times
is locked out -- not a realm no rule covers, not a challenge passed through because the body
could not be replayed. Counted at a scripted origin (harness/realm_origin.py)."""
import os

import pytest

from conftest_auth import SVC_PASSWORD, SVC_USER, rule
from harness.realm_origin import RealmOrigin

pytestmark = pytest.mark.countersign_only


@pytest.fixture
def realm_origin():
    origin = RealmOrigin(SVC_USER, SVC_PASSWORD)
    yield origin
    origin.stop()


def _hosts(origin, *rules) -> dict:
    return {origin.authority: {"intercept": False, "auth": list(rules)}}


@pytest.mark.parametrize("path, scheme, max_failures", [
    ("/flood", "basic", 1), ("/flood", "basic", 3), ("/flood-digest", "digest", 2)])
def test_new_realm_in_every_401_draws_one_plus_max_failures_answers(auth_proxy, realm_origin, path, scheme, max_failures):
    proxy = auth_proxy(_hosts(realm_origin, rule("svc", [scheme], max_failures=max_failures, allow_plaintext=True)))
    result = proxy.fetch(realm_origin.url(path), timeout=10)
    assert result.status == 401, f"the client gets the final 401, got {result.status} {result.stderr}"
    seen = realm_origin.since(0)
    answered = [entry for entry in seen if entry.authorized]
    assert len(answered) == 1 + max_failures, \
        f"one client request drew {len(answered)} answers (1 + max_failures = {1 + max_failures}); {len(seen)} requests in all"
    assert len(seen) == len(answered) + 1, "the first request goes bare: nothing is known of the space yet"
    proxy.assert_no_secrets_in_output()


def test_realm_no_rule_covers_locks_nothing_out(auth_proxy, realm_origin):
    proxy = auth_proxy(_hosts(realm_origin, rule("svc", ["basic"], realm="real", allow_plaintext=True)))
    assert proxy.fetch(realm_origin.url("/real")).status == 200
    for _ in range(3):
        # The learned answer for "real" goes along preemptively; the 401 names another realm.
        assert proxy.fetch(realm_origin.url("/unknown")).status == 401
    mark = realm_origin.mark()
    result = proxy.fetch(realm_origin.url("/real"))
    assert result.status == 200, f"realm \"real\" must still be answered, got {result.status}"
    assert [entry.status for entry in realm_origin.since(mark)] == [200], "and still preemptively"


def test_rejected_realm_locks_out_only_that_realm(auth_proxy, realm_origin):
    proxy = auth_proxy(_hosts(realm_origin, rule("svc", ["basic"], max_failures=1, allow_plaintext=True)))
    assert proxy.fetch(realm_origin.url("/real")).status == 200
    for path in ["/unknown-a", "/unknown-b", "/unknown-a"]:
        assert proxy.fetch(realm_origin.url(path)).status == 401
    unknown_answers = [e for e in realm_origin.since(0) if e.path.startswith("/unknown") and e.authorized]
    # Each /unknown request carries the preemptive "real" answer (not a rejection of "unknown");
    # the first two also answer "unknown" once and are rejected: refused for two different
    # requests and never accepted there, realm "unknown" (only that one) is locked out.
    assert len(unknown_answers) == 5, f"{len(unknown_answers)} answered /unknown requests"
    mark = realm_origin.mark()
    assert proxy.fetch(realm_origin.url("/real")).status == 200, "realm \"real\" must still be answered"
    assert [entry.status for entry in realm_origin.since(mark)] == [200]


def test_body_that_could_not_be_replayed_locks_nothing_out(auth_proxy, realm_origin, tmp_path):
    proxy = auth_proxy(_hosts(realm_origin, rule("svc", ["basic"], allow_plaintext=True)),
                       limits={"replay_body_bytes": 1024})
    assert proxy.fetch(realm_origin.url("/real")).status == 200
    body = tmp_path / "big.bin"
    body.write_bytes(os.urandom(200_000))
    for _ in range(2):
        result = proxy.fetch(realm_origin.url("/reject-upload"), "--data-binary", f"@{body}", "-H", "Expect:")
        assert result.status == 401, "the body went upstream unkept: the 401 goes to the client"
    mark = realm_origin.mark()
    result = proxy.fetch(realm_origin.url("/real"))
    assert result.status == 200, f"the pass-through must not lock the credential out, got {result.status}"
    assert [entry.status for entry in realm_origin.since(mark)] == [200]
