"""Request smuggling, differentially: every shape of harness/smuggling_corpus.py goes through the
proxy on a raw socket to nginx, Apache httpd and gunicorn (gthread), one origin of each kind for
all shapes. For each shape either the proxy refuses it, or every origin parsed exactly the
requests a strict RFC 9112 reading says the proxy forwards (same count, methods, targets, Host
and body SHA-256), as the origins' own logs show. Responses get the same treatment from a hostile
raw origin (harness/hostile_origin.py): the client sees the proxy's 502 or exactly one
well-framed response, and the next request on the connection gets its own answer.

A table (family x refused / forwarded-consistent / inconsistent) is printed; any inconsistent
shape fails the test with the details."""
import threading
import time
from collections import Counter, defaultdict

import pytest

from harness.hostile_origin import RESPONSE_SHAPES, HostileOrigin
from harness.ports import free_port
from harness.proxies import CountersignProcess, base_config
from harness.rawclient import RawConnection, forward_request
from harness.recording_origins import RecordingApache, RecordingGunicorn, RecordingNginx
from harness.smuggling_corpus import Refusal, all_shapes, reference_reading
from harness.wire import PeerClosed

pytestmark = pytest.mark.countersign_only

READ_TIMEOUT = 2.0
OUTCOMES = ("refused", "forwarded-consistent", "inconsistent")


@pytest.fixture(scope="module")
def smuggling_proxy(tmp_path_factory, countersign_executable):
    workdir = tmp_path_factory.mktemp("smuggling-proxy")
    config = base_config(free_port(), free_port(), workdir)
    config["workers"] = 2
    proxy = CountersignProcess(countersign_executable, workdir, config, None)
    yield proxy
    proxy.process.stop()


@pytest.fixture(scope="module")
def recording_origins(tmp_path_factory):
    base = tmp_path_factory.mktemp("smuggling-origins")
    origins = []
    try:
        origins.append(RecordingNginx(base / "nginx"))
        origins.append(RecordingApache())
        origins.append(RecordingGunicorn(base / "gunicorn"))
        yield origins
    finally:
        for origin in origins:
            origin.stop()


def _is_proxy_refusal(response) -> bool:
    return response.status >= 400 and response.header("Proxy-Status") is not None


def _send_shape(proxy, wire: bytes, methods: list):
    """Sends the bytes and reads responses until one per message, a close or a timeout."""
    responses = []
    with RawConnection("127.0.0.1", proxy.port, timeout=READ_TIMEOUT) as connection:
        try:
            connection.send(wire)
        except OSError:
            return responses
        while len(responses) < max(len(methods), 1):
            method = methods[len(responses)] if len(responses) < len(methods) else "GET"
            try:
                response = connection.read_response(method)
            except (PeerClosed, OSError, ValueError, IndexError):
                break
            responses.append(response)
    return responses


def _matches(record, expected, authority: str) -> bool:
    if (record.method, record.target) != (expected.method, expected.path):
        return False
    if record.refused:  # the origin refused it itself: framing agreed, it read no body
        return True
    return record.host == authority and record.body_sha256 == expected.body_sha256


def _classify(reading, responses, records, authority):
    """Walks the strict reading's messages along the proxy's answers: each message is refused
    by the proxy or forwarded, a Refusal is never forwarded, and the origin parsed exactly the
    forwarded ones."""
    forwarded, refused = [], False
    answered = 0
    for message, response in zip(reading.messages, responses):
        answered += 1
        if _is_proxy_refusal(response):
            refused = True
            continue
        if isinstance(message, Refusal):
            return "inconsistent", f"forwarded a message a strict reading refuses ({message.reason})"
        forwarded.append(message)
    if len(responses) > len(reading.messages):
        return "inconsistent", "more responses than messages"
    unanswered = reading.messages[answered:]
    # A server may close after any response it marks `Connection: close` (RFC 9112 §9.6), e.g. a
    # body it cannot length-delimit for an HTTP/1.0 client; the client retries the rest.
    announced_close = bool(responses) and "close" in (responses[-1].header("Connection") or "").lower()
    if unanswered and not refused and not announced_close:
        return "inconsistent", f"the proxy stopped answering after {answered} of {len(reading.messages)} messages"
    # A message the proxy refused after streaming part of it upstream (an oversized trailer) is
    # cut off there: the origin may log that fragment as a request it refused, never serve it.
    aborted = records[len(forwarded):]
    if len(records) < len(forwarded) or (aborted and not (refused and all(r.refused for r in aborted))) \
            or not all(_matches(r, e, authority) for r, e in zip(records, forwarded)):
        return "inconsistent", "the origin parsed other requests than the proxy forwarded"
    return ("refused" if refused else "forwarded-consistent"), ""


def _run_request_shape(proxy, origin, shape):
    wire = shape.bytes_for(origin.authority)
    reading = reference_reading(wire)
    mark = origin.mark()
    responses = _send_shape(proxy, wire, reading.methods)
    forwarded = sum(1 for r in responses if not _is_proxy_refusal(r))
    deadline = time.monotonic() + 1.0
    records = origin.since(mark)
    while len(records) < forwarded and time.monotonic() < deadline:
        time.sleep(0.01)
        records = origin.since(mark)
    time.sleep(0.01)
    records = origin.since(mark)
    outcome, why = _classify(reading, responses, records, origin.authority)
    detail = f"{why}: proxy answered {[r.status for r in responses]}; origin parsed {records}; " \
             f"strict reading {reading.messages}"
    return outcome, detail


