#!/usr/bin/env python3
"""Seeds fuzz/.build/seed/TARGET from the unit-test vectors: the string, hex and base64 literals
of the tests that cover each parser (and, for the configuration loader, the shipped configs).
The committed corpus is then the coverage-minimised merge of these seeds and what fuzzing found:
    fuzz/seed.py && fuzz/.build/TARGET -merge=1 fuzz/corpus/TARGET fuzz/.build/seed/TARGET ..."""
import base64
import binascii
import hashlib
import json
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
TESTS = ROOT / "Tests" / "CountersignTests"

SOURCES = {
    "request-head": ["HTTP/RequestHeadParserTests.swift", "HTTP/ParserRobustnessTests.swift",
                     "HTTP/BodyFramingTests.swift", "HTTP/RequestTargetTests.swift", "HTTP/HopByHopTests.swift"],
    "response-head": ["HTTP/ResponseHeadParserTests.swift", "HTTP/ParserRobustnessTests.swift", "HTTP/BodyFramingTests.swift"],
    "chunked": ["HTTP/ChunkedDecoderTests.swift", "HTTP/ParserRobustnessTests.swift"],
    "challenge": ["Auth/ChallengeParserTests.swift", "Auth/DigestTests.swift"],
    "digest-challenge": ["Auth/DigestTests.swift", "Auth/ChallengeParserTests.swift", "Auth/ChallengeAnswererTests.swift"],
    "authentication-info": ["Auth/DigestTests.swift", "Auth/ChallengeParserTests.swift"],
    "ntlm-challenge": ["Auth/NTLMTests.swift"],
    "oauth2-token": ["Auth/BasicBearerOAuth2Tests.swift"],
    "json5-config": ["Config/JSON5ParserTests.swift", "Config/SchemaErrorTests.swift", "Config/CredentialTests.swift",
                     "Config/DefaultsTests.swift", "Config/HostTableTests.swift", "Config/ValueTypeTests.swift",
                     "Config/PolicyContradictionTests.swift", "Config/ConfigFixture.swift"],
    "structured-field": ["Signing/RFC9421VectorTests.swift"],
    "signature-input": ["Signing/RFC9421VectorTests.swift"],
}
SF_SUITE = TESTS / "Signing" / "structured-field-tests"

OAUTH2_BODIES = [
    b'{"access_token":"tok","token_type":"bearer","expires_in":3600,"scope":"a b"}',
    b'{"access_token":"tok","token_type":"Bearer","expires_in":"3600"}',
    b'{"access_token":"tok","token_type":"mac"}',
    b'{"access_token":"","token_type":"bearer"}',
    b'{"access_token":"tok","token_type":"bearer","expires_in":0}',
    b'{"error":"invalid_client","error_description":"bad secret","error_uri":"https://idp/e"}',
    b'{"error":"invalid_scope"}',
    b'[]',
]
MULTILINE = re.compile(r'"""\n(.*?)\n\s*"""', re.S)
SINGLE = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def unescape(text):
    text = re.sub(r"\\u\{([0-9a-fA-F]+)\}", lambda m: chr(int(m.group(1), 16)), text)
    text = re.sub(r"\\\((.*?)\)", "", text)  # interpolations: dropped
    return (text.replace("\\r", "\r").replace("\\n", "\n").replace("\\t", "\t").replace("\\0", "\0")
            .replace('\\"', '"').replace("\\'", "'").replace("\\\\", "\\"))


def literals(source):
    for match in MULTILINE.finditer(source):
        lines = match.group(1).split("\n")
        indent = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
        yield unescape("\n".join(l[indent:] for l in lines)).encode("utf-8", "surrogatepass")
    for match in SINGLE.finditer(MULTILINE.sub("", source)):
        yield unescape(match.group(1)).encode("utf-8", "surrogatepass")


def seeds(target, source):
    if target == "ntlm-challenge":
        joined = re.sub(r'"\s*\+\s*"', "", source)  # hex split over several literals
        for value in SINGLE.findall(joined):
            if re.fullmatch(r"(?:[0-9a-fA-F]{2}){8,}", value):
                yield binascii.unhexlify(value)
            elif value.startswith("TlRMTVNTUA"):
                yield base64.b64decode(value + "==="[: -len(value) % 4 or 0])
        return
    for value in literals(source):
        if target == "oauth2-token":
            if value.lstrip().startswith(b"{"):
                yield b"\0" + value
                yield b"\2" + value
        elif target in ("request-head", "response-head", "chunked"):
            if b"\r\n" in value:
                yield value
        elif target == "json5-config":
            if b"{" in value or b"[" in value:
                yield value
        elif value.strip():
            yield value


def main():
    for target, files in SOURCES.items():
        out = ROOT / "fuzz" / ".build" / "seed" / target
        out.mkdir(parents=True, exist_ok=True)
        found = set()
        for name in files:
            path = TESTS / name
            if path.exists():
                found.update(seeds(target, path.read_text()))
        if target == "oauth2-token":  # status class byte, then the body
            for body in OAUTH2_BODIES:
                found.update({b"\0" + body, b"\2" + body})
        if target == "json5-config":
            for config in (ROOT / "conf").rglob("*.json5"):
                found.add(config.read_bytes())
        if target == "structured-field":  # every raw value of the HTTP WG's suite
            for suite in SF_SUITE.glob("*.json"):
                for case in json.loads(suite.read_text()):
                    found.add(", ".join(case.get("raw", [])).encode("utf-8", "surrogatepass"))
        if target == "signature-input":  # each Signature-Input of the vectors over the RFC's request fields
            fields = b"\nHost: example.com\nDate: Tue, 20 Apr 2021 02:07:55 GMT\nContent-Type: application/json\nexample-dict: a=1, b=2;x=1;y=2, c=(a b c)"
            found = {value + fields for value in found if b"=(" in value}
        for value in found:
            (out / hashlib.sha1(value).hexdigest()).write_bytes(value)
        print(f"{target}: {len(found)} seeds in {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
