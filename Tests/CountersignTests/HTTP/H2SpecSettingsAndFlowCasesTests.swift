import XCTest
@testable import CountersignHTTP

/// h2spec's server cases for SETTINGS, PING, GOAWAY, WINDOW_UPDATE, flow control,
/// CONTINUATION and error codes (`http2/` 6.5 to 7), each driven through the machine directly.
final class H2SpecSettingsAndFlowCasesTests: XCTestCase {
    private func raw(type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        H2FrameTests.raw(type: type, flags: flags, stream: stream, payload)
    }

    private func settingsVerdict(_ settings: H2Setting...) -> H2Harness.Verdict {
        var h = H2Harness.server()
        return h.send(.settings(ack: false, settings)).verdict
    }

    // 6.5 #1 #2 #3.
    func test6_5_SettingsFrameRules() {
        var h = H2Harness.server()
        XCTAssertEqual(h.feed(raw(type: H2FrameType.settings, flags: 1, stream: 0, [0, 1, 0, 0, 0, 0])).verdict, .connection(.frameSizeError))
        h = H2Harness.server()
        XCTAssertEqual(h.feed(raw(type: H2FrameType.settings, stream: 1, [])).verdict, .connection(.protocolError))
        h = H2Harness.server()
        XCTAssertEqual(h.feed(raw(type: H2FrameType.settings, stream: 0, [0, 3, 0, 0])).verdict, .connection(.frameSizeError))
    }

    // 6.5.2 #1-#5.
    func test6_5_2_DefinedSettingsParameters() {
        XCTAssertEqual(settingsVerdict(H2Setting(H2Setting.enablePush, 2)), .connection(.protocolError))
        XCTAssertEqual(settingsVerdict(H2Setting(H2Setting.initialWindowSize, 1 << 31)), .connection(.flowControlError))
        XCTAssertEqual(settingsVerdict(H2Setting(H2Setting.maxFrameSize, 16383)), .connection(.protocolError))
        XCTAssertEqual(settingsVerdict(H2Setting(H2Setting.maxFrameSize, 16_777_216)), .connection(.protocolError))
        var h = H2Harness.server()
        XCTAssertEqual(h.send(.settings(ack: false, [H2Setting(0xFF, 1)])).frames, [.settings(ack: true, [])])
    }

    // 6.5.3 #1: values are applied in order; #2: SETTINGS is acknowledged at once.
    func test6_5_3_SettingsAreAppliedInOrderAndAcknowledged() {
        var h = H2Harness.server()
        XCTAssertEqual(h.send(.settings(ack: false, [H2Setting(H2Setting.initialWindowSize, 100), H2Setting(H2Setting.initialWindowSize, 1)])).frames,
                       [.settings(ack: true, [])])
        _ = h.request(1)
        XCTAssertEqual(h.machine.sendWindow(stream: 1), 1)
    }

    // 6.7 #1-#4.
    func test6_7_Ping() {
        var h = H2Harness.server()
        XCTAssertEqual(h.send(.ping(ack: false, opaque: 0x0102_0304_0506_0708)).frames, [.ping(ack: true, opaque: 0x0102_0304_0506_0708)])
        XCTAssertEqual(h.send(.ping(ack: true, opaque: 5)).frames, [], "an ACK is not answered")
        XCTAssertEqual(h.feed(raw(type: H2FrameType.ping, stream: 1, [UInt8](repeating: 0, count: 8))).verdict, .connection(.protocolError))
        h = H2Harness.server()
        XCTAssertEqual(h.feed(raw(type: H2FrameType.ping, stream: 0, [UInt8](repeating: 0, count: 9))).verdict, .connection(.frameSizeError))
    }

    // 6.8 #1.
    func test6_8_GoawayOnAStreamIsAProtocolError() {
        var h = H2Harness.server()
        XCTAssertEqual(h.feed(raw(type: H2FrameType.goaway, stream: 1, [UInt8](repeating: 0, count: 8))).verdict, .connection(.protocolError))
    }

