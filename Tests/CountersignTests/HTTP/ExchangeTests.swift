import XCTest
@testable import CountersignHTTP

/// The exchange machine, one transition per test: events in, actions out, no sockets.
final class ExchangeTests: XCTestCase {
    // MARK: - Fixtures

    private func request(_ method: String = "GET", version: HTTPVersion = .http11, _ fields: [(String, String)] = []) -> RequestHead {
        var headers = HeaderFields()
        for (name, value) in fields { headers.append(name, value) }
        return RequestHead(method: method, target: "/", version: version, headers: headers)
    }

    private func machine(_ head: RequestHead, framing: BodyFraming = .none, clientBound: Bool = false, replayLimit: Int = 0) -> Exchange {
        Exchange(request: Exchange.Request(head, framing: framing), upstream: UpstreamLabel(secure: false, authority: Authority(host: "origin", port: 80)), clientBound: clientBound, replayLimit: replayLimit)
    }

    /// Started with `plan`: the machine is connecting.
    private func connecting(_ head: RequestHead, framing: BodyFraming = .none, plan: Exchange.AnswerPlan = .unauthenticated,
                            clientBound: Bool = false, replayLimit: Int = 0) -> Exchange {
        var m = machine(head, framing: framing, clientBound: clientBound, replayLimit: replayLimit)
        XCTAssertEqual(m.handle(.start(tokenFirst: nil)), .chooseAnswers)
        XCTAssertEqual(m.handle(.answersChosen(plan)), .acquireUpstream)
        return m
    }

    private func response(_ status: Int, _ fields: [(String, String)] = [("Content-Length", "0")]) -> ResponseHead {
        var headers = HeaderFields()
        for (name, value) in fields { headers.append(name, value) }
        return ResponseHead(status: status, reason: "R", headers: headers)
    }

    private let plainHead = Exchange.Action.sendHead(ownExpect: false, replay: false, armContinueTimer: false, then: .armResponseTimer)

    /// A GET on a fresh connection, head sent, waiting for the response.
    private func awaiting(_ head: RequestHead? = nil, framing: BodyFraming = .none, reused: Bool = false) -> Exchange {
        var m = connecting(head ?? request(), framing: framing)
        _ = m.handle(.upstreamConnected(reused: reused, answer: .ready(handshakeLeg: false)))
        return m
    }

    private func failureType(_ action: Exchange.Action) -> String? {
        if case .fail(let failure, _) = action { return failure.type.name }
        return nil
    }

    private func failureStatus(_ action: Exchange.Action) -> Int? {
        if case .fail(let failure, _) = action { return failure.status }
        return nil
    }

    // MARK: - A final head refused before it is written

    func testAFinalHeadRefusedAfterAllBecomesAProxyErrorAndClosesTheUpstream() {
        var m = awaiting()
        guard case .forwardResponse = m.handle(.responseHead(response(200), challenged: false)) else { return XCTFail("no forwardResponse") }
        let refusal = Exchange.Failure(.httpProtocolError, details: "failed mutual authentication")
        XCTAssertEqual(m.handle(.finalHeadRefused(refusal)), .fail(refusal, client: .keepAlive))
        XCTAssertTrue(m.isDone)
        XCTAssertFalse(m.accepts(.finalHeadRefused(refusal)), "refused once")
        XCTAssertFalse(m.accepts(.upstreamEnded))
    }

    // MARK: - Starting and connecting

    func testStartAcquiresAnUpstream() {
        var m = machine(request())
        XCTAssertEqual(m.handle(.start(tokenFirst: nil)), .chooseAnswers)
        XCTAssertEqual(m.handle(.answersChosen(.unauthenticated)), .acquireUpstream)
        XCTAssertEqual(m.state, .connecting(Exchange.Attempt()))
    }

    func testStartTwiceIsAnInconsistency() {
        let m = connecting(request())
        XCTAssertFalse(m.accepts(.start(tokenFirst: nil)))
    }

