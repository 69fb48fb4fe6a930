import XCTest
@testable import CountersignHTTP

/// HTTP/2 ↔ HTTP/1.1 at the stream boundary: what an h2 request becomes on the HTTP/1.1 side,
/// and how an HTTP/1.1 response comes back as HEADERS, DATA and trailers within a window.
final class H2TranslationTests: XCTestCase {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// The head handed to the HTTP/1.1 side, written out as it goes upstream.
    private func request(_ fields: [(String, String)], endStream: Bool) -> (String, H2ToH1Translation.BodyEncoding) {
        guard let (head, body) = try? H2ToH1Translation.requestHead(fields.map { HPACKField($0.0, $0.1) }, endStream: endStream, maxHeadBytes: 65536) else {
            XCTFail("refused")
            return ("", .none)
        }
        return (text(HeadSerializer.request(method: head.method, target: head.target, version: head.version, headers: head.headers)), body)
    }

    private func refusal(_ fields: [(String, String)], maxHeadBytes: Int = 65536) -> HTTPParseError? {
        do {
            _ = try H2ToH1Translation.requestHead(fields.map { HPACKField($0.0, $0.1) }, endStream: true, maxHeadBytes: maxHeadBytes)
            return nil
        } catch {
            return error
        }
    }

    private let base = [(":method", "GET"), (":scheme", "https"), (":authority", "api.example.com"), (":path", "/a?b=1")]

    func testPseudoHeadersBecomeTheRequestLineAndHost() {
        let (head, body) = request(base + [("accept", "*/*")], endStream: true)
        XCTAssertEqual(head, "GET /a?b=1 HTTP/1.1\r\nhost: api.example.com\r\naccept: */*\r\n\r\n")
        XCTAssertEqual(body, .none)
    }

    func testAuthorityWinsOverAHostFieldAndCookiesAreJoined() {
        let (head, _) = request(base + [("host", "other.example"), ("cookie", "a=1"), ("te", "trailers"), ("cookie", "b=2")], endStream: true)
        XCTAssertEqual(head, "GET /a?b=1 HTTP/1.1\r\nhost: api.example.com\r\nte: trailers\r\ncookie: a=1; b=2\r\n\r\n")
    }

    func testABodyWithoutLengthGoesChunkedWithTrailers() {
        let (head, body) = request([(":method", "POST"), (":scheme", "https"), (":authority", "h"), (":path", "/")], endStream: false)
        XCTAssertEqual(head, "POST / HTTP/1.1\r\nhost: h\r\ntransfer-encoding: chunked\r\n\r\n")
        XCTAssertEqual(body, .chunked)
        XCTAssertEqual(text(H2ToH1Translation.data(Array("hello, world!!!!!".utf8), as: body)), "11\r\nhello, world!!!!!\r\n")
        XCTAssertEqual(H2ToH1Translation.data([], as: body), [], "an empty DATA frame must not end the body")
        XCTAssertEqual(text(H2ToH1Translation.end(trailers: [HPACKField("x-sum", "1")], as: body)), "0\r\nx-sum: 1\r\n\r\n")
    }

    func testABodyWithLengthPassesAsItIs() {
        let (head, body) = request(base + [("content-length", "3")], endStream: false)
        XCTAssertTrue(head.hasSuffix("content-length: 3\r\n\r\n"))
        XCTAssertEqual(body, .contentLength)
        XCTAssertEqual(H2ToH1Translation.data([1, 2, 3], as: body), [1, 2, 3])
        XCTAssertEqual(H2ToH1Translation.end(trailers: [HPACKField("x", "y")], as: body), [], "no place for trailers")
    }

    func testTheHandedHeadIsWhatItsOctetsWouldParseTo() throws {
        let fields = base + [("accept", "*/*"), ("cookie", "a=1"), ("x-latin", "caf\u{E9}"), ("cookie", "b=2"), ("content-length", "3")]
        let (head, _) = try H2ToH1Translation.requestHead(fields.map { HPACKField($0.0, $0.1) }, endStream: false, maxHeadBytes: 65536)
        let octets = HeadSerializer.request(method: head.method, target: head.target, headers: head.headers)
        guard case .complete(let parsed, _) = octets.withUnsafeBytes({ HeadParser.parseRequest($0, maxHeadBytes: 65536) }) else {
            return XCTFail("the handed head does not parse as HTTP/1.1")
        }
        XCTAssertEqual(parsed, head)
        XCTAssertEqual(head.headers["Cookie"], "a=1; b=2")
        XCTAssertEqual(head.headers["Host"], "api.example.com")
    }

