"""AWS Signature V4 from the proxy (SPEC "Injecting, signing and verifying", `format: "aws-sigv4"`):
boto3 and the AWS CLI given placeholder keys, through Countersign, against moto with
authentication enforced behind a front that recomputes every signature with botocore's own
signers. Every request that reaches moto was re-signed with the real keys; nothing the client
signed with its placeholder keys verifies."""
import hashlib
import json
import http.client
import os
import subprocess
import urllib.parse

import boto3
import pytest
from botocore.config import Config

from harness.aws_peers import MotoServer, VerifyingFront, chunk_signed_upload
from harness.ports import wait_until

pytestmark = pytest.mark.countersign_only

PLACEHOLDER_KEY, PLACEHOLDER_SECRET = "AKIAPLACEHOLDER00000", "placeholder-secret"


@pytest.fixture
def aws(tmp_path):
    moto = MotoServer(tmp_path)
    access_key, secret = moto.create_user_keys()
    moto.set_unauthenticated_actions(0)
    front = VerifyingFront(moto, {access_key: (secret, None)})
    yield moto, front, access_key, secret
    front.stop()
    moto.stop()


def _proxy(countersign, front, access_key, secret, payload="signed", token=None, limits=None, credential=None):
    keys = credential or {"access_key_id_env": "CS_AWS_KEY", "secret_access_key_env": "CS_AWS_SECRET"}
    env = {"CS_AWS_KEY": access_key, "CS_AWS_SECRET": secret} if credential is None else {}
    if token:
        keys["session_token_env"] = "CS_AWS_TOKEN"
        env["CS_AWS_TOKEN"] = token
    config = {"credentials": {"aws": {"aws": keys}},
              "hosts": {front.authority: {"intercept": False, "sign": {"credential": "aws", "format": "aws-sigv4",
                                                                       "region": "us-east-1", "service": "s3", "payload": payload}}}}
    if limits:
        config["limits"] = limits
    return countersign(config, env=env)


def _s3(front, proxy, **config):
    return boto3.client("s3", endpoint_url=front.endpoint, region_name="us-east-1",
                        aws_access_key_id=PLACEHOLDER_KEY, aws_secret_access_key=PLACEHOLDER_SECRET,
                        config=Config(proxies={"http": proxy.url}, retries={"max_attempts": 1}, **config))


def _all_verified(front, since=0):
    seen = front.seen[since:]
    assert seen, "nothing reached the origin"
    assert all(entry.verdict == "verified" for entry in seen), [(e.method, e.target, e.verdict) for e in seen]
    return seen


def test_boto3_put_get_list_and_multipart_with_signed_payload(countersign, aws):
    moto, front, access_key, secret = aws
    proxy = _proxy(countersign, front, access_key, secret)
    s3 = _s3(front, proxy)
    s3.create_bucket(Bucket="box")
    s3.put_object(Bucket="box", Key="a.txt", Body=b"hello sigv4")
    assert s3.get_object(Bucket="box", Key="a.txt")["Body"].read() == b"hello sigv4"
    assert [item["Key"] for item in s3.list_objects_v2(Bucket="box")["Contents"]] == ["a.txt"]
    upload = s3.create_multipart_upload(Bucket="box", Key="big.bin")["UploadId"]
    parts = [os.urandom(5 * 1024 * 1024), os.urandom(1000)]
    etags = [s3.upload_part(Bucket="box", Key="big.bin", UploadId=upload, PartNumber=n + 1, Body=part)["ETag"]
             for n, part in enumerate(parts)]
    s3.complete_multipart_upload(Bucket="box", Key="big.bin", UploadId=upload,
                                 MultipartUpload={"Parts": [{"ETag": e, "PartNumber": n + 1} for n, e in enumerate(etags)]})
    assert s3.get_object(Bucket="box", Key="big.bin")["Body"].read() == b"".join(parts)
    seen = _all_verified(front)
    assert all(entry.form == "header" for entry in seen)
    puts = [entry for entry in seen if entry.method == "PUT" and "partNumber" in entry.target]
    assert len(puts) == 2 and all(len(entry.payload) == 64 for entry in puts), "signed payload: the body's hash"
    assert all(PLACEHOLDER_KEY not in entry.headers.get("authorization", "") for entry in seen)
    line = wait_until(lambda: proxy.access_logs(), timeout=5)[-1]
    assert line.get("signed") is True, line
    proxy.stop()
    assert secret not in proxy.stderr_text()


