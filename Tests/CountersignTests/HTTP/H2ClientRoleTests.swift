import XCTest
@testable import CountersignHTTP

/// The machine facing an h2 upstream: we open the streams, the server answers.
final class H2ClientRoleTests: XCTestCase {
    private func open(_ h: inout H2Harness, _ pairs: [(String, String)] = H2Harness.get, endStream: Bool = true) throws -> (UInt32, H2Harness.Outcome) {
        let (id, actions) = try h.machine.openStream(fields: fields(pairs), endStream: endStream).get()
        return (id, h.absorb(actions))
    }

    private func respond(_ h: inout H2Harness, _ id: UInt32, _ pairs: [(String, String)], endStream: Bool) -> H2Harness.Outcome {
        let fragment = h.block(pairs)
        return h.send(.headers(stream: id, fragment: fragment, endStream: endStream, endHeaders: true))
    }

    func testThePrefaceAndSettingsGoFirstWithPushDisabled() {
        let h = H2Harness(role: .client, limits: H2Limits(connectionWindow: 1 << 20))
        guard case .settings(false, let settings)? = h.greeting.frames.first else { return XCTFail("\(h.greeting.frames)") }
        XCTAssertTrue(settings.contains(H2Setting(H2Setting.enablePush, 0)))
        XCTAssertEqual(h.greeting.frames.dropFirst().first, .windowUpdate(stream: 0, increment: UInt32((1 << 20) - 65535)))
    }

    func testARequestGetsInterimAndFinalHeadsBodyAndTrailers() throws {
        var h = H2Harness.client()
        let (id, sent) = try open(&h, H2Harness.post, endStream: false)
        XCTAssertEqual(id, 1)
        XCTAssertEqual(sent.frames.count, 1)
        XCTAssertEqual(h.fieldsOf(sent.frames[0]), fields(H2Harness.post))
        _ = h.absorb(try h.machine.sendData(stream: id, Array("body".utf8), endStream: true).get().1)
        XCTAssertEqual(h.machine.streamState(id), .halfClosedLocal)
        XCTAssertEqual(respond(&h, id, [(":status", "103"), ("link", "</a>")], endStream: false).events,
                       [.head(stream: 1, fields: fields([(":status", "103"), ("link", "</a>")]), endStream: false)])
        XCTAssertEqual(respond(&h, id, [(":status", "200"), ("content-length", "2")], endStream: false).verdict, .fine)
        XCTAssertEqual(h.send(.data(stream: id, data: Array("ok".utf8), endStream: false)).events, [.data(stream: 1, Array("ok".utf8), endStream: false)])
        XCTAssertEqual(respond(&h, id, [("grpc-status", "0")], endStream: true).events, [.trailers(stream: 1, fields: fields([("grpc-status", "0")]))])
        XCTAssertEqual(h.machine.streamState(id), .closed)
    }

    func testAHeadResponseMayAnnounceALengthWithoutABody() throws {
        var h = H2Harness.client()
        let (id, _) = try open(&h, [(":method", "HEAD")] + Array(H2Harness.get.dropFirst()))
        XCTAssertEqual(respond(&h, id, [(":status", "200"), ("content-length", "1234")], endStream: true).verdict, .fine)
    }

    func testMalformedResponsesAreStreamErrors() throws {
        var h = H2Harness.client()
        var (id, _) = try open(&h)
        XCTAssertEqual(respond(&h, id, [("x-no-status", "1")], endStream: true).verdict, .stream(.protocolError))
        (id, _) = try open(&h)
        XCTAssertEqual(respond(&h, id, [(":status", "200"), (":path", "/")], endStream: true).verdict, .stream(.protocolError))
        (id, _) = try open(&h)
        XCTAssertEqual(respond(&h, id, [(":status", "2000")], endStream: true).verdict, .stream(.protocolError))
        (id, _) = try open(&h)
        XCTAssertEqual(respond(&h, id, [(":status", "200"), ("Set-Cookie", "a=b")], endStream: true).verdict, .stream(.protocolError))
        (id, _) = try open(&h)
        XCTAssertEqual(h.send(.data(stream: id, data: [1], endStream: true)).verdict, .stream(.protocolError), "DATA before a head")
        XCTAssertFalse(h.machine.isClosed)
    }

