import XCTest
@testable import CountersignHTTP

/// Every state of the exchange machine against every event: which pairs can happen, and
/// what each produces. A pair missing from the table is one the machine refuses
/// (`accepts` is false, and `handle` would stop the process naming both).
final class ExchangeTableTests: XCTestCase {
    private func response(_ status: Int, _ fields: [(String, String)]) -> ResponseHead {
        var headers = HeaderFields()
        for (name, value) in fields { headers.append(name, value) }
        return ResponseHead(status: status, reason: "R", headers: headers)
    }

    private var challenge: ResponseHead { response(401, [("Content-Length", "3"), ("WWW-Authenticate", "Basic realm=x")]) }
    private let failure = Exchange.Failure(.destinationUnavailable, details: "x")

    /// One event of each kind.
    private var events: [Exchange.Event] {
        [.start(tokenFirst: nil), .answersChosen(.unauthenticated), .tokenArrived, .tokenFailed(failure),
         .upstreamConnected(reused: false, answer: .ready(handshakeLeg: false)), .upstreamFailed(failure),
         .answerPrepared(handshakeLeg: false), .headRefused(failure), .requestBodyProgressed(keptWhole: false),
         .requestBodyFinished, .requestBodyInvalid(failure), .continueTimerFired, .responseBytesArrived,
         .responseHead(response(200, [("Content-Length", "5")]), challenged: false), .invalidResponseHead(tooLarge: false, detail: "x"),
         .challengeDecided(.passThrough, on: challenge), .challengeBodyDiscarded, .challengeBodyInvalid, .finalHeadRefused(failure),
         .responseBodyFinished, .responseBodyInvalid, .upstreamEnded, .upstreamReadTimedOut, .upstreamBroke(timeout: false, detail: "reset"),
         .responseTimerFired(after: "1s"), .clientReadTimedOut, .clientLost, .clientClosed, .drainBegan]
    }

    /// A machine in each state, reached by events (a GET with no body).
    private var machines: [(String, Exchange)] {
        let fresh = Exchange(request: Exchange.Request(RequestHead(method: "GET", target: "/", version: .http11, headers: HeaderFields()), framing: .none),
                            upstream: UpstreamLabel(secure: false, authority: Authority(host: "origin", port: 80)), clientBound: false)
        var all: [(String, Exchange)] = [("idle", fresh)]
        func step(_ m: inout Exchange, _ event: Exchange.Event) { _ = m.handle(event) }
        var choosing = fresh; step(&choosing, .start(tokenFirst: nil)); all.append(("choosingAnswers", choosing))
        var token = fresh; step(&token, .start(tokenFirst: "api")); all.append(("fetchingToken", token))
        var connecting = choosing; step(&connecting, .answersChosen(.unauthenticated)); all.append(("connecting", connecting))
        var preparing = connecting; step(&preparing, .upstreamConnected(reused: false, answer: .toPrepare)); all.append(("preparingAnswer", preparing))
        var awaiting = connecting; step(&awaiting, .upstreamConnected(reused: false, answer: .ready(handshakeLeg: false))); all.append(("awaitingHead", awaiting))
        var discarding = awaiting
        step(&discarding, .responseHead(challenge, challenged: true))
        step(&discarding, .challengeDecided(.answer(bindsConnection: false), on: challenge))
        all.append(("discardingChallenge", discarding))
        var refreshing = awaiting
        step(&refreshing, .responseHead(challenge, challenged: true))
        step(&refreshing, .challengeDecided(.fetchToken(credential: "api"), on: challenge))
        step(&refreshing, .challengeBodyDiscarded)
        all.append(("fetchingTokenAfterChallenge", refreshing))
        var streaming = awaiting; step(&streaming, .responseHead(response(200, [("Content-Length", "5")]), challenged: false)); all.append(("streaming", streaming))
        var done = awaiting; step(&done, .clientClosed); all.append(("done", done))
        return all
    }