@pytest.mark.parametrize("payload", ["unsigned", "client"])
def test_unsigned_and_client_payload_modes(countersign, aws, payload):
    moto, front, access_key, secret = aws
    proxy = _proxy(countersign, front, access_key, secret, payload=payload)
    s3 = _s3(front, proxy)
    s3.create_bucket(Bucket="modes")
    s3.put_object(Bucket="modes", Key="k", Body=b"x" * 2048)
    assert s3.get_object(Bucket="modes", Key="k")["Body"].read() == b"x" * 2048
    put = [entry for entry in _all_verified(front) if entry.method == "PUT" and entry.target.endswith("/k")][0]
    if payload == "unsigned":
        assert put.payload == "UNSIGNED-PAYLOAD"
    else:
        assert put.payload == hashlib.sha256(b"x" * 2048).hexdigest(), "the SDK's own payload hash is kept"


def test_presigned_url_is_resigned_in_the_query_keeping_its_expiry(countersign, aws):
    moto, front, access_key, secret = aws
    proxy = _proxy(countersign, front, access_key, secret)
    s3 = _s3(front, proxy, signature_version="s3v4")
    s3.create_bucket(Bucket="pre")
    s3.put_object(Bucket="pre", Key="doc", Body=b"presigned body")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "pre", "Key": "doc"}, ExpiresIn=900)
    before = len(front.seen)
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    connection.request("GET", url)
    response = connection.getresponse()
    assert (response.status, response.read()) == (200, b"presigned body")
    entry = _all_verified(front, before)[0]
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(entry.target).query)
    assert entry.form == "query" and query["X-Amz-Expires"] == ["900"]
    assert query["X-Amz-Credential"][0].startswith(access_key + "/")


def test_session_token_goes_with_temporary_keys(countersign, aws):
    moto, front, access_key, secret = aws
    sts = moto.client("sts", key=access_key, secret=secret)
    temporary = sts.assume_role(RoleArn="arn:aws:iam::123456789012:role/app-role", RoleSessionName="temporary")["Credentials"]
    front.keys[temporary["AccessKeyId"]] = (temporary["SecretAccessKey"], temporary["SessionToken"])
    proxy = _proxy(countersign, front, temporary["AccessKeyId"], temporary["SecretAccessKey"], token=temporary["SessionToken"])
    s3 = _s3(front, proxy)
    s3.create_bucket(Bucket="temp")
    s3.put_object(Bucket="temp", Key="t", Body=b"token")
    assert s3.get_object(Bucket="temp", Key="t")["Body"].read() == b"token"
    assert all(entry.headers.get("x-amz-security-token") == temporary["SessionToken"] for entry in _all_verified(front))


def test_a_wrong_real_secret_gets_one_403_passed_to_the_client(countersign, aws):
    moto, front, access_key, secret = aws
    proxy = _proxy(countersign, front, access_key, "not-the-secret")
    before = len(front.seen)
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    connection.request("GET", f"{front.endpoint}/", headers={"Host": front.authority})
    response = connection.getresponse()
    assert response.status == 403 and b"SignatureDoesNotMatch" in response.read()
    assert len(front.seen) - before == 1, "a refused signature is passed on, never retried"


