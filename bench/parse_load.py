#!/usr/bin/env python3
"""Reads the text report of wrk, hey, curl or h2load on stdin and prints one line for run.sh:

    REQUESTS_PER_SECOND P99_MS ERRORS REQUESTS

REQUESTS is how many responses the run completed (the denominator of per-request counts).
ERRORS counts what makes a figure meaningless: socket errors, non-2xx/3xx responses, hey's
error distribution. P99_MS is "-" when the tool does not report it. A report with no
throughput line prints nothing and exits 1. The curl report is run.sh's own: one
"STATUS TIME_TOTAL_SECONDS" line per transfer (curl -w), curl's error lines, and a last line
"elapsed SECONDS" of wall-clock time.
"""
import re
import sys

UNIT_TO_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def wrk_summary(text):
    rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if not rps:
        return None
    p99 = re.search(r"^\s*99%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M)
    errors = 0
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    if non_2xx:
        errors += int(non_2xx.group(1))
    sockets = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if sockets:
        # wrk counts a peer's close of a keep-alive connection as a read error; tinyproxy closes
        # after each response, so read errors are reported apart and do not void the figure.
        errors += int(sockets.group(1)) + int(sockets.group(3)) + int(sockets.group(4))
    p99_ms = float(p99.group(1)) * UNIT_TO_MS[p99.group(2)] if p99 else None
    completed = re.search(r"^\s*(\d+) requests in ", text, re.M)
    return float(rps.group(1)), p99_ms, errors, int(completed.group(1)) if completed else 0


def hey_summary(text):
    rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if not rps:
        return None
    p99 = re.search(r"99%+ in ([\d.]+) secs", text)
    errors = completed = 0
    for status, count in re.findall(r"\[(\d{3})\]\s+(\d+) responses", text):
        completed += int(count)
        if not status.startswith(("2", "3")):
            errors += int(count)
    error_block = text.split("Error distribution:", 1)
    if len(error_block) == 2:
        errors += sum(int(n) for n in re.findall(r"^\s*\[(\d+)\]", error_block[1], re.M))
    p99_ms = float(p99.group(1)) * 1000.0 if p99 else None
    return float(rps.group(1)), p99_ms, errors, completed


def curl_summary(text):
    elapsed = re.search(r"^elapsed ([\d.]+)$", text, re.M)
    transfers = re.findall(r"^(\d{3}) ([\d.]+)$", text, re.M)
    if not elapsed or not transfers or float(elapsed.group(1)) <= 0:
        return None
    errors = sum(1 for status, _ in transfers if not status.startswith(("2", "3")))
    errors += len(re.findall(r"^curl: \(\d+\)", text, re.M))
    times = sorted(float(seconds) for _, seconds in transfers)
    p99_ms = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000.0
    completed = len(transfers) - sum(1 for status, _ in transfers if status == "000")
    return completed / float(elapsed.group(1)), p99_ms, errors, completed


def h2load_summary(text):
    finished = re.search(r"^finished in [\d.]+m?s, ([\d.]+) req/s", text, re.M)
    counts = re.search(r"^requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout",
                       text, re.M)
    if not finished or not counts:
        return None
    succeeded, failed, errored, timeout = (int(n) for n in counts.groups())
    statuses = re.search(r"^status codes: (\d+) 2xx", text, re.M)
    non_2xx = succeeded - int(statuses.group(1)) if statuses else 0
    # h2load prints no percentiles of its own: P99 is "-".
    return float(finished.group(1)), None, failed + errored + timeout + non_2xx, succeeded


def main():
    tool = sys.argv[1] if len(sys.argv) > 1 else ""
    summarize = {"wrk": wrk_summary, "hey": hey_summary, "curl": curl_summary, "h2load": h2load_summary}.get(tool)
    if summarize is None:
        sys.exit("usage: parse_load.py wrk|hey|curl|h2load < report")
    summary = summarize(sys.stdin.read())
    if summary is None:
        sys.exit(1)
    rps, p99_ms, errors, completed = summary
    print(f"{rps:.0f} {('%.2f' % p99_ms) if p99_ms is not None else '-'} {errors} {completed}")


if __name__ == "__main__":
    main()
