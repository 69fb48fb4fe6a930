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
import json
import re
import struct

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
    "hpack": [],
    "h2-connection": [],
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


APPENDIX_C = TESTS / "HTTP" / "HPACKAppendixCTests.swift"
HPACK_STORIES = TESTS / "HTTP" / "hpack-test-case"
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def appendix_c_sequences():
    """The RFC 7541 Appendix C blocks, grouped as the test file lists them (c3, c4, c5, c6)."""
    source = APPENDIX_C.read_text()
    for name in ("c3", "c4", "c5", "c6"):
        match = re.search(r"let " + name + r" = \[(.*?)\]", source, re.S)
        if match:
            yield [binascii.unhexlify(value) for value in re.findall(r'"([0-9a-f]+)"', match.group(1))]


def length_prefixed(blocks):
    return b"".join(struct.pack(">H", len(block)) + block for block in blocks)


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def hpack_seeds():
    for blocks in appendix_c_sequences():
        yield length_prefixed(blocks)
    for story in sorted(HPACK_STORIES.glob("*/story_0[0-4].json")):
        cases = json.loads(story.read_text())["cases"][:8]
        yield length_prefixed([binascii.unhexlify(case["wire"]) for case in cases])


def h2_connection_seeds():
    """Byte 0 picks the role (even: server) and the read size; then what the peer sends."""
    settings = frame(4, 0, 0, struct.pack(">HI", 4, 65535) + struct.pack(">HI", 1, 4096))
    ack = frame(4, 1, 0)
    for blocks in appendix_c_sequences():
        requests = blocks[0][:1] == b"\x82"
        if requests:  # server role: a client's preface, then requests on streams 1, 3, 5
            peer = PREFACE + settings + ack
            for index, block in enumerate(blocks):
                stream = 1 + 2 * index
                peer += frame(1, 4, stream, block[:3]) if len(block) < 4 else frame(1, 0, stream, block[:3]) + frame(9, 4, stream, block[3:])
                peer += frame(8, 0, stream, struct.pack(">I", 100)) + frame(6, 0, 0, b"pingpong")
            yield b"\x00" + peer
            yield b"\x3e" + peer
            post = PREFACE + settings + frame(1, 4, 1, blocks[0]) + frame(0, 8, 1, b"\x02body\x00\x00") + frame(0, 1, 1, b"")
            yield b"\x10" + post + frame(3, 0, 3, struct.pack(">I", 8)) + frame(7, 0, 0, struct.pack(">II", 1, 0))
        else:  # client role: the server's SETTINGS, then responses on stream 1
            peer = settings + ack + frame(1, 4, 1, blocks[0]) + frame(0, 0, 1, b"hello") + frame(1, 5, 1, blocks[-1])
            yield b"\x01" + peer
            yield b"\x41" + peer + frame(7, 0, 0, struct.pack(">II", 0, 11) + b"calm")


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
        if target == "hpack":
            found.update(hpack_seeds())
        if target == "h2-connection":
            found.update(h2_connection_seeds())
        for value in found:
            (out / hashlib.sha1(value).hexdigest()).write_bytes(value)
        print(f"{target}: {len(found)} seeds in {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