    // 6.9 #1 #2 #3. RFC 9113 §6.9 makes an increment of 0 on a stream a stream error.
    func test6_9_WindowUpdateRules() {
        var h = H2Harness.server()
        XCTAssertEqual(h.send(.windowUpdate(stream: 0, increment: 0)).verdict, .connection(.protocolError))
        h = H2Harness.server()
        _ = h.request(1)
        XCTAssertEqual(h.send(.windowUpdate(stream: 1, increment: 0)).verdict, .stream(.protocolError))
        h = H2Harness.server()
        XCTAssertEqual(h.feed(raw(type: H2FrameType.windowUpdate, stream: 0, [0, 0, 0, 1, 0])).verdict, .connection(.frameSizeError))
    }

    // 6.9.1 #1: with an initial window of 1, DATA frames carry at most 1 octet.
    func test6_9_1_1_NoDataBeyondTheWindow() throws {
        var h = H2Harness.server()
        _ = h.send(.settings(ack: false, [H2Setting(H2Setting.initialWindowSize, 1)]))
        _ = h.request(1)
        _ = h.absorb(try h.machine.sendHead(stream: 1, fields: fields([(":status", "200")]), endStream: false).get())
        let (accepted, actions) = try h.machine.sendData(stream: 1, Array("hello".utf8), endStream: true).get()
        XCTAssertEqual(accepted, 1)
        XCTAssertEqual(h.absorb(actions).frames, [.data(stream: 1, data: Array("h".utf8), endStream: false)])
        let opened = h.send(.windowUpdate(stream: 1, increment: 4))
        XCTAssertEqual(opened.events, [.windowOpened(stream: 1)])
        let (rest, more) = try h.machine.sendData(stream: 1, Array("ello".utf8), endStream: true).get()
        XCTAssertEqual(rest, 4)
        XCTAssertEqual(h.absorb(more).frames, [.data(stream: 1, data: Array("ello".utf8), endStream: true)])
        XCTAssertEqual(h.machine.streamState(1), .closed)
    }

    // 6.9.1 #2 #3: windows above 2^31-1.
    func test6_9_1_WindowsAboveTheMaximumAreFlowControlErrors() {
        var h = H2Harness.server()
        XCTAssertEqual(h.send(.windowUpdate(stream: 0, increment: 0x7FFF_FFFF)).verdict, .connection(.flowControlError))
        h = H2Harness.server()
        _ = h.request(1)
        XCTAssertEqual(h.send(.windowUpdate(stream: 1, increment: 0x7FFF_FFFF)).verdict, .stream(.flowControlError))
        XCTAssertFalse(h.machine.isClosed)
    }

    // 6.9.2 #1 #2 #3: SETTINGS_INITIAL_WINDOW_SIZE moves open streams' windows, below zero too.
    func test6_9_2_InitialWindowChangesMoveOpenStreams() throws {
        var h = H2Harness.server()
        _ = h.send(.settings(ack: false, [H2Setting(H2Setting.initialWindowSize, 3)]))
        _ = h.request(1)
        _ = try h.machine.sendHead(stream: 1, fields: fields([(":status", "200")]), endStream: false).get()
        XCTAssertEqual(try h.machine.sendData(stream: 1, Array("abc".utf8), endStream: false).get().accepted, 3)
        _ = h.send(.settings(ack: false, [H2Setting(H2Setting.initialWindowSize, 1)]))
        XCTAssertEqual(h.machine.streams[1]?.sendWindow, -2, "tracked below zero")
        XCTAssertEqual(try h.machine.sendData(stream: 1, Array("d".utf8), endStream: false).get().accepted, 0)
        _ = h.send(.windowUpdate(stream: 1, increment: 3))
        XCTAssertEqual(h.machine.sendWindow(stream: 1), 1)
        XCTAssertEqual(h.send(.settings(ack: false, [H2Setting(H2Setting.initialWindowSize, 0x8000_0000)])).verdict, .connection(.flowControlError))
    }

