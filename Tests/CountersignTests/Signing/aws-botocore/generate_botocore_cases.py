#!/usr/bin/env python3
"""Generates botocore-cases.json: SigV4 signatures computed by botocore, AWS's own Python
signer, for a deterministic spread of requests. AWSBotocoreTests (Swift) signs the same requests
with Countersign's signer and requires the same canonical request, string to sign, signature
and Authorization (header form) or query parameters (presigned form).

Deterministic: a fixed seed, fixed clock (botocore's clock is patched) and fixed credentials, so
running it again with the same botocore gives the same file. Run from anywhere:

    python3 Tests/CountersignTests/Signing/aws-botocore/generate_botocore_cases.py

(botocore is installed by scripts/install-test-deps.sh.) The file records botocore's version.
"""
import base64
import datetime
import json
import os
import random
from urllib.parse import quote

import botocore
import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode_sequence

SEED = 23
COUNT = 240
TIME = datetime.datetime(2026, 2, 27, 23, 59, 58)  # close to a day boundary on purpose
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "botocore-cases.json")

SERVICES = [
    ("s3", "eu-west-1", "bucket.s3.eu-west-1.amazonaws.com"),
    ("s3", "us-east-1", "s3.amazonaws.com"),
    ("sqs", "eu-west-1", "sqs.eu-west-1.amazonaws.com"),
    ("dynamodb", "us-west-2", "dynamodb.us-west-2.amazonaws.com"),
    ("execute-api", "eu-central-1", "a1b2c3.execute-api.eu-central-1.amazonaws.com"),
    ("es", "eu-west-1", "search-logs-x.eu-west-1.es.amazonaws.com"),
    ("bedrock", "us-east-1", "bedrock-runtime.us-east-1.amazonaws.com"),
    ("sts", "us-east-1", "sts.amazonaws.com"),
    ("lambda", "ap-northeast-1", "lambda.ap-northeast-1.amazonaws.com"),
]
SEGMENTS = ["key", "a b", "ünïcødé", "~tilde", "x+y", "..", ".", "", "dir", "with%2Fslash", "a=b&c", "日本",
            "quote'\"", "semi;colon", "star*", "paren(1)", "-_.~"]
QUERY_NAMES = ["list-type", "prefix", "Action", "Version", "versionId", "a b", "ü", "empty", "x-id", "Z", "a", "A", "max-keys"]
QUERY_VALUES = ["2", "", "a/b", "x y", "ü", "~", "a+b", "=", "&", "Hello World", "1", "%41"]
HEADER_NAMES = ["Content-Type", "X-Amz-Meta-Note", "x-amz-target", "Range", "If-Match", "Content-MD5", "X-Custom",
                "User-Agent", "X-Amzn-Trace-Id", "Cache-Control", "x-amz-checksum-crc32"]
HEADER_VALUES = ["text/plain", "  padded  ", "a   b\tc", "application/x-amz-json-1.0", "bytes=0-9", '"etag"',
                 "1B2M2Y8AsgTpgAmY7PhCfg==", "Boto3/1.36 md/x", "Root=1-abc", "no-cache", "v1,v2", "AAAAAA=="]


def encoded_path(rng, s3):
    segments = [rng.choice(SEGMENTS) for _ in range(rng.randint(0, 4))]
    raw = "/" + "/".join(segments)
    if rng.random() < 0.2:
        raw += "/"
    # What an SDK sends: each segment percent-encoded once (botocore's serializer keeps '/' and '~').
    return quote(raw, safe="/~")


def query_pairs(rng):
    names = rng.sample(QUERY_NAMES, rng.randint(0, 4))
    return [(name, rng.choice(QUERY_VALUES)) for name in names]


