import XCTest
@testable import CountersignHTTP

/// The connection machine over RFC 9113 §5.1's stream states × the frames a peer can send on
/// them: what it answers (nothing, a stream error, a connection error) and the state after.
final class H2ConnectionStateTests: XCTestCase {
    enum Setup: CaseIterable {
        case idle, open, halfClosedRemote, halfClosedLocal, closedFinished, closedResetByPeer, closedResetByUs
    }

    enum Event: CaseIterable {
        case trailers, data, rstStream, windowUpdate, priority, continuation
    }

    /// Stream 1 brought to `setup` on a server-role machine.
    private func harness(_ setup: Setup) -> H2Harness {
        var h = H2Harness.server()
        switch setup {
        case .idle: break
        case .open: _ = h.request(1, H2Harness.post, endStream: false)
        case .halfClosedRemote: _ = h.request(1)
        case .halfClosedLocal:
            _ = h.request(1, H2Harness.post, endStream: false)
            _ = h.absorb(try! h.machine.sendHead(stream: 1, fields: fields([(":status", "200")]), endStream: true).get())
        case .closedFinished:
            _ = h.request(1)
            _ = h.absorb(try! h.machine.sendHead(stream: 1, fields: fields([(":status", "200")]), endStream: true).get())
        case .closedResetByPeer:
            _ = h.request(1, H2Harness.post, endStream: false)
            _ = h.send(.rstStream(stream: 1, .cancel))
        case .closedResetByUs:
            _ = h.request(1, H2Harness.post, endStream: false)
            _ = h.absorb(h.machine.resetStream(1, .cancel))
        }
        return h
    }

    private func fire(_ event: Event, _ h: inout H2Harness) -> H2Harness.Outcome {
        switch event {
        case .trailers:
            let fragment = h.block([("x-checksum", "1")])
            return h.send(.headers(stream: 1, fragment: fragment, endStream: true, endHeaders: true))
        case .data: return h.send(.data(stream: 1, data: Array("abc".utf8), endStream: false))
        case .rstStream: return h.send(.rstStream(stream: 1, .cancel))
        case .windowUpdate: return h.send(.windowUpdate(stream: 1, increment: 1))
        case .priority: return h.send(.priority(stream: 1, H2Priority(dependency: 0, weight: 1)))
        case .continuation: return h.send(.continuation(stream: 1, fragment: [0x88], endHeaders: true))
        }
    }

    typealias Row = (H2Harness.Verdict, H2StreamState)

    /// Expected answers: RFC 9113 §5.1, §6.x and h2spec 5.1 #1-#13, 6.1 #2, 6.4 #2, 2 #1-#5 (generic).
    private let table: [Setup: [Event: Row]] = [
        .idle: [.trailers: (.stream(.protocolError), .closed), // a request without pseudo-headers is malformed
                .data: (.connection(.protocolError), .closed), .rstStream: (.connection(.protocolError), .closed),
                .windowUpdate: (.connection(.protocolError), .closed), .priority: (.fine, .idle),
                .continuation: (.connection(.protocolError), .closed)],
        .open: [.trailers: (.fine, .halfClosedRemote), .data: (.fine, .open), .rstStream: (.fine, .closed),
                .windowUpdate: (.fine, .open), .priority: (.fine, .open), .continuation: (.connection(.protocolError), .closed)],
        .halfClosedRemote: [.trailers: (.stream(.streamClosed), .closed), .data: (.stream(.streamClosed), .closed),
                            .rstStream: (.fine, .closed), .windowUpdate: (.fine, .halfClosedRemote),
                            .priority: (.fine, .halfClosedRemote), .continuation: (.connection(.protocolError), .closed)],
        .halfClosedLocal: [.trailers: (.fine, .closed), .data: (.fine, .halfClosedLocal), .rstStream: (.fine, .closed),
                           .windowUpdate: (.fine, .halfClosedLocal), .priority: (.fine, .halfClosedLocal),
                           .continuation: (.connection(.protocolError), .closed)],
        .closedFinished: [.trailers: (.connection(.streamClosed), .closed), .data: (.connection(.streamClosed), .closed),
                          .rstStream: (.fine, .closed), .windowUpdate: (.fine, .closed), .priority: (.fine, .closed),
                          .continuation: (.connection(.protocolError), .closed)],
        .closedResetByPeer: [.trailers: (.stream(.streamClosed), .closed), .data: (.stream(.streamClosed), .closed),
                             .rstStream: (.fine, .closed), .windowUpdate: (.fine, .closed), .priority: (.fine, .closed),
                             .continuation: (.connection(.protocolError), .closed)],
        .closedResetByUs: [.trailers: (.fine, .closed), .data: (.fine, .closed), .rstStream: (.fine, .closed),
                           .windowUpdate: (.fine, .closed), .priority: (.fine, .closed),
                           .continuation: (.connection(.protocolError), .closed)],
    ]

    func testEveryStateAgainstEveryFrame() {
        for setup in Setup.allCases {
            for event in Event.allCases {
                var h = harness(setup)
                let outcome = fire(event, &h)
                let (verdict, after) = table[setup]![event]!
                XCTAssertEqual(outcome.verdict, verdict, "\(setup) × \(event)")
                XCTAssertEqual(h.machine.streamState(1), after, "\(setup) × \(event): state after")
                if case .connection = verdict { XCTAssertTrue(h.machine.isClosed, "\(setup) × \(event)") }
            }
        }
    }

    /// The setups themselves reach the state they name.
    func testSetupsReachTheirStates() {
        let expected: [Setup: H2StreamState] = [.idle: .idle, .open: .open, .halfClosedRemote: .halfClosedRemote,
                                                .halfClosedLocal: .halfClosedLocal, .closedFinished: .closed,
                                                .closedResetByPeer: .closed, .closedResetByUs: .closed]
        for setup in Setup.allCases { XCTAssertEqual(harness(setup).machine.streamState(1), expected[setup], "\(setup)") }
    }

    func testDataDiscardedOnAClosedStreamStillCountsAgainstTheConnectionWindowAndIsCreditedBack() {
        var h = harness(.closedResetByUs)
        var written: [H2Frame] = []
        for _ in 0..<40 { written += h.send(.data(stream: 1, data: [UInt8](repeating: 0, count: 16384), endStream: false)).frames }
        XCTAssertFalse(h.machine.isClosed, "640 KiB discarded within a 1 MiB window credited back as it goes")
        XCTAssertTrue(written.contains { if case .windowUpdate(0, _) = $0 { return true }; return false })
    }
}
