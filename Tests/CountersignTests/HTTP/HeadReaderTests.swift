import XCTest
@testable import CountersignHTTP

/// The incremental head reader: fed byte by byte it decides exactly as the parser does on the
/// whole message, it enforces the limit at exactly `maxHeadBytes`, and it never looks at a
/// byte twice.
final class HeadReaderTests: XCTestCase {
    /// Feeds `bytes` to a reader `step` bytes at a time, as a socket would deliver them,
    /// into a buffer that keeps growing; returns the outcome, the reader and the reads made.
    private func trickle<Head>(_ kind: HeadReader.Kind, _ bytes: [UInt8], step: Int, maxHeadBytes: Int,
                               _ read: (inout HeadReader, UnsafeRawBufferPointer) -> HeadParse<Head>) -> (HeadParse<Head>, HeadReader, reads: Int) {
        var reader = HeadReader(kind)
        var buffered: [UInt8] = []
        var reads = 0
        while buffered.count < bytes.count {
            buffered += bytes[buffered.count..<min(buffered.count + step, bytes.count)]
            reads += 1
            let outcome = buffered.withUnsafeBytes { read(&reader, $0) }
            if case .incomplete = outcome { continue }
            return (outcome, reader, reads)
        }
        return (.incomplete, reader, reads)
    }

    private func trickleRequest(_ bytes: [UInt8], step: Int = 1, maxHeadBytes: Int = 65536) -> (HeadParse<RequestHead>, HeadReader, reads: Int) {
        trickle(.request, bytes, step: step, maxHeadBytes: maxHeadBytes) { $0.request(in: $1, maxHeadBytes: maxHeadBytes) }
    }

    private func trickleResponse(_ bytes: [UInt8], step: Int = 1, maxHeadBytes: Int = 65536) -> HeadParse<ResponseHead> {
        trickle(.response, bytes, step: step, maxHeadBytes: maxHeadBytes) { $0.response(in: $1, maxHeadBytes: maxHeadBytes) }.0
    }

    private func describe<H>(_ parse: HeadParse<H>) -> String {
        switch parse {
        case .incomplete: return "incomplete"
        case .complete(let head, let consumed): return "complete \(head) \(consumed)"
        case .invalid(let error): return "invalid \(error.kind)"
        }
    }

    /// Messages the parser accepts and messages it refuses (one per smuggling rule): fed one
    /// byte at a time, and in uneven steps, the reader ends with the parser's own verdict on
    /// the whole message.
    func testTrickledHeadsDecideAsTheWholeMessage() {
        let requests = [
            "GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\nAccept: */*\r\n\r\n",
            "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\nBODY",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc",
            "GET / HTTP/1.1\r\nHost: a\r\n X-Folded: yes\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n",
            "GET / HTTP/1.1\r\nHost : a\r\n\r\n",
            "GET / HTTP/1.1\r\nX: a\u{01}b\r\n\r\n",
            "GET / HTTP/1.1\n\n",
            "GET / HTTP/2.0\r\n\r\n",
        ]
        for text in requests {
            assertTrickledDecidesAsWhole(Wire.request(Wire.bytes(text)), text) { trickleRequest(Wire.bytes(text), step: $0).0 }
        }
        let responses = [
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
            "\r\nHTTP/1.1 200 OK\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX: y\n\r\n",
        ]
        for text in responses {
            assertTrickledDecidesAsWhole(Wire.response(Wire.bytes(text)), text) { trickleResponse(Wire.bytes(text), step: $0) }
        }
    }

    private func assertTrickledDecidesAsWhole<Head>(_ whole: HeadParse<Head>, _ text: String, _ trickled: (Int) -> HeadParse<Head>,
                                                    line: UInt = #line) {
        for step in [1, 2, 3, 7, 64] {
            XCTAssertEqual(describe(trickled(step)), describe(whole), "\(text.debugDescription) in steps of \(step)", line: line)
        }
    }

    /// A bare LF is refused as soon as it arrives, not when the limit or the timeout is reached.
    func testMalformedByteIsRefusedWhenItArrives() {
        let text = "GET / HTTP/1.1\r\nHost: a\nrest-of-a-long-head-never-sent"
        let (outcome, reader, _) = trickleRequest(Wire.bytes(text))
        XCTAssertEqual(describe(outcome), "invalid bareLF")
        XCTAssertEqual(reader.totalScanned, "GET / HTTP/1.1\r\nHost: a\n".utf8.count)
    }

