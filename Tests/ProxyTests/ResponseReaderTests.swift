import CountersignHTTP
import XCTest
@testable import CountersignProxy

/// The "head, then its body" reader of the exchange, the token fetch and the parent's CONNECT answer.
final class ResponseReaderTests: XCTestCase {
    private func text(_ buffer: EventBuffer) -> String {
        var bytes: [UInt8] = []
        buffer.forEachSegment { bytes.append(contentsOf: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func status(_ read: ResponseReader.HeadRead) -> String {
        switch read {
        case .incomplete: return "incomplete"
        case .invalid(let error): return "invalid \(error.kind)"
        case .complete(let head): return "\(head.status)"
        }
    }

    func testInterimHeadsAreDroppedAndTheBodyFollowsItsFraming() throws {
        let input = try XCTUnwrap(OwnedEventBuffer()), body = try XCTUnwrap(OwnedEventBuffer())
        var reader = ResponseReader(maxHeadBytes: 1024)
        input.buffer.add("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Le")
        XCTAssertEqual(status(reader.finalHead(from: input.buffer)), "incomplete", "the interim is dropped, the final head is not complete yet")
        input.buffer.add("ngth: 5\r\n\r\nhel")
        XCTAssertEqual(status(reader.finalHead(from: input.buffer)), "200")
        try reader.expectBody(of: ResponseHead(status: 200, reason: "OK", headers: HeaderFields([HeaderField("Content-Length", "5")])), requestMethod: "POST", output: .raw)
        guard case .waiting = reader.body(from: input.buffer, to: body.buffer, room: .max).progress else { return XCTFail("the body is not complete") }
        input.buffer.add("loNEXT")
        guard case .finished = reader.body(from: input.buffer, to: body.buffer, room: .max).progress else { return XCTFail("the body is complete") }
        XCTAssertEqual(text(body.buffer), "hello")
        XCTAssertEqual(text(input.buffer), "NEXT", "what follows the body stays")
        XCTAssertFalse(reader.bodyEndsAtClose)
    }

    func testChunkedBodiesAreDecodedAndUnframedOnesEndAtClose() throws {
        let input = try XCTUnwrap(OwnedEventBuffer()), body = try XCTUnwrap(OwnedEventBuffer())
        var reader = ResponseReader(maxHeadBytes: 1024)
        input.buffer.add("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        XCTAssertEqual(status(reader.finalHead(from: input.buffer)), "200")
        try reader.expectBody(of: ResponseHead(status: 200, reason: "OK", headers: HeaderFields([HeaderField("Transfer-Encoding", "chunked")])), requestMethod: "POST", output: .raw)
        guard case .finished = reader.body(from: input.buffer, to: body.buffer, room: .max).progress else { return XCTFail("the body is complete") }
        XCTAssertEqual(text(body.buffer), "abc")

        var unframed = ResponseReader(maxHeadBytes: 1024)
        input.buffer.add("HTTP/1.1 200 OK\r\n\r\n{}")
        XCTAssertEqual(status(unframed.finalHead(from: input.buffer)), "200")
        try unframed.expectBody(of: ResponseHead(status: 200, reason: "OK"), requestMethod: "POST", output: .raw)
        XCTAssertTrue(unframed.bodyEndsAtClose)
        unframed.restOfBody(from: input.buffer, to: body.buffer)
        XCTAssertEqual(text(body.buffer), "abc{}", "at the connection's end, what is left is the body")
        XCTAssertThrowsError(try unframed.expectBody(of: ResponseHead(status: 200, reason: "OK", headers: HeaderFields([
            HeaderField("Content-Length", "5"), HeaderField("Content-Length", "6")])), requestMethod: "POST", output: .raw), "a framing that cannot be read is refused")
    }

    func testTheHeadLimitAndTheNextAnswerOnTheSameConnection() throws {
        let input = try XCTUnwrap(OwnedEventBuffer())
        var reader = ResponseReader(maxHeadBytes: 100)
        input.buffer.add("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(status(reader.finalHead(from: input.buffer)), "407")
        input.buffer.add("HTTP/1.1 200 Connection established\r\n\r\n")
        XCTAssertEqual(status(reader.finalHead(from: input.buffer)), "200", "a second CONNECT's answer is read by the same reader")
        input.buffer.add("HTTP/1.1 200 OK\r\nX-Long: " + String(repeating: "x", count: 100) + "\r\n\r\n")
        XCTAssertEqual(status(reader.finalHead(from: input.buffer)), "invalid headTooLarge")
    }

    /// The exchange sees every head (it forwards the 1xx), and names each body's framing itself.
    func testInterimHeadsForTheExchangeAndADroppedChallengeBody() throws {
        let input = try XCTUnwrap(OwnedEventBuffer()), trash = try XCTUnwrap(OwnedEventBuffer()), body = try XCTUnwrap(OwnedEventBuffer())
        var reader = ResponseReader(maxHeadBytes: 1024)
        var arrays = HeadArrays()
        input.buffer.add("HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n4\r\ndeny\r\n")
        XCTAssertEqual(status(reader.head(from: input.buffer, arrays: &arrays)), "103")
        XCTAssertEqual(status(reader.head(from: input.buffer, arrays: &arrays)), "401")
        reader.expectBody(.chunked, output: .raw)
        guard case .waiting = reader.discardBody(from: input.buffer, through: trash.buffer) else { return XCTFail("the last chunk has not come") }
        XCTAssertEqual(trash.buffer.count, 0, "what is dropped is not kept")
        input.buffer.add("0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        guard case .finished = reader.discardBody(from: input.buffer, through: trash.buffer) else { return XCTFail("the challenge's body ended") }
        XCTAssertEqual(status(reader.head(from: input.buffer, arrays: &arrays)), "200", "the retry's answer follows on the same connection")
        reader.expectBody(.contentLength(2), output: .raw)
        let (progress, moved) = reader.body(from: input.buffer, to: body.buffer, room: .max)
        guard case .finished = progress else { return XCTFail("the body is complete") }
        XCTAssertEqual(text(body.buffer), "ok")
        XCTAssertEqual(moved, 2, "what the access log counts")
    }

    /// The parent's 407 to CONNECT: its chunked body, arriving in pieces, is dropped before
    /// the second CONNECT's answer is read on the same connection.
    func testAParentsChunked407BodyIsDroppedBeforeTheNextAnswer() throws {
        let input = try XCTUnwrap(OwnedEventBuffer()), trash = try XCTUnwrap(OwnedEventBuffer())
        var reader = ConnectAnswerReader(maxHeadBytes: 1024)
        input.buffer.add("HTTP/1.1 407 Proxy Authentication Required\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123")
        guard case .connectAnswered(let head)? = reader.event(for: .connectAnswer, from: input.buffer, trash: trash.buffer) else { return XCTFail("the 407") }
        XCTAssertEqual(head.status, 407)
        reader.expectChallengeBody(.chunked)
        XCTAssertNil(reader.event(for: .challengeBody, from: input.buffer, trash: trash.buffer), "the body goes on")
        input.buffer.add("456789abcdef\r\n0\r\n\r\n")
        guard case .challengeBodyDiscarded? = reader.event(for: .challengeBody, from: input.buffer, trash: trash.buffer) else { return XCTFail("dropped whole") }
        XCTAssertEqual(input.buffer.count, 0)
        input.buffer.add("HTTP/1.1 200 Connection established\r\n\r\n")
        guard case .connectAnswered(let second)? = reader.event(for: .connectAnswer, from: input.buffer, trash: trash.buffer) else { return XCTFail("the 200") }
        XCTAssertEqual(second.status, 200)
        input.buffer.add("HTTP/1.1 407 Proxy Authentication Required\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
        _ = reader.event(for: .connectAnswer, from: input.buffer, trash: trash.buffer)
        reader.expectChallengeBody(.chunked)
        guard case .challengeBodyInvalid? = reader.event(for: .challengeBody, from: input.buffer, trash: trash.buffer) else { return XCTFail("a bad chunk line") }
    }
}
