import XCTest
@testable import CountersignProxy

/// The "head, then its body" reader of the token fetch and the parent's CONNECT answer.
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
        var reader = ResponseReader(maxHeadBytes: 1024, requestMethod: "POST")
        input.buffer.add("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Le")
        XCTAssertEqual(status(reader.head(from: input.buffer)), "incomplete", "the interim is dropped, the final head is not complete yet")
        input.buffer.add("ngth: 5\r\n\r\nhel")
        XCTAssertEqual(status(reader.head(from: input.buffer)), "200")
        guard case .waiting = reader.body(from: input.buffer, to: body.buffer, room: .max) else { return XCTFail("the body is not complete") }
        input.buffer.add("loNEXT")
        guard case .finished = reader.body(from: input.buffer, to: body.buffer, room: .max) else { return XCTFail("the body is complete") }
        XCTAssertEqual(text(body.buffer), "hello")
        XCTAssertEqual(text(input.buffer), "NEXT", "what follows the body stays")
        XCTAssertFalse(reader.bodyEndsAtClose)
    }

    func testChunkedBodiesAreDecodedAndUnframedOnesEndAtClose() throws {
        let input = try XCTUnwrap(OwnedEventBuffer()), body = try XCTUnwrap(OwnedEventBuffer())
        var reader = ResponseReader(maxHeadBytes: 1024, requestMethod: "POST")
        input.buffer.add("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        XCTAssertEqual(status(reader.head(from: input.buffer)), "200")
        guard case .finished = reader.body(from: input.buffer, to: body.buffer, room: .max) else { return XCTFail("the body is complete") }
        XCTAssertEqual(text(body.buffer), "abc")

        var unframed = ResponseReader(maxHeadBytes: 1024, requestMethod: "POST")
        input.buffer.add("HTTP/1.1 200 OK\r\n\r\n{}")
        XCTAssertEqual(status(unframed.head(from: input.buffer)), "200")
        XCTAssertTrue(unframed.bodyEndsAtClose)
    }

    func testTheHeadLimitAndTheNextAnswerOnTheSameConnection() throws {
        let input = try XCTUnwrap(OwnedEventBuffer())
        var reader = ResponseReader(maxHeadBytes: 100, requestMethod: "CONNECT")
        input.buffer.add("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(status(reader.head(from: input.buffer)), "407")
        input.buffer.add("HTTP/1.1 200 Connection established\r\n\r\n")
        XCTAssertEqual(status(reader.head(from: input.buffer)), "200", "a second CONNECT's answer is read by the same reader")
        input.buffer.add("HTTP/1.1 200 OK\r\nX-Long: " + String(repeating: "x", count: 100) + "\r\n\r\n")
        XCTAssertEqual(status(reader.head(from: input.buffer)), "invalid headTooLarge")
    }
}