    /// What the HTTP/1.1 parser refuses in a head's octets is refused in the handed head too,
    /// with the same error (so the same answer: 400, or 431 for a head too large).
    func testWhatHTTP11CannotCarryIsRefusedAsItsParserWould() {
        XCTAssertEqual(refusal([(":method", "GET"), (":scheme", "https"), (":authority", "h"), (":path", "/a b")])?.kind, .badStartLine)
        XCTAssertEqual(refusal([(":method", "G(T"), (":scheme", "https"), (":authority", "h"), (":path", "/")])?.kind, .badStartLine)
        XCTAssertEqual(refusal(base + [("x(y", "1")])?.kind, .badFieldName)
        XCTAssertEqual(refusal(base + [("x-ctl", "a\u{1}b")])?.kind, .badFieldValue)
        XCTAssertEqual(refusal(base + [("cookie", "a=1"), ("cookie", "b=\u{7F}")])?.kind, .badFieldValue)
        // "GET /a?b=1 HTTP/1.1" CRLF, "host: api.example.com" CRLF, "x: 1234" CRLF, CRLF: 55 octets.
        let sized = base + [("x", "1234")]
        XCTAssertNil(refusal(sized, maxHeadBytes: 55))
        XCTAssertEqual(refusal(sized, maxHeadBytes: 54)?.kind, .headTooLarge)
        XCTAssertEqual(refusal(sized, maxHeadBytes: 54)?.status, 431)
    }

    // MARK: - Responses

    func testAResponseHeadBecomesFieldsWithoutWhatHTTP2HasNoUseFor() {
        var headers = HeaderFields()
        for (name, value) in [("Server", "nginx"), ("Connection", "keep-alive, X-Hop"), ("X-Hop", "1"), ("Keep-Alive", "timeout=5"),
                              ("Transfer-Encoding", "chunked"), ("Proxy-Authenticate", "Basic"), ("Content-Length", "5"), ("content-length", "5"),
                              ("ETag", "\"x\"")] {
            headers.append(name, value)
        }
        let fields = ForwardedHeads.h2Fields(ResponseHead(status: 200, reason: "OK", headers: headers), via: .http11)
        XCTAssertEqual(fields, [HPACKField(":status", "200"), HPACKField("server", "nginx"), HPACKField("content-length", "5"),
                                HPACKField("etag", "\"x\""), HPACKField("via", "1.1 countersign")])
        let interim = ForwardedHeads.h2Fields(ResponseHead(status: 103, reason: "Early Hints", headers: HeaderFields([HeaderField("Link", "</a>")])), via: nil)
        XCTAssertEqual(interim, [HPACKField(":status", "103"), HPACKField("link", "</a>")], "an interim head gets no Via, as over HTTP/1.1")
        XCTAssertEqual(ForwardedHeads.h2Fields(ResponseHead(status: 204, reason: ""), via: .http2).last, HPACKField("via", "2 countersign"))
    }

    /// A head handed over as fields: the translator takes only the body after it, as framed.
    func testAfterAHandedHeadOnlyTheBodyIsTranslated() throws {
        var translator = H1ToH2Translator(.response(requestMethod: "GET"), maxHeadBytes: 65536)
        XCTAssertFalse(translator.bodyFollows(.chunked))
        let body = "5\r\nhello\r\n0\r\nGrpc-Status: 0\r\n\r\n"
        let (consumed, outputs) = try translate(&translator, body)
        XCTAssertEqual(consumed, body.utf8.count)
        XCTAssertEqual(outputs, [.data(Array("hello".utf8), endStream: false), .trailers([HPACKField("grpc-status", "0")])])
        XCTAssertTrue(translator.isDone)
        var empty = H1ToH2Translator(.response(requestMethod: "HEAD"), maxHeadBytes: 65536)
        XCTAssertTrue(empty.bodyFollows(.none), "a bodiless response ends with its head")
        XCTAssertTrue(empty.isDone)
    }

