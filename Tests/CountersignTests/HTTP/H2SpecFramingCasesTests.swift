import XCTest
@testable import CountersignHTTP

/// h2spec's server cases (github:summerwind/h2spec, `http2/` sections 3.5 to 6.4; its section
/// numbers are RFC 7540's), each driven through the machine directly. Where another test covers
/// a case it is named here:
/// - 5.1 #1-#13 (stream states): H2ConnectionStateTests.testEveryStateAgainstEveryFrame
/// - 4.1 #1-#3, 6.1 #1 #3, 6.2 #3 #4, 6.3 #1 #2, 6.4 #1 #3, 6.5 #1-#3, 6.7 #3 #4, 6.8 #1, 6.9 #3 and
///   6.10 #3 are frame rules: H2FrameTests, and again end to end below where the answer matters.
final class H2SpecFramingCasesTests: XCTestCase {
    private func verdict(_ frames: H2Frame...) -> H2Harness.Verdict {
        var h = H2Harness.server()
        var bytes: [UInt8] = []
        for frame in frames { H2FrameWriter.write(frame, into: &bytes) }
        return h.feed(bytes).verdict
    }

    private func raw(type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        H2FrameTests.raw(type: type, flags: flags, stream: stream, payload)
    }

    private func answersPing(_ h: inout H2Harness) -> Bool {
        h.send(.ping(ack: false, opaque: 7)).frames.contains(.ping(ack: true, opaque: 7))
    }

    // 3.5 #1: the server's preface is a SETTINGS frame, first.
    func test3_5_1_TheServerPrefaceIsSettings() {
        let h = H2Harness(role: .server, limits: H2Limits(maxConcurrentStreams: 7))
        guard case .settings(false, let settings)? = h.greeting.frames.first else { return XCTFail("\(h.greeting.frames)") }
        XCTAssertTrue(settings.contains(H2Setting(H2Setting.maxConcurrentStreams, 7)))
    }

    // 3.5 #2: an invalid preface ends the connection.
    func test3_5_2_AnInvalidPrefaceClosesTheConnection() {
        var h = H2Harness(role: .server, limits: H2Limits())
        let outcome = h.feed(Array("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n".utf8))
        XCTAssertEqual(outcome.verdict, .connection(.protocolError))
        XCTAssertTrue(outcome.events.contains { if case .close(.protocolError, _) = $0 { return true }; return false })
    }

    // 3.5 (RFC 9113 §3.4): the preface must be followed by SETTINGS.
    func test3_5_ThePrefaceFollowedByAnotherFrameIsAProtocolError() {
        var h = H2Harness(role: .server, limits: H2Limits())
        XCTAssertEqual(h.feed(H2FrameReader.clientPreface + H2Harness.frameBytes(.ping(ack: false, opaque: 1))).verdict, .connection(.protocolError))
    }

    // 4.1 #1-#3: unknown type, undefined flags, reserved bit: ignored, the connection goes on.
    func test4_1_UnknownTypeUndefinedFlagsReservedBitAreIgnored() {
        var h = H2Harness.server()
        XCTAssertEqual(h.feed(raw(type: 0xEE, stream: 0, [1, 2])).verdict, .fine)
        XCTAssertTrue(h.feed(raw(type: H2FrameType.ping, flags: 0xFE, stream: 0, [0, 0, 0, 0, 0, 0, 0, 9])).frames.contains(.ping(ack: true, opaque: 9)))
        XCTAssertEqual(h.feed(raw(type: H2FrameType.windowUpdate, stream: 0x8000_0000, [0x80, 0, 0, 1])).verdict, .fine)
        XCTAssertTrue(answersPing(&h))
    }

    // 4.2 #1: a DATA frame of 2^14 octets is received.
    func test4_2_1_ADataFrameOf16384OctetsIsAccepted() {
        var h = H2Harness.server()
        _ = h.request(1, H2Harness.post, endStream: false)
        let outcome = h.send(.data(stream: 1, data: [UInt8](repeating: 0x61, count: 16384), endStream: true))
        XCTAssertEqual(outcome.verdict, .fine)
        XCTAssertTrue(outcome.events.contains(.data(stream: 1, [UInt8](repeating: 0x61, count: 16384), endStream: true)))
    }

