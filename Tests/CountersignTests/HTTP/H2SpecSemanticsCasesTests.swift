import XCTest
@testable import CountersignHTTP

/// h2spec's server cases for HTTP semantics (`http2/` 8.x), HPACK (`hpack/`) and the generic
/// acceptance cases (`generic/`), each driven through the machine directly. The `generic/5`
/// HPACK representations are also covered by HPACKAppendixCTests and HPACKTestCaseCorpusTests.
final class H2SpecSemanticsCasesTests: XCTestCase {
    private func requestVerdict(_ pairs: [(String, String)], endStream: Bool = true) -> H2Harness.Verdict {
        var h = H2Harness.server()
        return h.request(1, pairs, endStream: endStream).verdict
    }

    private let get = H2Harness.get

    // 8.1 #1: a second HEADERS without END_STREAM.
    func test8_1_1_ASecondHeadWithoutEndStreamIsAStreamError() {
        var h = H2Harness.server()
        _ = h.request(1, H2Harness.post, endStream: false)
        XCTAssertEqual(h.request(1, [("x-trailer", "1")], endStream: false).verdict, .stream(.protocolError))
    }

    // 8.1.2 #1: upper-case names.
    func test8_1_2_1_UpperCaseNamesAreMalformed() {
        XCTAssertEqual(requestVerdict(get + [("X-Upper", "1")]), .stream(.protocolError))
    }

    // 8.1.2.1 #1-#4: pseudo-header fields.
    func test8_1_2_1_PseudoHeaderRules() {
        XCTAssertEqual(requestVerdict(get + [(":custom", "1")]), .stream(.protocolError), "unknown pseudo")
        XCTAssertEqual(requestVerdict(get + [(":status", "200")]), .stream(.protocolError), "response pseudo")
        XCTAssertEqual(requestVerdict([(":method", "GET"), (":scheme", "https"), ("x-a", "1"), (":path", "/"), (":authority", "a")]), .stream(.protocolError), "after a regular field")
        var h = H2Harness.server()
        _ = h.request(1, H2Harness.post, endStream: false)
        XCTAssertEqual(h.request(1, [(":method", "POST")], endStream: true).verdict, .stream(.protocolError), "pseudo in trailers")
    }

