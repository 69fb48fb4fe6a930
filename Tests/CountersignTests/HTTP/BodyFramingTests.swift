import XCTest
@testable import CountersignHTTP

/// Where a body ends. Every ambiguous request shape is refused so the proxy and the
/// upstream can never disagree about it (request smuggling); responses follow RFC 9112 §6.3.
final class BodyFramingTests: XCTestCase {
    private func request(_ fields: String, version: String = "HTTP/1.1") -> String {
        "POST http://example.com/ \(version)\r\nHost: example.com\r\n\(fields)\r\n"
    }

    private func response(_ status: String, _ fields: String) throws -> ResponseHead {
        try XCTUnwrap(acceptResponse("HTTP/1.1 \(status)\r\n\(fields)\r\n"))
    }

    // MARK: - Requests: accepted

    func testRequestWithoutBodyFields() throws {
        XCTAssertEqual(try requestFraming(request("")), BodyFraming.none)
        XCTAssertEqual(try requestFraming(request("Content-Length: 0\r\n")), BodyFraming.none)
    }

    func testContentLength() throws {
        XCTAssertEqual(try requestFraming(request("Content-Length: 5\r\n")), .contentLength(5))
        XCTAssertEqual(try requestFraming(request("content-length:  1048576 \r\n")), .contentLength(1_048_576))
        XCTAssertEqual(try requestFraming(request("Content-Length: 9223372036854775807\r\n")), .contentLength(UInt64(Int64.max)))
        XCTAssertEqual(try requestFraming(request("Content-Length: 9999999999999999999\r\n")), .contentLength(9_999_999_999_999_999_999),
                       "nineteen digits")
        // A value set through the fields keeps the OWS the parser would have trimmed.
        let set = RequestHead(method: "POST", target: "/", headers: HeaderFields([HeaderField("Content-Length", " \t7 , 7\t")]))
        XCTAssertEqual(try BodyFraming.forRequest(set), .contentLength(7))
    }

    func testIdenticalRepeatedContentLengthIsAccepted() throws {
        XCTAssertEqual(try requestFraming(request("Content-Length: 5\r\nContent-Length: 5\r\n")), .contentLength(5))
        XCTAssertEqual(try requestFraming(request("Content-Length: 5, 5\r\n")), .contentLength(5))
        XCTAssertEqual(try requestFraming(request("Content-Length: 5 ,\t5\r\n")), .contentLength(5), "OWS around list elements")
        XCTAssertEqual(try requestFraming(request("Content-Length: 5,5\r\nContent-Length: 5\r\n")), .contentLength(5))
    }

    func testChunkedAloneIsAccepted() throws {
        XCTAssertEqual(try requestFraming(request("Transfer-Encoding: chunked\r\n")), .chunked)
        XCTAssertEqual(try requestFraming(request("transfer-encoding: Chunked\r\n")), .chunked)
    }

    func testCodingsBeforeAFinalChunkedAreAccepted() throws {
        XCTAssertEqual(try requestFraming(request("Transfer-Encoding: gzip, chunked\r\n")), .chunked)
        XCTAssertEqual(try requestFraming(request("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n")), .chunked)
    }

    // MARK: - Requests: refused

    func testContentLengthWithTransferEncodingIsRefused() throws {
        let head = try XCTUnwrap(acceptRequest(request("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n")))
        assertRefusal(.badFraming, try BodyFraming.forRequest(head))
        let reversed = try XCTUnwrap(acceptRequest(request("Transfer-Encoding: chunked\r\nContent-Length: 0\r\n")))
        assertRefusal(.badFraming, try BodyFraming.forRequest(reversed))
    }

    func testDifferingContentLengthsAreRefused() throws {
        for fields in ["Content-Length: 5\r\nContent-Length: 6\r\n", "Content-Length: 5, 6\r\n",
                       "Content-Length: 5\r\nContent-Length: 5, 0\r\n"] {
            let head = try XCTUnwrap(acceptRequest(request(fields)))
            assertRefusal(.badFraming, try BodyFraming.forRequest(head))
        }
    }

    func testMalformedContentLengthIsRefused() throws {
        for value in ["", "-1", "+5", "5a", "0x10", "5.0", "5 5", "1e3", "18446744073709551616", "99999999999999999999", "5,,5", ","] {
            let head = try XCTUnwrap(acceptRequest(request("Content-Length: \(value)\r\n")))
            assertRefusal(.badFraming, try BodyFraming.forRequest(head))
        }
    }

    func testTransferEncodingOtherThanAFinalChunkedIsRefused() throws {
        for value in ["gzip", "chunked, gzip", "chunkedx", "chunked, chunked", "chunked;q=1", "", "identity"] {
            let head = try XCTUnwrap(acceptRequest(request("Transfer-Encoding: \(value)\r\n")))
            assertRefusal(.badFraming, try BodyFraming.forRequest(head))
        }
        let twice = try XCTUnwrap(acceptRequest(request("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n")))
        assertRefusal(.badFraming, try BodyFraming.forRequest(twice))
    }

