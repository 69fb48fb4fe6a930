import XCTest
@testable import CountersignHTTP

/// What a hostile peer sends to exhaust a proxy, and the bounded answer: rapid reset
/// (CVE-2023-44487), CONTINUATION flood, HPACK bomb, SETTINGS and PING floods, windows overrun,
/// a stalled stream, stream identifiers used up.
final class H2DefenceTests: XCTestCase {
    private func closeCode(_ outcome: H2Harness.Outcome) -> H2ErrorCode? {
        for event in outcome.events { if case .close(let code, _) = event { return code } }
        return nil
    }

    func testRapidResetEndsTheConnectionWithEnhanceYourCalm() {
        var h = H2Harness.server(H2Limits(maxResetsPerWindow: 50, rateWindowMillis: 1000))
        var last = H2Harness.Outcome()
        var stream: UInt32 = 1
        for _ in 0..<50 {
            _ = h.request(stream, H2Harness.post, endStream: false)
            last = h.send(.rstStream(stream: stream, .cancel))
            stream += 2
        }
        XCTAssertFalse(h.machine.isClosed, "50 resets within the budget")
        _ = h.request(stream, H2Harness.post, endStream: false)
        last = h.send(.rstStream(stream: stream, .cancel))
        XCTAssertEqual(last.verdict, .connection(.enhanceYourCalm))
        XCTAssertTrue(h.machine.isClosed)
    }

    func testResetsSpreadOverTimeAreAllowed() {
        var h = H2Harness.server(H2Limits(maxResetsPerWindow: 50, rateWindowMillis: 1000))
        var stream: UInt32 = 1
        for round in 0..<200 {
            h.now = UInt64(round) * 100 // 10 resets a second
            _ = h.request(stream, H2Harness.post, endStream: false)
            XCTAssertEqual(h.send(.rstStream(stream: stream, .cancel)).verdict, .fine)
            stream += 2
        }
        XCTAssertFalse(h.machine.isClosed)
    }

    /// The variant that makes us reset: streams above the concurrency limit, refused one by one.
    func testRefusedStreamsCountAsResets() {
        var h = H2Harness.server(H2Limits(maxConcurrentStreams: 1, maxResetsPerWindow: 20, rateWindowMillis: 1000))
        _ = h.request(1, H2Harness.post, endStream: false)
        var verdicts: [H2Harness.Verdict] = []
        for index in 0..<21 { verdicts.append(h.request(UInt32(3 + 2 * index), H2Harness.post, endStream: false).verdict) }
        XCTAssertEqual(verdicts.first, .stream(.refusedStream))
        XCTAssertEqual(verdicts.last, .connection(.enhanceYourCalm))
    }

    func testAContinuationFloodIsStoppedAtTheFrameBound() {
        var h = H2Harness.server(H2Limits(maxContinuationFrames: 32))
        _ = h.send(.headers(stream: 1, fragment: [0x82], endStream: true, endHeaders: false))
        var bytes: [UInt8] = []
        for _ in 0..<10_000 { H2FrameWriter.write(.continuation(stream: 1, fragment: [], endHeaders: false), into: &bytes) }
        let outcome = h.feed(bytes)
        XCTAssertEqual(closeCode(outcome), .enhanceYourCalm)
        XCTAssertEqual(h.machine.reader.bufferedCount, 9 * (10_000 - 33), "the rest is never parsed")
    }

    /// A header block left unfinished holds the connection (§6.10): while it is open the driver
    /// runs its deadline; when that runs out, GOAWAY ENHANCE_YOUR_CALM naming no stream (this
    /// one never had its head). Once the block ends there is nothing to time out.
    func testAHeaderBlockLeftUnfinishedEndsTheConnectionWhenItsDeadlinePasses() {
        var h = H2Harness.server()
        _ = h.send(.settings(ack: true, []))
        XCTAssertFalse(h.machine.awaitsHeaderBlockEnd)
        _ = h.send(.headers(stream: 1, fragment: [0x82], endStream: true, endHeaders: false))
        XCTAssertTrue(h.machine.awaitsHeaderBlockEnd)
        _ = h.send(.continuation(stream: 1, fragment: [0x87], endHeaders: false))
        XCTAssertTrue(h.machine.awaitsHeaderBlockEnd)
        let outcome = h.absorb(h.machine.headerBlockTimerExpired())
        XCTAssertEqual(outcome.verdict, .connection(.enhanceYourCalm))
        XCTAssertTrue(outcome.frames.contains { if case .goaway(lastStream: 0, _, _) = $0 { return true }; return false })
        XCTAssertTrue(h.machine.isClosed)
        XCTAssertFalse(h.machine.awaitsHeaderBlockEnd)

        h = H2Harness.server()
        _ = h.send(.settings(ack: true, []))
        _ = h.send(.headers(stream: 1, fragment: [0x82, 0x87], endStream: true, endHeaders: false))
        _ = h.send(.continuation(stream: 1, fragment: [0x84, 0x41, 0x01, 0x61], endHeaders: true))
        XCTAssertFalse(h.machine.awaitsHeaderBlockEnd)
        XCTAssertEqual(h.machine.headerBlockTimerExpired(), [])
        XCTAssertFalse(h.machine.isClosed)
    }

