extension Exchange {
    /// What happened: on the sockets, on a timer, or the auth rules' verdict.
    public enum Event: Equatable, Sendable {
        /// `tokenFirst`: the credential whose OAuth2 token is missing or about to expire.
        case start(tokenFirst: String?)
        /// The driver chose the preemptive answers it could (after `chooseAnswers`).
        case answersChosen(AnswerPlan)
        case tokenArrived
        case tokenFailed(Failure)
        /// A connection is attached (`reused`: from a pool).
        case upstreamConnected(reused: Bool, answer: FirstAnswer)
        case upstreamFailed(Failure)
        /// The answer `prepareAnswer` asked for is ready (or failed: the auth rules decide);
        /// `handshakeLeg` for the head it goes in, when it was a preemptive one.
        case answerPrepared(handshakeLeg: Bool)
        /// The head cannot go as it is (signing refused it).
        case headRefused(Failure)
        /// Body bytes went upstream; `keptWhole`: all of them are still kept for a replay.
        case requestBodyProgressed(keptWhole: Bool)
        case requestBodyFinished
        case requestBodyInvalid(Failure)
        /// No `100` came in time: servers that ignore `Expect` wait for the body.
        case continueTimerFired
        /// Response bytes arrived before a head was complete.
        case responseBytesArrived
        /// `challenged`: an answerer exists for this status (401 for the origin, 407 for the parent).
        case responseHead(ResponseHead, challenged: Bool)
        case invalidResponseHead(tooLarge: Bool, detail: String)
        /// The auth rules' verdict on the challenge `decideChallenge` named.
        case challengeDecided(ChallengeVerdict, on: ResponseHead)
        case challengeBodyDiscarded
        case challengeBodyInvalid
        /// The final head `forwardResponse` named must not reach the client after all (the server
        /// failed to prove its identity, or its held response did not verify): none of it was written.
        case finalHeadRefused(Failure)
        case responseBodyFinished
        case responseBodyInvalid
        /// The upstream closed its side.
        case upstreamEnded
        /// The upstream sent nothing for idle_timeout.
        case upstreamReadTimedOut
        /// The upstream connection failed, or a write to it timed out.
        case upstreamBroke(timeout: Bool, detail: String)
        /// No response head within `header_timeout` after the request went.
        case responseTimerFired(after: String)
        /// The client sent nothing for idle_timeout.
        case clientReadTimedOut
        /// The client's connection ended or failed under the exchange.
        case clientLost
        /// The client connection is being closed from outside (drain, stop).
        case clientClosed
        /// The worker began draining: the client closes after this exchange.
        case drainBegan
    }

    public enum Action: Equatable, Sendable {
        case nothing
        /// Pick the preemptive answers known now and report `answersChosen`.
        case chooseAnswers
        case fetchToken
        /// Make the answer off the event loop and report `answerPrepared` (or nothing, when
        /// the exchange ended meanwhile: the result is dropped).
        case prepareAnswer
        /// A connection for the next attempt: the client's own, a bound one, a pooled one or a new one.
        case acquireUpstream
        /// Closes the current connection, then acquires another.
        case reconnect
        /// Send the head on the attached connection; with `ownExpect`, add `Expect: 100-continue`;
        /// with `replay`, the kept body goes again first; with `armContinueTimer`, wait a while
        /// for the 100.
        case sendHead(ownExpect: Bool, replay: Bool, armContinueTimer: Bool, then: AfterHead)
        case pumpRequestBody
        case armResponseTimer
        /// A silence that is not a fault: read on.
        case resumeUpstreamRead
        case resumeClientRead
        case forwardInterim(ResponseHead)
        /// A `100` ends the wait: forward it if the client asked for it, then send the body.
        case releaseBody(forward: ResponseHead?)
        /// Ask the auth rules about this challenge and report `challengeDecided`.
        case decideChallenge(ResponseHead)
        case discardChallengeBody(BodyFraming)
        /// `upstreamEnded`: the upstream closed before (while an answer was made): after the
        /// head and what is buffered, report `upstreamEnded`.
        case forwardResponse(ResponseHead, framing: BodyFraming, clientKeepAlive: Bool, upstreamEnded: Bool = false)
        /// A close-delimited body ended: move what is left, then report `responseBodyFinished`.
        case readRestOfBody
        case switchProtocols(ResponseHead)
        case finish(Ending)
        /// Before any response byte went to the client: a proxy error answers it.
        case fail(Failure, client: ClientFate)
        /// After the response started (or with the client gone): the only honest signal left is
        /// closing; `errorType` (an RFC 9209 type's name, or `client_closed`) goes to the access log.
        case abort(errorType: String, client: ClientFate)
    }
}

extension Exchange.Event {
    /// The event's name, for a table and for an inconsistency's message.
    public var name: String {
        switch self {
        case .start: return "start"
        case .answersChosen: return "answersChosen"
        case .tokenArrived: return "tokenArrived"
        case .tokenFailed: return "tokenFailed"
        case .upstreamConnected: return "upstreamConnected"
        case .upstreamFailed: return "upstreamFailed"
        case .answerPrepared: return "answerPrepared"
        case .headRefused: return "headRefused"
        case .requestBodyProgressed: return "requestBodyProgressed"
        case .requestBodyFinished: return "requestBodyFinished"
        case .requestBodyInvalid: return "requestBodyInvalid"
        case .continueTimerFired: return "continueTimerFired"
        case .responseBytesArrived: return "responseBytesArrived"
        case .responseHead: return "responseHead"
        case .invalidResponseHead: return "invalidResponseHead"
        case .challengeDecided: return "challengeDecided"
        case .challengeBodyDiscarded: return "challengeBodyDiscarded"
        case .challengeBodyInvalid: return "challengeBodyInvalid"
        case .finalHeadRefused: return "finalHeadRefused"
        case .responseBodyFinished: return "responseBodyFinished"
        case .responseBodyInvalid: return "responseBodyInvalid"
        case .upstreamEnded: return "upstreamEnded"
        case .upstreamReadTimedOut: return "upstreamReadTimedOut"
        case .upstreamBroke: return "upstreamBroke"
        case .responseTimerFired: return "responseTimerFired"
        case .clientReadTimedOut: return "clientReadTimedOut"
        case .clientLost: return "clientLost"
        case .clientClosed: return "clientClosed"
        case .drainBegan: return "drainBegan"
        }
    }
}

extension Exchange.State {
    public var name: String {
        switch self {
        case .idle: return "idle"
        case .choosingAnswers: return "choosingAnswers"
        case .fetchingToken: return "fetchingToken"
        case .connecting: return "connecting"
        case .preparingAnswer: return "preparingAnswer"
        case .awaitingHead: return "awaitingHead"
        case .discardingChallenge: return "discardingChallenge"
        case .streaming: return "streaming"
        case .done: return "done"
        }
    }
}