@pytest.mark.parametrize("entry,key", [
    ({"auth": [{"credential": "svc", "schemes": ["basic"]}]}, "auth"),
    ({"inject": [{"header": "Authorization", "credential": "svc"}]}, "inject"),
])
def test_an_aws_host_that_would_also_write_authorization_is_a_configuration_error(countersign_executable, tmp_path, entry, key):
    """The SigV4 signature is the request's Authorization: a challenge answer or an injected
    Authorization would fight it (a 403 loop or a 400), so `check` refuses the host up front."""
    config = {"listen": [{"address": "127.0.0.1:3128"}],
              "credentials": {"aws": {"aws": {"access_key_id_env": "CS_AWS_KEY", "secret_access_key_env": "CS_AWS_SECRET"}},
                              "svc": {"user": "svc", "password_env": "CS_SVC"}},
              "hosts": {"s3.example.com": {"intercept": False, "sign": {"credential": "aws", "format": "aws-sigv4"}, **entry}}}
    path = tmp_path / "countersign.json5"
    path.write_text(json.dumps(config))
    result = subprocess.run([str(countersign_executable), "check", "-c", str(path)], capture_output=True, text=True,
                            env={"CS_AWS_KEY": "AKID", "CS_AWS_SECRET": "s", "CS_SVC": "pw", "PATH": "/usr/bin:/bin"})
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert f'hosts."s3.example.com".{key}' in output and "SigV4 signature" in output, output


def test_signed_payload_over_the_limit_is_413_with_nothing_sent(countersign, aws):
    moto, front, access_key, secret = aws
    proxy = _proxy(countersign, front, access_key, secret, limits={"signed_body_bytes": 1024})
    before = len(front.seen)
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    connection.request("PUT", f"{front.endpoint}/box/too-big", body=b"y" * 4096, headers={"Host": front.authority})
    response = connection.getresponse()
    assert response.status == 413
    assert "signed_body_bytes" in response.getheader("Proxy-Status", "")
    assert len(front.seen) == before


def _chunk_signed_upload(front, body_chunks, amz_date="20261126T120000Z"):
    """A STREAMING-AWS4-HMAC-SHA256-PAYLOAD upload as the Java SDK makes it, with placeholder keys."""
    return chunk_signed_upload(front, body_chunks, amz_date, key=(PLACEHOLDER_KEY, PLACEHOLDER_SECRET))