    func testAHeaderBlockAboveItsSizeBoundIsStoppedBeforeItGrows() {
        var h = H2Harness.server(H2Limits(maxHeaderBlockOctets: 40_000, maxContinuationFrames: 100))
        _ = h.send(.headers(stream: 1, fragment: [UInt8](repeating: 0x82, count: 16384), endStream: true, endHeaders: false))
        _ = h.send(.continuation(stream: 1, fragment: [UInt8](repeating: 0x82, count: 16384), endHeaders: false))
        XCTAssertEqual(closeCode(h.send(.continuation(stream: 1, fragment: [UInt8](repeating: 0x82, count: 16384), endHeaders: false))), .enhanceYourCalm)
    }

    /// The list limit stops the bomb; the request gets a 431 and the connection, its HPACK
    /// context in step, serves the next request, which names the bomb's table entry.
    func testAnHPACKBombGetsA431AndTheConnectionGoesOn() {
        var h = H2Harness.server(H2Limits(maxHeaderListSize: 16384))
        var block: [UInt8] = [0x82, 0x87, 0x84, 0x41, 0x01, 0x61, 0x40, 0x01, 0x78]
        HPACKInteger.encode(3000, prefixBits: 7, flags: 0, into: &block)
        block += [UInt8](repeating: 0x61, count: 3000)
        block += [UInt8](repeating: 0xBE, count: 12000) // 12 000 references to the 3 kB entry: 36 MB decoded
        block += [0x40, 0x01, 0x79, 0x01, 0x7A]          // y: z, indexed after the limit was crossed
        let outcome = h.send(.headers(stream: 1, fragment: block, endStream: true, endHeaders: false),
                             .continuation(stream: 1, fragment: [], endHeaders: true))
        XCTAssertEqual(outcome.verdict, .fine)
        XCTAssertFalse(outcome.events.contains { if case .head = $0 { return true }; return false })
        XCTAssertEqual(outcome.frames.first.flatMap { h.fieldsOf($0) }, fields([(":status", "431"), ("content-length", "0")]))
        let next = h.send(.headers(stream: 3, fragment: [0x82, 0x87, 0x84, 0x41, 0x01, 0x61, 0xBF, 0xC0], endStream: true, endHeaders: true))
        XCTAssertEqual(next.events, [.head(stream: 3, fields: fields([(":method", "GET"), (":scheme", "https"), (":path", "/"), (":authority", "a"),
                                                                        ("y", "z"), ("x", String(repeating: "a", count: 3000))]), endStream: true)])
    }

    func testSettingsAndPingFloodsEndTheConnection() {
        var h = H2Harness.server(H2Limits(maxControlFramesPerWindow: 100, rateWindowMillis: 1000))
        var bytes: [UInt8] = []
        for _ in 0..<1000 { H2FrameWriter.write(.settings(ack: false, []), into: &bytes) }
        var outcome = h.feed(bytes)
        XCTAssertEqual(closeCode(outcome), .enhanceYourCalm)
        XCTAssertLessThanOrEqual(outcome.frames.filter { $0 == .settings(ack: true, []) }.count, 100, "ACKs owed stay bounded")
        h = H2Harness.server(H2Limits(maxControlFramesPerWindow: 100, rateWindowMillis: 1000))
        bytes = []
        for index in 0..<1000 { H2FrameWriter.write(.ping(ack: false, opaque: UInt64(index)), into: &bytes) }
        outcome = h.feed(bytes)
        XCTAssertEqual(closeCode(outcome), .enhanceYourCalm)
    }

    /// Body we hold is bounded by the windows we advertised: one octet more is an error.
    func testAPeerCannotSendBeyondOurWindows() {
        var h = H2Harness.server(H2Limits(streamWindow: 65535, connectionWindow: 100_000))
        _ = h.request(1, H2Harness.post, endStream: false)
        _ = h.request(3, H2Harness.post, endStream: false)
        for _ in 0..<3 { XCTAssertEqual(h.send(.data(stream: 1, data: [UInt8](repeating: 0, count: 16384), endStream: false)).verdict, .fine) }
        XCTAssertEqual(h.send(.data(stream: 1, data: [UInt8](repeating: 0, count: 16384), endStream: false)).verdict, .stream(.flowControlError),
                       "65 536 octets unread on a 65 535 window")
        for _ in 0..<2 { XCTAssertEqual(h.send(.data(stream: 3, data: [UInt8](repeating: 0, count: 16384), endStream: false)).verdict, .fine) }
        XCTAssertEqual(h.send(.data(stream: 3, data: [UInt8](repeating: 0, count: 16384), endStream: false)).verdict, .connection(.flowControlError),
                       "the connection window: 100 000 octets")
    }

