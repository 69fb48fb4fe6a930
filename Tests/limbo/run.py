#!/usr/bin/env python3
"""Runs the x509-limbo suite through Countersign's trust policy and checks the outcome.

The Swift harness (`limbo-harness`, Sources/limbo-harness) evaluates every case with the
proxy's own evaluator and writes limbo's result format; this script decompresses the suite,
runs the harness, compares each result with the case's `expected_result`, prints the figure
(agree / differ / skipped by reason) and exits non-zero when a case differs that is not in
expected-failures.json, or when a listed case no longer differs (so the list stays true).

  python3 Tests/limbo/run.py [--harness PATH] [--results FILE] [--openssl] [--write-expected]

--openssl also asks OpenSSL's own X509_verify_cert (`openssl verify` with the anchors as a
partial-chain store, purpose sslserver, the peer name and the validation time) for every run
case, and --write-expected rewrites expected-failures.json with that column, keeping the
reasons already written (a new entry gets "TODO: explain" and the run fails until it has one).
"""
import argparse
import collections
import json
import lzma
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SUITE = os.path.join(HERE, "limbo.json.xz")
EXPECTED = os.path.join(HERE, "expected-failures.json")
OPENSSL_EXTRA = os.environ.get("LIMBO_OPENSSL_EXTRA", "").split()
UNEXPLAINED = "TODO: explain"


def load_suite():
    with lzma.open(SUITE, "rb") as compressed:
        return compressed.read()


def run_harness(harness, suite_bytes):
    done = subprocess.run([harness], input=suite_bytes, capture_output=True, timeout=300)
    if done.returncode != 0:
        sys.exit(f"limbo-harness failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
    return json.loads(done.stdout)


def openssl_verdict(case, workdir):
    """SUCCESS or FAILURE from `openssl verify` for one case, as the proxy's store is set up."""
    def write(name, pems):
        path = os.path.join(workdir, name)
        with open(path, "w") as out:
            out.write("".join(pem if pem.endswith("\n") else pem + "\n" for pem in pems))
        return path

    command = ["openssl", "verify"] + OPENSSL_EXTRA + ["-no-CApath", "-no-CAstore", "-partial_chain", "-purpose", "sslserver",
               "-CAfile", write("anchors.pem", case["trusted_certs"])]
    if case["untrusted_intermediates"]:
        command += ["-untrusted", write("untrusted.pem", case["untrusted_intermediates"])]
    if case.get("validation_time"):
        command += ["-attime", str(rfc3339_seconds(case["validation_time"]))]
    name = case.get("expected_peer_name")
    if name:
        command += ["-verify_ip" if name["kind"] == "IP" else "-verify_hostname", name["value"]]
    command.append(write("leaf.pem", [case["peer_certificate"]]))
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    return "SUCCESS" if done.returncode == 0 else "FAILURE"


def rfc3339_seconds(text):
    from datetime import datetime
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() // 1)


def load_expected():
    if not os.path.exists(EXPECTED):
        return {}
    with open(EXPECTED) as source:
        return {entry["id"]: entry for entry in json.load(source)["differences"]}


def write_expected(entries):
    document = {
        "about": "x509-limbo cases where Countersign's trust policy differs from the expected result. "
                 "countersign: what the policy decides; openssl: what OpenSSL's own X509_verify_cert says "
                 "(openssl verify -partial_chain -purpose sslserver with the peer name and time); "
                 "reason: why the difference is accepted. Regenerate the openssl column with "
                 "`python3 Tests/limbo/run.py --openssl --write-expected`.",
        "differences": sorted(entries, key=lambda entry: entry["id"]),
    }
    with open(EXPECTED, "w") as out:
        json.dump(document, out, indent=2)
        out.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--harness", default=os.path.join(ROOT, ".build", "debug", "limbo-harness"))
    parser.add_argument("--results", help="also write the harness's LimboResult document here")
    parser.add_argument("--openssl", action="store_true", help="compare with `openssl verify` too")
    parser.add_argument("--write-expected", action="store_true", help="rewrite expected-failures.json")
    parser.add_argument("--verbose", "-v", action="store_true", help="list every differing case")
    args = parser.parse_args()

    suite_bytes = load_suite()
    cases = {case["id"]: case for case in json.loads(suite_bytes)["testcases"]}
    results = run_harness(args.harness, suite_bytes)
    if args.results:
        with open(args.results, "w") as out:
            json.dump(results, out, indent=2)
    by_id = {result["id"]: result for result in results["results"]}
    missing = sorted(set(cases) - set(by_id))
    if missing:
        sys.exit(f"limbo-harness gave no result for {len(missing)} cases, e.g. {missing[0]}")

    expected = load_expected()
    agree, differ, skipped = [], [], collections.Counter()
    for case_id, case in cases.items():
        result = by_id[case_id]
        if result["actual_result"] == "SKIPPED":
            skipped[result["context"]] += 1
        elif result["actual_result"] == case["expected_result"]:
            agree.append(case_id)
        else:
            differ.append(case_id)

    openssl = {}
    if args.openssl:
        with tempfile.TemporaryDirectory() as workdir:
            for case_id in agree + differ:
                openssl[case_id] = openssl_verdict(cases[case_id], workdir)

    run = len(agree) + len(differ)
    print(f"x509-limbo: {len(cases)} cases, {run} run, {len(agree)} agree with limbo "
          f"({100.0 * len(agree) / max(run, 1):.1f}%), {len(differ)} differ, {sum(skipped.values())} skipped")
    if openssl:
        openssl_agree = sum(1 for case_id in agree + differ if openssl[case_id] == cases[case_id]["expected_result"])
        print(f"  openssl verify on the same {run} cases: {openssl_agree} agree with limbo")
    for reason, count in sorted(skipped.items(), key=lambda item: (-item[1], item[0])):
        print(f"  skipped {count:3d}: {reason}")

    new = [case_id for case_id in differ if case_id not in expected]
    stale = [case_id for case_id in expected if case_id not in differ]
    unexplained = [case_id for case_id in differ if expected.get(case_id, {}).get("reason", UNEXPLAINED) == UNEXPLAINED]
    for case_id in differ:
        if args.verbose or case_id in new:
            mark = "NEW " if case_id in new else ""
            print(f"  {mark}differs: {case_id}: expected {cases[case_id]['expected_result']}, "
                  f"countersign {by_id[case_id]['actual_result']}"
                  + (f", openssl {openssl[case_id]}" if openssl else "")
                  + f" ({by_id[case_id]['context'] or 'accepted'})")
    for case_id in stale:
        print(f"  now agrees (remove from expected-failures.json): {case_id}")

    if args.write_expected:
        entries = []
        for case_id in differ:
            previous = expected.get(case_id, {})
            entries.append({
                "id": case_id,
                "expected": cases[case_id]["expected_result"],
                "countersign": by_id[case_id]["actual_result"],
                "openssl": openssl.get(case_id, previous.get("openssl", "not computed")),
                "reason": previous.get("reason", UNEXPLAINED),
            })
        write_expected(entries)
        print(f"wrote {len(entries)} entries to {os.path.relpath(EXPECTED, ROOT)}")
        return 0 if not any(entry["reason"] == UNEXPLAINED for entry in entries) else 1

    if new or stale or unexplained:
        print(f"FAIL: {len(new)} new differences, {len(stale)} listed cases that now agree, "
              f"{len([c for c in unexplained if c not in new])} listed without a reason")
        return 1
    print("OK: every difference is listed in Tests/limbo/expected-failures.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