    func testBodylessRequestSendsHeadThenArmsTheResponseTimer() {
        var m = connecting(request())
        XCTAssertEqual(m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false))), plainHead)
        guard case .awaitingHead = m.state else { return XCTFail("\(m.state)") }
    }

    func testRequestWithBodyPumpsItAfterTheHead() {
        var m = connecting(request("POST"), framing: .contentLength(10))
        XCTAssertEqual(m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false))),
                       .sendHead(ownExpect: false, replay: false, armContinueTimer: false, then: .pumpRequestBody))
        XCTAssertTrue(m.mayPumpRequestBody)
    }

    func testRequestBodyFinishedArmsTheResponseTimer() {
        var m = awaiting(request("POST"), framing: .contentLength(10))
        _ = m.handle(.requestBodyProgressed(keptWhole: false))
        XCTAssertEqual(m.handle(.requestBodyFinished), .armResponseTimer)
        XCTAssertFalse(m.mayPumpRequestBody)
    }

    func testConnectFailureFailsWithTheConnectionsError() {
        var m = connecting(request())
        let failure = Exchange.Failure(.destinationUnavailable, details: "refused")
        XCTAssertEqual(m.handle(.upstreamFailed(failure)), .fail(failure, client: .keepAlive))
        XCTAssertTrue(m.isDone)
    }

    func testAConnectionAfterTheEndIsNotAcceptedByTheMachine() {
        var m = connecting(request())
        _ = m.handle(.clientClosed)
        XCTAssertFalse(m.accepts(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false))))
    }

    // MARK: - Keep-alive and framing

    func testKeepAliveResponseReturnsTheConnectionToThePool() {
        var m = awaiting()
        XCTAssertEqual(m.handle(.responseHead(response(200), challenged: false)),
                       .forwardResponse(response(200), framing: .contentLength(0), clientKeepAlive: true))
        XCTAssertEqual(m.handle(.responseBodyFinished), .finish(.init(upstream: .pool, client: .keepAlive)))
    }

    func testUpstreamConnectionCloseClosesItButKeepsTheClient() {
        var m = awaiting()
        _ = m.handle(.responseHead(response(200, [("Content-Length", "0"), ("Connection", "close")]), challenged: false))
        XCTAssertEqual(m.handle(.responseBodyFinished), .finish(.init(upstream: .close, client: .keepAlive)))
    }

    func testClientConnectionCloseIsHonoured() {
        var m = awaiting(request("GET", [("Connection", "close")]))
        XCTAssertEqual(m.handle(.responseHead(response(200), challenged: false)), .forwardResponse(response(200), framing: .contentLength(0), clientKeepAlive: false))
        XCTAssertEqual(m.handle(.responseBodyFinished), .finish(.init(upstream: .pool, client: .closeAfterFlush)))
    }

    func testDrainingClosesTheClientAfterTheResponse() {
        var m = awaiting()
        XCTAssertEqual(m.handle(.drainBegan), .nothing)
        XCTAssertEqual(m.handle(.responseHead(response(200), challenged: false)), .forwardResponse(response(200), framing: .contentLength(0), clientKeepAlive: false))
    }

    func testHTTP10ClientKeepsAliveOnlyWhenItAsks() {
        var plain = awaiting(request("GET", version: .http10))
        XCTAssertEqual(plain.handle(.responseHead(response(200), challenged: false)), .forwardResponse(response(200), framing: .contentLength(0), clientKeepAlive: false))
        var asking = awaiting(request("GET", version: .http10, [("Connection", "keep-alive")]))
        XCTAssertEqual(asking.handle(.responseHead(response(200), challenged: false)), .forwardResponse(response(200), framing: .contentLength(0), clientKeepAlive: true))
    }

    func testChunkedResponseToHTTP10ClientClosesIt() {
        var m = awaiting(request("GET", version: .http10, [("Connection", "keep-alive")]))
        let chunked = response(200, [("Transfer-Encoding", "chunked")])
        XCTAssertEqual(m.handle(.responseHead(chunked, challenged: false)), .forwardResponse(chunked, framing: .chunked, clientKeepAlive: false))
    }

    func testCloseDelimitedResponseEndsAtUpstreamCloseAndClosesTheClient() {
        var m = awaiting()
        let untilClose = response(200, [])
        XCTAssertEqual(m.handle(.responseHead(untilClose, challenged: false)), .forwardResponse(untilClose, framing: .untilClose, clientKeepAlive: false))
        XCTAssertEqual(m.handle(.upstreamEnded), .readRestOfBody)
        XCTAssertEqual(m.handle(.responseBodyFinished), .finish(.init(upstream: .close, client: .closeAfterFlush)))
    }

    /// Pipelining: a response that ends before the request body was read leaves the next
    /// request's start unknown, so the client connection closes.
    func testResponseBeforeTheUploadEndsClosesTheClient() {
        var m = awaiting(request("POST"), framing: .contentLength(100))
        _ = m.handle(.requestBodyProgressed(keptWhole: false))
        _ = m.handle(.responseHead(response(413), challenged: false))
        XCTAssertEqual(m.handle(.responseBodyFinished), .finish(.init(upstream: .close, client: .closeAfterFlush)))
    }

    /// Pipelining: the upload may go on while the response streams.
    func testUploadContinuesWhileTheResponseStreams() {
        var m = awaiting(request("POST"), framing: .contentLength(100))
        _ = m.handle(.responseHead(response(200, [("Content-Length", "5")]), challenged: false))
        XCTAssertTrue(m.mayPumpRequestBody)
        XCTAssertEqual(m.handle(.requestBodyFinished), .nothing)
        XCTAssertEqual(m.handle(.responseBodyFinished), .finish(.init(upstream: .pool, client: .keepAlive)))
    }

    func testHeadResponseHasNoBodyWhateverItsContentLength() {
        var m = awaiting(request("HEAD"))
        let head = response(200, [("Content-Length", "1000")])
        XCTAssertEqual(m.handle(.responseHead(head, challenged: false)), .forwardResponse(head, framing: .none, clientKeepAlive: true))
    }

    func test204And304HaveNoBody() {
        for status in [204, 304] {
            var m = awaiting()
            let bodyless = response(status, [])
            XCTAssertEqual(m.handle(.responseHead(bodyless, challenged: false)), .forwardResponse(bodyless, framing: .none, clientKeepAlive: true), "\(status)")
        }
    }

    func testInvalidResponseFramingFailsWith502() {
        var m = awaiting()
        let smuggling = response(200, [("Content-Length", "1"), ("Content-Length", "2")])
        XCTAssertEqual(failureType(m.handle(.responseHead(smuggling, challenged: false))), "http_protocol_error")
    }

    // MARK: - Interim responses

    func testInterimResponsesAreForwardedAndTheWaitGoesOn() {
        var m = awaiting()
        XCTAssertEqual(m.handle(.responseHead(response(103, []), challenged: false)), .forwardInterim(response(103, [])))
        guard case .awaitingHead = m.state else { return XCTFail("\(m.state)") }
    }

    func testInterimResponsesAreNotSentToHTTP10Clients() {
        var m = awaiting(request("GET", version: .http10))
        XCTAssertEqual(m.handle(.responseHead(response(102, []), challenged: false)), .nothing)
    }

    func testClientsOwn100ContinueIsForwarded() {
        var m = awaiting(request("POST", [("Expect", "100-continue")]), framing: .contentLength(10))
        XCTAssertEqual(m.handle(.responseHead(response(100, []), challenged: false)), .forwardInterim(response(100, [])))
    }

    // MARK: - 100-continue on our own account

    /// A large body with auth rules and no preemptive answer waits behind our own `Expect`.
    private func holding(_ head: RequestHead) -> Exchange {
        connecting(head, framing: .chunked, plan: .authenticated(allKnown: false), replayLimit: 1024)
    }

    func testLargeBodyIsHeldBehindOurOwnExpect() {
        var m = holding(request("POST"))
        XCTAssertEqual(m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false))),
                       .sendHead(ownExpect: true, replay: false, armContinueTimer: true, then: .waitForContinue))
        XCTAssertFalse(m.mayPumpRequestBody)
    }

    func test100ReleasesTheHeldBodyWithoutForwardingIt() {
        var m = holding(request("POST"))
        _ = m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false)))
        XCTAssertEqual(m.handle(.responseHead(response(100, []), challenged: false)), .releaseBody(forward: nil))
        XCTAssertTrue(m.mayPumpRequestBody)
    }

    func test100IsForwardedWhenTheClientAskedToo() {
        var m = holding(request("POST", [("Expect", "100-continue")]))
        XCTAssertEqual(m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false))),
                       .sendHead(ownExpect: false, replay: false, armContinueTimer: true, then: .waitForContinue))
        XCTAssertEqual(m.handle(.responseHead(response(100, []), challenged: false)), .releaseBody(forward: response(100, [])))
    }

    func testContinueTimerReleasesTheBodyForServersIgnoringExpect() {
        var m = holding(request("POST"))
        _ = m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false)))
        XCTAssertEqual(m.handle(.continueTimerFired), .pumpRequestBody)
        XCTAssertEqual(m.handle(.continueTimerFired), .nothing)
    }

    func testChallengeInsteadOf100KeepsTheBodyForTheAnswer() {
        var m = holding(request("POST"))
        _ = m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false)))
        let challenge = response(401, [("Content-Length", "0"), ("WWW-Authenticate", "Basic realm=x")])
        XCTAssertEqual(m.handle(.responseHead(challenge, challenged: true)), .decideChallenge(challenge))
        // The server awaits a body that never went: the answer goes on a new connection.
        XCTAssertEqual(m.handle(.challengeDecided(.answer(bindsConnection: false), on: challenge)), .reconnect)
        XCTAssertEqual(m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false))),
                       .sendHead(ownExpect: true, replay: false, armContinueTimer: true, then: .waitForContinue))
    }

    func testKeptBodyIsNeverHeld() {
        let m = connecting(request("POST"), framing: .contentLength(10), plan: .authenticated(allKnown: false), replayLimit: 10)
        XCTAssertEqual(m.body, .waiting(keep: true))
        XCTAssertTrue(m.keepsBody)
    }

    // MARK: - 101

    func testUpgradeAskedForSwitchesToATunnel() {
        var m = awaiting(request("GET", [("Connection", "upgrade"), ("Upgrade", "websocket")]))
        let switching = response(101, [("Upgrade", "websocket")])
        XCTAssertEqual(m.handle(.responseHead(switching, challenged: false)), .switchProtocols(switching))
        XCTAssertTrue(m.isDone)
        XCTAssertFalse(m.accepts(.upstreamEnded), "the upstream is the tunnel's now")
    }

    func testUnaskedUpgradeFails() {
        var m = awaiting()
        XCTAssertEqual(failureType(m.handle(.responseHead(response(101, []), challenged: false))), "http_upgrade_failed")
    }

    // MARK: - Challenges

    private var basicChallenge: ResponseHead { response(401, [("Content-Length", "3"), ("WWW-Authenticate", "Basic realm=x")]) }

    func testChallengeWithoutAnswererGoesToTheClient() {
        var m = awaiting()
        XCTAssertEqual(m.handle(.responseHead(basicChallenge, challenged: false)),
                       .forwardResponse(basicChallenge, framing: .contentLength(3), clientKeepAlive: true))
    }

    func testAnsweredChallengeIsDiscardedThenSentAgainOnTheSameConnection() {
        var m = awaiting()
        XCTAssertEqual(m.handle(.responseHead(basicChallenge, challenged: true)), .decideChallenge(basicChallenge))
        XCTAssertEqual(m.handle(.challengeDecided(.answer(bindsConnection: false), on: basicChallenge)), .discardChallengeBody(.contentLength(3)))
        XCTAssertEqual(m.handle(.challengeBodyDiscarded), plainHead)
        XCTAssertEqual(m.handle(.responseHead(response(200), challenged: true)), .decideChallenge(response(200)))
        XCTAssertEqual(m.handle(.challengeDecided(.passThrough, on: response(200))), .forwardResponse(response(200), framing: .contentLength(0), clientKeepAlive: true))
    }

    func testChallengeOnAClosingConnectionRetriesOnANewOne() {
        var m = awaiting()
        let closing = response(401, [("Content-Length", "0"), ("Connection", "close")])
        _ = m.handle(.responseHead(closing, challenged: true))
        XCTAssertEqual(m.handle(.challengeDecided(.answer(bindsConnection: false), on: closing)), .reconnect)
        guard case .connecting = m.state else { return XCTFail("\(m.state)") }
    }

    func testSmallKeptBodyIsReplayed() {
        var m = connecting(request("POST"), framing: .contentLength(4), plan: .authenticated(allKnown: true), replayLimit: 1024)
        _ = m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false)))
        _ = m.handle(.requestBodyProgressed(keptWhole: true))
        _ = m.handle(.requestBodyFinished)
        XCTAssertTrue(m.bodyReplayable)
        _ = m.handle(.responseHead(basicChallenge, challenged: true))
        _ = m.handle(.challengeDecided(.answer(bindsConnection: false), on: basicChallenge))
        XCTAssertEqual(m.handle(.challengeBodyDiscarded), .sendHead(ownExpect: false, replay: true, armContinueTimer: false, then: .armResponseTimer))
    }

    func testBodyNotKeptIsNotReplayable() {
        var m = awaiting(request("POST"), framing: .chunked)
        _ = m.handle(.requestBodyProgressed(keptWhole: false))
        XCTAssertFalse(m.bodyReplayable)
    }

    /// With the upload unfinished the connection cannot carry the next attempt (its framing is
    /// mid-body): a new connection.
    func testChallengeDuringTheUploadRetriesOnANewConnection() {
        var m = awaiting(request("POST"), framing: .contentLength(4))
        _ = m.handle(.requestBodyProgressed(keptWhole: true))
        _ = m.handle(.responseHead(basicChallenge, challenged: true))
        XCTAssertEqual(m.handle(.challengeDecided(.answer(bindsConnection: false), on: basicChallenge)), .reconnect)
    }

    func testChallengeVerdictFailFailsWithAConfigurationError() {
        var m = awaiting()
        _ = m.handle(.responseHead(basicChallenge, challenged: true))
        XCTAssertEqual(failureType(m.handle(.challengeDecided(.fail(reason: "no credential"), on: basicChallenge))), "proxy_configuration_error")
    }

    func testInvalidChallengeBodyFails() {
        var m = awaiting()
        _ = m.handle(.responseHead(basicChallenge, challenged: true))
        _ = m.handle(.challengeDecided(.answer(bindsConnection: false), on: basicChallenge))
        XCTAssertEqual(failureType(m.handle(.challengeBodyInvalid)), "http_protocol_error")
    }

    /// Digest `stale=true`: the rules answer again, and the machine sends again.
    func testStaleChallengeIsAnsweredAgain() {
        var m = awaiting()
        for _ in 0..<2 {
            _ = m.handle(.responseHead(basicChallenge, challenged: true))
            _ = m.handle(.challengeDecided(.answer(bindsConnection: false), on: basicChallenge))
            XCTAssertEqual(m.handle(.challengeBodyDiscarded), plainHead)
        }
    }

    /// `max_failures` and the per-request answer budget are the rules' verdicts: once spent,
    /// the challenge goes to the client as it came.
    func testSpentAnswerBudgetPassesTheChallengeThrough() {
        var m = awaiting()
        _ = m.handle(.responseHead(basicChallenge, challenged: true))
        _ = m.handle(.challengeDecided(.answer(bindsConnection: false), on: basicChallenge))
        _ = m.handle(.challengeBodyDiscarded)
        _ = m.handle(.responseHead(basicChallenge, challenged: true))
        XCTAssertEqual(m.handle(.challengeDecided(.passThrough, on: basicChallenge)),
                       .forwardResponse(basicChallenge, framing: .contentLength(3), clientKeepAlive: true))
    }

    // MARK: - Binding schemes (NTLM, Negotiate)

    private var ntlmChallenge: ResponseHead { response(401, [("Content-Length", "0"), ("WWW-Authenticate", "NTLM")]) }

    func testThreeLegsOnOneBoundConnection() {
        var m = connecting(request("POST"), framing: .contentLength(4), plan: .authenticated(allKnown: true), replayLimit: 1024)
        // Leg 1 (negotiate, preemptive): no body.
        XCTAssertEqual(m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: true))), plainHead)
        XCTAssertFalse(m.mayPumpRequestBody)
        _ = m.handle(.responseHead(ntlmChallenge, challenged: true))
        XCTAssertEqual(m.handle(.challengeDecided(.answer(bindsConnection: true), on: ntlmChallenge)), .discardChallengeBody(.contentLength(0)))
        // Leg 3 (authenticate): the body goes with it, on the same connection, at once.
        XCTAssertEqual(m.handle(.challengeBodyDiscarded),
                       .sendHead(ownExpect: false, replay: false, armContinueTimer: false, then: .pumpRequestBody))
        XCTAssertTrue(m.mayPumpRequestBody)
    }

    func testHandshakeLegCarriesNoOwnExpect() {
        var m = holding(request("POST"))
        XCTAssertEqual(m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: true))), plainHead)
    }

    func testBoundHandshakeCannotMoveToAnotherConnection() {
        var m = awaiting()
        let closing = response(401, [("Content-Length", "0"), ("Connection", "close"), ("WWW-Authenticate", "NTLM x")])
        _ = m.handle(.responseHead(closing, challenged: true))
        XCTAssertEqual(failureType(m.handle(.challengeDecided(.answer(bindsConnection: true), on: closing))), "http_protocol_error")
    }

    func testClientsOwnBindingKeepsTheConnectionForTheClient() {
        var m = connecting(request("GET", [("Authorization", "NTLM abc")]), clientBound: true)
        _ = m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false)))
        _ = m.handle(.responseHead(response(200), challenged: false))
        XCTAssertEqual(m.handle(.responseBodyFinished), .finish(.init(upstream: .keepBound, client: .keepAlive)))
    }

    func testClientBoundConnectionClosesWithTheClient() {
        var m = connecting(request("GET", [("Connection", "close")]), clientBound: true)
        _ = m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false)))
        _ = m.handle(.responseHead(response(200), challenged: false))
        XCTAssertEqual(m.handle(.responseBodyFinished), .finish(.init(upstream: .close, client: .closeAfterFlush)))
    }

    // MARK: - Parent proxy then origin

    func testParent407ThenOrigin401AreBothAnswered() {
        var m = awaiting()
        let proxyChallenge = response(407, [("Content-Length", "0"), ("Proxy-Authenticate", "Basic realm=p")])
        XCTAssertEqual(m.handle(.responseHead(proxyChallenge, challenged: true)), .decideChallenge(proxyChallenge))
        _ = m.handle(.challengeDecided(.answer(bindsConnection: false), on: proxyChallenge))
        XCTAssertEqual(m.handle(.challengeBodyDiscarded), plainHead)
        XCTAssertEqual(m.handle(.responseHead(basicChallenge, challenged: true)), .decideChallenge(basicChallenge))
        _ = m.handle(.challengeDecided(.answer(bindsConnection: false), on: basicChallenge))
        XCTAssertEqual(m.handle(.challengeBodyDiscarded), plainHead)
    }

    // MARK: - OAuth2 tokens

    // MARK: - An answer made off the event loop (a first Kerberos token)

    func testAChallengeWaitsUnreadWhileItsAnswerIsMadeThenIsDecidedAgain() {
        var m = awaiting()
        let negotiate = response(401, [("Content-Length", "5"), ("WWW-Authenticate", "Negotiate")])
        XCTAssertEqual(m.handle(.responseHead(negotiate, challenged: true)), .decideChallenge(negotiate))
        XCTAssertEqual(m.handle(.challengeDecided(.prepareAnswer, on: negotiate)), .prepareAnswer, "the 401's body is not discarded yet")
        XCTAssertFalse(m.responseStarted)
        XCTAssertEqual(m.handle(.answerPrepared(handshakeLeg: false)), .decideChallenge(negotiate))
        XCTAssertEqual(m.handle(.challengeDecided(.answer(bindsConnection: true), on: negotiate)), .discardChallengeBody(.contentLength(5)))
    }

    func testWithoutAnAnswerThePreparedChallengeGoesToTheClientWhole() {
        var m = awaiting()
        let negotiate = response(401, [("Content-Length", "5"), ("WWW-Authenticate", "Negotiate")])
        _ = m.handle(.responseHead(negotiate, challenged: true))
        _ = m.handle(.challengeDecided(.prepareAnswer, on: negotiate))
        _ = m.handle(.answerPrepared(handshakeLeg: false))
        XCTAssertEqual(m.handle(.challengeDecided(.passThrough, on: negotiate)),
                       .forwardResponse(negotiate, framing: .contentLength(5), clientKeepAlive: true))
    }

    func testAPreemptiveAnswerMadeOffTheLoopResumesTheAttachedConnection() {
        var m = connecting(request())
        XCTAssertEqual(m.handle(.upstreamConnected(reused: false, answer: .toPrepare)), .prepareAnswer, "nothing is sent while the token is made")
        XCTAssertFalse(m.accepts(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false))))
        XCTAssertEqual(m.handle(.answerPrepared(handshakeLeg: false)), plainHead, "the head goes on the attached connection")
    }

    func testAResultForAnExchangeWhoseClientLeftIsDropped() {
        var m = awaiting()
        let negotiate = response(401, [("Content-Length", "0"), ("WWW-Authenticate", "Negotiate")])
        _ = m.handle(.responseHead(negotiate, challenged: true))
        _ = m.handle(.challengeDecided(.prepareAnswer, on: negotiate))
        XCTAssertEqual(m.handle(.clientClosed), .abort(errorType: "client_closed", client: .gone))
        XCTAssertTrue(m.isDone, "the driver drops a result for an exchange that is done")
        XCTAssertFalse(m.accepts(.answerPrepared(handshakeLeg: false)))
    }

    func testAServerClosingAfterItsChallengeGetsTheAnswerOnANewConnection() {
        var m = awaiting()
        let negotiate = response(401, [("Content-Length", "0"), ("WWW-Authenticate", "Negotiate")])
        _ = m.handle(.responseHead(negotiate, challenged: true))
        _ = m.handle(.challengeDecided(.prepareAnswer, on: negotiate))
        XCTAssertEqual(m.handle(.upstreamEnded), .nothing, "the challenge is read: its answer can still go")
        XCTAssertEqual(m.handle(.answerPrepared(handshakeLeg: false)), .decideChallenge(negotiate))
        XCTAssertEqual(m.handle(.challengeDecided(.answer(bindsConnection: false), on: negotiate)), .reconnect)
    }

    func testTheUpstreamClosingBeforeAPreemptiveAnswerIsMadeFailsTheExchange() {
        var m = connecting(request())
        _ = m.handle(.upstreamConnected(reused: false, answer: .toPrepare))
        XCTAssertEqual(failureType(m.handle(.upstreamEnded)), "http_response_incomplete")
        XCTAssertTrue(m.isDone, "the late result is dropped")
    }

    func testTokenFetchedBeforeTheFirstAttempt() {
        var m = machine(request())
        XCTAssertEqual(m.handle(.start(tokenFirst: "api")), .fetchToken)
        XCTAssertEqual(m.handle(.tokenArrived), .chooseAnswers)
        XCTAssertEqual(m.handle(.answersChosen(.authenticated(allKnown: true))), .acquireUpstream)
    }

    func testTokenRefreshAfterAChallengeDecidesAgain() {
        var m = awaiting()
        let bearer = response(401, [("Content-Length", "0"), ("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
        _ = m.handle(.responseHead(bearer, challenged: true))
        XCTAssertEqual(m.handle(.challengeDecided(.fetchToken(credential: "api"), on: bearer)), .discardChallengeBody(.contentLength(0)))
        XCTAssertEqual(m.handle(.challengeBodyDiscarded), .fetchToken)
        XCTAssertEqual(m.handle(.tokenArrived), .decideChallenge(bearer))
        XCTAssertEqual(m.handle(.challengeDecided(.answer(bindsConnection: false), on: bearer)), plainHead, "on the same connection")
    }

    func testRefreshedTokenNotUsableFails() {
        var m = awaiting()
        let bearer = response(401, [("Content-Length", "0"), ("WWW-Authenticate", "Bearer")])
        _ = m.handle(.responseHead(bearer, challenged: true))
        _ = m.handle(.challengeDecided(.fetchToken(credential: "api"), on: bearer))
        _ = m.handle(.challengeBodyDiscarded)
        _ = m.handle(.tokenArrived)
        XCTAssertEqual(failureType(m.handle(.challengeDecided(.passThrough, on: bearer))), "proxy_configuration_error")
    }

    func testTokenEndpointFailureFails() {
        var m = machine(request())
        _ = m.handle(.start(tokenFirst: "api"))
        let failure = Exchange.Failure(.proxyConfigurationError, details: "token endpoint said 400")
        XCTAssertEqual(m.handle(.tokenFailed(failure)), .fail(failure, client: .keepAlive))
    }

    // MARK: - Failures and timeouts

    func testStalePooledConnectionIsRetriedOnce() {
        var m = awaiting(reused: true)
        XCTAssertEqual(m.handle(.upstreamEnded), .reconnect)
        _ = m.handle(.upstreamConnected(reused: true, answer: .ready(handshakeLeg: false)))
        XCTAssertEqual(failureType(m.handle(.upstreamEnded)), "http_response_incomplete")
    }

    func testStaleConnectionWithBodyIsNotRetried() {
        var m = awaiting(request("POST"), framing: .contentLength(3), reused: true)
        XCTAssertEqual(failureType(m.handle(.upstreamEnded)), "http_response_incomplete")
    }

    func testCloseAfterResponseBytesIsNotRetried() {
        var m = awaiting(reused: true)
        _ = m.handle(.responseBytesArrived)
        XCTAssertEqual(failureType(m.handle(.upstreamEnded)), "http_response_incomplete")
    }

    func testFreshConnectionClosedWithoutResponseFails() {
        var m = awaiting()
        XCTAssertEqual(failureType(m.handle(.upstreamEnded)), "http_response_incomplete")
    }

    func testResponseTimeoutIs504() {
        var m = awaiting()
        let action = m.handle(.responseTimerFired(after: "15s"))
        XCTAssertEqual(failureStatus(action), 504)
        XCTAssertEqual(failureType(action), "http_response_timeout")
    }

    func testResponseTimerAfterTheHeadIsIgnored() {
        var m = awaiting()
        _ = m.handle(.responseHead(response(200, [("Content-Length", "9")]), challenged: false))
        XCTAssertEqual(m.handle(.responseTimerFired(after: "15s")), .nothing)
    }

    func testReadTimeoutDuringTheUploadKeepsWaiting() {
        var m = awaiting(request("POST"), framing: .chunked)
        XCTAssertEqual(m.handle(.upstreamReadTimedOut), .resumeUpstreamRead)
    }

    func testWriteTimeoutBeforeTheResponseIs504() {
        var m = awaiting()
        XCTAssertEqual(failureStatus(m.handle(.upstreamBroke(timeout: true, detail: "timeout"))), 504)
    }

    func testConnectionErrorBeforeTheResponseIs502() {
        var m = awaiting()
        XCTAssertEqual(failureType(m.handle(.upstreamBroke(timeout: false, detail: "reset"))), "connection_terminated")
    }

    func testErrorDuringTheResponseBodyAborts() {
        var m = awaiting()
        _ = m.handle(.responseHead(response(200, [("Content-Length", "9")]), challenged: false))
        XCTAssertEqual(m.handle(.upstreamReadTimedOut), .abort(errorType: "connection_read_timeout", client: .closeNow))
    }

    func testTruncatedResponseBodyAborts() {
        var m = awaiting()
        _ = m.handle(.responseHead(response(200, [("Content-Length", "9")]), challenged: false))
        XCTAssertEqual(m.handle(.upstreamEnded), .abort(errorType: "http_response_incomplete", client: .closeNow))
    }

    func testInvalidResponseBodyAborts() {
        var m = awaiting()
        _ = m.handle(.responseHead(response(200, [("Transfer-Encoding", "chunked")]), challenged: false))
        XCTAssertEqual(m.handle(.responseBodyInvalid), .abort(errorType: "http_protocol_error", client: .closeNow))
    }

    func testInvalidResponseHeadFails() {
        var m = awaiting()
        XCTAssertEqual(failureType(m.handle(.invalidResponseHead(tooLarge: true, detail: "too large"))), "http_response_header_section_size")
        XCTAssertTrue(m.isDone)
    }

    func testInvalidRequestBodyBeforeTheResponseFails() {
        var m = awaiting(request("POST"), framing: .chunked)
        let failure = Exchange.Failure(.httpRequestError(status: 400), details: "bad chunk")
        XCTAssertEqual(m.handle(.requestBodyInvalid(failure)), .fail(failure, client: .closeAfterFlush), "the rest of the body is unread")
    }

    func testInvalidRequestBodyAfterTheResponseStartedAborts() {
        var m = awaiting(request("POST"), framing: .chunked)
        _ = m.handle(.responseHead(response(200, [("Content-Length", "9")]), challenged: false))
        let failure = Exchange.Failure(.httpRequestError(status: 400), details: "bad chunk")
        XCTAssertEqual(m.handle(.requestBodyInvalid(failure)), .abort(errorType: "http_request_error", client: .closeNow))
    }

    func testClientClosingEndsTheExchangeOnce() {
        var m = awaiting()
        XCTAssertEqual(m.handle(.clientClosed), .abort(errorType: "client_closed", client: .gone))
        XCTAssertFalse(m.accepts(.clientClosed))
        XCTAssertFalse(m.accepts(.responseTimerFired(after: "1s")))
        XCTAssertFalse(m.accepts(.upstreamEnded))
    }

    func testNoEventIsAcceptedAfterTheEnd() {
        var m = awaiting()
        _ = m.handle(.responseHead(response(200), challenged: false))
        _ = m.handle(.responseBodyFinished)
        XCTAssertFalse(m.accepts(.responseBodyFinished))
        XCTAssertFalse(m.accepts(.clientClosed))
        XCTAssertFalse(m.accepts(.upstreamEnded))
    }

    // MARK: - Decisions the machine took over from the driver

    func testADrainThatBeginsDuringTheResponseClosesTheClientAfterIt() {
        var m = awaiting()
        XCTAssertEqual(m.handle(.responseHead(response(200), challenged: false)),
                       .forwardResponse(response(200), framing: .contentLength(0), clientKeepAlive: true))
        XCTAssertEqual(m.handle(.drainBegan), .nothing)
        XCTAssertEqual(m.handle(.responseBodyFinished), .finish(.init(upstream: .pool, client: .closeAfterFlush)))
    }

    func testAProxyErrorDuringADrainClosesTheClient() {
        var m = awaiting()
        _ = m.handle(.drainBegan)
        XCTAssertEqual(failureType(m.handle(.responseTimerFired(after: "1s"))), "http_response_timeout")
        let failure = Exchange.Failure(.destinationUnavailable, details: "x")
        var other = connecting(request())
        _ = other.handle(.drainBegan)
        XCTAssertEqual(other.handle(.upstreamFailed(failure)), .fail(failure, client: .closeAfterFlush))
    }

    func testALargeBodyIsNeitherKeptNorHeldWhenEveryAnswerIsKnown() {
        let m = connecting(request("POST"), framing: .contentLength(5000), plan: .authenticated(allKnown: true), replayLimit: 1024)
        XCTAssertEqual(m.body, .waiting(keep: false))
    }

    func testWithoutAuthRulesNoBodyIsKept() {
        let m = connecting(request("POST"), framing: .contentLength(4), plan: .unauthenticated, replayLimit: 1024)
        XCTAssertEqual(m.body, .waiting(keep: false))
    }

    func testTheReplayLimitDecidesKeepOrHold() {
        let kept = connecting(request("POST"), framing: .contentLength(1024), plan: .authenticated(allKnown: false), replayLimit: 1024)
        XCTAssertEqual(kept.body, .waiting(keep: true))
        let held = connecting(request("POST"), framing: .contentLength(1025), plan: .authenticated(allKnown: false), replayLimit: 1024)
        XCTAssertEqual(held.body, .held)
    }

    func testTheBodyPhasesFollowTheUpload() {
        var m = connecting(request("POST"), framing: .contentLength(4), plan: .authenticated(allKnown: true), replayLimit: 1024)
        _ = m.handle(.upstreamConnected(reused: false, answer: .ready(handshakeLeg: false)))
        _ = m.handle(.requestBodyProgressed(keptWhole: true))
        XCTAssertEqual(m.body, .uploading(kept: true))
        _ = m.handle(.requestBodyFinished)
        XCTAssertEqual(m.body, .sent(kept: true))
        XCTAssertTrue(m.bodyReplayable)
    }

    /// The upstream closed while a first Kerberos token was made and the rules then passed
    /// the challenge on: the driver learns it with the head, since no further event will say so.
    func testAChallengePassedOnAfterItsUpstreamEndedSaysSo() {
        var m = awaiting()
        let negotiate = response(401, [("Content-Length", "5"), ("WWW-Authenticate", "Negotiate")])
        _ = m.handle(.responseHead(negotiate, challenged: true))
        _ = m.handle(.challengeDecided(.prepareAnswer, on: negotiate))
        _ = m.handle(.upstreamEnded)
        XCTAssertEqual(m.handle(.answerPrepared(handshakeLeg: false)), .decideChallenge(negotiate))
        XCTAssertEqual(m.handle(.challengeDecided(.passThrough, on: negotiate)),
                       .forwardResponse(negotiate, framing: .contentLength(5), clientKeepAlive: true, upstreamEnded: true))
    }

    /// A connection that ends while a token is fetched cannot carry the retry: a new one does.
    func testAnUpstreamEndingDuringATokenFetchMakesTheRetryReconnect() {
        var m = awaiting()
        let bearer = response(401, [("Content-Length", "0"), ("WWW-Authenticate", "Bearer")])
        _ = m.handle(.responseHead(bearer, challenged: true))
        _ = m.handle(.challengeDecided(.fetchToken(credential: "api"), on: bearer))
        XCTAssertEqual(m.handle(.challengeBodyDiscarded), .fetchToken)
        XCTAssertEqual(m.handle(.upstreamEnded), .nothing)
        XCTAssertEqual(m.handle(.tokenArrived), .decideChallenge(bearer))
        XCTAssertEqual(m.handle(.challengeDecided(.answer(bindsConnection: false), on: bearer)), .reconnect)
    }

    func testAClientSilentWhileTheKDCIsAskedIsNotIdle() {
        var m = connecting(request("POST"), framing: .contentLength(10))
        _ = m.handle(.upstreamConnected(reused: false, answer: .toPrepare))
        XCTAssertEqual(m.handle(.clientReadTimedOut), .resumeClientRead)
    }

    /// The client's read timeout is idle_timeout, the longest silence within its request: it
    /// ends an exchange only while the request body is still coming. After it, the client
    /// waits for the answer or takes it in (a long download), and its silence is no fault.
    func testAClientIsIdleOnlyWhileItsRequestIsStillComing() {
        var uploading = awaiting(request("POST"), framing: .contentLength(10))
        _ = uploading.handle(.requestBodyProgressed(keptWhole: false))
        XCTAssertEqual(uploading.handle(.clientReadTimedOut), .abort(errorType: "client_closed", client: .closeNow))

        var waiting = awaiting(request("POST"), framing: .contentLength(10))
        _ = waiting.handle(.requestBodyProgressed(keptWhole: false))
        _ = waiting.handle(.requestBodyFinished)
        XCTAssertEqual(waiting.handle(.clientReadTimedOut), .resumeClientRead)

        var downloading = awaiting()
        XCTAssertEqual(downloading.handle(.clientReadTimedOut), .resumeClientRead)
        _ = downloading.handle(.responseHead(response(200, [("Content-Length", "5")]), challenged: false))
        XCTAssertEqual(downloading.handle(.clientReadTimedOut), .resumeClientRead)
        XCTAssertFalse(downloading.isDone)
    }

    func testTheReadModeFollowsTheResponse() {
        var m = awaiting()
        XCTAssertEqual(m.readMode, .head)
        _ = m.handle(.responseHead(basicChallenge, challenged: true))
        _ = m.handle(.challengeDecided(.answer(bindsConnection: false), on: basicChallenge))
        XCTAssertEqual(m.readMode, .discard)
        _ = m.handle(.challengeBodyDiscarded)
        XCTAssertEqual(m.readMode, .head)
        _ = m.handle(.responseHead(response(200, [("Content-Length", "2")]), challenged: false))
        XCTAssertEqual(m.readMode, .body)
        _ = m.handle(.responseBodyFinished)
        XCTAssertEqual(m.readMode, .none)
    }
}
