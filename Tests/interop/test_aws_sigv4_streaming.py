"""AWS Signature V4 where the request is reached through interception or framed unusually
(SPEC "Injecting, signing and verifying", `format: "aws-sigv4"`): boto3 over an intercepted
CONNECT to an HTTPS verifying front (its checksum-trailer uploads included), a chunk-signed
upload inside `Transfer-Encoding: chunked`, a body that ends inside its aws-chunked stream, and
the signing and STS counters on /metrics. The front recomputes every signature with botocore's
own signers (harness.aws_peers)."""
import base64
import http.client
import os
import re
import time
import zlib

import boto3
import pytest
from botocore.config import Config

from conftest_auth import PARENT_PASSWORD, PARENT_USER
from harness.aws_peers import MotoServer, VerifyingFront, chunk_signed_upload
from harness.ports import wait_until
from test_aws_sigv4 import PLACEHOLDER_KEY, PLACEHOLDER_SECRET, _all_verified, _chunk_signed_upload, _proxy, _s3

pytestmark = pytest.mark.countersign_only


@pytest.fixture
def moto_keys(tmp_path):
    moto = MotoServer(tmp_path)
    access_key, secret = moto.create_user_keys()
    moto.set_unauthenticated_actions(0)
    yield moto, access_key, secret
    moto.stop()


@pytest.fixture
def https_front(moto_keys, intercept_pki):
    moto, access_key, secret = moto_keys
    front = VerifyingFront(moto, {access_key: (secret, None)}, host="localhost",
                           tls=(str(intercept_pki.path("leaf-chain.pem")), str(intercept_pki.path("leaf.key"))))
    yield front
    front.stop()


@pytest.fixture
def http_front(moto_keys):
    moto, access_key, secret = moto_keys
    front = VerifyingFront(moto, {access_key: (secret, None)})
    yield front
    front.stop()


def _intercepting(intercepting_countersign, intercept_pki, front, access_key, secret):
    entry = {"trust": {"anchors": [str(intercept_pki.path("root.pem"))]},
             "sign": {"credential": "aws", "format": "aws-sigv4", "region": "us-east-1", "service": "s3"}}
    return intercepting_countersign({front.authority: entry}, env={"CS_AWS_KEY": access_key, "CS_AWS_SECRET": secret},
                                    credentials={"aws": {"aws": {"access_key_id_env": "CS_AWS_KEY", "secret_access_key_env": "CS_AWS_SECRET"}}})


def _s3_through_interception(front, proxy, **config):
    return boto3.client("s3", endpoint_url=front.endpoint, region_name="us-east-1", verify=str(proxy.ca_certificate),
                        aws_access_key_id=PLACEHOLDER_KEY, aws_secret_access_key=PLACEHOLDER_SECRET,
                        config=Config(proxies={"https": proxy.url}, retries={"max_attempts": 1}, **config))


def _metric(proxy, name, labels):
    status, body = proxy.admin_get("/metrics")
    assert status == 200
    text = body.decode()
    match = re.search(rf"^{re.escape(name)}\{{{re.escape(labels)}\}} (\S+)$", text, re.M)
    assert match, f"{name}{{{labels}}} not in /metrics"
    return float(match.group(1))


def test_boto3_put_get_through_an_intercepted_connect_with_checksum_trailers(intercepting_countersign, intercept_pki, moto_keys, https_front):
    moto, access_key, secret = moto_keys
    proxy = _intercepting(intercepting_countersign, intercept_pki, https_front, access_key, secret)
    s3 = _s3_through_interception(https_front, proxy, request_checksum_calculation="when_supported")
    s3.create_bucket(Bucket="tls")
    s3.put_object(Bucket="tls", Key="plain", Body=b"over https")
    # With a checksum over HTTPS, botocore streams the body aws-chunked with a checksum trailer.
    body = os.urandom(100_000)
    s3.put_object(Bucket="tls", Key="trailer", Body=body, ChecksumAlgorithm="CRC32")
    assert s3.get_object(Bucket="tls", Key="plain")["Body"].read() == b"over https"
    assert s3.get_object(Bucket="tls", Key="trailer")["Body"].read() == body
    seen = _all_verified(https_front)
    puts = {entry.target.rsplit("/", 1)[-1]: entry for entry in seen if entry.method == "PUT" and entry.target != "/tls"}
    assert puts["trailer"].payload == "STREAMING-UNSIGNED-PAYLOAD-TRAILER", puts["trailer"].payload
    assert puts["trailer"].headers.get("x-amz-trailer") == "x-amz-checksum-crc32"
    assert all(PLACEHOLDER_KEY not in entry.headers.get("authorization", "") for entry in seen)