    /// State → event → the kind of action it produces.
    private let table: [String: [String: String]] = {
        // The GET has no body: its client's silence is waiting, not idleness.
        let clientEnds = ["clientReadTimedOut": "resumeClientRead", "clientLost": "abort", "clientClosed": "abort", "drainBegan": "nothing"]
        let upstreamEnds = ["upstreamEnded": "fail", "upstreamReadTimedOut": "resumeUpstreamRead", "upstreamBroke": "fail", "continueTimerFired": "nothing"]
        func merged(_ parts: [String: String]...) -> [String: String] { parts.reduce(into: [:]) { $0.merge($1) { _, new in new } } }
        return [
            "idle": ["start": "chooseAnswers", "drainBegan": "nothing"],
            "choosingAnswers": ["answersChosen": "acquireUpstream", "drainBegan": "nothing"],
            "fetchingToken": merged(clientEnds, upstreamEnds, ["tokenArrived": "chooseAnswers", "tokenFailed": "fail", "upstreamEnded": "nothing",
                                                               "upstreamBroke": "nothing", "responseTimerFired": "nothing"]),
            "fetchingTokenAfterChallenge": merged(clientEnds, upstreamEnds, ["tokenArrived": "decideChallenge", "tokenFailed": "fail",
                                                                             "challengeDecided": "fail", "upstreamEnded": "nothing",
                                                                             "upstreamBroke": "nothing", "responseTimerFired": "nothing"]),
            "connecting": merged(clientEnds, upstreamEnds, ["upstreamConnected": "sendHead", "upstreamFailed": "fail", "responseTimerFired": "fail"]),
            "preparingAnswer": merged(clientEnds, upstreamEnds, ["answerPrepared": "sendHead", "responseTimerFired": "nothing"]),
            "awaitingHead": merged(clientEnds, upstreamEnds, [
                "headRefused": "fail", "requestBodyProgressed": "nothing", "requestBodyFinished": "armResponseTimer", "requestBodyInvalid": "fail",
                "responseBytesArrived": "armResponseTimer", "responseHead": "forwardResponse", "invalidResponseHead": "fail",
                "challengeDecided": "forwardResponse", "responseTimerFired": "fail",
            ]),
            "discardingChallenge": merged(clientEnds, upstreamEnds, ["challengeBodyDiscarded": "sendHead", "challengeBodyInvalid": "fail",
                                                                     "responseTimerFired": "fail"]),
            "streaming": merged(clientEnds, upstreamEnds, [
                "requestBodyProgressed": "nothing", "requestBodyFinished": "nothing", "requestBodyInvalid": "abort",
                "finalHeadRefused": "fail", "responseBodyFinished": "finish", "responseBodyInvalid": "abort",
                "upstreamEnded": "abort", "upstreamReadTimedOut": "abort", "upstreamBroke": "abort", "responseTimerFired": "nothing",
            ]),
            "done": ["drainBegan": "nothing"],
        ]
    }()

    private func kind(_ action: Exchange.Action) -> String {
        switch action {
        case .nothing: return "nothing"
        case .chooseAnswers: return "chooseAnswers"
        case .fetchToken: return "fetchToken"
        case .prepareAnswer: return "prepareAnswer"
        case .acquireUpstream: return "acquireUpstream"
        case .reconnect: return "reconnect"
        case .sendHead: return "sendHead"
        case .pumpRequestBody: return "pumpRequestBody"
        case .armResponseTimer: return "armResponseTimer"
        case .resumeUpstreamRead: return "resumeUpstreamRead"
        case .resumeClientRead: return "resumeClientRead"
        case .forwardInterim: return "forwardInterim"
        case .releaseBody: return "releaseBody"
        case .decideChallenge: return "decideChallenge"
        case .discardChallengeBody: return "discardChallengeBody"
        case .forwardResponse: return "forwardResponse"
        case .readRestOfBody: return "readRestOfBody"
        case .switchProtocols: return "switchProtocols"
        case .finish: return "finish"
        case .fail: return "fail"
        case .abort: return "abort"
        }
    }

    func testEveryStateAgainstEveryEvent() {
        let machines = self.machines
        XCTAssertEqual(Set(machines.map(\.0)), Set(table.keys), "a row for every state")
        var pairs = 0, legal = 0
        for (stateName, machine) in machines {
            XCTAssertEqual(machine.state.name, stateName.hasPrefix("fetchingToken") ? "fetchingToken" : stateName)
            for event in events {
                pairs += 1
                let expected = table[stateName]?[event.name]
                XCTAssertEqual(machine.accepts(event), expected != nil, "\(event.name) in \(stateName)")
                guard let expected, machine.accepts(event) else { continue }
                legal += 1
                var copy = machine
                XCTAssertEqual(kind(copy.handle(event)), expected, "\(event.name) in \(stateName)")
            }
        }
        XCTAssertEqual(pairs, 10 * 29)
        XCTAssertEqual(legal, table.values.reduce(0) { $0 + $1.count }, "every legal pair of the table was exercised")
    }

    /// Whatever ends the exchange leaves it accepting nothing but a drain notice.
    func testEveryEndingLeavesTheMachineDone() {
        for (stateName, machine) in machines where !machine.isDone {
            for event in events where machine.accepts(event) {
                var copy = machine
                let action = copy.handle(event)
                switch action {
                case .finish, .fail, .abort, .switchProtocols:
                    XCTAssertTrue(copy.isDone, "\(event.name) in \(stateName)")
                    XCTAssertEqual(events.filter { copy.accepts($0) }.map(\.name), ["drainBegan"], "\(event.name) in \(stateName)")
                default:
                    XCTAssertFalse(copy.isDone, "\(event.name) in \(stateName) ends nothing")
                }
            }
        }
    }
}
