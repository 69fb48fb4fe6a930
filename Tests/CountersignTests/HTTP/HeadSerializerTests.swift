import XCTest
@testable import CountersignHTTP

/// The bytes the next hop receives: heads written back in the order, case and bytes received.
final class HeadSerializerTests: XCTestCase {
    func testRequestBytes() {
        let headers = HeaderFields([HeaderField("Host", "example.com"), HeaderField("x-lower", "v")])
        let bytes = HeadSerializer.request(method: "GET", target: "/a?b", headers: headers)
        XCTAssertEqual(bytes, Wire.bytes("GET /a?b HTTP/1.1\r\nHost: example.com\r\nx-lower: v\r\n\r\n"))
    }

    func testHTTP10RequestAndEmptyFields() {
        let bytes = HeadSerializer.request(method: "HEAD", target: "/", version: .http10, headers: HeaderFields())
        XCTAssertEqual(bytes, Wire.bytes("HEAD / HTTP/1.0\r\n\r\n"))
    }

    /// The proxy's own answers keep the client's version; any version and status fit the room
    /// the writer is given for them.
    func testOtherVersionsAndStatusesAreWrittenWithinTheirBound() {
        XCTAssertEqual(HeadSerializer.response(ResponseHead(version: .http10, status: 503, reason: "Service Unavailable")),
                       Wire.bytes("HTTP/1.0 503 Service Unavailable\r\n\r\n"))
        let odd = HTTPVersion(major: 10, minor: 12)
        XCTAssertEqual(HeadSerializer.response(ResponseHead(version: odd, status: Int.min, reason: "\u{E9}")),
                       Wire.bytes("HTTP/10.12 \(Int.min) \u{E9}\r\n\r\n"))
        XCTAssertEqual(HeadSerializer.request(method: "GET", target: "/", version: odd, headers: HeaderFields([HeaderField("A", "b")])),
                       Wire.bytes("GET / HTTP/10.12\r\nA: b\r\n\r\n"))
    }

    func testResponseBytes() {
        let head = ResponseHead(status: 404, reason: "Not Found", headers: HeaderFields([HeaderField("Content-Length", "0")]))
        XCTAssertEqual(HeadSerializer.response(head), Wire.bytes("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
    }

    /// `HTTP/1.1 200 OK` is written as one copy; any other reason, case or version of a 200
    /// goes as it was received.
    func testA200KeepsItsOwnReasonAndVersion() {
        XCTAssertEqual(HeadSerializer.response(ResponseHead(status: 200, reason: "OK")), Wire.bytes("HTTP/1.1 200 OK\r\n\r\n"))
        XCTAssertEqual(HeadSerializer.response(ResponseHead(status: 200, reason: "Ok")), Wire.bytes("HTTP/1.1 200 Ok\r\n\r\n"))
        XCTAssertEqual(HeadSerializer.response(ResponseHead(status: 200, reason: "OK ")), Wire.bytes("HTTP/1.1 200 OK \r\n\r\n"))
        XCTAssertEqual(HeadSerializer.response(ResponseHead(status: 200, reason: "")), Wire.bytes("HTTP/1.1 200 \r\n\r\n"))
        XCTAssertEqual(HeadSerializer.response(ResponseHead(version: .http10, status: 200, reason: "OK")),
                       Wire.bytes("HTTP/1.0 200 OK\r\n\r\n"))
        XCTAssertEqual(HeadSerializer.response(ResponseHead(status: 201, reason: "OK")), Wire.bytes("HTTP/1.1 201 OK\r\n\r\n"))
    }

    func testResponseWithEmptyReasonKeepsTheSeparatingSpace() {
        XCTAssertEqual(HeadSerializer.response(ResponseHead(status: 204, reason: "")), Wire.bytes("HTTP/1.1 204 \r\n\r\n"))
    }

    func testObsTextSurvivesParseAndSerializeByteForByte() throws {
        let original = Wire.bytes("GET / HTTP/1.1\r\nHost: h\r\nX-Latin1: Gr\u{FC}\u{DF}e \u{A0}\u{80}\u{FF}\r\nContent-Disposition: attachment; filename=\"\u{E9}t\u{E9}.txt\"\r\n\r\n")
        guard case .complete(let head, _) = Wire.request(original) else { return XCTFail("should parse") }
        XCTAssertEqual(head.headers["X-Latin1"]?.unicodeScalars.map(\.value), [0x47, 0x72, 0xFC, 0xDF, 0x65, 0x20, 0xA0, 0x80, 0xFF])
        let written = HeadSerializer.request(method: head.method, target: head.target, version: head.version, headers: head.headers)
        XCTAssertEqual(written, original)
    }

    func testResponseReasonWithObsTextRoundTrips() throws {
        let original = Wire.bytes("HTTP/1.1 200 Tr\u{E8}s bien\r\nX-Obs: \u{B5}\r\n\r\n")
        guard case .complete(let head, _) = Wire.response(original) else { return XCTFail("should parse") }
        XCTAssertEqual(HeadSerializer.response(head), original)
    }

    func testParseSerializeParseIsStableForCanonicalHeads() throws {
        let canonical = Wire.bytes("POST http://example.com:8080/p HTTP/1.1\r\nHOST: example.com:8080\r\ncontent-length: 3\r\nX-Dup: 1\r\nx-dup: 2\r\n\r\n")
        guard case .complete(let head, _) = Wire.request(canonical) else { return XCTFail("should parse") }
        let written = HeadSerializer.request(method: head.method, target: head.target, version: head.version, headers: head.headers)
        XCTAssertEqual(written, canonical)
        guard case .complete(let again, _) = Wire.request(written) else { return XCTFail("should parse again") }
        XCTAssertEqual(again, head)
    }

    func testValuesAreWrittenWithSingleSpaceAfterTheColon() throws {
        guard case .complete(let head, _) = Wire.request(Wire.bytes("GET / HTTP/1.1\r\nA:x\r\nB: \t y \r\n\r\n")) else {
            return XCTFail("should parse")
        }
        let written = HeadSerializer.request(method: head.method, target: head.target, headers: head.headers)
        XCTAssertEqual(written, Wire.bytes("GET / HTTP/1.1\r\nA: x\r\nB: y\r\n\r\n"))
    }

    func testCharactersOutsideLatin1AreNotWrittenAsMultibyteUTF8() {
        let headers = HeaderFields([HeaderField("X-U", "a\u{20AC}b")])
        let bytes = HeadSerializer.request(method: "GET", target: "/", headers: headers)
        XCTAssertEqual(bytes, Wire.bytes("GET / HTTP/1.1\r\nX-U: a?b\r\n\r\n"))
    }
}