def test_a_chunk_signed_upload_through_an_intercepted_connect(intercepting_countersign, intercept_pki, moto_keys, https_front):
    moto, access_key, secret = moto_keys
    proxy = _intercepting(intercepting_countersign, intercept_pki, https_front, access_key, secret)
    s3 = _s3_through_interception(https_front, proxy)
    s3.create_bucket(Bucket="stream")
    chunks = [os.urandom(65536), os.urandom(4000)]
    headers, body = _chunk_signed_upload(https_front, chunks, amz_date=time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
    # boto3 itself never chunk-signs; the same bytes it would carry go through its HTTPS session.
    s3.meta.events.register("before-send.s3.PutObject", lambda request, **_: _replace_with(request, headers, body))
    s3.put_object(Bucket="stream", Key="obj", Body=b"replaced before sending")
    entry = [e for e in _all_verified(https_front) if e.method == "PUT" and e.target.endswith("/obj")][0]
    assert entry.payload == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
    assert s3.get_object(Bucket="stream", Key="obj")["Body"].read() == b"".join(chunks)


def _replace_with(request, headers, body):
    for name in list(request.headers.keys()):
        del request.headers[name]
    for name, value in headers.items():
        if name != "host":
            request.headers[name] = value
    request.body = body


def _send_chunked(proxy, front, headers, body, pieces):
    """The aws-chunked body inside HTTP chunks of the given sizes, no Content-Length."""
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    connection.putrequest("PUT", f"{front.endpoint}/stream/chunked", skip_host=True, skip_accept_encoding=True)
    for name, value in headers.items():
        if name != "content-length":
            connection.putheader(name, value)
    connection.putheader("Transfer-Encoding", "chunked")
    connection.endheaders()
    offset = 0
    while offset < len(body):
        piece = body[offset:offset + pieces]
        connection.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        offset += len(piece)
    connection.send(b"0\r\n\r\n")
    return connection.getresponse()


def test_a_chunk_signed_upload_inside_transfer_encoding_chunked_is_resigned(countersign, moto_keys, http_front):
    moto, access_key, secret = moto_keys
    proxy = _proxy(countersign, http_front, access_key, secret)
    s3 = _s3(http_front, proxy)
    s3.create_bucket(Bucket="stream")
    chunks = [os.urandom(65536), os.urandom(65536), os.urandom(999)]
    headers, body = _unframed_upload(http_front, chunks)
    before = len(http_front.seen)
    # HTTP chunks that cut through aws-chunked lines and signatures.
    response = _send_chunked(proxy, http_front, headers, body, pieces=7001)
    assert response.status == 200, response.read()
    entry = _all_verified(http_front, before)[0]
    assert entry.headers.get("transfer-encoding") == "chunked" and "content-length" not in entry.headers
    assert entry.headers["x-amz-decoded-content-length"] == str(sum(map(len, chunks)))
    assert s3.get_object(Bucket="stream", Key="chunked")["Body"].read() == b"".join(chunks)


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_a_body_ending_inside_its_aws_chunked_stream_is_refused(countersign, moto_keys, http_front, framing):
    moto, access_key, secret = moto_keys
    proxy = _proxy(countersign, http_front, access_key, secret)
    chunks = [os.urandom(5000), os.urandom(5000)]
    headers, body = _unframed_upload(http_front, chunks)
    cut = body[:body.index(b"\r\n", body.index(b";chunk-signature=", 5100)) + 2]     # the final 0-chunk never comes
    if framing == "chunked":
        response = _send_chunked(proxy, http_front, headers, cut, pieces=4096)
    else:
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
        connection.request("PUT", f"{http_front.endpoint}/stream/chunked", body=cut, headers=dict(headers, **{"content-length": str(len(cut))}))
        response = connection.getresponse()
    assert response.status == 400, (response.status, response.read())
    assert "aws-chunked" in response.getheader("Proxy-Status", "")
    assert not [entry for entry in http_front.seen if entry.verdict == "verified"], "a cut body was passed on as complete"


def _unframed_upload(front, chunks):
    return chunk_signed_upload(front, chunks, time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()), path="/stream/chunked",
                               key=(PLACEHOLDER_KEY, PLACEHOLDER_SECRET), content_length=False)


def test_signatures_and_sts_fetches_are_counted(countersign, moto_keys, http_front, tmp_path):
    moto, access_key, secret = moto_keys
    token_file = tmp_path / "token"
    token_file.write_text("web-identity-token\n")
    identity = {"role_arn": "arn:aws:iam::123456789012:role/app-role", "web_identity_token_file": str(token_file),
                "sts_endpoint": http_front.endpoint}
    proxy = _proxy(countersign, http_front, None, None, credential=identity)
    assert _metric(proxy, "countersign_signatures_total", 'format="aws-sigv4"') == 0
    s3 = _s3(http_front, proxy)
    s3.create_bucket(Bucket="counted")
    s3.put_object(Bucket="counted", Key="k", Body=b"v")
    assert _metric(proxy, "countersign_signatures_total", 'format="aws-sigv4"') == 2
    assert _metric(proxy, "countersign_signatures_total", 'format="rfc9421"') == 0
    assert _metric(proxy, "countersign_credential_fetches_total", 'endpoint="sts",result="ok"') == 1
    assert _metric(proxy, "countersign_credential_fetches_total", 'endpoint="sts",result="failed"') == 0