    // 8.1.2.2 #1 #2: connection-specific fields, te other than trailers.
    func test8_1_2_2_ConnectionSpecificFields() {
        for name in ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"] {
            XCTAssertEqual(requestVerdict(get + [(name, "x")]), .stream(.protocolError), name)
        }
        XCTAssertEqual(requestVerdict(get + [("te", "gzip")]), .stream(.protocolError))
        XCTAssertEqual(requestVerdict(get + [("te", "trailers")]), .fine)
    }

    // 8.1.2.3 #1-#7: request pseudo-headers present, once, :path not empty.
    func test8_1_2_3_RequestPseudoHeaders() {
        XCTAssertEqual(requestVerdict([(":method", "GET"), (":scheme", "https"), (":path", ""), (":authority", "a")]), .stream(.protocolError))
        XCTAssertEqual(requestVerdict([(":scheme", "https"), (":path", "/"), (":authority", "a")]), .stream(.protocolError))
        XCTAssertEqual(requestVerdict([(":method", "GET"), (":path", "/"), (":authority", "a")]), .stream(.protocolError))
        XCTAssertEqual(requestVerdict([(":method", "GET"), (":scheme", "https"), (":authority", "a")]), .stream(.protocolError))
        for name in [":method", ":scheme", ":path"] {
            let duplicated = get.firstIndex { $0.0 == name }.map { Array(get[...$0]) + [get[$0]] + Array(get[($0 + 1)...]) }!
            XCTAssertEqual(requestVerdict(duplicated), .stream(.protocolError), name)
        }
    }

    // 8.1.2.6 #1 #2: content-length against the DATA received.
    func test8_1_2_6_ContentLengthMustMatchTheData() {
        var h = H2Harness.server()
        _ = h.request(1, H2Harness.post + [("content-length", "1")], endStream: false)
        XCTAssertEqual(h.send(.data(stream: 1, data: Array("test".utf8), endStream: true)).verdict, .stream(.protocolError))
        h = H2Harness.server()
        _ = h.request(1, H2Harness.post + [("content-length", "5")], endStream: false)
        XCTAssertEqual(h.send(.data(stream: 1, data: Array("te".utf8), endStream: false)).verdict, .fine)
        XCTAssertEqual(h.send(.data(stream: 1, data: Array("st".utf8), endStream: true)).verdict, .stream(.protocolError))
        h = H2Harness.server()
        _ = h.request(1, H2Harness.post + [("content-length", "4")], endStream: false)
        XCTAssertEqual(h.send(.data(stream: 1, data: Array("te".utf8), endStream: false), .data(stream: 1, data: Array("st".utf8), endStream: true)).verdict, .fine)
    }

    // 8.2 #1: PUSH_PROMISE from a client.
    func test8_2_1_PushPromiseToAServerIsAProtocolError() {
        var h = H2Harness.server()
        _ = h.request(1, H2Harness.post, endStream: false)
        XCTAssertEqual(h.send(.pushPromise(stream: 1, promised: 2, fragment: [0x82], endHeaders: true)).verdict, .connection(.protocolError))
    }

    // RFC 9113 §8.3.1: :authority and Host must agree; no userinfo.
    func testAuthorityAndHostMustAgree() {
        XCTAssertEqual(requestVerdict(get + [("host", "example.com")]), .fine)
        XCTAssertEqual(requestVerdict(get + [("host", "evil.example")]), .stream(.protocolError))
        XCTAssertEqual(requestVerdict([(":method", "GET"), (":scheme", "https"), (":path", "/"), (":authority", "user:pw@example.com")]), .stream(.protocolError))
        XCTAssertEqual(requestVerdict([(":method", "GET"), (":scheme", "https"), (":path", "/")]), .stream(.protocolError), "no authority at all")
        XCTAssertEqual(requestVerdict([(":method", "CONNECT"), (":authority", "example.com:443")], endStream: false), .fine)
        XCTAssertEqual(requestVerdict([(":method", "CONNECT"), (":authority", "example.com:443"), (":path", "/")], endStream: false), .stream(.protocolError))
        XCTAssertEqual(requestVerdict(get + [("x-a", "line\r\nx-injected: 1")]), .stream(.protocolError), "CR LF in a value")
    }

    // hpack 2.3.3 #1 #2, 4.2 #1, 5.2 #1-#3, 6.1 #1, 6.3 #1: decoding errors are COMPRESSION_ERROR.
    func testHPACKDecodingErrorsAreCompressionErrors() {
        let blocks: [(String, [UInt8])] = [
            ("2.3.3 #1 index past the tables", [0x82, 0x86, 0x84, 0xBE + 10]),
            ("2.3.3 #2 literal name index past the tables", [0x82, 0x86, 0x84, 0x7F, 0x10, 0x01, 0x61]),
            ("4.2 #1 size update at the end", [0x82, 0x86, 0x84, 0x41, 0x01, 0x61, 0x20]),
            ("5.2 #1 padding longer than 7 bits", [0x82, 0x86, 0x84, 0x41, 0x82, 0x1F, 0xFF]),
            ("5.2 #2 padding by zero", [0x82, 0x86, 0x84, 0x41, 0x81, 0x18]),
            ("5.2 #3 EOS in the string", [0x82, 0x86, 0x84, 0x41, 0x84, 0xFF, 0xFF, 0xFF, 0xFF]),
            ("6.1 #1 index 0", [0x80]),
            ("6.3 #1 size update above SETTINGS_HEADER_TABLE_SIZE", [0x3F, 0xE2, 0x1F, 0x82, 0x86, 0x84, 0x41, 0x01, 0x61]),
        ]
        for (name, block) in blocks {
            var h = H2Harness.server()
            XCTAssertEqual(h.send(.headers(stream: 1, fragment: block, endStream: true, endHeaders: true)).verdict, .connection(.compressionError), name)
        }
    }

    // generic 1, 3.1-3.9, 4 #1-#4: what a server must accept.
    func testGenericAcceptance() throws {
        var h = H2Harness.server()
        XCTAssertEqual(h.send(.priority(stream: 9, H2Priority(exclusive: true, dependency: 0, weight: 255))).verdict, .fine, "generic 2 #1, 3.3 #1-#4")
        XCTAssertEqual(h.request(1, H2Harness.get).events.count, 1, "generic 3.3 #5: a lower stream after PRIORITY on an idle one; 4 #1 GET")
        XCTAssertEqual(h.request(3, [(":method", "HEAD")] + Array(H2Harness.get.dropFirst())).verdict, .fine, "generic 4 #2 HEAD")
        let fragment = h.block(H2Harness.post)
        let padded = h.send(.headers(stream: 5, fragment: fragment, endStream: false, endHeaders: true, priority: H2Priority(dependency: 3, weight: 10), padding: 4),
                            .data(stream: 5, data: Array("ab".utf8), endStream: false, padding: 6),
                            .data(stream: 5, data: Array("cd".utf8), endStream: false))
        XCTAssertEqual(padded.verdict, .fine, "generic 3.1 #1-#3, 3.2 #1-#3, 4 #3 POST")
        let trailers = h.block([("x-checksum", "abc")])
        XCTAssertEqual(h.send(.headers(stream: 5, fragment: trailers, endStream: true, endHeaders: true)).events,
                       [.trailers(stream: 5, fields: fields([("x-checksum", "abc")]))], "generic 4 #4 trailers")
        XCTAssertEqual(h.send(.windowUpdate(stream: 0, increment: 1), .windowUpdate(stream: 5, increment: 1),
                              .priority(stream: 5, H2Priority(dependency: 0, weight: 1)), .rstStream(stream: 5, .cancel),
                              .priority(stream: 5, H2Priority(dependency: 0, weight: 1))).verdict, .fine, "generic 2 #2-#5, 3.4, 3.9")
        XCTAssertEqual(h.send(.settings(ack: false, [H2Setting(H2Setting.maxConcurrentStreams, 10)])).frames, [.settings(ack: true, [])], "generic 3.5")
        XCTAssertEqual(h.send(.ping(ack: false, opaque: 3)).frames, [.ping(ack: true, opaque: 3)], "generic 3.7")
        XCTAssertEqual(h.send(.goaway(lastStream: 0, .noError, debug: [])).verdict, .fine, "generic 3.8")
    }
}