    // 6.10 #1: several CONTINUATION frames make one head.
    func test6_10_1_ContinuationsAssembleOneHead() {
        var h = H2Harness.server()
        let block = h.block(H2Harness.get + [("x-a", "1"), ("x-b", "2")])
        let outcome = h.send(.headers(stream: 1, fragment: Array(block[0..<3]), endStream: true, endHeaders: false),
                             .continuation(stream: 1, fragment: Array(block[3..<6]), endHeaders: false),
                             .continuation(stream: 1, fragment: Array(block[6...]), endHeaders: true))
        XCTAssertEqual(outcome.events, [.head(stream: 1, fields: fields(H2Harness.get + [("x-a", "1"), ("x-b", "2")]), endStream: true)])
    }

    // 6.10 #2-#6.
    func test6_10_ContinuationOutOfPlaceIsAProtocolError() {
        var h = H2Harness.server()
        let open = H2Frame.headers(stream: 1, fragment: [0x82, 0x87], endStream: true, endHeaders: false)
        XCTAssertEqual(h.send(open, .continuation(stream: 1, fragment: [0x84], endHeaders: false), .data(stream: 1, data: [], endStream: true)).verdict,
                       .connection(.protocolError))
        h = H2Harness.server()
        XCTAssertEqual(h.feed(raw(type: H2FrameType.continuation, flags: 4, stream: 0, [0x82])).verdict, .connection(.protocolError))
        h = H2Harness.server()
        _ = h.request(1, H2Harness.post, endStream: false)
        XCTAssertEqual(h.send(.continuation(stream: 1, fragment: [0x82], endHeaders: true)).verdict, .connection(.protocolError))
        h = H2Harness.server()
        let block = h.block(H2Harness.post)
        XCTAssertEqual(h.send(.headers(stream: 1, fragment: Array(block[0..<2]), endStream: false, endHeaders: false),
                              .continuation(stream: 1, fragment: Array(block[2...]), endHeaders: true),
                              .continuation(stream: 1, fragment: [0x82], endHeaders: true)).verdict, .connection(.protocolError))
        h = H2Harness.server()
        _ = h.request(1, H2Harness.post, endStream: false)
        XCTAssertEqual(h.send(.data(stream: 1, data: [1], endStream: false), .continuation(stream: 1, fragment: [0x82], endHeaders: true)).verdict,
                       .connection(.protocolError))
    }

    // 7 #1 #2: unknown error codes trigger nothing special.
    func test7_UnknownErrorCodesAreAccepted() {
        var h = H2Harness.server()
        _ = h.request(1, H2Harness.post, endStream: false)
        XCTAssertEqual(h.send(.rstStream(stream: 1, H2ErrorCode(rawValue: 0xFF))).events, [.streamReset(stream: 1, H2ErrorCode(rawValue: 0xFF))])
        XCTAssertEqual(h.send(.goaway(lastStream: 0, H2ErrorCode(rawValue: 0xFF), debug: [])).verdict, .fine)
        XCTAssertFalse(h.machine.isClosed)
    }
}

extension H2SpecSettingsAndFlowCasesTests {
    /// RFC 9113 §6.5.3: a peer that never acknowledges our SETTINGS gets SETTINGS_TIMEOUT when
    /// the driver's timer runs out; one that did is left alone.
    func testUnacknowledgedSettingsTimeOut() {
        var h = H2Harness.server()
        XCTAssertTrue(h.machine.awaitsSettingsAck)
        XCTAssertEqual(h.absorb(h.machine.settingsTimerExpired()).verdict, .connection(.settingsTimeout))
        h = H2Harness.server()
        _ = h.send(.settings(ack: true, []))
        XCTAssertFalse(h.machine.awaitsSettingsAck)
        XCTAssertEqual(h.machine.settingsTimerExpired(), [])
        XCTAssertFalse(h.machine.isClosed)
    }
}