    func testLimitIsEnforcedAtExactlyMaxBytes() {
        let prefix = "GET / HTTP/1.1\r\nX: "
        let suffix = "\r\n\r\n"
        let limit = 100
        let exact = prefix + String(repeating: "a", count: limit - prefix.utf8.count - suffix.utf8.count) + suffix
        XCTAssertEqual(exact.utf8.count, limit)
        guard case .complete(_, let consumed) = trickleRequest(Wire.bytes(exact), maxHeadBytes: limit).0 else {
            return XCTFail("a head of exactly max_header_bytes must be accepted")
        }
        XCTAssertEqual(consumed, limit)
        let over = prefix + String(repeating: "a", count: limit - prefix.utf8.count - suffix.utf8.count + 1) + suffix
        for step in [1, 1000] {
            XCTAssertEqual(describe(trickleRequest(Wire.bytes(over), step: step, maxHeadBytes: limit).0), "invalid headTooLarge")
        }
        // Refused once max bytes arrived without an end: the reader never waits for more.
        let endless = String(repeating: "a", count: limit * 3)
        let (outcome, reader, reads) = trickleRequest(Wire.bytes(endless), maxHeadBytes: limit)
        XCTAssertEqual(describe(outcome), "invalid headTooLarge")
        XCTAssertEqual(reads, limit)
        XCTAssertEqual(reader.totalScanned, limit)
    }

    /// The blank line split across reads in every possible place.
    func testBlankLineSplitAcrossReadsIsFound() {
        let head = Wire.bytes("GET / HTTP/1.1\r\nHost: a")
        for split in 1...3 {
            var reader = HeadReader(.request)
            let blank: [UInt8] = [CR, LF, CR, LF]
            var buffered = head + blank.prefix(split)
            let first = buffered.withUnsafeBytes { reader.request(in: $0, maxHeadBytes: 1000) }
            XCTAssertEqual(describe(first), "incomplete", "split after \(split)")
            buffered += blank.dropFirst(split) + Wire.bytes("BODY")
            guard case .complete(let parsed, let consumed) = buffered.withUnsafeBytes({ reader.request(in: $0, maxHeadBytes: 1000) }) else {
                XCTFail("split after \(split)"); continue
            }
            XCTAssertEqual(consumed, head.count + 4)
            XCTAssertEqual(parsed.headers["Host"], "a")
        }
    }

    /// Each byte is examined once however the head is cut into reads: a 60 KiB head
    /// trickled in byte by byte costs as many scanned bytes as the head has.
    func testWorkIsLinearInTheHeadSize() {
        let field = "X-Filler: " + String(repeating: "v", count: 90) + "\r\n"
        let text = "GET / HTTP/1.1\r\n" + String(repeating: field, count: 600) + "\r\n"
        let bytes = Wire.bytes(text)
        let (outcome, reader, reads) = trickleRequest(bytes, maxHeadBytes: 65536)
        guard case .complete(let head, let consumed) = outcome else { return XCTFail(describe(outcome)) }
        XCTAssertEqual(consumed, bytes.count)
        XCTAssertEqual(head.headers.count, 600)
        XCTAssertEqual(reads, bytes.count)
        XCTAssertEqual(reader.totalScanned, bytes.count)
    }

    /// After a head, the reader starts over for the next one in the same buffer.
    func testReaderStartsOverAfterEachHead() {
        var reader = HeadReader(.response)
        var buffered = Wire.bytes("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
        guard case .complete(let interim, let consumed) = buffered.withUnsafeBytes({ reader.response(in: $0, maxHeadBytes: 1000) }) else {
            return XCTFail("no interim head")
        }
        XCTAssertEqual(interim.status, 100)
        buffered.removeFirst(consumed)
        guard case .complete(let final, _) = buffered.withUnsafeBytes({ reader.response(in: $0, maxHeadBytes: 1000) }) else {
            return XCTFail("no final head")
        }
        XCTAssertEqual(final.status, 204)
    }
}