    func testPushIsRefused() throws {
        var h = H2Harness.client()
        let (id, _) = try open(&h)
        XCTAssertEqual(h.send(.pushPromise(stream: id, promised: 2, fragment: [0x82], endHeaders: true)).verdict, .connection(.protocolError))
        h = H2Harness(role: .client, limits: H2Limits())
        XCTAssertEqual(h.send(.settings(ack: false, [H2Setting(H2Setting.enablePush, 1)])).verdict, .connection(.protocolError))
        h = H2Harness.client()
        XCTAssertEqual(respond(&h, 2, [(":status", "200")], endStream: true).verdict, .connection(.protocolError), "a stream we never opened")
    }

    func testTheServersConcurrencyLimitHoldsBackNewStreams() throws {
        var h = H2Harness.client(settings: [H2Setting(H2Setting.maxConcurrentStreams, 1)])
        XCTAssertEqual(h.machine.peerMaxConcurrentStreams, 1, "what a driver sizes its sharing by")
        let (id, _) = try open(&h)
        XCTAssertEqual(h.machine.openStream(fields: fields(H2Harness.get), endStream: true).map { $0.0 }, .failure(.concurrencyLimit))
        _ = respond(&h, id, [(":status", "204")], endStream: true)
        XCTAssertEqual(try open(&h).0, 3)
    }

    func testGoawayRefusesTheStreamsAboveItsLastStream() throws {
        var h = H2Harness.client()
        _ = try open(&h, H2Harness.post, endStream: false)
        _ = try open(&h, H2Harness.post, endStream: false)
        let outcome = h.send(.goaway(lastStream: 1, .noError, debug: []))
        XCTAssertEqual(outcome.events, [.peerGoingAway(lastStream: 1, .noError), .streamReset(stream: 3, .refusedStream)])
        XCTAssertEqual(h.machine.streamState(1), .open, "stream 1 goes on")
        XCTAssertFalse(h.machine.acceptsNewStreams)
        XCTAssertEqual(h.machine.openStream(fields: fields(H2Harness.get), endStream: true).map { $0.0 }, .failure(.connectionExhausted))
    }

    func testStreamIdentifiersRunOut() throws {
        var h = H2Harness.client()
        h.machine.nextLocalStream = H2Connection.maxStreamID
        XCTAssertTrue(h.machine.acceptsNewStreams)
        XCTAssertEqual(try open(&h).0, H2Connection.maxStreamID)
        XCTAssertFalse(h.machine.acceptsNewStreams)
        XCTAssertEqual(h.machine.openStream(fields: fields(H2Harness.get), endStream: true).map { $0.0 }, .failure(.connectionExhausted))
    }

    func testAClosedConnectionResetsEveryStream() throws {
        var h = H2Harness.client()
        _ = try open(&h, H2Harness.post, endStream: false)
        _ = try open(&h, H2Harness.post, endStream: false)
        XCTAssertEqual(h.machine.closed(), [.streamReset(stream: 1, .cancel), .streamReset(stream: 3, .cancel)])
        XCTAssertEqual(h.machine.openStream(fields: fields(H2Harness.get), endStream: true).map { $0.0 }, .failure(.connectionClosed))
    }

    /// Credentials our encoder sends upstream are never indexed: a later stream cannot learn them
    /// from the table, and the octets go raw.
    func testCredentialsSentUpstreamAreNeverIndexed() throws {
        var h = H2Harness.client()
        let secret = "Bearer s3cr3t-token-value"
        let (_, sent) = try open(&h, H2Harness.get + [("authorization", secret)])
        guard case .headers(_, let fragment, _, _, _, _) = sent.frames[0] else { return XCTFail() }
        XCTAssertNotNil(fragment.indices.first { fragment[$0...].starts(with: Array(secret.utf8)) })
        XCTAssertFalse(h.machine.encoder.dynamicTableEntries.contains { $0.nameText == "authorization" })
    }
}
