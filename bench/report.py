#!/usr/bin/env python3
"""Turns bench/run.sh's results (TSV: measurement, subject, metric, value, note) into the
printed report: one table per measurement, the ratios Countersign/peer on the headline
figure, and whether each goal of the issue is met.

usage: report.py RESULTS_TSV HEADER_FILE
"""
import sys
from collections import OrderedDict

# measurement → (title, headline metric, True when higher is better)
MEASUREMENTS = OrderedDict([
    ("plain", ("1. Plain forward, keep-alive, 1 KiB responses (wrk)", "req/s", True)),
    ("connect", ("2. HTTPS through a blind CONNECT, keep-alive (curl --parallel)", "req/s", True)),
    ("bulk", ("3. Bulk download through a CONNECT tunnel (curl)", "MB/s", True)),
    ("idle", ("4. Memory per idle CONNECT tunnel", "KiB/tunnel RSS", False)),
    ("upstream_tls", ("later: http:// to a TLS upstream (wrk)", "req/s", True)),
    ("intercept", ("later: intercepted HTTPS (curl --parallel)", "req/s", True)),
    ("intercept_new", ("later: new intercepted connections, no keep-alive (hey)", "req/s", True)),
    ("intercept_resumed", ("later: new intercepted connections, the client resuming its TLS session (curl)", "proxy CPU us/req", False)),
    ("intercept_idle", ("later: memory per idle intercepted connection", "KiB/conn RSS", False)),
    ("intercept_bulk", ("later: bulk download through interception (curl)", "MB/s", True)),
    ("auth_basic", ("later: Basic-protected origin (wrk)", "req/s", True)),
    ("auth_bearer", ("later: Bearer-protected origin (wrk)", "req/s", True)),
    ("auth_digest", ("later: Digest-protected origin, Apache mod_auth_digest (wrk)", "req/s", True)),
    ("auth_ntlm", ("later: NTLM-protected origin, pyspnego (hey)", "handshakes/conn", False)),
    ("sign", ("later: RFC 9421 request signing, GET /1k (wrk)", "proxy CPU us/req", False)),
    ("sign_aws", ("later: AWS SigV4 signing, PUT 1 KiB and 1 MiB bodies (wrk)", "proxy CPU us/req", False)),
    ("h2", ("later: HTTP/2 client leg through interception, 1 KiB responses (h2load)", "proxy CPU us/req", False)),
    ("h2_idle", ("later: memory per idle HTTP/2 connection", "KiB/conn RSS", False)),
])

# The issues' goals: (measurement, peer, ratio bound, "min" = Countersign/peer must be at least
# the bound, "max" = at most[, metric]). An absolute bound uses peer None; a bound that is a
# metric name compares two of Countersign's own figures. The metric defaults to the headline.
GOALS = [
    ("plain", "nginx", 1.0, "min"),
    ("plain", "squid", 2.0, "min"),
    ("plain", "tinyproxy", 2.0, "min"),
    ("connect", "tinyproxy", 1.0, "min"),
    ("connect", "squid", 1.0, "min"),
    ("bulk", "direct", 0.9, "min"),
    ("idle", None, 2.0, "max"),
    ("idle", "tinyproxy", 1.0, "max"),
    ("idle", "squid", 1.0, "max"),
    ("upstream_tls", "nginx", 1.0, "min"),
    ("upstream_tls", None, "upstream conns", "max", "full TLS/10k req"),
    ("intercept", "mitmproxy", 20.0, "min"),
    ("intercept", "squid", 2.0, "min"),
    ("intercept_new", "squid", 2.0, "min"),
    # Issue 24: at least 3,000 new intercepted connections per second on one core, sessions resumed.
    ("intercept_resumed", None, 3000, "min", "conn/s per core"),
    ("intercept_idle", None, 16.0, "max"),
    ("auth_basic", None, 1.0, "max", "upstream/client"),
    ("auth_basic", "countersign-noauth", 0.95, "min"),
    ("auth_bearer", None, 1.0, "max", "upstream/client"),
    ("auth_bearer", "countersign-noauth", 0.95, "min"),
    ("auth_digest", None, 1.0, "max", "upstream/client"),
    ("auth_digest", "countersign-noauth", 0.95, "min"),
    ("auth_ntlm", None, 1.0, "max"),
    ("h2", "nghttpx", 1.0, "max"),
    # Issue 22: hmac-sha256 signing adds at most 10% to the CPU of the same host's requests unsigned.
    ("sign", "countersign-sign-hmac", round(1 / 1.10, 3), "min"),
]

SUBJECT_ORDER = ["countersign", "countersign-noauth", "nginx", "squid", "tinyproxy", "mitmproxy", "nghttpx", "direct"]