    private func translate(_ translator: inout H1ToH2Translator, _ wire: String, allowance: Int = .max) throws -> (Int, [H1ToH2Translator.Output]) {
        let bytes = Array(wire.utf8)
        return try bytes.withUnsafeBytes { try translator.translate($0, allowance: allowance) }
    }

    func testFixedLengthResponseDropsConnectionSpecificFields() throws {
        var translator = H1ToH2Translator(.response(requestMethod: "GET"), maxHeadBytes: 65536)
        let wire = "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"
        let (consumed, outputs) = try translate(&translator, wire)
        XCTAssertEqual(consumed, wire.utf8.count)
        XCTAssertEqual(outputs, [
            .head([HPACKField(":status", "200"), HPACKField("content-type", "text/plain"), HPACKField("content-length", "5")], endStream: false),
            .data(Array("hello".utf8), endStream: true),
        ])
        XCTAssertTrue(translator.isDone)
    }

    func testTheWindowBoundsTheDataTaken() throws {
        var translator = H1ToH2Translator(.response(requestMethod: "GET"), maxHeadBytes: 65536)
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"
        let (consumed, outputs) = try translate(&translator, head + "0123456789", allowance: 4)
        XCTAssertEqual(consumed, head.utf8.count + 4, "only what the window allows is consumed")
        XCTAssertEqual(outputs.last, .data(Array("0123".utf8), endStream: false))
        let (_, rest) = try translate(&translator, "456789", allowance: 0)
        XCTAssertEqual(rest, [], "a closed window takes nothing")
        let (_, last) = try translate(&translator, "456789", allowance: 100)
        XCTAssertEqual(last, [.data(Array("456789".utf8), endStream: true)])
    }

    func testChunkedBodyLosesItsFramingAndTrailersEndTheStream() throws {
        var translator = H1ToH2Translator(.response(requestMethod: "GET"), maxHeadBytes: 65536)
        let wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nGrpc-Status: 0\r\n\r\n"
        let (consumed, outputs) = try translate(&translator, wire)
        XCTAssertEqual(consumed, wire.utf8.count)
        XCTAssertEqual(outputs, [.head([HPACKField(":status", "200")], endStream: false), .data(Array("hello".utf8), endStream: false),
                                 .trailers([HPACKField("grpc-status", "0")])])
    }