    // 4.2 #2 #3: DATA and HEADERS above SETTINGS_MAX_FRAME_SIZE.
    func test4_2_2and3_FramesAboveTheMaximumSizeAreFrameSizeErrors() {
        var h = H2Harness.server()
        _ = h.request(1, H2Harness.post, endStream: false)
        XCTAssertEqual(h.feed(raw(type: H2FrameType.data, stream: 1, [UInt8](repeating: 0, count: 16385))).verdict, .connection(.frameSizeError))
        var block: [UInt8] = [0x82, 0x87, 0x84, 0x41, 0x01, 0x61]
        for _ in 0..<3000 { block += [0x40, 0x01, 0x78, 0x01, 0x79] } // 15 000 octets of x: y
        block += [UInt8](repeating: 0x82, count: 1400)
        XCTAssertEqual(verdict(.headers(stream: 1, fragment: block, endStream: true, endHeaders: true)), .connection(.frameSizeError))
    }

    // 4.3 #1: an undecodable header block is a COMPRESSION_ERROR.
    func test4_3_1_AnInvalidHeaderBlockIsACompressionError() {
        XCTAssertEqual(verdict(.headers(stream: 1, fragment: [0x82, 0x86, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], endStream: true, endHeaders: true)),
                       .connection(.compressionError))
    }

    // 4.3 #2 #3, 6.2 #1 #2, 5.5 #2: nothing but CONTINUATION on the same stream inside a header block.
    func test4_3and6_2_AnotherFrameInsideAHeaderBlockIsAProtocolError() {
        let open = H2Frame.headers(stream: 1, fragment: [0x82, 0x87, 0x84], endStream: true, endHeaders: false)
        XCTAssertEqual(verdict(open, .priority(stream: 1, H2Priority(dependency: 0, weight: 1))), .connection(.protocolError))
        XCTAssertEqual(verdict(open, .headers(stream: 3, fragment: [0x82], endStream: true, endHeaders: true)), .connection(.protocolError))
        XCTAssertEqual(verdict(open, .unknown(type: 0xEE, stream: 0)), .connection(.protocolError))
        XCTAssertEqual(verdict(open, .continuation(stream: 3, fragment: [0x41, 0x01, 0x61], endHeaders: true)), .connection(.protocolError))
    }

    // 5.1.1 #1 #2: client streams are odd and only grow.
    func test5_1_1_EvenAndDecreasingStreamIdentifiersAreProtocolErrors() {
        var h = H2Harness.server()
        XCTAssertEqual(h.request(2).verdict, .connection(.protocolError))
        h = H2Harness.server()
        XCTAssertEqual(h.request(5).verdict, .fine)
        XCTAssertEqual(h.request(3).verdict, .connection(.protocolError))
    }

    // 5.1.2 #1: streams beyond our SETTINGS_MAX_CONCURRENT_STREAMS are refused, the others go on.
    func test5_1_2_StreamsAboveTheConcurrencyLimitAreRefused() {
        var h = H2Harness.server(H2Limits(maxConcurrentStreams: 2))
        XCTAssertEqual(h.request(1, H2Harness.post, endStream: false).verdict, .fine)
        XCTAssertEqual(h.request(3, H2Harness.post, endStream: false).verdict, .fine)
        XCTAssertEqual(h.request(5, H2Harness.post, endStream: false).verdict, .stream(.refusedStream))
        XCTAssertEqual(h.machine.streamState(3), .open)
        _ = h.send(.rstStream(stream: 1, .cancel))
        XCTAssertEqual(h.request(7).verdict, .fine, "room again once a stream ends")
    }

