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

    private func machine(_ head: RequestHead, framing: BodyFraming = .none, clientBound: Bool = false) -> Exchange {
        Exchange(request: Exchange.Request(head, framing: framing), upstreamName: "origin:80", clientBound: clientBound)
    }

    private func response(_ status: Int, _ fields: [(String, String)] = [("Content-Length", "0")]) -> ResponseHead {
        var headers = HeaderFields()
        for (name, value) in fields { headers.append(name, value) }
        return ResponseHead(status: status, reason: "R", headers: headers)
    }

    private let plainHead = Exchange.Action.sendHead(ownExpect: false, replay: false, armContinueTimer: false, then: .armResponseTimer)

    /// A GET on a fresh connection, head sent, waiting for the response.
    private func awaiting(_ head: RequestHead? = nil, framing: BodyFraming = .none, reused: Bool = false) -> Exchange {
        var m = machine(head ?? request(), framing: framing)
        XCTAssertEqual(m.start(tokenFirst: nil), .acquireUpstream)
        _ = m.upstreamConnected(reused: reused, handshakeLeg: false)
        return m
    }

    private func failureType(_ action: Exchange.Action) -> String? {
        if case .fail(let failure) = action { return failure.type.name }
        return nil
    }

    private func failureStatus(_ action: Exchange.Action) -> Int? {
        if case .fail(let failure) = action { return failure.status }
        return nil
    }

    // MARK: - A final head refused before it is written

    func testAFinalHeadRefusedAfterAllBecomesAProxyErrorAndClosesTheUpstream() {
        var m = awaiting()
        guard case .forwardResponse = m.responseHead(response(200), challenged: false) else { return XCTFail("no forwardResponse") }
        let refusal = Exchange.Failure(.httpProtocolError, details: "failed mutual authentication")
        XCTAssertEqual(m.finalHeadRefused(refusal), .fail(refusal))
        XCTAssertTrue(m.isDone)
        XCTAssertEqual(m.finalHeadRefused(refusal), .nothing, "refused once")
        XCTAssertEqual(m.upstreamClosed(), .nothing)
    }

    // MARK: - Starting and connecting

    func testStartAcquiresAnUpstream() {
        var m = machine(request())
        XCTAssertEqual(m.start(tokenFirst: nil), .acquireUpstream)
        XCTAssertEqual(m.state, .connecting(Exchange.Attempt()))
    }

    func testStartTwiceDoesNothing() {
        var m = machine(request())
        _ = m.start(tokenFirst: nil)
        XCTAssertEqual(m.start(tokenFirst: nil), .nothing)
    }

    func testBodylessRequestSendsHeadThenArmsTheResponseTimer() {
        var m = machine(request())
        _ = m.start(tokenFirst: nil)
        XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: false), plainHead)
        guard case .awaitingHead = m.state else { return XCTFail("\(m.state)") }
    }

    func testRequestWithBodyPumpsItAfterTheHead() {
        var m = machine(request("POST"), framing: .contentLength(10))
        _ = m.start(tokenFirst: nil)
        XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: false),
                       .sendHead(ownExpect: false, replay: false, armContinueTimer: false, then: .pumpRequestBody))
        XCTAssertTrue(m.mayPumpRequestBody)
    }

    func testRequestBodyFinishedArmsTheResponseTimer() {
        var m = awaiting(request("POST"), framing: .contentLength(10))
        m.requestBodyProgressed(keptWhole: false)
        XCTAssertEqual(m.requestBodyFinished(), .armResponseTimer)
        XCTAssertFalse(m.mayPumpRequestBody)
    }

    func testConnectFailureFailsWithTheConnectionsError() {
        var m = machine(request())
        _ = m.start(tokenFirst: nil)
        let failure = Exchange.Failure(.destinationUnavailable, details: "refused")
        XCTAssertEqual(m.upstreamFailed(failure), .fail(failure))
        XCTAssertTrue(m.isDone)
    }

    func testConnectionArrivingAfterTheEndIsIgnored() {
        var m = machine(request())
        _ = m.start(tokenFirst: nil)
        _ = m.clientClosed()
        XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: false), .nothing)
    }

    // MARK: - Keep-alive and framing

    func testKeepAliveResponseReturnsTheConnectionToThePool() {
        var m = awaiting()
        XCTAssertEqual(m.responseHead(response(200), challenged: false),
                       .forwardResponse(response(200), framing: .contentLength(0), clientKeepAlive: true))
        XCTAssertEqual(m.responseBodyFinished(), .finish(.pool, clientKeepAlive: true))
    }

    func testUpstreamConnectionCloseClosesItButKeepsTheClient() {
        var m = awaiting()
        _ = m.responseHead(response(200, [("Content-Length", "0"), ("Connection", "close")]), challenged: false)
        XCTAssertEqual(m.responseBodyFinished(), .finish(.close, clientKeepAlive: true))
    }

    func testClientConnectionCloseIsHonoured() {
        var m = awaiting(request("GET", [("Connection", "close")]))
        XCTAssertEqual(m.responseHead(response(200), challenged: false), .forwardResponse(response(200), framing: .contentLength(0), clientKeepAlive: false))
        XCTAssertEqual(m.responseBodyFinished(), .finish(.pool, clientKeepAlive: false))
    }

    func testDrainingClosesTheClientAfterTheResponse() {
        var m = awaiting()
        m.clientMustClose = true
        XCTAssertEqual(m.responseHead(response(200), challenged: false), .forwardResponse(response(200), framing: .contentLength(0), clientKeepAlive: false))
    }

    func testHTTP10ClientKeepsAliveOnlyWhenItAsks() {
        var plain = awaiting(request("GET", version: .http10))
        XCTAssertEqual(plain.responseHead(response(200), challenged: false), .forwardResponse(response(200), framing: .contentLength(0), clientKeepAlive: false))
        var asking = awaiting(request("GET", version: .http10, [("Connection", "keep-alive")]))
        XCTAssertEqual(asking.responseHead(response(200), challenged: false), .forwardResponse(response(200), framing: .contentLength(0), clientKeepAlive: true))
    }

    func testChunkedResponseToHTTP10ClientClosesIt() {
        var m = awaiting(request("GET", version: .http10, [("Connection", "keep-alive")]))
        let chunked = response(200, [("Transfer-Encoding", "chunked")])
        XCTAssertEqual(m.responseHead(chunked, challenged: false), .forwardResponse(chunked, framing: .chunked, clientKeepAlive: false))
    }

    func testCloseDelimitedResponseEndsAtUpstreamCloseAndClosesTheClient() {
        var m = awaiting()
        let untilClose = response(200, [])
        XCTAssertEqual(m.responseHead(untilClose, challenged: false), .forwardResponse(untilClose, framing: .untilClose, clientKeepAlive: false))
        XCTAssertEqual(m.upstreamClosed(), .finish(.close, clientKeepAlive: false))
    }

    /// Pipelining: a response that ends before the request body was read leaves the next
    /// request's start unknown, so the client connection closes.
    func testResponseBeforeTheUploadEndsClosesTheClient() {
        var m = awaiting(request("POST"), framing: .contentLength(100))
        m.requestBodyProgressed(keptWhole: false)
        _ = m.responseHead(response(413), challenged: false)
        XCTAssertEqual(m.responseBodyFinished(), .finish(.close, clientKeepAlive: false))
    }

    /// Pipelining: the upload may go on while the response streams.
    func testUploadContinuesWhileTheResponseStreams() {
        var m = awaiting(request("POST"), framing: .contentLength(100))
        _ = m.responseHead(response(200, [("Content-Length", "5")]), challenged: false)
        XCTAssertTrue(m.mayPumpRequestBody)
        XCTAssertEqual(m.requestBodyFinished(), .nothing)
        XCTAssertEqual(m.responseBodyFinished(), .finish(.pool, clientKeepAlive: true))
    }

    func testHeadResponseHasNoBodyWhateverItsContentLength() {
        var m = awaiting(request("HEAD"))
        let head = response(200, [("Content-Length", "1000")])
        XCTAssertEqual(m.responseHead(head, challenged: false), .forwardResponse(head, framing: .none, clientKeepAlive: true))
    }

    func test204And304HaveNoBody() {
        for status in [204, 304] {
            var m = awaiting()
            let bodyless = response(status, [])
            XCTAssertEqual(m.responseHead(bodyless, challenged: false), .forwardResponse(bodyless, framing: .none, clientKeepAlive: true), "\(status)")
        }
    }

    func testInvalidResponseFramingFailsWith502() {
        var m = awaiting()
        let smuggling = response(200, [("Content-Length", "1"), ("Content-Length", "2")])
        XCTAssertEqual(failureType(m.responseHead(smuggling, challenged: false)), "http_protocol_error")
    }

    // MARK: - Interim responses

    func testInterimResponsesAreForwardedAndTheWaitGoesOn() {
        var m = awaiting()
        XCTAssertEqual(m.responseHead(response(103, []), challenged: false), .forwardInterim(response(103, [])))
        guard case .awaitingHead = m.state else { return XCTFail("\(m.state)") }
    }

    func testInterimResponsesAreNotSentToHTTP10Clients() {
        var m = awaiting(request("GET", version: .http10))
        XCTAssertEqual(m.responseHead(response(102, []), challenged: false), .nothing)
    }

    func testClientsOwn100ContinueIsForwarded() {
        var m = awaiting(request("POST", [("Expect", "100-continue")]), framing: .contentLength(10))
        XCTAssertEqual(m.responseHead(response(100, []), challenged: false), .forwardInterim(response(100, [])))
    }

    // MARK: - 100-continue on our own account

    /// A large body with auth rules and no preemptive answer waits behind our own `Expect`.
    private func holding(_ head: RequestHead) -> Exchange {
        var m = machine(head, framing: .chunked)
        m.prepareBody(keep: false, hold: true)
        _ = m.start(tokenFirst: nil)
        return m
    }

    func testLargeBodyIsHeldBehindOurOwnExpect() {
        var m = holding(request("POST"))
        XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: false),
                       .sendHead(ownExpect: true, replay: false, armContinueTimer: true, then: .waitForContinue))
        XCTAssertFalse(m.mayPumpRequestBody)
    }

    func test100ReleasesTheHeldBodyWithoutForwardingIt() {
        var m = holding(request("POST"))
        _ = m.upstreamConnected(reused: false, handshakeLeg: false)
        XCTAssertEqual(m.responseHead(response(100, []), challenged: false), .releaseBody(forward: nil))
        XCTAssertTrue(m.mayPumpRequestBody)
    }

    func test100IsForwardedWhenTheClientAskedToo() {
        var m = holding(request("POST", [("Expect", "100-continue")]))
        XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: false),
                       .sendHead(ownExpect: false, replay: false, armContinueTimer: true, then: .waitForContinue))
        XCTAssertEqual(m.responseHead(response(100, []), challenged: false), .releaseBody(forward: response(100, [])))
    }

    func testContinueTimerReleasesTheBodyForServersIgnoringExpect() {
        var m = holding(request("POST"))
        _ = m.upstreamConnected(reused: false, handshakeLeg: false)
        XCTAssertEqual(m.continueTimerFired(), .pumpRequestBody)
        XCTAssertEqual(m.continueTimerFired(), .nothing)
    }

    func testChallengeInsteadOf100KeepsTheBodyForTheAnswer() {
        var m = holding(request("POST"))
        _ = m.upstreamConnected(reused: false, handshakeLeg: false)
        let challenge = response(401, [("Content-Length", "0"), ("WWW-Authenticate", "Basic realm=x")])
        XCTAssertEqual(m.responseHead(challenge, challenged: true), .decideChallenge(challenge))
        // The server awaits a body that never went: the answer goes on a new connection.
        XCTAssertEqual(m.challengeDecided(.answer(bindsConnection: false), on: challenge), .reconnect)
        XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: false),
                       .sendHead(ownExpect: true, replay: false, armContinueTimer: true, then: .waitForContinue))
    }

    func testKeptBodyIsNeverHeld() {
        var m = machine(request("POST"), framing: .contentLength(10))
        m.prepareBody(keep: true, hold: true)
        XCTAssertFalse(m.body.held)
    }

    // MARK: - 101

    func testUpgradeAskedForSwitchesToATunnel() {
        var m = awaiting(request("GET", [("Connection", "upgrade"), ("Upgrade", "websocket")]))
        let switching = response(101, [("Upgrade", "websocket")])
        XCTAssertEqual(m.responseHead(switching, challenged: false), .switchProtocols(switching))
        XCTAssertEqual(m.state, .upgraded)
        XCTAssertEqual(m.upstreamClosed(), .nothing)
    }

    func testUnaskedUpgradeFails() {
        var m = awaiting()
        XCTAssertEqual(failureType(m.responseHead(response(101, []), challenged: false)), "http_upgrade_failed")
    }

    // MARK: - Challenges

    private var basicChallenge: ResponseHead { response(401, [("Content-Length", "3"), ("WWW-Authenticate", "Basic realm=x")]) }

    func testChallengeWithoutAnswererGoesToTheClient() {
        var m = awaiting()
        XCTAssertEqual(m.responseHead(basicChallenge, challenged: false),
                       .forwardResponse(basicChallenge, framing: .contentLength(3), clientKeepAlive: true))
    }

    func testAnsweredChallengeIsDiscardedThenSentAgainOnTheSameConnection() {
        var m = awaiting()
        XCTAssertEqual(m.responseHead(basicChallenge, challenged: true), .decideChallenge(basicChallenge))
        XCTAssertEqual(m.challengeDecided(.answer(bindsConnection: false), on: basicChallenge), .discardChallengeBody(.contentLength(3)))
        XCTAssertEqual(m.challengeBodyDiscarded(), .resend)
        XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: false), plainHead)
        XCTAssertEqual(m.responseHead(response(200), challenged: true), .decideChallenge(response(200)))
        XCTAssertEqual(m.challengeDecided(.passThrough, on: response(200)), .forwardResponse(response(200), framing: .contentLength(0), clientKeepAlive: true))
    }

    func testChallengeOnAClosingConnectionRetriesOnANewOne() {
        var m = awaiting()
        let closing = response(401, [("Content-Length", "0"), ("Connection", "close")])
        _ = m.responseHead(closing, challenged: true)
        XCTAssertEqual(m.challengeDecided(.answer(bindsConnection: false), on: closing), .reconnect)
        guard case .connecting = m.state else { return XCTFail("\(m.state)") }
    }

    func testSmallKeptBodyIsReplayed() {
        var m = machine(request("POST"), framing: .contentLength(4))
        m.prepareBody(keep: true, hold: false)
        _ = m.start(tokenFirst: nil)
        _ = m.upstreamConnected(reused: false, handshakeLeg: false)
        m.requestBodyProgressed(keptWhole: true)
        _ = m.requestBodyFinished()
        XCTAssertTrue(m.bodyReplayable)
        _ = m.responseHead(basicChallenge, challenged: true)
        _ = m.challengeDecided(.answer(bindsConnection: false), on: basicChallenge)
        XCTAssertEqual(m.challengeBodyDiscarded(), .resend)
        XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: false),
                       .sendHead(ownExpect: false, replay: true, armContinueTimer: false, then: .armResponseTimer))
    }

    func testBodyNotKeptIsNotReplayable() {
        var m = awaiting(request("POST"), framing: .chunked)
        m.requestBodyProgressed(keptWhole: false)
        XCTAssertFalse(m.bodyReplayable)
    }

    /// With the upload unfinished the connection cannot carry the next attempt (its framing is
    /// mid-body): a new connection.
    func testChallengeDuringTheUploadRetriesOnANewConnection() {
        var m = awaiting(request("POST"), framing: .contentLength(4))
        m.requestBodyProgressed(keptWhole: true)
        _ = m.responseHead(basicChallenge, challenged: true)
        XCTAssertEqual(m.challengeDecided(.answer(bindsConnection: false), on: basicChallenge), .reconnect)
    }

    func testChallengeVerdictFailFailsWithAConfigurationError() {
        var m = awaiting()
        _ = m.responseHead(basicChallenge, challenged: true)
        XCTAssertEqual(failureType(m.challengeDecided(.fail(reason: "no credential"), on: basicChallenge)), "proxy_configuration_error")
    }

    func testInvalidChallengeBodyFails() {
        var m = awaiting()
        _ = m.responseHead(basicChallenge, challenged: true)
        _ = m.challengeDecided(.answer(bindsConnection: false), on: basicChallenge)
        XCTAssertEqual(failureType(m.challengeBodyInvalid()), "http_protocol_error")
    }

    /// Digest `stale=true`: the rules answer again, and the machine sends again.
    func testStaleChallengeIsAnsweredAgain() {
        var m = awaiting()
        for _ in 0..<2 {
            _ = m.responseHead(basicChallenge, challenged: true)
            _ = m.challengeDecided(.answer(bindsConnection: false), on: basicChallenge)
            XCTAssertEqual(m.challengeBodyDiscarded(), .resend)
            XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: false), plainHead)
        }
    }

    /// `max_failures` and the per-request answer budget are the rules' verdicts: once spent,
    /// the challenge goes to the client as it came.
    func testSpentAnswerBudgetPassesTheChallengeThrough() {
        var m = awaiting()
        _ = m.responseHead(basicChallenge, challenged: true)
        _ = m.challengeDecided(.answer(bindsConnection: false), on: basicChallenge)
        _ = m.challengeBodyDiscarded()
        _ = m.upstreamConnected(reused: false, handshakeLeg: false)
        _ = m.responseHead(basicChallenge, challenged: true)
        XCTAssertEqual(m.challengeDecided(.passThrough, on: basicChallenge),
                       .forwardResponse(basicChallenge, framing: .contentLength(3), clientKeepAlive: true))
    }

    // MARK: - Binding schemes (NTLM, Negotiate)

    private var ntlmChallenge: ResponseHead { response(401, [("Content-Length", "0"), ("WWW-Authenticate", "NTLM")]) }

    func testThreeLegsOnOneBoundConnection() {
        var m = machine(request("POST"), framing: .contentLength(4))
        m.prepareBody(keep: true, hold: false)
        _ = m.start(tokenFirst: nil)
        // Leg 1 (negotiate, preemptive): no body.
        XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: true), plainHead)
        XCTAssertFalse(m.mayPumpRequestBody)
        _ = m.responseHead(ntlmChallenge, challenged: true)
        XCTAssertEqual(m.challengeDecided(.answer(bindsConnection: true), on: ntlmChallenge), .discardChallengeBody(.contentLength(0)))
        XCTAssertEqual(m.challengeBodyDiscarded(), .resend)
        // Leg 3 (authenticate): the body goes with it, on the same connection.
        XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: false),
                       .sendHead(ownExpect: false, replay: false, armContinueTimer: false, then: .pumpRequestBody))
        XCTAssertTrue(m.mayPumpRequestBody)
    }

    func testHandshakeLegCarriesNoOwnExpect() {
        var m = holding(request("POST"))
        XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: true), plainHead)
    }

    func testBoundHandshakeCannotMoveToAnotherConnection() {
        var m = awaiting()
        let closing = response(401, [("Content-Length", "0"), ("Connection", "close"), ("WWW-Authenticate", "NTLM x")])
        _ = m.responseHead(closing, challenged: true)
        XCTAssertEqual(failureType(m.challengeDecided(.answer(bindsConnection: true), on: closing)), "http_protocol_error")
    }

    func testClientsOwnBindingKeepsTheConnectionForTheClient() {
        var m = machine(request("GET", [("Authorization", "NTLM abc")]), clientBound: true)
        _ = m.start(tokenFirst: nil)
        _ = m.upstreamConnected(reused: false, handshakeLeg: false)
        _ = m.responseHead(response(200), challenged: false)
        XCTAssertEqual(m.responseBodyFinished(), .finish(.keepForClient, clientKeepAlive: true))
    }

    func testClientBoundConnectionClosesWithTheClient() {
        var m = machine(request("GET", [("Connection", "close")]))
        m.clientHoldsBoundConnection()
        _ = m.start(tokenFirst: nil)
        _ = m.upstreamConnected(reused: false, handshakeLeg: false)
        _ = m.responseHead(response(200), challenged: false)
        XCTAssertEqual(m.responseBodyFinished(), .finish(.close, clientKeepAlive: false))
    }

    // MARK: - Parent proxy then origin

    func testParent407ThenOrigin401AreBothAnswered() {
        var m = awaiting()
        let proxyChallenge = response(407, [("Content-Length", "0"), ("Proxy-Authenticate", "Basic realm=p")])
        XCTAssertEqual(m.responseHead(proxyChallenge, challenged: true), .decideChallenge(proxyChallenge))
        _ = m.challengeDecided(.answer(bindsConnection: false), on: proxyChallenge)
        XCTAssertEqual(m.challengeBodyDiscarded(), .resend)
        _ = m.upstreamConnected(reused: false, handshakeLeg: false)
        XCTAssertEqual(m.responseHead(basicChallenge, challenged: true), .decideChallenge(basicChallenge))
        _ = m.challengeDecided(.answer(bindsConnection: false), on: basicChallenge)
        XCTAssertEqual(m.challengeBodyDiscarded(), .resend)
    }

    // MARK: - OAuth2 tokens

    // MARK: - An answer made off the event loop (a first Kerberos token)

    func testAChallengeWaitsUnreadWhileItsAnswerIsMadeThenIsDecidedAgain() {
        var m = awaiting()
        let negotiate = response(401, [("Content-Length", "5"), ("WWW-Authenticate", "Negotiate")])
        XCTAssertEqual(m.responseHead(negotiate, challenged: true), .decideChallenge(negotiate))
        XCTAssertEqual(m.challengeDecided(.prepareAnswer, on: negotiate), .prepareAnswer, "the 401's body is not discarded yet")
        XCTAssertFalse(m.responseStarted)
        XCTAssertEqual(m.answerPrepared(), .decideChallenge(negotiate))
        XCTAssertEqual(m.challengeDecided(.answer(bindsConnection: true), on: negotiate), .discardChallengeBody(.contentLength(5)))
    }

    func testWithoutAnAnswerThePreparedChallengeGoesToTheClientWhole() {
        var m = awaiting()
        let negotiate = response(401, [("Content-Length", "5"), ("WWW-Authenticate", "Negotiate")])
        _ = m.responseHead(negotiate, challenged: true)
        _ = m.challengeDecided(.prepareAnswer, on: negotiate)
        _ = m.answerPrepared()
        XCTAssertEqual(m.challengeDecided(.passThrough, on: negotiate),
                       .forwardResponse(negotiate, framing: .contentLength(5), clientKeepAlive: true))
    }

    func testAPreemptiveAnswerMadeOffTheLoopResumesTheAttachedConnection() {
        var m = machine(request())
        _ = m.start(tokenFirst: nil)
        XCTAssertEqual(m.preparingFirstAnswer(), .prepareAnswer)
        XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: false), .nothing, "nothing is sent while the token is made")
        XCTAssertEqual(m.answerPrepared(), .resend)
        XCTAssertEqual(m.upstreamConnected(reused: false, handshakeLeg: false), plainHead)
    }

    func testAResultForAnExchangeWhoseClientLeftIsDropped() {
        var m = awaiting()
        let negotiate = response(401, [("Content-Length", "0"), ("WWW-Authenticate", "Negotiate")])
        _ = m.responseHead(negotiate, challenged: true)
        _ = m.challengeDecided(.prepareAnswer, on: negotiate)
        XCTAssertEqual(m.clientClosed(), .abort(errorType: "client_closed"))
        XCTAssertEqual(m.answerPrepared(), .nothing)
        XCTAssertTrue(m.isDone)
    }

    func testAServerClosingAfterItsChallengeGetsTheAnswerOnANewConnection() {
        var m = awaiting()
        let negotiate = response(401, [("Content-Length", "0"), ("WWW-Authenticate", "Negotiate")])
        _ = m.responseHead(negotiate, challenged: true)
        _ = m.challengeDecided(.prepareAnswer, on: negotiate)
        XCTAssertEqual(m.upstreamClosed(), .nothing, "the challenge is read: its answer can still go")
        XCTAssertEqual(m.answerPrepared(), .decideChallenge(negotiate))
        XCTAssertEqual(m.challengeDecided(.answer(bindsConnection: false), on: negotiate), .reconnect)
    }

    func testTheUpstreamClosingBeforeAPreemptiveAnswerIsMadeFailsTheExchange() {
        var m = machine(request())
        _ = m.start(tokenFirst: nil)
        _ = m.preparingFirstAnswer()
        XCTAssertEqual(failureType(m.upstreamClosed()), "http_response_incomplete")
        XCTAssertEqual(m.answerPrepared(), .nothing, "the late result is dropped")
    }

    func testTokenFetchedBeforeTheFirstAttempt() {
        var m = machine(request())
        XCTAssertEqual(m.start(tokenFirst: "api"), .fetchToken)
        XCTAssertEqual(m.tokenFetched(), .acquireUpstream)
    }

    func testTokenRefreshAfterAChallengeDecidesAgain() {
        var m = awaiting()
        let bearer = response(401, [("Content-Length", "0"), ("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
        _ = m.responseHead(bearer, challenged: true)
        XCTAssertEqual(m.challengeDecided(.fetchToken(credential: "api"), on: bearer), .discardChallengeBody(.contentLength(0)))
        XCTAssertEqual(m.challengeBodyDiscarded(), .fetchToken)
        XCTAssertEqual(m.tokenFetched(), .decideChallenge(bearer))
        XCTAssertEqual(m.challengeDecided(.answer(bindsConnection: false), on: bearer), .resend)
    }

    func testRefreshedTokenNotUsableFails() {
        var m = awaiting()
        let bearer = response(401, [("Content-Length", "0"), ("WWW-Authenticate", "Bearer")])
        _ = m.responseHead(bearer, challenged: true)
        _ = m.challengeDecided(.fetchToken(credential: "api"), on: bearer)
        _ = m.challengeBodyDiscarded()
        _ = m.tokenFetched()
        XCTAssertEqual(failureType(m.challengeDecided(.passThrough, on: bearer)), "proxy_configuration_error")
    }

    func testTokenEndpointFailureFails() {
        var m = machine(request())
        _ = m.start(tokenFirst: "api")
        let failure = Exchange.Failure(.proxyConfigurationError, details: "token endpoint said 400")
        XCTAssertEqual(m.tokenFailed(failure), .fail(failure))
    }

    // MARK: - Failures and timeouts

    func testStalePooledConnectionIsRetriedOnce() {
        var m = awaiting(reused: true)
        XCTAssertEqual(m.upstreamClosed(), .reconnect)
        _ = m.upstreamConnected(reused: true, handshakeLeg: false)
        XCTAssertEqual(failureType(m.upstreamClosed()), "http_response_incomplete")
    }

    func testStaleConnectionWithBodyIsNotRetried() {
        var m = awaiting(request("POST"), framing: .contentLength(3), reused: true)
        XCTAssertEqual(failureType(m.upstreamClosed()), "http_response_incomplete")
    }

    func testCloseAfterResponseBytesIsNotRetried() {
        var m = awaiting(reused: true)
        m.responseBytesArrived()
        XCTAssertEqual(failureType(m.upstreamClosed()), "http_response_incomplete")
    }

    func testFreshConnectionClosedWithoutResponseFails() {
        var m = awaiting()
        XCTAssertEqual(failureType(m.upstreamClosed()), "http_response_incomplete")
    }

    func testResponseTimeoutIs504() {
        var m = awaiting()
        let action = m.responseTimerFired(after: "15s")
        XCTAssertEqual(failureStatus(action), 504)
        XCTAssertEqual(failureType(action), "http_response_timeout")
    }

    func testResponseTimerAfterTheHeadIsIgnored() {
        var m = awaiting()
        _ = m.responseHead(response(200, [("Content-Length", "9")]), challenged: false)
        XCTAssertEqual(m.responseTimerFired(after: "15s"), .nothing)
    }

    func testReadTimeoutDuringTheUploadKeepsWaiting() {
        var m = awaiting(request("POST"), framing: .chunked)
        XCTAssertEqual(m.upstreamError(timeout: true, reading: true, detail: "timeout"), .nothing)
    }

    func testWriteTimeoutBeforeTheResponseIs504() {
        var m = awaiting()
        XCTAssertEqual(failureStatus(m.upstreamError(timeout: true, reading: false, detail: "timeout")), 504)
    }

    func testConnectionErrorBeforeTheResponseIs502() {
        var m = awaiting()
        XCTAssertEqual(failureType(m.upstreamError(timeout: false, reading: true, detail: "reset")), "connection_terminated")
    }

    func testErrorDuringTheResponseBodyAborts() {
        var m = awaiting()
        _ = m.responseHead(response(200, [("Content-Length", "9")]), challenged: false)
        XCTAssertEqual(m.upstreamError(timeout: true, reading: true, detail: "timeout"), .abort(errorType: "connection_read_timeout"))
    }

    func testTruncatedResponseBodyAborts() {
        var m = awaiting()
        _ = m.responseHead(response(200, [("Content-Length", "9")]), challenged: false)
        XCTAssertEqual(m.upstreamClosed(), .abort(errorType: "http_response_incomplete"))
    }

    func testInvalidResponseBodyAborts() {
        var m = awaiting()
        _ = m.responseHead(response(200, [("Transfer-Encoding", "chunked")]), challenged: false)
        XCTAssertEqual(m.responseBodyInvalid(), .abort(errorType: "http_protocol_error"))
    }

    func testInvalidResponseHeadFails() {
        var m = awaiting()
        XCTAssertEqual(failureType(m.invalidResponseHead(tooLarge: true, detail: "too large")), "http_response_header_section_size")
        XCTAssertTrue(m.isDone)
    }

    func testInvalidRequestBodyBeforeTheResponseFails() {
        var m = awaiting(request("POST"), framing: .chunked)
        let failure = Exchange.Failure(.httpRequestError(status: 400), details: "bad chunk")
        XCTAssertEqual(m.requestBodyInvalid(failure), .fail(failure))
    }

    func testInvalidRequestBodyAfterTheResponseStartedAborts() {
        var m = awaiting(request("POST"), framing: .chunked)
        _ = m.responseHead(response(200, [("Content-Length", "9")]), challenged: false)
        let failure = Exchange.Failure(.httpRequestError(status: 400), details: "bad chunk")
        XCTAssertEqual(m.requestBodyInvalid(failure), .abort(errorType: "http_request_error"))
    }

    func testClientClosingEndsTheExchangeOnce() {
        var m = awaiting()
        XCTAssertEqual(m.clientClosed(), .abort(errorType: "client_closed"))
        XCTAssertEqual(m.clientClosed(), .nothing)
        XCTAssertEqual(m.responseTimerFired(after: "1s"), .nothing)
        XCTAssertEqual(m.upstreamClosed(), .nothing)
    }

    func testNothingHappensAfterTheEnd() {
        var m = awaiting()
        _ = m.responseHead(response(200), challenged: false)
        _ = m.responseBodyFinished()
        XCTAssertEqual(m.responseBodyFinished(), .nothing)
        XCTAssertEqual(m.clientClosed(), .nothing)
        XCTAssertEqual(m.upstreamClosed(), .nothing)
    }
}