def load(path):
    results = OrderedDict()  # measurement → subject → {"figures": {metric: value}, "notes": [...]}
    with open(path) as f:
        for line in f:
            measurement, subject, metric, value, note = (line.rstrip("\n").split("\t") + [""] * 5)[:5]
            entry = results.setdefault(measurement, OrderedDict()).setdefault(
                subject, {"figures": OrderedDict(), "notes": []})
            if value:
                entry["figures"][metric] = float(value)
            if note:
                entry["notes"].append(note)
    return results


COUNT_METRICS = {"upstream conns"}  # whole numbers, printed without decimals


def format_value(value, metric=""):
    if value is None:
        return "-"
    if metric in COUNT_METRICS:
        return f"{value:,.0f}"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}"


def table(rows, headers):
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(len(headers))]
    lines = ["  " + "  ".join(str(h).ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines.append("  " + "  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    return lines


def headline(results, measurement, subject, metric=None):
    metric = metric or MEASUREMENTS[measurement][1]
    return results.get(measurement, {}).get(subject, {}).get("figures", {}).get(metric)


def not_comparable(results, measurement, subject):
    """True when the subject's run had errors or non-2xx responses (run.sh says so in a note)."""
    notes = results.get(measurement, {}).get(subject, {}).get("notes", [])
    return any("not comparable" in note for note in notes)


def why_missing(results, measurement, subject):
    notes = results.get(measurement, {}).get(subject, {}).get("notes", [])
    return notes[0] if notes else "not measured"


def render(results):
    out = []
    for measurement, (title, metric, higher_better) in MEASUREMENTS.items():
        subjects = results.get(measurement)
        if not subjects:
            continue
        metrics = []
        for entry in subjects.values():
            for m in entry["figures"]:
                if m not in metrics:
                    metrics.append(m)
        metrics = metrics or [metric]
        ordered = sorted(subjects, key=lambda s: SUBJECT_ORDER.index(s) if s in SUBJECT_ORDER else 99)
        rows = [[s] + [format_value(subjects[s]["figures"].get(m), m) for m in metrics] + ["; ".join(subjects[s]["notes"])]
                for s in ordered]
        out.append(f"{title}   [{'higher' if higher_better else 'lower'} is better]")
        out += table(rows, ["subject"] + metrics + ["note"])
        mine = headline(results, measurement, "countersign")
        if "countersign" in subjects and mine is None:
            out.append(f"  countersign: {why_missing(results, measurement, 'countersign')}")
        elif mine is not None:
            ratios = []
            for peer in ordered:
                theirs = headline(results, measurement, peer)
                if peer != "countersign" and theirs:
                    ratios.append(f"{mine / theirs:.2f}x {peer}")
            if ratios:
                out.append(f"  Countersign/peer ({metric}): " + ", ".join(ratios))
        out.append("")
    return out


def render_goals(results):
    out = ["Goals (Countersign vs peers)"]
    rows = []
    for measurement, peer, bound, kind, *chosen in GOALS:
        if measurement not in results:
            continue
        metric = chosen[0] if chosen else MEASUREMENTS[measurement][1]
        mine = headline(results, measurement, "countersign", metric)
        symbol = ">=" if kind == "min" else "<="
        if isinstance(bound, str):
            goal = f"{metric} {symbol} {bound}"
            value = mine
            bound = headline(results, measurement, "countersign", bound)
            if bound is None:
                rows.append([measurement, goal, f"unknown (no {goal.split(symbol)[1].strip()} figure, see above)"])
                continue
        elif peer is None:
            goal = f"{metric} {symbol} {bound:g}"
            value = mine
        else:
            goal = f"{metric} {symbol} {bound:g}x {peer}"
            theirs = headline(results, measurement, peer)
            value = mine / theirs if mine is not None and theirs else None
        if mine is None:
            verdict = "unknown (no Countersign figure, see above)"
        elif not_comparable(results, measurement, "countersign") or (peer and not_comparable(results, measurement, peer)):
            verdict = "unknown (a run had errors or non-2xx responses, see above)"
        elif value is None:
            verdict = f"unknown (no {peer} figure, see above)"
        else:
            # Judged on the two decimals printed, so a verdict never contradicts its figure.
            met = round(value, 2) >= bound if kind == "min" else round(value, 2) <= bound
            verdict = ("met" if met else "NOT met") + f" ({value:.2f})"
        rows.append([measurement, goal, verdict])
    return out + table(rows, ["measurement", "goal", "verdict"]) if rows else []


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    results = load(sys.argv[1])
    with open(sys.argv[2]) as f:
        header = f.read().rstrip("\n")
    print("\n".join([header, ""] + render(results) + render_goals(results)))


if __name__ == "__main__":
    main()