    // 5.3.1 #1 #2: a stream that depends on itself; the block is still decoded (the next one uses its table entry).
    func test5_3_1_AStreamDependingOnItselfIsAStreamError() {
        var h = H2Harness.server()
        let fragment = h.block(H2Harness.get + [("x-indexed", "kept")])
        XCTAssertEqual(h.send(.headers(stream: 1, fragment: fragment, endStream: true, endHeaders: true, priority: H2Priority(dependency: 1, weight: 1))).verdict,
                       .stream(.protocolError))
        let outcome = h.request(3, H2Harness.get + [("x-indexed", "kept")])
        XCTAssertEqual(outcome.verdict, .fine, "the HPACK context stayed in step")
        XCTAssertEqual(h.send(.priority(stream: 5, H2Priority(dependency: 5, weight: 1))).verdict, .stream(.protocolError))
    }

    // 5.4.1 #1 #2: a connection error sends GOAWAY, then closes.
    func test5_4_1_AConnectionErrorSendsGoawayThenCloses() {
        var h = H2Harness.server()
        _ = h.request(1)
        let outcome = h.feed(raw(type: H2FrameType.ping, stream: 0, [0, 0, 0, 0, 0, 0]))
        XCTAssertEqual(outcome.frames, [.goaway(lastStream: 1, .frameSizeError, debug: Array("PING of 6 octets".utf8))])
        XCTAssertEqual(outcome.events.last, .close(.frameSizeError, reason: "PING of 6 octets"))
        XCTAssertTrue(h.machine.isClosed)
        XCTAssertTrue(h.feed(H2Harness.frameBytes(.ping(ack: false, opaque: 1))).frames.isEmpty, "nothing is read after")
    }

    // 5.5 #1: unknown extension frames are ignored.
    func test5_5_1_UnknownExtensionFramesAreIgnored() {
        var h = H2Harness.server()
        XCTAssertEqual(h.send(.unknown(type: 0xFF, stream: 1)).verdict, .fine)
        XCTAssertTrue(answersPing(&h))
    }

    // 6.1 #1 #2 #3.
    func test6_1_DataRules() {
        XCTAssertEqual(verdict(.data(stream: 0, data: [1], endStream: true)), .connection(.protocolError))
        var h = H2Harness.server()
        _ = h.request(1)
        XCTAssertEqual(h.send(.data(stream: 1, data: [1], endStream: true)).verdict, .stream(.streamClosed))
        h = H2Harness.server()
        _ = h.request(1, H2Harness.post, endStream: false)
        XCTAssertEqual(h.feed(raw(type: H2FrameType.data, flags: H2FrameType.padded, stream: 1, [4, 1, 2, 3])).verdict, .connection(.protocolError))
    }

    // 6.2 #3 #4.
    func test6_2_HeadersRules() {
        XCTAssertEqual(verdict(.headers(stream: 0, fragment: [0x82], endStream: true, endHeaders: true)), .connection(.protocolError))
        var h = H2Harness.server()
        XCTAssertEqual(h.feed(raw(type: H2FrameType.headers, flags: H2FrameType.padded | H2FrameType.endHeaders, stream: 1, [9, 0x82])).verdict,
                       .connection(.protocolError))
    }

    // 6.3 #1 #2.
    func test6_3_PriorityRules() {
        var h = H2Harness.server()
        XCTAssertEqual(h.feed(raw(type: H2FrameType.priority, stream: 0, [0, 0, 0, 1, 1])).verdict, .connection(.protocolError))
        h = H2Harness.server()
        XCTAssertEqual(h.feed(raw(type: H2FrameType.priority, stream: 1, [0, 0, 0, 3])).verdict, .stream(.frameSizeError))
        XCTAssertTrue(answersPing(&h), "a stream error only")
    }

    // 6.4 #1 #2 #3.
    func test6_4_RstStreamRules() {
        var h = H2Harness.server()
        XCTAssertEqual(h.feed(raw(type: H2FrameType.rstStream, stream: 0, [0, 0, 0, 8])).verdict, .connection(.protocolError))
        XCTAssertEqual(verdict(.rstStream(stream: 1, .cancel)), .connection(.protocolError))
        h = H2Harness.server()
        _ = h.request(1, H2Harness.post, endStream: false)
        XCTAssertEqual(h.feed(raw(type: H2FrameType.rstStream, stream: 1, [0, 0, 0, 8, 0])).verdict, .connection(.frameSizeError))
    }
}
