import XCTest
@testable import CountersignHTTP

/// HeadParser checks each field line in the same word-at-a-time walk that finds where it ends;
/// `ReferenceHeadParser` checks the same grammar a byte at a time, a pass per rule. They must
/// agree on every input: the head, or the same error kind and detail, or "incomplete".
final class HeadParserAgreementTests: XCTestCase {
    /// The bytes a word scan could mistake for one another: line breaks, controls, DEL, HTAB,
    /// SP, obs-text, the colon, and plain bytes either side of each class boundary.
    private static let specials: [UInt8] = [0x0D, 0x0A, 0x00, 0x09, 0x0B, 0x1F, 0x20, 0x21, 0x7E, 0x7F, 0x80, 0x8D, 0x8A, 0xFF,
                                            0x3A, 0x2D, 0x2F, 0x40, 0x5B, 0x60, 0x7B, 0x22]

    private func assertAgree(request bytes: [UInt8], maxHeadBytes: Int = 65536, file: StaticString = #filePath, line: UInt = #line) {
        let parsed = ReferenceHeadParser.describe(Wire.request(bytes, maxHeadBytes: maxHeadBytes))
        let expected = ReferenceHeadParser.request(bytes, maxHeadBytes: maxHeadBytes)
        XCTAssertEqual(parsed, expected, "for \(ReferenceHeadParser.text(bytes).debugDescription) (limit \(maxHeadBytes))", file: file, line: line)
    }

    private func assertAgree(response bytes: [UInt8], maxHeadBytes: Int = 65536, file: StaticString = #filePath, line: UInt = #line) {
        let parsed = ReferenceHeadParser.describe(Wire.response(bytes, maxHeadBytes: maxHeadBytes))
        let expected = ReferenceHeadParser.response(bytes, maxHeadBytes: maxHeadBytes)
        XCTAssertEqual(parsed, expected, "for \(ReferenceHeadParser.text(bytes).debugDescription) (limit \(maxHeadBytes))", file: file, line: line)
    }

    /// Lines of every length from 0 to 17 (no word, part of one, one, one and a part, two
    /// and a part) with each special byte at each offset, as a value, as a name, and as the
    /// last line of the buffer (where the scan's last word overlaps the one before).
    func testEverySpecialByteAtEveryOffsetOfEveryShortLine() {
        for length in 0...17 {
            let plain = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            for position in -1..<length {
                for byte in Self.specials where position >= 0 || byte == Self.specials[0] {
                    var text = plain
                    if position >= 0 { text[position] = byte }
                    for trailing in [[], Wire.bytes("Y: b\r\n")] {
                        let value = Wire.bytes("GET / HTTP/1.1\r\nHost: a\r\nX-Value: ") + text + Wire.bytes("\r\n") + trailing + Wire.bytes("\r\n")
                        assertAgree(request: value)
                        let name = Wire.bytes("HTTP/1.1 200 OK\r\nA: b\r\n") + text + Wire.bytes(": v\r\n") + trailing + Wire.bytes("\r\n")
                        assertAgree(response: name)
                        let bare = Wire.bytes("HTTP/1.1 200 OK\r\n") + text + Wire.bytes("\r\n\r\n")
                        assertAgree(response: bare)
                    }
                    let target = Wire.bytes("GET /") + text + Wire.bytes(" HTTP/1.1\r\nHost: a\r\n\r\n")
                    assertAgree(request: target)
                    let method = text + Wire.bytes(" / HTTP/1.1\r\nHost: a\r\n\r\n")
                    assertAgree(request: method)
                    // HTTP/1.1 with the byte in it (or after it), cut or padded to the length.
                    var version = Array((Wire.bytes("HTTP/1.1") + plain).prefix(length))
                    if position >= 0 { version[position] = byte }
                    assertAgree(request: Wire.bytes("GET / ") + version + Wire.bytes("\r\nHost: a\r\n\r\n"))
                    let reason = Wire.bytes("HTTP/1.1 200 ") + text + Wire.bytes("\r\nA: b\r\n\r\n")
                    assertAgree(response: reason)
                }
            }
        }
    }

    /// Every cut of a head, with the limit at, before and after each length: the scans must
    /// never read a byte past the limit as if it were there, nor miss one at it.
    func testEveryPrefixAndLimitAgree() {
        let heads = [
            "GET http://origin.test:8080/a/b?c=d HTTP/1.1\r\nHost: origin.test:8080\r\nAccept-Encoding: identity\r\n\r\n",
            "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Fri, 27 Nov 2026 14:44:27 GMT\r\nContent-Type: text/plain\r\n"
                + "Content-Length: 1024\r\nX-Tab:\tx\ty\t\r\nX-Obs: \u{E9}\u{FF}\r\nConnection: keep-alive\r\n\r\nbody",
        ]
        for (index, head) in heads.enumerated() {
            let bytes = Wire.bytes(head)
            for count in 0...bytes.count {
                let prefix = Array(bytes[..<count])
                for limit in [max(1, count - 1), count, count + 1, 65536] {
                    if index == 0 { assertAgree(request: prefix, maxHeadBytes: limit) } else { assertAgree(response: prefix, maxHeadBytes: limit) }
                }
            }
        }
    }