def _run_origin(proxy, origin, shapes, results):
    for shape in shapes:
        try:
            results[(shape.name, origin.kind)] = _run_request_shape(proxy, origin, shape)
        except Exception as failure:  # a harness failure is reported, not hidden
            results[(shape.name, origin.kind)] = ("inconsistent", f"harness error: {failure!r}")


def _table(rows: dict) -> str:
    families = sorted(rows)
    width = max(len(f) for f in families + ["family"]) + 2
    lines = ["family".ljust(width) + "".join(o.rjust(22) for o in OUTCOMES) + "total".rjust(8)]
    totals = Counter()
    for family in families:
        counts = rows[family]
        totals.update(counts)
        lines.append(family.ljust(width) + "".join(str(counts[o]).rjust(22) for o in OUTCOMES)
                     + str(sum(counts.values())).rjust(8))
    lines.append("all".ljust(width) + "".join(str(totals[o]).rjust(22) for o in OUTCOMES) + str(sum(totals.values())).rjust(8))
    return "\n".join(lines)


def test_request_shapes_are_refused_or_parsed_identically_by_every_origin(smuggling_proxy, recording_origins, capsys):
    shapes = all_shapes()
    assert len(shapes) >= 300
    results = {}
    threads = [threading.Thread(target=_run_origin, args=(smuggling_proxy, origin, shapes, results))
               for origin in recording_origins]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    rows = defaultdict(Counter)
    failures = []
    for shape in shapes:
        outcomes = {origin.kind: results[(shape.name, origin.kind)] for origin in recording_origins}
        kinds = {outcome for outcome, _ in outcomes.values()}
        outcome = "inconsistent" if "inconsistent" in kinds or len(kinds) > 1 else kinds.pop()
        rows[shape.family][outcome] += 1
        if outcome == "inconsistent":
            failures.append(f"{shape.family}/{shape.name}: " + "; ".join(
                f"{kind}: {result} ({detail})" for kind, (result, detail) in outcomes.items()))
    with capsys.disabled():
        print(f"\nRequest smuggling shapes through the proxy to nginx, Apache httpd and gunicorn ({len(shapes)} shapes):")
        print(_table(rows))
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------------------------- responses


def _response_outcome(proxy, hostile, name, shape):
    url = f"http://{hostile.authority}/h/{name}"
    with RawConnection("127.0.0.1", proxy.port, timeout=5) as connection:
        connection.send(forward_request(url, method=shape.method))
        try:
            first = connection.read_response(shape.method)
        except (PeerClosed, OSError, ValueError) as failure:
            # A body found faulty before any of it reached the client: the proxy closes without
            # a response. Nothing was forwarded; allowed where cutting the response short is.
            if isinstance(failure, PeerClosed) and "incomplete" in shape.accept:
                return "refused", "closed before the head"
            return "inconsistent", f"no response: {failure!r}"
        if _is_proxy_refusal(first):
            seen = "refused"
        elif not first.complete:
            seen = "incomplete"
        elif first.status in (204, 304) or shape.method == "HEAD":
            seen = ("status", first.status)
        else:
            seen = ("body", first.body)
        if seen not in shape.accept:
            return "inconsistent", f"got {seen!r} ({first.status}), accepted {shape.accept}"
        # The next request on the same client connection gets its own answer, or a close.
        follow_up = None
        if first.complete and first.header("Connection", "").lower() != "close":
            try:
                connection.send(forward_request(f"http://{hostile.authority}/ok/1"))
                follow_up = connection.read_response()
            except (PeerClosed, OSError, ValueError):
                follow_up = None
        if follow_up is not None and (follow_up.status, follow_up.body) != (200, b"ok-1"):
            return "inconsistent", f"the next request on the connection got {follow_up.status} {follow_up.body[:40]!r}"
    # And a fresh client never inherits what was left on a pooled upstream connection.
    with RawConnection("127.0.0.1", proxy.port, timeout=5) as fresh:
        fresh.send(forward_request(f"http://{hostile.authority}/ok/2"))
        after = fresh.read_response()
        if (after.status, after.body) != (200, b"ok-2"):
            return "inconsistent", f"a fresh client then got {after.status} {after.body[:40]!r}"
    return ("refused" if seen == "refused" else "forwarded-consistent"), str(seen)[:60]


def test_hostile_response_shapes_are_refused_or_forwarded_as_exactly_one_response(smuggling_proxy, capsys):
    hostile = HostileOrigin()
    try:
        rows = defaultdict(Counter)
        failures = []
        for name, shape in RESPONSE_SHAPES.items():
            outcome, detail = _response_outcome(smuggling_proxy, hostile, name, shape)
            rows[shape.family][outcome] += 1
            if outcome == "inconsistent":
                failures.append(f"{name}: {detail}")
    finally:
        hostile.stop()
    with capsys.disabled():
        print(f"\nHostile origin response shapes through the proxy ({len(RESPONSE_SHAPES)} shapes):")
        print(_table(rows))
    assert not failures, "\n".join(failures)
    assert smuggling_proxy.alive()