def test_a_chunk_signed_upload_replayed_after_a_parent_proxy_407_is_signed_anew(countersign, moto_keys, http_front, squid_parent):
    """The replay after a challenge re-signs the client's bytes with a seed and chunk signatures
    of its own. (An origin's own 401 is not answered here: the SDK's Authorization is the
    client's own, SPEC rule 7, and a Basic answer could not share that field with SigV4.)"""
    moto, access_key, secret = moto_keys
    squid = squid_parent("basic")
    proxy = countersign({"credentials": {"aws": {"aws": {"access_key_id_env": "CS_AWS_KEY", "secret_access_key_env": "CS_AWS_SECRET"}},
                                         "parent": {"user": PARENT_USER, "password_env": "CS_PARENT_PASSWORD"}},
                         "parent_proxy": {"url": squid.url, "auth": {"credential": "parent", "schemes": ["basic"], "allow_plaintext": True}},
                         "hosts": {http_front.authority: {"intercept": False, "sign": {"credential": "aws", "format": "aws-sigv4",
                                                                                      "region": "us-east-1", "service": "s3"}}}},
                        env={"CS_AWS_KEY": access_key, "CS_AWS_SECRET": secret, "CS_PARENT_PASSWORD": PARENT_PASSWORD})
    moto.set_unauthenticated_actions(1)
    moto.client("s3").create_bucket(Bucket="replayed")
    chunks = [os.urandom(40_000), os.urandom(333)]
    headers, body = chunk_signed_upload(http_front, chunks, time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()), path="/replayed/obj",
                                        key=(PLACEHOLDER_KEY, PLACEHOLDER_SECRET))
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=20)
    connection.request("PUT", f"{http_front.endpoint}/replayed/obj", body=body, headers=headers)
    response = connection.getresponse()
    assert response.status == 200, (response.status, response.read())
    def parent_answers():
        return [line.status for line in squid.entries() if "/replayed/obj" in line.request_line]
    # Squid logs each transaction when it ends, the 200 after the client has its response:
    # wait for that line, not for the first one.
    statuses = wait_until(lambda: parent_answers() if 200 in parent_answers() else None, timeout=5) or parent_answers()
    assert statuses == [407, 200], f"the parent's answers: {statuses}"
    entry = _all_verified(http_front)[0]
    assert entry.payload == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
    assert entry.body != body and len(entry.body) == len(body), "the chunk signatures are the proxy's, the sizes the client's"
    fetched = moto.client("s3", key=access_key, secret=secret)
    assert fetched.get_object(Bucket="replayed", Key="obj")["Body"].read() == b"".join(chunks)


def test_a_chunk_signed_upload_with_a_signed_checksum_trailer_is_resigned(countersign, moto_keys, http_front):
    """STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, which no SDK at hand sends: built with
    botocore's seed signature and the chunk and trailer signatures AWS specifies; the proxy
    re-makes every one, the trailer signature included, and keeps the checksum field."""
    moto, access_key, secret = moto_keys
    proxy = _proxy(countersign, http_front, access_key, secret)
    s3 = _s3(http_front, proxy)
    s3.create_bucket(Bucket="trailer")
    chunks = [os.urandom(8192), os.urandom(100)]
    checksum = base64.b64encode(zlib.crc32(b"".join(chunks)).to_bytes(4, "big")).decode()
    headers, body = chunk_signed_upload(http_front, chunks, time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()), path="/trailer/obj",
                                        key=(PLACEHOLDER_KEY, PLACEHOLDER_SECRET), trailer=("x-amz-checksum-crc32", checksum))
    before = len(http_front.seen)
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    connection.request("PUT", f"{http_front.endpoint}/trailer/obj", body=body, headers=headers)
    response = connection.getresponse()
    assert response.status == 200, response.read()
    entry = _all_verified(http_front, before)[0]
    assert entry.payload == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
    assert f"x-amz-checksum-crc32:{checksum}\r\n".encode() in entry.body
    assert entry.body.split(b"x-amz-trailer-signature:")[1] != body.split(b"x-amz-trailer-signature:")[1]
    assert s3.get_object(Bucket="trailer", Key="obj")["Body"].read() == b"".join(chunks)