    /// Consuming reopens the windows: a well-behaved peer streams without end.
    func testConsumingReopensTheWindows() {
        var h = H2Harness.server(H2Limits(streamWindow: 65535, connectionWindow: 65535))
        _ = h.request(1, H2Harness.post, endStream: false)
        for _ in 0..<100 {
            let outcome = h.send(.data(stream: 1, data: [UInt8](repeating: 0, count: 16384), endStream: false))
            XCTAssertEqual(outcome.verdict, .fine)
            var increments: [UInt32: UInt32] = [:]
            for frame in h.absorb(h.machine.consumed(stream: 1, count: 16384)).frames {
                if case .windowUpdate(let stream, let increment) = frame { increments[stream, default: 0] += increment }
            }
            for (stream, increment) in increments { _ = stream; XCTAssertGreaterThan(increment, 0) }
        }
        XCTAssertFalse(h.machine.isClosed)
    }

    /// A peer that never opens a stream's window holds that stream only.
    func testAZeroWindowStreamDoesNotBlockAnother() throws {
        var h = H2Harness.server()
        _ = h.send(.settings(ack: false, [H2Setting(H2Setting.initialWindowSize, 0)]))
        _ = h.request(1)
        _ = h.request(3)
        _ = try h.machine.sendHead(stream: 1, fields: fields([(":status", "200")]), endStream: false).get()
        _ = try h.machine.sendHead(stream: 3, fields: fields([(":status", "200")]), endStream: false).get()
        XCTAssertEqual(try h.machine.sendData(stream: 1, [UInt8](repeating: 1, count: 1000), endStream: true).get().accepted, 0)
        _ = h.send(.windowUpdate(stream: 3, increment: 1000))
        let (accepted, actions) = try h.machine.sendData(stream: 3, [UInt8](repeating: 3, count: 1000), endStream: true).get()
        XCTAssertEqual(accepted, 1000)
        XCTAssertEqual(h.absorb(actions).frames, [.data(stream: 3, data: [UInt8](repeating: 3, count: 1000), endStream: true)])
        XCTAssertEqual(h.machine.streamState(1), .halfClosedRemote, "still waiting, holding nothing in the machine")
    }

    func testOurDataFramesRespectThePeersMaxFrameSize() throws {
        var h = H2Harness.server()
        _ = h.request(1)
        _ = try h.machine.sendHead(stream: 1, fields: fields([(":status", "200")]), endStream: false).get()
        let (accepted, actions) = try h.machine.sendData(stream: 1, [UInt8](repeating: 7, count: 40000), endStream: true).get()
        XCTAssertEqual(accepted, 40000)
        XCTAssertEqual(h.absorb(actions).frames.map(\.flowControlledLength), [16384, 16384, 7232])
    }

    func testAfterOurGoawayNewStreamsAreIgnoredAndOldOnesFinish() throws {
        var h = H2Harness.server()
        _ = h.request(1, H2Harness.post, endStream: false)
        XCTAssertEqual(h.absorb(h.machine.goAway()).frames, [.goaway(lastStream: 1, .noError, debug: [])])
        XCTAssertTrue(h.request(3).events.isEmpty, "stream 3 is above the last stream announced")
        XCTAssertEqual(h.send(.data(stream: 1, data: [1], endStream: true)).events, [.data(stream: 1, [1], endStream: true)])
        _ = try h.machine.sendHead(stream: 1, fields: fields([(":status", "204")]), endStream: true).get()
        XCTAssertEqual(h.machine.activeStreamCount, 0)
    }

    /// Body consumed after a connection error must not make the machine write again (found by
    /// writing the fuzz driver, which consumes what it is given even in the batch that closes).
    func testNothingIsWrittenAfterAConnectionError() {
        var h = H2Harness.server()
        _ = h.request(1, H2Harness.post, endStream: false)
        _ = h.send(.data(stream: 1, data: [UInt8](repeating: 0, count: 16384), endStream: false))
        _ = h.feed(H2FrameTests.raw(type: H2FrameType.ping, stream: 0, [0]))
        XCTAssertTrue(h.machine.isClosed)
        XCTAssertEqual(h.machine.consumed(stream: 1, count: 1 << 20), [])
    }
}

extension H2DefenceTests {
    /// DATA for a stream we reset long ago (forgotten after many others closed) costs that
    /// stream a RST_STREAM, not the whole connection.
    func testDataOnAStreamClosedLongAgoIsAStreamErrorOnly() {
        var h = H2Harness.server(H2Limits(maxConcurrentStreams: 10, maxResetsPerWindow: 10_000))
        _ = h.request(1, H2Harness.post, endStream: false)
        _ = h.absorb(h.machine.resetStream(1, .cancel))
        for index in 1...300 {
            let id = UInt32(1 + 2 * index)
            _ = h.request(id)
            _ = h.absorb(try! h.machine.sendHead(stream: id, fields: fields([(":status", "204")]), endStream: true).get())
        }
        XCTAssertEqual(h.send(.data(stream: 1, data: [1], endStream: false)).verdict, .stream(.streamClosed))
        XCTAssertFalse(h.machine.isClosed)
        XCTAssertEqual(h.request(3).verdict, .connection(.protocolError), "a HEADERS below the highest stream still ends it")
    }
}