def test_a_chunk_signed_streaming_upload_is_resigned_chunk_by_chunk(countersign, aws):
    moto, front, access_key, secret = aws
    proxy = _proxy(countersign, front, access_key, secret)
    s3 = _s3(front, proxy)
    s3.create_bucket(Bucket="stream")
    chunks = [os.urandom(65536), os.urandom(65536), os.urandom(1234)]
    import time
    headers, body = _chunk_signed_upload(front, chunks, amz_date=time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
    before = len(front.seen)
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    connection.request("PUT", f"{front.endpoint}/stream/obj", body=body, headers=headers)
    response = connection.getresponse()
    assert response.status == 200, response.read()
    entry = _all_verified(front, before)[0]
    assert entry.payload == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
    assert s3.get_object(Bucket="stream", Key="obj")["Body"].read() == b"".join(chunks)


def test_the_aws_cli_copies_and_lists_through_the_proxy(countersign, aws, tmp_path):
    moto, front, access_key, secret = aws
    proxy = _proxy(countersign, front, access_key, secret)
    _s3(front, proxy).create_bucket(Bucket="cli")
    source = tmp_path / "upload.txt"
    source.write_bytes(b"from the cli\n" * 100)
    env = dict(os.environ, AWS_ACCESS_KEY_ID=PLACEHOLDER_KEY, AWS_SECRET_ACCESS_KEY=PLACEHOLDER_SECRET,
               AWS_DEFAULT_REGION="us-east-1", HTTP_PROXY=proxy.url, http_proxy=proxy.url, NO_PROXY="", no_proxy="")
    run = lambda *args: subprocess.run(["aws", "--endpoint-url", front.endpoint, *args], env=env, capture_output=True, text=True, timeout=60)
    copied = run("s3", "cp", str(source), "s3://cli/upload.txt")
    assert copied.returncode == 0, copied.stderr
    # `s3 ls` sends delimiter=%2F, whose signature moto itself computes wrongly (with or without the proxy).
    listed = run("s3api", "list-objects-v2", "--bucket", "cli")
    assert listed.returncode == 0 and "upload.txt" in listed.stdout, listed.stderr
    _all_verified(front)


def test_web_identity_keys_fetched_once_and_again_when_the_token_rotates(countersign, aws, tmp_path):
    moto, front, access_key, secret = aws
    token_file = tmp_path / "token"
    token_file.write_text("web-identity-token-1\n")
    identity = {"role_arn": "arn:aws:iam::123456789012:role/app-role", "web_identity_token_file": str(token_file),
                "sts_endpoint": front.endpoint, "role_session_name": "countersign-test"}
    proxy = _proxy(countersign, front, None, None, credential=identity)
    s3 = _s3(front, proxy)
    s3.create_bucket(Bucket="irsa")
    for n in range(3):
        s3.put_object(Bucket="irsa", Key=f"k{n}", Body=b"irsa")
    assert front.sts_tokens == ["web-identity-token-1"], "one STS call for the whole process"
    token_file.write_text("web-identity-token-2\n")

    def rotated():
        s3.list_objects_v2(Bucket="irsa")
        return front.sts_tokens[-1] == "web-identity-token-2"
    wait_until(rotated, timeout=10)
    assert len(front.sts_tokens) == 2
    seen = _all_verified(front)
    assert all(entry.headers.get("x-amz-security-token") for entry in seen if entry.form == "header")


def test_web_identity_keys_are_refreshed_ahead_of_expiry(countersign, aws, tmp_path):
    """STS's keys here live 6 s (the front rewrites Expiration and refuses them past it): every
    request is signed with keys still valid, the next ones fetched in their last fifth."""
    moto, front, access_key, secret = aws
    front.sts_lifetime = 6
    token_file = tmp_path / "token"
    token_file.write_text("web-identity-token\n")
    identity = {"role_arn": "arn:aws:iam::123456789012:role/app-role", "web_identity_token_file": str(token_file),
                "sts_endpoint": front.endpoint}
    proxy = _proxy(countersign, front, None, None, credential=identity)
    s3 = _s3(front, proxy)
    s3.create_bucket(Bucket="ahead")
    sent = []

    def refreshed_twice():
        s3.put_object(Bucket="ahead", Key=f"k{len(sent)}", Body=b"fresh")   # raises on any refusal
        sent.append(1)
        return len(front.sts_tokens) >= 3
    assert wait_until(refreshed_twice, timeout=30, interval=0.2), f"{len(front.sts_tokens)} STS calls in 30 s"
    assert len(sent) > 10
    _all_verified(front)


def test_web_identity_failure_names_sts(countersign, aws, tmp_path):
    moto, front, access_key, secret = aws
    token_file = tmp_path / "token"
    token_file.write_text("tok\n")
    identity = {"role_arn": "arn:aws:iam::123456789012:role/app-role", "web_identity_token_file": str(token_file),
                "sts_endpoint": f"http://127.0.0.1:{moto.port + 0}/nowhere-listening".replace(str(moto.port), "1")}
    proxy = _proxy(countersign, front, None, None, credential=identity)
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
    connection.request("GET", f"{front.endpoint}/", headers={"Host": front.authority})
    response = connection.getresponse()
    assert response.status in (502, 503, 504)
    assert "STS endpoint" in response.getheader("Proxy-Status", ""), response.getheader("Proxy-Status")
    assert "tok" not in response.getheader("Proxy-Status", "")


def test_check_prints_what_each_aws_host_resolves_to(countersign_executable, tmp_path):
    config = tmp_path / "c.json5"
    config.write_text('{ listen: [{address: "127.0.0.1:3128"}], credentials: { aws: { aws: { access_key_id_env: "HOME", secret_access_key_env: "HOME" } } },'
                      ' hosts: { "s3.eu-west-1.amazonaws.com": { intercept: false, sign: { credential: "aws", format: "aws-sigv4" } },'
                      ' "minio.internal:9000": { intercept: false, sign: { credential: "aws", format: "aws-sigv4", region: "us-east-1" } } } }')
    out = subprocess.run([str(countersign_executable), "check", "-c", str(config)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "aws-sigv4 s3.eu-west-1.amazonaws.com: region eu-west-1 (host name), service s3 (host name), payload signed" in out.stdout
    assert "aws-sigv4 minio.internal:9000: region us-east-1 (configuration), service from the client's credential scope" in out.stdout