    /// `bytes` offered to a head reader `step` bytes more each time; its first verdict, if any.
    private func trickled<Head>(_ bytes: [UInt8], step: Int, _ read: (inout HeadReader, UnsafeRawBufferPointer) -> HeadParse<Head>) -> HeadParse<Head>? {
        var reader = HeadReader(Head.self == RequestHead.self ? .request : .response)
        var count = 0
        while count < bytes.count {
            count = min(count + step, bytes.count)
            let outcome = Array(bytes[..<count]).withUnsafeBytes { read(&reader, $0) }
            if case .incomplete = outcome { continue }
            return outcome
        }
        return nil
    }

    /// Heads with none to seventy fields (past the room the parser reserves for the usual
    /// few): every field kept, and a fault after any number of them found.
    func testHeadsOfEveryFieldCountAgree() {
        for count in 0...70 {
            let fields = (0..<count).map { "X-Field-\($0): value \($0)\r\n" }.joined()
            assertAgree(request: Wire.bytes("GET / HTTP/1.1\r\nHost: a\r\n" + fields + "\r\n"))
            assertAgree(response: Wire.bytes("HTTP/1.1 200 OK\r\n" + fields + "\r\n"))
            assertAgree(response: Wire.bytes("HTTP/1.1 200 OK\r\n" + fields + "Bad Name: v\r\n\r\n"))
        }
        XCTAssertEqual(acceptRequest("GET / HTTP/1.1\r\n" + (0..<70).map { "F\($0): \($0)\r\n" }.joined() + "\r\n")?.headers["F69"], "69")
    }

    /// Heads mutated at random (a seeded generator, so a failure repeats): bytes replaced,
    /// inserted, removed, the end cut, the limit moved.
    func testMutatedHeadsAgree() {
        var generator = SeededGenerator(state: 0x5CA4_2026)
        func random(_ bound: Int) -> Int { Int.random(in: 0..<max(bound, 1), using: &generator) }
        let requests = [
            "GET http://127.0.0.1:8080/1k HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept-Encoding: identity\r\n\r\n",
            "\r\n\r\nPOST /form HTTP/1.0\r\nHost: a\r\nContent-Length: 3\r\nX-Multi: a,\tb , c\r\n\r\nabc",
            "CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\nProxy-Authorization: Basic YTpi\r\n\r\n",
        ]
        let responses = [
            "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 1024\r\nETag: \"64a-400\"\r\nAccept-Ranges: bytes\r\n\r\n",
            "HTTP/1.0 404 Not Found Here\r\nX-Obs: \u{80}\u{A0}\u{FF}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "HTTP/1.1 204\r\nVary: *\r\n\r\n",
        ]
        for _ in 0..<20000 {
            let isRequest = random(2) == 0
            var bytes = Wire.bytes((isRequest ? requests : responses)[random(3)])
            for _ in 0...random(3) {
                let position = random(bytes.count + 1)
                let byte = random(4) == 0 ? UInt8(random(256)) : Self.specials[random(Self.specials.count)]
                switch random(4) {
                case 0 where position < bytes.count: bytes[position] = byte
                case 1: bytes.insert(byte, at: position)
                case 2 where position < bytes.count: bytes.remove(at: position)
                default: bytes.removeSubrange(position...)
                }
            }
            let limit = random(3) == 0 ? 1 + random(bytes.count + 2) : 65536
            if isRequest { assertAgree(request: bytes, maxHeadBytes: limit) } else { assertAgree(response: bytes, maxHeadBytes: limit) }
            // Arriving a few bytes at a time, the head reader must come to the same verdict.
            let step = 1 + random(9)
            if isRequest {
                let whole = ReferenceHeadParser.describe(Wire.request(bytes, maxHeadBytes: limit))
                XCTAssertEqual(trickled(bytes, step: step) { $0.request(in: $1, maxHeadBytes: limit) }.map(ReferenceHeadParser.describe) ?? "incomplete",
                               whole, "\(ReferenceHeadParser.text(bytes).debugDescription) in steps of \(step) (limit \(limit))")
            } else {
                let whole = ReferenceHeadParser.describe(Wire.response(bytes, maxHeadBytes: limit))
                XCTAssertEqual(trickled(bytes, step: step) { $0.response(in: $1, maxHeadBytes: limit) }.map(ReferenceHeadParser.describe) ?? "incomplete",
                               whole, "\(ReferenceHeadParser.text(bytes).debugDescription) in steps of \(step) (limit \(limit))")
            }
        }
    }
}
