import XCTest
@testable import CountersignHTTP

/// What the proxy makes of an upstream's status line and fields.
final class ResponseHeadParserTests: XCTestCase {
    func testParsesStatusLineReasonAndFields() throws {
        let head = try XCTUnwrap(acceptResponse("HTTP/1.1 404 Not Found Here\r\nContent-Length: 0\r\nX-Case: Kept\r\n\r\n"))
        XCTAssertEqual(head.version, .http11)
        XCTAssertEqual(head.status, 404)
        XCTAssertEqual(head.reason, "Not Found Here", "the reason may contain spaces")
        XCTAssertEqual(head.headers.fields, [HeaderField("Content-Length", "0"), HeaderField("X-Case", "Kept")])
        XCTAssertFalse(head.isInterim)
    }

    func testEmptyOrMissingReasonIsAccepted() throws {
        XCTAssertEqual(try XCTUnwrap(acceptResponse("HTTP/1.1 204 \r\n\r\n")).reason, "")
        XCTAssertEqual(try XCTUnwrap(acceptResponse("HTTP/1.1 204\r\n\r\n")).status, 204)
    }

    func testObsTextInTheReasonIsKept() throws {
        let head = try XCTUnwrap(acceptResponse("HTTP/1.0 200 D\u{E9}j\u{E0} vu\r\n\r\n"))
        XCTAssertEqual(head.reason, "D\u{E9}j\u{E0} vu")
        XCTAssertEqual(head.version, .http10)
    }

    func testInterimResponses() throws {
        XCTAssertTrue(try XCTUnwrap(acceptResponse("HTTP/1.1 100 Continue\r\n\r\n")).isInterim)
        XCTAssertTrue(try XCTUnwrap(acceptResponse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n")).isInterim)
        XCTAssertFalse(try XCTUnwrap(acceptResponse("HTTP/1.1 200 OK\r\n\r\n")).isInterim)
    }

    func testMalformedStatusLinesAreRefused() {
        for line in ["HTTP/1.1", "HTTP/1.1 20 OK", "HTTP/1.1 2000 OK", "HTTP/1.1 2x0 OK", "HTTP/1.1  200 OK",
                     "http/1.1 200 OK", "HTTP/1.1 200 O\u{0}K", "HTTP/1.1 200 O\u{7F}K", "ICY 200 OK", "HTTP/1.1\t200 OK"] {
            refuseResponse(line + "\r\n\r\n", .badStartLine)
        }
    }

    func testResponseFromAnotherMajorVersionIsRefused() {
        refuseResponse("HTTP/2.0 200 OK\r\n\r\n", .unsupportedVersion)
    }

    func testResponseFieldsFollowTheSameStrictRules() {
        refuseResponse("HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\n", .whitespaceBeforeColon)
        refuseResponse("HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", .obsoleteLineFolding)
        refuseResponse("HTTP/1.1 200 OK\nX: a\r\n\r\n", .bareLF)
        refuseResponse("HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", .bareCR)
        refuseResponse("HTTP/1.1 200 OK\r\nX: a\u{1}\r\n\r\n", .badFieldValue)
    }

    func testLeadingEmptyLinesAreNotSkippedInResponses() {
        refuseResponse("\r\nHTTP/1.1 200 OK\r\n\r\n", .badStartLine)
    }

    func testResponseHeadOverTheLimitIsRefused() {
        let text = "HTTP/1.1 200 OK\r\nX-Big: " + String(repeating: "b", count: 300) + "\r\n\r\n"
        guard case .invalid(let error) = Wire.response(Wire.bytes(text), maxHeadBytes: 128) else {
            return XCTFail("expected a refusal")
        }
        XCTAssertEqual(error.kind, .headTooLarge)
    }
}