    func testUnknownCodingBeforeChunkedIsNotImplemented() throws {
        let head = try XCTUnwrap(acceptRequest(request("Transfer-Encoding: foo, chunked\r\n")))
        assertRefusal(.unsupportedTransferCoding, status: 501, try BodyFraming.forRequest(head))
    }

    func testTransferEncodingInAnHTTP10RequestIsRefused() throws {
        let head = try XCTUnwrap(acceptRequest(request("Transfer-Encoding: chunked\r\n", version: "HTTP/1.0")))
        assertRefusal(.badFraming, try BodyFraming.forRequest(head))
    }

    // MARK: - Responses

    func testResponsesThatNeverHaveABody() throws {
        let chunked = "Transfer-Encoding: chunked\r\n"
        XCTAssertEqual(try BodyFraming.forResponse(response("200 OK", "Content-Length: 100\r\n"), requestMethod: "HEAD"), BodyFraming.none)
        XCTAssertEqual(try BodyFraming.forResponse(response("200 OK", chunked), requestMethod: "HEAD"), BodyFraming.none)
        XCTAssertEqual(try BodyFraming.forResponse(response("100 Continue", ""), requestMethod: "POST"), BodyFraming.none)
        XCTAssertEqual(try BodyFraming.forResponse(response("101 Switching Protocols", ""), requestMethod: "GET"), BodyFraming.none)
        XCTAssertEqual(try BodyFraming.forResponse(response("204 No Content", "Content-Length: 7\r\n"), requestMethod: "GET"), BodyFraming.none)
        XCTAssertEqual(try BodyFraming.forResponse(response("304 Not Modified", "Content-Length: 7\r\n"), requestMethod: "GET"), BodyFraming.none)
        XCTAssertEqual(try BodyFraming.forResponse(response("200 Connection established", ""), requestMethod: "CONNECT"), BodyFraming.none)
        XCTAssertEqual(try BodyFraming.forResponse(response("299 Whatever", chunked), requestMethod: "CONNECT"), BodyFraming.none)
    }

    /// Methods are case-sensitive (RFC 9110 §9.1): only `HEAD` and `CONNECT` themselves are.
    func testOnlyTheExactMethodsFrameNoBody() throws {
        for method in ["head", "HEADS", "HEA", "connect", "CONNECTS", "GET"] {
            XCTAssertEqual(try BodyFraming.forResponse(response("200 OK", "Content-Length: 7\r\n"), requestMethod: method), .contentLength(7), method)
        }
    }

    func testFailedConnectResponseHasABody() throws {
        XCTAssertEqual(try BodyFraming.forResponse(response("407 Proxy Authentication Required", "Content-Length: 3\r\n"), requestMethod: "CONNECT"),
                       .contentLength(3))
    }

    func testResponseBodyFraming() throws {
        XCTAssertEqual(try BodyFraming.forResponse(response("200 OK", "Transfer-Encoding: chunked\r\n"), requestMethod: "GET"), .chunked)
        XCTAssertEqual(try BodyFraming.forResponse(response("200 OK", "Transfer-Encoding: gzip, chunked\r\n"), requestMethod: "GET"), .chunked)
        XCTAssertEqual(try BodyFraming.forResponse(response("200 OK", "Content-Length: 1024\r\n"), requestMethod: "GET"), .contentLength(1024))
        XCTAssertEqual(try BodyFraming.forResponse(response("200 OK", "Content-Length: 0\r\n"), requestMethod: "GET"), .contentLength(0))
        XCTAssertEqual(try BodyFraming.forResponse(response("200 OK", "Content-Length: 9, 9\r\n"), requestMethod: "GET"), .contentLength(9))
        XCTAssertEqual(try BodyFraming.forResponse(response("200 OK", ""), requestMethod: "GET"), .untilClose)
        XCTAssertEqual(try BodyFraming.forResponse(response("404 Not Found", ""), requestMethod: "POST"), .untilClose)
    }

    func testResponseWithANonFinalChunkedIsReadUntilClose() throws {
        // RFC 9112 §6.3 (4): a response whose last coding is not chunked ends at close.
        XCTAssertEqual(try BodyFraming.forResponse(response("200 OK", "Transfer-Encoding: gzip\r\n"), requestMethod: "GET"), .untilClose)
        XCTAssertEqual(try BodyFraming.forResponse(response("200 OK", "Transfer-Encoding: chunked, gzip\r\n"), requestMethod: "GET"), .untilClose)
    }

    func testAmbiguousResponseFramingIsRefused() throws {
        assertRefusal(.badFraming, try BodyFraming.forResponse(
            response("200 OK", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"), requestMethod: "GET"))
        assertRefusal(.badFraming, try BodyFraming.forResponse(
            response("200 OK", "Content-Length: 5\r\nContent-Length: 6\r\n"), requestMethod: "GET"))
        assertRefusal(.badFraming, try BodyFraming.forResponse(
            response("200 OK", "Transfer-Encoding: chunked, chunked\r\n"), requestMethod: "GET"))
        assertRefusal(.badFraming, try BodyFraming.forResponse(
            response("200 OK", "Content-Length: five\r\n"), requestMethod: "GET"))
    }
}