    func testChunkedWithoutTrailersEndsWithAnEmptyData() throws {
        var translator = H1ToH2Translator(.response(requestMethod: "GET"), maxHeadBytes: 65536)
        let (_, outputs) = try translate(&translator, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        XCTAssertEqual(outputs.last, .data([], endStream: true))
    }

    func testSplitChunkLineWaitsForMore() throws {
        var translator = H1ToH2Translator(.response(requestMethod: "GET"), maxHeadBytes: 65536)
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        let (consumed, _) = try translate(&translator, head + "5\r")
        XCTAssertEqual(consumed, head.utf8.count)
    }

    func testInterimHeadsGoWithoutEndStreamAndBodilessResponsesEndAtTheHead() throws {
        var translator = H1ToH2Translator(.response(requestMethod: "HEAD"), maxHeadBytes: 65536)
        let wire = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n"
        let (consumed, outputs) = try translate(&translator, wire)
        XCTAssertEqual(consumed, wire.utf8.count)
        XCTAssertEqual(outputs, [.head([HPACKField(":status", "100")], endStream: false),
                                 .head([HPACKField(":status", "103"), HPACKField("link", "</s.css>; rel=preload")], endStream: false),
                                 .head([HPACKField(":status", "200"), HPACKField("content-length", "50")], endStream: true)])
    }

    func testA101HeadIsNotPassedOn() throws {
        // HTTP/2 has no 101 (RFC 9113 §8.6); an upgrade never reaches an h2 stream.
        var translator = H1ToH2Translator(.response(requestMethod: "GET"), maxHeadBytes: 65536)
        let (_, outputs) = try translate(&translator, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
        XCTAssertEqual(outputs, [.head([HPACKField(":status", "204")], endStream: true)])
    }

    func testBodyUntilCloseEndsAtEndOfInputAndATruncatedOneIsAnError() throws {
        var untilClose = H1ToH2Translator(.response(requestMethod: "GET"), maxHeadBytes: 65536)
        _ = try translate(&untilClose, "HTTP/1.1 200 OK\r\n\r\nabc")
        XCTAssertEqual(try untilClose.endOfInput(), [.data([], endStream: true)])
        var truncated = H1ToH2Translator(.response(requestMethod: "GET"), maxHeadBytes: 65536)
        _ = try translate(&truncated, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc")
        XCTAssertThrowsError(try truncated.endOfInput())
    }

    func testAMalformedResponseIsAnError() {
        var translator = H1ToH2Translator(.response(requestMethod: "GET"), maxHeadBytes: 65536)
        XCTAssertThrowsError(try translate(&translator, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"))
    }

    // MARK: - The upstream leg: HTTP/1.1 requests out as HTTP/2, HTTP/2 responses back

    func testAnHTTP11RequestBecomesPseudoHeadersWithTrailersAccepted() throws {
        var translator = H1ToH2Translator(.request(scheme: "https"), maxHeadBytes: 65536)
        let wire = "POST /v1/x?y=1 HTTP/1.1\r\nHost: api.example.com\r\nConnection: X-Hop\r\nX-Hop: 1\r\nContent-Length: 2\r\n\r\nok"
        let (consumed, outputs) = try translate(&translator, wire)
        XCTAssertEqual(consumed, wire.utf8.count)
        XCTAssertEqual(outputs, [
            .head([HPACKField(":method", "POST"), HPACKField(":scheme", "https"), HPACKField(":authority", "api.example.com"),
                   HPACKField(":path", "/v1/x?y=1"), HPACKField("content-length", "2"), HPACKField("te", "trailers")], endStream: false),
            .data(Array("ok".utf8), endStream: true),
        ])
        translator.nextMessage()
        let (_, next) = try translate(&translator, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        XCTAssertEqual(next.count, 1, "the next request on the connection is read after nextMessage")
        if case .head(_, let endStream)? = next.first { XCTAssertTrue(endStream) } else { XCTFail("\(next)") }
    }

    func testAChunkedRequestBodyAndItsTrailersBecomeDataAndTrailers() throws {
        var translator = H1ToH2Translator(.request(scheme: "https"), maxHeadBytes: 65536)
        let wire = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 9\r\n\r\n"
        let (_, outputs) = try translate(&translator, wire, allowance: 100)
        XCTAssertEqual(Array(outputs.dropFirst()), [.data(Array("abc".utf8), endStream: false), .trailers([HPACKField("x-sum", "9")])])
    }

    private func responseHead(_ fields: [(String, String)], endStream: Bool, method: String = "GET") -> (String, H2ToH1Translation.BodyEncoding) {
        let (bytes, body) = H2ToH1Translation.responseHead(fields.map { HPACKField($0.0, $0.1) }, endStream: endStream, requestMethod: method)
        return (text(bytes), body)
    }

    func testAnHTTP2ResponseHeadIsFramedForHTTP11() {
        XCTAssertEqual(responseHead([(":status", "200"), ("content-type", "application/grpc")], endStream: false).0,
                       "HTTP/1.1 200 \r\ncontent-type: application/grpc\r\ntransfer-encoding: chunked\r\n\r\n")
        XCTAssertEqual(responseHead([(":status", "200"), ("content-length", "4")], endStream: false).1, .contentLength)
        XCTAssertEqual(responseHead([(":status", "200")], endStream: true).0, "HTTP/1.1 200 \r\ncontent-length: 0\r\n\r\n",
                       "a stream ended with its head has no body; without a length HTTP/1.1 would read until close")
        XCTAssertEqual(responseHead([(":status", "204")], endStream: true).0, "HTTP/1.1 204 \r\n\r\n")
        XCTAssertEqual(responseHead([(":status", "200"), ("content-length", "9")], endStream: true, method: "HEAD").1, .none)
        XCTAssertEqual(responseHead([(":status", "103"), ("link", "</a>")], endStream: false).1, .none, "interim: more heads follow")
    }
}
