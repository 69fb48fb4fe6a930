"""Request-smuggling shapes for the differential test, generated from the public mutation lists
(not copied from them): PortSwigger http-request-smuggler's and defparam smuggler's
Transfer-Encoding permutations (a control or high byte before/after the name, around the colon,
before/after the value, or hiding the field inside a neighbour), Content-Length permutations,
the RFC 9112 section 6 framing rules and section 11 security cases, chunk-extension and trailer
abuse, absolute-form / Host disagreements and pipelined sequences.

Each shape is raw request bytes with AUTHORITY standing for the origin's host:port, plus the
reading of a strict RFC 9112 recipient (`reference_reading`): the requests it would forward
(method, path, body), and whether it must refuse the rest. A proxy may always refuse earlier
than that reading (it is allowed to be stricter); it must never forward anything else."""
import hashlib
import re
from dataclasses import dataclass, field

AUTHORITY = b"{AUTHORITY}"
CRLF = b"\r\n"

TOKEN = re.compile(rb"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
FIELD_VALUE_BYTE = set(range(0x21, 0x7F)) | set(range(0x80, 0x100)) | {0x20, 0x09}


@dataclass
class Shape:
    family: str
    name: str
    wire: bytes  # with AUTHORITY placeholders

    def bytes_for(self, authority: str) -> bytes:
        return self.wire.replace(AUTHORITY, authority.encode())


@dataclass
class Expected:
    method: str
    path: str
    body_sha256: str
    body_length: int


@dataclass
class Refusal:
    """A message a strict recipient answers with 4xx/5xx itself. `closes`: its framing is faulty,
    so nothing after it can be read and the connection must close."""
    reason: str
    closes: bool


@dataclass
class Reading:
    """The messages of a client's byte stream in order, each Expected (forwarded) or Refusal."""
    messages: list = field(default_factory=list)

    @property
    def methods(self) -> list:
        return [m.method if isinstance(m, Expected) else "GET" for m in self.messages]


def _sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


# ------------------------------------------------------------------------------ reference reading


class _Faulty(Exception):
    pass


class _Incomplete(Exception):
    pass


def reference_reading(wire: bytes) -> Reading:
    """A strict RFC 9112 reading of a client's byte stream, message by message."""
    reading = Reading()
    position = 0
    while position < len(wire):
        try:
            message, position, close = _read_message(wire, position)
        except _Faulty as fault:
            reading.messages.append(Refusal(str(fault), closes=True))
            return reading
        except _Incomplete:
            return reading
        reading.messages.append(message)
        if close:
            break
    return reading


def _read_message(wire: bytes, start: int):
    while wire.startswith(CRLF, start):  # RFC 9112 §2.2: empty lines before a request-line
        start += 2
    end = wire.find(b"\r\n\r\n", start)
    if end < 0:
        raise _Incomplete()
    head = wire[start:end]
    if b"\n" in head.replace(CRLF, b"") or b"\r" in head.replace(CRLF, b""):
        raise _Faulty("bare CR or LF in the head")
    lines = head.split(CRLF)
    method, target, version = _request_line(lines[0])
    fields = [_field(line) for line in lines[1:]]
    names = [name.lower() for name, _ in fields]
    body_start = end + 4
    te = [value for name, value in fields if name.lower() == b"transfer-encoding"]
    cl = [value for name, value in fields if name.lower() == b"content-length"]
    if te and cl:
        raise _Faulty("Content-Length with Transfer-Encoding")
    if te:
        if version == b"HTTP/1.0":
            raise _Faulty("Transfer-Encoding in HTTP/1.0")
        codings = [c.strip().lower() for value in te for c in value.split(b",")]
        if codings != [b"chunked"]:
            raise _Faulty(f"transfer codings {codings!r}")
        body, after = _chunked(wire, body_start)
    elif cl:
        values = {v.strip() for value in cl for v in value.split(b",")}
        if len(values) != 1:
            raise _Faulty("differing Content-Length")
        value = values.pop()
        if not value.isdigit() or len(value) > 18:
            raise _Faulty("invalid Content-Length")
        length = int(value)
        if body_start + length > len(wire):
            raise _Incomplete()
        body, after = wire[body_start:body_start + length], body_start + length
    else:
        body, after = b"", body_start
    connection = b",".join(value for name, value in fields if name.lower() == b"connection").lower()
    close = b"close" in [token.strip() for token in connection.split(b",")] or (
        version == b"HTTP/1.0" and b"keep-alive" not in connection)
    # Faults of a well-framed message: refused, and the stream goes on after its body. A missing
    # or odd Host is not one here: with an absolute-form target the proxy replaces Host with the
    # target's authority (RFC 9112 §3.2.2), which the origins' records check.
    if names.count(b"host") > 1:
        return Refusal("more than one Host (RFC 9112 §3.2)", closes=False), after, close
    try:
        path = _path(target)
    except _Faulty as fault:
        return Refusal(str(fault), closes=False), after, close
    return Expected(method.decode(), path, _sha(body), len(body)), after, close


def _request_line(line: bytes):
    parts = line.split(b" ")
    if len(parts) != 3:
        raise _Faulty("request line is not METHOD SP TARGET SP VERSION")
    method, target, version = parts
    if not TOKEN.match(method) or not target or any(b < 0x21 or b > 0x7E for b in target):
        raise _Faulty("bad method or target")
    if not re.fullmatch(rb"HTTP/1\.[01]", version):
        raise _Faulty("version")
    return method, target, version


def _field(line: bytes):
    if line[:1] in (b" ", b"\t"):
        raise _Faulty("obs-fold")
    name, colon, value = line.partition(b":")
    if not colon or not TOKEN.match(name):
        raise _Faulty("bad field name")
    value = value.strip(b" \t")
    if any(b not in FIELD_VALUE_BYTE for b in value):
        raise _Faulty("bad field value")
    return name, value


def _path(target: bytes) -> str:
    match = re.fullmatch(rb"http://([^/?#@]+)([/?][^#]*)?", target, re.I)
    if not match:
        raise _Faulty("not an absolute http URI without userinfo or fragment")
    path = match.group(2) or b"/"
    if path.startswith(b"?"):
        path = b"/" + path
    return path.decode()


def _chunked(wire: bytes, position: int):
    body = b""
    while True:
        line_end = wire.find(CRLF, position)
        if line_end < 0:
            raise _Incomplete()
        line = wire[position:line_end]
        match = re.fullmatch(rb"([0-9A-Fa-f]{1,16})[ \t]*(;.*)?", line, re.S)
        if not match or any(b not in FIELD_VALUE_BYTE for b in (match.group(2) or b"")):
            raise _Faulty(f"chunk size line {line[:20]!r}")
        size = int(match.group(1), 16)
        position = line_end + 2
        if size == 0:
            break
        if position + size + 2 > len(wire):
            raise _Incomplete()
        body += wire[position:position + size]
        if wire[position + size:position + size + 2] != CRLF:
            raise _Faulty("chunk data not followed by CRLF")
        position += size + 2
    while True:  # trailer section
        line_end = wire.find(CRLF, position)
        if line_end < 0:
            raise _Incomplete()
        line = wire[position:line_end]
        position = line_end + 2
        if not line:
            return body, position
        if b"\r" in line or b"\n" in line:
            raise _Faulty("bare CR or LF in a trailer")
        _field(line)


# ------------------------------------------------------------------------------------- the shapes


def _request(method: bytes, path: bytes, fields, body: bytes = b"", host: bytes = AUTHORITY,
             target: bytes = None, version: bytes = b"HTTP/1.1") -> bytes:
    target = target if target is not None else b"http://" + AUTHORITY + path
    head = method + b" " + target + b" " + version + CRLF
    if host is not None:
        head += b"Host: " + host + CRLF
    for line in fields:
        head += line + CRLF
    return head + CRLF + body


def _smuggled(tag: str) -> bytes:
    """A complete request hidden in a body: if a parser stops early, it becomes a request."""
    return b"GET /smuggled/" + tag.encode() + b" HTTP/1.1" + CRLF + b"Host: " + AUTHORITY + CRLF + CRLF


def _te_probe(tag: str, gadget: bytes) -> bytes:
    """The probe of both tools: a framing gadget next to a Content-Length that covers a
    terminating chunk and a hidden request (a CL reader sees one POST, a TE reader two)."""
    body = b"0" + CRLF + CRLF + _smuggled(tag)
    return _request(b"POST", f"/c/{tag}/0".encode(), [gadget, b"Content-Length: %d" % len(body)], body)


def _te_only_probe(tag: str, gadget: bytes) -> bytes:
    """The gadget alone, with a chunked body whose chunk hides a request: a TE reader sees
    one POST; a reader that ignores the gadget sees a bodiless POST, then garbage."""
    smuggled = _smuggled(tag)
    body = b"%x" % len(smuggled) + CRLF + smuggled + CRLF + b"0" + CRLF + CRLF
    return _request(b"POST", f"/c/{tag}/0".encode(), [gadget], body) + _follow(tag)


def _follow(tag: str, index: int = 1) -> bytes:
    return _request(b"GET", f"/c/{tag}/{index}".encode(), [])


TE_NAMED = {
    "vanilla": b"Transfer-Encoding: chunked",
    "underjoin": b"Transfer_Encoding: chunked",
    "spacejoin": b"Transfer Encoding: chunked",
    "smashed": b"Transfer Encoding:chunked",
    "space-before-colon": b"Transfer-Encoding : chunked",
    "nospace": b"Transfer-Encoding:chunked",
    "double-space-value": b"Transfer-Encoding:  chunked",
    "vertical-tab-value": b"Transfer-Encoding:\x0bchunked",
    "comma-cow": b"Transfer-Encoding: chunked, cow",
    "cow-comma": b"Transfer-Encoding: cow, chunked",
    "content-encoding": b"Content-Encoding: chunked",
    "line-wrapped": b"Transfer-Encoding:\r\n chunked",
    "gareth-wrap": b"Transfer-Encoding\r\n : chunked",
    "quoted": b'Transfer-Encoding: "chunked"',
    "aposed": b"Transfer-Encoding: 'chunked'",
    "lazygrep": b"Transfer-Encoding: chunk",
    "chunky": b"Transfer-Encoding: chunky",
    "sarcasm": b"TrAnSFer-EnCODinG: cHuNkeD",
    "yelling": b"TRANSFER-ENCODING: CHUNKED",
    "cr-suffix": b"Transfer-Encoding: chunked\r",
    "tab-suffix": b"Transfer-Encoding: chunked\t",
    "tab-prefix": b"Transfer-Encoding:\tchunked",
    "tab-around-colon": b"Transfer-Encoding\t:\tchunked",
    "rev-dual-chunk": b"Transfer-Encoding: cow\r\nTransfer-Encoding: chunked",
    "dual-chunk": b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
    "chunked-twice": b"Transfer-Encoding: chunked, chunked",
    "cr-in-name": b"Transfer\r-Encoding: chunked",
    "nested": b"Transfer-Encoding: cow chunked bar",
    "ff-value": b"Transfer-Encoding:\xffchunked",
    "accent-value": b"Transfer-Encoding: ch\x96nked",
    "accent-name": b"Transf\x82r-Encoding: chunked",
    "x-cr-hidden": b"X:X\rTransfer-Encoding: chunked",
    "x-lf-hidden": b"X:X\nTransfer-Encoding: chunked",
    "name-prefix-space": b" Transfer-Encoding: chunked",
    "connection-te": b"Connection: Transfer-Encoding\r\nTransfer-Encoding: chunked",
    "identity-chunked": b"Transfer-Encoding: identity, chunked",
    "gzip-chunked": b"Transfer-Encoding: gzip, chunked",
    "empty-te": b"Transfer-Encoding:",
    "backslash-name": b"Transfer\\Encoding: chunked",
    "nul-value": b"Transfer-Encoding: chunked\x00",
}

# defparam smuggler's default byte set, and every C0 control and a spread of high bytes.
SPRAY_BYTES = sorted(set([0x1, 0x4, 0x8, 0x9, 0xa, 0xb, 0xc, 0xd, 0x1f, 0x20, 0x7f, 0xa0, 0xff]
                         + list(range(0x1, 0x20)) + [0x80, 0x85, 0xc2, 0xe2]))
SPRAY_POSITIONS = {
    "midspace": lambda c: b"Transfer-Encoding:" + c + b"chunked",
    "postspace": lambda c: b"Transfer-Encoding" + c + b": chunked",
    "prespace": lambda c: c + b"Transfer-Encoding: chunked",
    "endspace": lambda c: b"Transfer-Encoding: chunked" + c,
}
NEIGHBOUR_POSITIONS = {  # the default config's "hide it in a neighbour" positions
    "xprespace": lambda c: b"X: X" + c + b"Transfer-Encoding: chunked",
    "endspacex": lambda c: b"Transfer-Encoding: chunked" + c + b"X: X",
    "rxprespace": lambda c: b"X: X\r" + c + b"Transfer-Encoding: chunked",
    "xnprespace": lambda c: b"X: X" + c + b"\nTransfer-Encoding: chunked",
    "endspacerx": lambda c: b"Transfer-Encoding: chunked\r" + c + b"X: X",
    "endspacexn": lambda c: b"Transfer-Encoding: chunked" + c + b"\nX: X",
}
NEIGHBOUR_BYTES = [0x1, 0x4, 0x8, 0x9, 0xa, 0xb, 0xc, 0xd, 0x1f, 0x20, 0x7f, 0xa0, 0xff]


def _te_shapes():
    for name, gadget in TE_NAMED.items():
        yield Shape("te-permutation", f"cl-te-{name}", _te_probe(f"clte-{name}", gadget))
        yield Shape("te-permutation", f"te-only-{name}", _te_only_probe(f"te-{name}", gadget))
    for position, make in SPRAY_POSITIONS.items():
        for byte in SPRAY_BYTES:
            tag = f"{position}-{byte:02x}"
            yield Shape("te-byte-spray", tag, _te_probe(tag, make(bytes([byte]))))
    for position, make in NEIGHBOUR_POSITIONS.items():
        for byte in NEIGHBOUR_BYTES:
            tag = f"{position}-{byte:02x}"
            yield Shape("te-neighbour", tag, _te_probe(tag, make(bytes([byte]))))


CL_VALUES = {
    "plain": [b"Content-Length: 5"],
    "leading-zeros": [b"Content-Length: 0005"],
    "plus": [b"Content-Length: +5"],
    "minus": [b"Content-Length: -5"],
    "hex": [b"Content-Length: 0x5"],
    "decimal-point": [b"Content-Length: 5.0"],
    "exponent": [b"Content-Length: 5e0"],
    "trailing-space": [b"Content-Length: 5 "],
    "tab-value": [b"Content-Length:\t5"],
    "space-inside": [b"Content-Length: 5 5"],
    "list-same": [b"Content-Length: 5, 5"],
    "list-differing": [b"Content-Length: 5, 6"],
    "list-trailing-comma": [b"Content-Length: 5,"],
    "repeated-same": [b"Content-Length: 5", b"Content-Length: 5"],
    "repeated-differing": [b"Content-Length: 5", b"Content-Length: 6"],
    "repeated-differing-reversed": [b"Content-Length: 6", b"Content-Length: 5"],
    "empty": [b"Content-Length:"],
    "lowercase-name": [b"content-length: 5"],
    "space-before-colon": [b"Content-Length : 5"],
    "underscore-name": [b"Content_Length: 5"],
    "overflow-64": [b"Content-Length: 18446744073709551621"],
    "overflow-huge": [b"Content-Length: 99999999999999999999999999999999999995"],
    "vertical-tab": [b"Content-Length:\x0b5"],
    "nul-suffix": [b"Content-Length: 5\x00"],
    "obs-fold": [b"Content-Length:", b" 5"],
    "quoted": [b'Content-Length: "5"'],
    "unicode-digit": [b"Content-Length: \xd9\xa5"],
    "zero-then-body": [b"Content-Length: 0"],
}


def _cl_shapes():
    for name, lines in CL_VALUES.items():
        tag = f"cl-{name}"
        body = b"12345"
        wire = _request(b"POST", f"/c/{tag}/0".encode(), lines, body)
        yield Shape("cl-permutation", tag, wire + _follow(tag))
    # HTTP/1.0 and a bodiless method with a body.
    for method in (b"GET", b"HEAD", b"OPTIONS", b"DELETE"):
        tag = f"cl-body-on-{method.decode().lower()}"
        yield Shape("cl-permutation", tag, _request(method, f"/c/{tag}/0".encode(), [b"Content-Length: 5"], b"12345")
                    + _follow(tag))
    tag = "cl-http10"
    yield Shape("cl-permutation", tag, _request(b"POST", f"/c/{tag}/0".encode(), [b"Content-Length: 5", b"Connection: keep-alive"],
                                                b"12345", version=b"HTTP/1.0") + _follow(tag))


CHUNKED_BODIES = {
    "simple": b"5\r\nhello\r\n0\r\n\r\n",
    "uppercase-hex": b"A\r\n0123456789\r\n0\r\n\r\n",
    "leading-zeros": b"0005\r\nhello\r\n0000\r\n\r\n",
    "sixteen-digits": b"0000000000000005\r\nhello\r\n0\r\n\r\n",
    "seventeen-digits": b"00000000000000005\r\nhello\r\n0\r\n\r\n",
    "size-overflow": b"10000000000000005\r\nhello\r\n0\r\n\r\n",
    "hex-prefix": b"0x5\r\nhello\r\n0\r\n\r\n",
    "plus-size": b"+5\r\nhello\r\n0\r\n\r\n",
    "minus-size": b"-5\r\nhello\r\n0\r\n\r\n",
    "empty-size": b"\r\nhello\r\n0\r\n\r\n",
    "space-after-size": b"5 \r\nhello\r\n0\r\n\r\n",
    "space-before-size": b" 5\r\nhello\r\n0\r\n\r\n",
    "lf-only-lines": b"5\nhello\n0\n\n",
    "lf-after-size": b"5\nhello\r\n0\r\n\r\n",
    "cr-after-size": b"5\rhello\r\n0\r\n\r\n",
    "lf-after-data": b"5\r\nhello\n0\r\n\r\n",
    "missing-crlf-after-data": b"5\r\nhello0\r\n\r\n",
    "data-longer-than-size": b"3\r\nhello\r\n0\r\n\r\n",
    "data-shorter-than-size": b"7\r\nhello\r\n0\r\n\r\n",
    "last-chunk-lf-terminator": b"5\r\nhello\r\n0\r\n\n",
    "ext-simple": b"5;name=value\r\nhello\r\n0\r\n\r\n",
    "ext-flag": b"5;flag\r\nhello\r\n0;last\r\n\r\n",
    "ext-bws": b"5 ; name = value\r\nhello\r\n0\r\n\r\n",
    "ext-quoted": b'5;q="a;b=c"\r\nhello\r\n0\r\n\r\n',
    "ext-quoted-crlf": b'5;q="a\r\n0\r\n\r\n"\r\nhello\r\n0\r\n\r\n',
    "ext-bare-lf": b"5;a\nb\r\nhello\r\n0\r\n\r\n",
    "ext-bare-cr": b"5;a\rb\r\nhello\r\n0\r\n\r\n",
    "ext-nul": b"5;a\x00b\r\nhello\r\n0\r\n\r\n",
    "ext-huge": b"5;" + b"a" * 5000 + b"\r\nhello\r\n0\r\n\r\n",
    "ext-many": b"5" + b";a=b" * 500 + b"\r\nhello\r\n0\r\n\r\n",
    "ext-no-semicolon": b"5 junk\r\nhello\r\n0\r\n\r\n",
    "ext-on-last-hides-request": b"5\r\nhello\r\n0;\r\n\r\n",
    "zero-size-ext-crlf-pair": b"0;\r\n\r\n",
    "trailer-simple": b"5\r\nhello\r\n0\r\nChecksum: abc\r\n\r\n",
    "trailer-content-length": b"5\r\nhello\r\n0\r\nContent-Length: 50\r\n\r\n",
    "trailer-transfer-encoding": b"5\r\nhello\r\n0\r\nTransfer-Encoding: chunked\r\n\r\n",
    "trailer-host": b"5\r\nhello\r\n0\r\nHost: evil.example\r\n\r\n",
    "trailer-obs-fold": b"5\r\nhello\r\n0\r\nX-T: a\r\n b\r\n\r\n",
    "trailer-bare-lf": b"5\r\nhello\r\n0\r\nX-T: a\nX-U: b\r\n\r\n",
    "trailer-no-colon": b"5\r\nhello\r\n0\r\nnot a field\r\n\r\n",
    "trailer-space-before-colon": b"5\r\nhello\r\n0\r\nX-T : a\r\n\r\n",
    "trailer-huge": b"5\r\nhello\r\n0\r\n" + b"X-T: " + b"t" * 40000 + b"\r\n\r\n",
    "trailer-request-line": b"5\r\nhello\r\n0\r\nGET /x HTTP/1.1\r\n\r\n",
    "many-small-chunks": b"1\r\na\r\n" * 200 + b"0\r\n\r\n",
}


def _chunked_shapes():
    for name, body in CHUNKED_BODIES.items():
        tag = f"chunked-{name}"
        family = "trailer" if name.startswith("trailer") else "chunk-ext" if "ext" in name else "chunked-framing"
        wire = _request(b"POST", f"/c/{tag}/0".encode(), [b"Transfer-Encoding: chunked"], body)
        yield Shape(family, tag, wire + _follow(tag))


def _target_and_host_shapes():
    cases = {
        "host-differs": dict(host=b"evil.example"),
        "host-differs-port": dict(host=b"127.0.0.1:1"),
        "host-missing": dict(host=None),
        "host-twice": dict(fields=[b"Host: other.example"]),
        "host-twice-same": dict(fields=[b"Host: " + AUTHORITY]),
        "host-empty": dict(host=b""),
        "host-with-path": dict(host=b"evil.example/x"),
        "host-with-space": dict(host=b"evil example"),
        "host-userinfo": dict(host=b"user@evil.example"),
        "target-userinfo": dict(target=b"http://user:pw@" + AUTHORITY + b"/c/TAG/0"),
        "target-fragment": dict(target=b"http://" + AUTHORITY + b"/c/TAG/0#frag"),
        "target-no-path": dict(target=b"http://" + AUTHORITY),
        "target-query-only": dict(target=b"http://" + AUTHORITY + b"?q=TAG"),
        "target-uppercase-scheme": dict(target=b"HTTP://" + AUTHORITY + b"/c/TAG/0"),
        "target-origin-form": dict(target=b"/c/TAG/0"),
        "target-asterisk": dict(target=b"*"),
        "target-authority-form": dict(target=AUTHORITY),
        "target-encoded-crlf": dict(target=b"http://" + AUTHORITY + b"/c/TAG/0%0d%0aX:%20y"),
        "target-raw-cr": dict(target=b"http://" + AUTHORITY + b"/c/TAG/0\rX"),
        "target-tab": dict(target=b"http://" + AUTHORITY + b"/c/TAG/0\tX"),
        "target-high-byte": dict(target=b"http://" + AUTHORITY + b"/c/TAG/0\xff"),
        "target-backslash-authority": dict(target=b"http://" + AUTHORITY + b"\\@evil.example/c/TAG/0"),
        "target-at-authority": dict(target=b"http://evil.example@" + AUTHORITY + b"/c/TAG/0"),
        "target-ftp-scheme": dict(target=b"ftp://" + AUTHORITY + b"/c/TAG/0"),
        "request-line-double-space": dict(line=b"GET  http://" + AUTHORITY + b"/c/TAG/0 HTTP/1.1"),
        "request-line-tab": dict(line=b"GET\thttp://" + AUTHORITY + b"/c/TAG/0 HTTP/1.1"),
        "request-line-lowercase-version": dict(line=b"GET http://" + AUTHORITY + b"/c/TAG/0 http/1.1"),
        "request-line-http2": dict(line=b"GET http://" + AUTHORITY + b"/c/TAG/0 HTTP/2.0"),
        "request-line-http09": dict(line=b"GET http://" + AUTHORITY + b"/c/TAG/0"),
        "request-line-trailing-space": dict(line=b"GET http://" + AUTHORITY + b"/c/TAG/0 HTTP/1.1 "),
        "request-line-lf-only": dict(raw=b"GET http://" + AUTHORITY + b"/c/TAG/0 HTTP/1.1\nHost: " + AUTHORITY + b"\n\n"),
        "leading-crlf": dict(raw=b"\r\n\r\n" + _request(b"GET", b"/c/TAG/0", [])),
        "leading-lf": dict(raw=b"\n" + _request(b"GET", b"/c/TAG/0", [])),
        "http10-with-te": dict(version=b"HTTP/1.0", fields=[b"Transfer-Encoding: chunked"], body=b"0\r\n\r\n"),
        "http10-no-host": dict(version=b"HTTP/1.0", host=None),
        "field-name-trailing-space": dict(fields=[b"X-A : b"]),
        "field-nul": dict(fields=[b"X-A: b\x00c"]),
        "field-del": dict(fields=[b"X-A: b\x7fc"]),
        "field-empty-name": dict(fields=[b": b"]),
        "field-no-colon": dict(fields=[b"X-A b"]),
        "field-utf8-name": dict(fields=[b"X-\xc3\xa9: b"]),
        "expect-100-with-cl": dict(method=b"POST", fields=[b"Expect: 100-continue", b"Content-Length: 5"], body=b"12345"),
        "upgrade-unasked-h2c": dict(fields=[b"Connection: Upgrade, HTTP2-Settings", b"Upgrade: h2c", b"HTTP2-Settings: AAMAAABkAAQAAP__"]),
    }
    for name, case in cases.items():
        tag = f"target-{name}"
        if "raw" in case:
            wire = case["raw"].replace(b"TAG", tag.encode())
        else:
            method = case.get("method", b"GET")
            target = case.get("target", b"http://" + AUTHORITY + b"/c/TAG/0").replace(b"TAG", tag.encode())
            wire = _request(method, b"", case.get("fields", []), case.get("body", b""), host=case.get("host", AUTHORITY),
                            target=target, version=case.get("version", b"HTTP/1.1"))
            if "line" in case:
                wire = case["line"].replace(b"TAG", tag.encode()) + wire[wire.index(CRLF):]
        yield Shape("target-host", tag, wire + _follow(tag))


def _pipeline_shapes():
    def post(tag, index, body=b"abc"):
        return _request(b"POST", f"/c/{tag}/{index}".encode(), [b"Content-Length: %d" % len(body)], body)

    def chunked(tag, index, body=b"3\r\nabc\r\n0\r\n\r\n"):
        return _request(b"POST", f"/c/{tag}/{index}".encode(), [b"Transfer-Encoding: chunked"], body)

    def get(tag, index, *fields, version=b"HTTP/1.1"):
        return _request(b"GET", f"/c/{tag}/{index}".encode(), list(fields), version=version)

    cases = {
        "three-gets": lambda t: get(t, 0) + get(t, 1) + get(t, 2),
        "ten-gets": lambda t: b"".join(get(t, i) for i in range(10)),
        "post-get": lambda t: post(t, 0) + get(t, 1),
        "chunked-get": lambda t: chunked(t, 0) + get(t, 1),
        "chunked-chunked-get": lambda t: chunked(t, 0) + chunked(t, 1) + get(t, 2),
        "head-get": lambda t: _request(b"HEAD", f"/c/{t}/0".encode(), []) + get(t, 1),
        "close-then-get": lambda t: get(t, 0, b"Connection: close") + get(t, 1),
        "http10-then-get": lambda t: get(t, 0, version=b"HTTP/1.0") + get(t, 1),
        "http10-keepalive-then-get": lambda t: get(t, 0, b"Connection: keep-alive", version=b"HTTP/1.0") + get(t, 1),
        "zero-cl-then-get": lambda t: post(t, 0, b"") + get(t, 1),
        "body-is-a-request": lambda t: post(t, 0, get(t, 9)) + get(t, 1),
        "chunk-is-a-request": lambda t: chunked(t, 0, b"%x\r\n" % len(get(t, 9)) + get(t, 9) + b"\r\n0\r\n\r\n") + get(t, 1),
        "get-then-faulty": lambda t: get(t, 0) + get(t, 1, b"X-Bad : y") + get(t, 2),
        "get-then-clte": lambda t: get(t, 0) + _te_probe(t, b"Transfer-Encoding: chunked"),
        "expect-then-get": lambda t: _request(b"POST", f"/c/{t}/0".encode(), [b"Expect: 100-continue", b"Content-Length: 3"], b"abc") + get(t, 1),
        "options-asterisk-then-get": lambda t: b"OPTIONS * HTTP/1.1\r\nHost: " + AUTHORITY + b"\r\n\r\n" + get(t, 1),
    }
    for name, make in cases.items():
        tag = f"pipeline-{name}"
        yield Shape("pipelined", tag, make(tag))


def all_shapes() -> list:
    shapes = [*_te_shapes(), *_cl_shapes(), *_chunked_shapes(), *_target_and_host_shapes(), *_pipeline_shapes()]
    seen = set()
    unique = []
    for shape in shapes:
        if shape.wire not in seen:
            seen.add(shape.wire)
            unique.append(shape)
    return unique