def make_case(rng, index):
    service, region, host = rng.choice(SERVICES)
    s3 = service == "s3"
    form = "query" if rng.random() < 0.3 else "header"
    method = rng.choice(["GET", "PUT", "POST", "DELETE", "HEAD"])
    path = encoded_path(rng, s3)
    pairs = query_pairs(rng)
    query = percent_encode_sequence(pairs) if pairs else ""
    headers = [("Host", host)]
    for _ in range(rng.randint(0, 4)):
        headers.append((rng.choice(HEADER_NAMES), rng.choice(HEADER_VALUES)))
    if form == "header" and rng.random() < 0.2:
        name = rng.choice(["X-Amz-Meta-Note", "X-Custom"])
        headers += [(name, "first"), (name, " second  value ")]
    body = b""
    # A presigned URL has no body (botocore's query signer would move one into the query).
    if form == "header" and method in ("PUT", "POST") and rng.random() < 0.7:
        body = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64))) if rng.random() < 0.5 else b'{"k": "v"}'
    token = "FwoGZXIvYXdzE" + "".join(rng.choice("abcdefXYZ0123456789/+=") for _ in range(40)) if rng.random() < 0.4 else None
    unsigned = s3 and form == "header" and rng.random() < 0.3
    expires = rng.choice([1, 60, 900, 3600, 604800])

    credentials = Credentials("AKIDBOTOCORE", "botocore/secret+key=" + str(index % 3), token)
    url = "https://" + host + path + ("?" + query if query else "")
    request = AWSRequest(method=method, url=url, data=body)
    for name, value in headers:
        request.headers[name] = value  # HTTPHeaders appends: repeated names stay repeated
    request.context["payload_signing_enabled"] = not unsigned
    if form == "header":
        signer = (botocore.auth.S3SigV4Auth if s3 else botocore.auth.SigV4Auth)(credentials, service, region)
    else:
        signer = (botocore.auth.S3SigV4QueryAuth if s3 else botocore.auth.SigV4QueryAuth)(credentials, service, region, expires=expires)

    captured = {}
    original = signer.canonical_request

    def capture(req):
        captured["canonical"] = original(req)
        captured["string_to_sign"] = signer.string_to_sign(req, captured["canonical"])
        captured["signature"] = signer.signature(captured["string_to_sign"], req)
        return captured["canonical"]

    signer.canonical_request = capture
    signer.add_auth(request)

    case = {
        "name": f"{index:03d}-{form}-{service}-{method.lower()}",
        "form": form,
        "service": service,
        "region": region,
        "access_key_id": credentials.access_key,
        "secret_access_key": credentials.secret_key,
        "session_token": token,
        "method": method,
        "target": path + ("?" + query if query else ""),
        "headers": [[name, value] for name, value in headers],
        "body_base64": base64.b64encode(body).decode(),
        "payload": captured["canonical"].rsplit("\n", 1)[1],
        "canonical_request": captured["canonical"],
        "string_to_sign": captured["string_to_sign"],
        "signature": captured["signature"],
    }
    if form == "header":
        case["authorization"] = request.headers["Authorization"]
        case["added_headers"] = {name: request.headers[name] for name in ("X-Amz-Date", "X-Amz-Security-Token", "X-Amz-Content-SHA256")
                                 if name in request.headers}
    else:
        case["expires"] = expires
        case["signed_query"] = request.url.split("?", 1)[1]
    return case


def main():
    botocore.auth.get_current_datetime = lambda *args, **kwargs: TIME
    rng = random.Random(SEED)
    cases = [make_case(rng, index) for index in range(COUNT)]
    document = {
        "generator": "generate_botocore_cases.py",
        "botocore_version": botocore.__version__,
        "time_unix": int(TIME.replace(tzinfo=datetime.timezone.utc).timestamp()),
        "cases": cases,
    }
    with open(OUT, "w", encoding="utf-8") as out:
        json.dump(document, out, indent=1, ensure_ascii=False)
        out.write("\n")
    print(f"{len(cases)} cases written to {OUT}")


if __name__ == "__main__":
    main()
