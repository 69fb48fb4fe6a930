/// One request forwarded upstream and its response brought back, as a value with no I/O:
/// the driver (Proxy/ForwardExchange) reports what happened on the sockets and the auth
/// rules' verdicts as events, and carries out the `Action` each event returns.
///
/// Two sides move at once, as in h11: the request body (`RequestBody`) may still be
/// uploading while the response is awaited or streamed (`State`).
public struct Exchange: Sendable {
    /// What the machine needs to know of the client's request.
    public struct Request: Equatable, Sendable {
        public var method: String
        public var version: HTTPVersion
        public var framing: BodyFraming
        public var clientExpectsContinue: Bool
        public var wantsUpgrade: Bool
        public var wantsKeepAlive: Bool

        public init(_ head: RequestHead, framing: BodyFraming) {
            method = head.method
            version = head.version
            self.framing = framing
            clientExpectsContinue = head.headers.listContains("Expect", token: "100-continue")
            wantsUpgrade = HopByHop.requestsUpgrade(head.headers)
            wantsKeepAlive = head.wantsKeepAlive
        }
    }

    /// The response side.
    public enum State: Equatable, Sendable {
        /// Before the first attempt: a token may be fetched first.
        case idle
        /// An OAuth2 token is being fetched; `challenge` is the 401 to decide on again after it
        /// (nil before the first attempt), `reusable` whether its connection can carry the retry.
        case fetchingToken(credential: String, challenge: ResponseHead?, reusable: Bool)
        /// Waiting for an upstream connection (pooled or new).
        case connecting(Attempt)
        /// An answer is being made off the event loop (a first Negotiate token, which may wait
        /// on the KDC) for `challenge` (still unread beyond its head), or, when nil, for a
        /// preemptive answer on the connection just attached; nothing is sent meanwhile.
        case preparingAnswer(Attempt, challenge: ResponseHead?)
        /// The head went; interim responses may come before the final one.
        case awaitingHead(Attempt)
        /// A challenge was answered: its body is read and dropped before the retry goes on the
        /// same connection.
        case discardingChallenge(Attempt, then: AfterDiscard)
        /// The final head went to the client; its body follows.
        case streaming(Streaming)
        /// `101`: the connection is the client's tunnel now.
        case upgraded
        case done
    }

    /// One try of the request on one connection.
    public struct Attempt: Equatable, Sendable {
        /// The connection came from a pool (it may have been closed by the server meanwhile).
        public var reusedConnection = false
        /// Whether this attempt's head announces the body (NTLM and Negotiate handshake legs do not).
        public var carriesBody = false
        /// Any byte of a response seen on this attempt.
        public var responseBytesSeen = false
        /// The answer sent binds the connection (NTLM): it cannot move to another.
        public var bindsConnection = false
        /// The upstream closed while an answer was being made: the retry needs a new connection.
        public var upstreamEnded = false
    }

    public enum AfterDiscard: Equatable, Sendable {
        case sendAgain
        case fetchToken(credential: String, challenge: ResponseHead)
    }

    public struct Streaming: Equatable, Sendable {
        public var framing: BodyFraming
        public var clientKeepAlive: Bool
        public var upstreamKeepAlive: Bool
        /// Whether the attempt that got this response announced the body (the upload goes on).
        public var carriesBody: Bool
    }

    /// The request side.
    public struct RequestBody: Equatable, Sendable {
        /// Every body byte was read from the client.
        public var finished: Bool
        /// Any body byte went upstream (a retry must replay it or cannot be made).
        public var started = false
        /// The bytes sent so far are kept whole for a replay.
        public var kept = false
        /// The body waits for `100 Continue` (our own `Expect`) or the continue timer.
        public var held = false
    }

    /// What the auth rules said about a challenge, without the answer itself (the driver
    /// keeps that and puts it in the next head).
    public enum ChallengeVerdict: Equatable, Sendable {
        case answer(bindsConnection: Bool)
        case passThrough
        case fail(reason: String)
        /// An OAuth2 token must be fetched for this credential before answering.
        case fetchToken(credential: String)
        /// The answer is made off the event loop first; then `answerPrepared`.
        case prepareAnswer
    }

    /// Where the upstream connection goes when the exchange ends well.
    public enum Disposition: Equatable, Sendable {
        case pool
        /// Back to the client that authenticated it itself (NTLM, Negotiate).
        case keepForClient
        case close
    }

    /// A failure with its RFC 9209 error type.
    public struct Failure: Equatable, Sendable, Error {
        public var type: ProxyErrorType
        public var details: String
        /// The type's own status unless the failure names another (`503` while a budget is spent).
        public var status: Int
        public init(_ type: ProxyErrorType, details: String, status: Int? = nil) {
            self.type = type
            self.details = details
            self.status = status ?? type.status
        }
    }

    public enum Action: Equatable, Sendable {
        case nothing
        case fetchToken
        /// Make the answer off the event loop and report `answerPrepared` (or nothing, when
        /// the exchange ended meanwhile: the result is dropped).
        case prepareAnswer
        /// A connection for the next attempt: the client's own, a bound one, a pooled one or a new one.
        case acquireUpstream
        /// Closes the current connection, then acquires another.
        case reconnect
        /// The current connection carries the next attempt: report `upstreamConnected` again.
        case resend
        /// Send the head on the attached connection; with `ownExpect`, add `Expect: 100-continue`;
        /// with `replay`, the kept body goes again first; with `armContinueTimer`, wait a while
        /// for the 100.
        case sendHead(ownExpect: Bool, replay: Bool, armContinueTimer: Bool, then: AfterHead)
        case pumpRequestBody
        case armResponseTimer
        case forwardInterim(ResponseHead)
        /// A `100` ends the wait: forward it if the client asked for it, then send the body.
        case releaseBody(forward: ResponseHead?)
        /// Ask the auth rules about this challenge and report `challengeDecided`.
        case decideChallenge(ResponseHead)
        case discardChallengeBody(BodyFraming)
        case forwardResponse(ResponseHead, framing: BodyFraming, clientKeepAlive: Bool)
        case switchProtocols(ResponseHead)
        case finish(Disposition, clientKeepAlive: Bool)
        /// Before any response byte went to the client: a proxy error answers it.
        case fail(Failure)
        /// After the response started: the only honest signal left is closing both connections;
        /// `errorType` (an RFC 9209 type's name, or `client_closed`) goes to the access log.
        case abort(errorType: String)
    }

    public enum AfterHead: Equatable, Sendable {
        case armResponseTimer
        case pumpRequestBody
        case waitForContinue
    }

    public let request: Request
    public private(set) var state: State = .idle
    public private(set) var body: RequestBody
    /// The upstream connection belongs to the client (it authenticated it itself).
    public private(set) var clientBound: Bool
    private var retriedStaleConnection = false
    /// A label for errors: the upstream's key.
    private let upstreamName: String

    /// `bodyFinished`: the request has no body bytes to read.
    public init(request: Request, upstreamName: String, clientBound: Bool, bodyFinished: Bool? = nil) {
        self.request = request
        self.upstreamName = upstreamName
        self.clientBound = clientBound
        body = RequestBody(finished: bodyFinished ?? (request.framing == .none))
    }

    public var responseStarted: Bool {
        switch state {
        case .streaming, .upgraded: return true
        case .done, .idle, .fetchingToken, .connecting, .preparingAnswer, .awaitingHead, .discardingChallenge: return false
        }
    }

    public var isDone: Bool { state == .done || state == .upgraded }

    private var attempt: Attempt? {
        switch state {
        case .connecting(let a), .awaitingHead(let a), .discardingChallenge(let a, _), .preparingAnswer(let a, _): return a
        default: return nil
        }
    }

    /// Whether the body could be sent again: not started, or every byte sent is still kept.
    public var bodyReplayable: Bool { !body.started || body.kept }

    // MARK: - Starting

    /// The client's next requests go on the connection it authenticated itself.
    public mutating func clientHoldsBoundConnection() { clientBound = true }

    /// `tokenFirst`: the credential whose OAuth2 token is missing or about to expire.
    public mutating func start(tokenFirst credential: String?) -> Action {
        guard state == .idle else { return .nothing }
        if let credential {
            state = .fetchingToken(credential: credential, challenge: nil, reusable: false)
            return .fetchToken
        }
        state = .connecting(Attempt())
        return .acquireUpstream
    }

    /// How the body survives a challenge: `keep`, small enough to keep for a replay; `hold`, a
    /// challenge may come and the body cannot be kept, so it waits behind our own
    /// `Expect: 100-continue`.
    public mutating func prepareBody(keep: Bool, hold: Bool) {
        body.kept = keep
        body.held = hold && !keep && request.framing != .none
    }

    public mutating func tokenFetched() -> Action {
        guard case .fetchingToken(_, let challenge, _) = state else { return .nothing }
        if let challenge { return .decideChallenge(challenge) }
        state = .connecting(Attempt())
        return .acquireUpstream
    }

    public mutating func tokenFailed(_ failure: Failure) -> Action { fail(failure) }

    // MARK: - Connection

    /// A connection is attached (`reused`: from a pool). `handshakeLeg`: the answer this attempt
    /// carries is an NTLM leg, which carries no body.
    public mutating func upstreamConnected(reused: Bool, handshakeLeg: Bool) -> Action {
        guard case .connecting(var attempt) = state else { return .nothing }
        attempt.reusedConnection = reused
        return sendHead(attempt, handshakeLeg: handshakeLeg)
    }

    /// The preemptive answer for the connection just attached must be made off the event loop
    /// first; `answerPrepared` then reports the connection again.
    public mutating func preparingFirstAnswer() -> Action {
        guard case .connecting(let attempt) = state else { return .nothing }
        state = .preparingAnswer(attempt, challenge: nil)
        return .prepareAnswer
    }

    /// The answer `prepareAnswer` asked for is ready (or failed: the auth rules decide): the
    /// challenge is decided again, or the attached connection reported again (`resend`).
    public mutating func answerPrepared() -> Action {
        guard case .preparingAnswer(let attempt, let challenge) = state else { return .nothing }
        if let challenge {
            state = .awaitingHead(attempt)
            return .decideChallenge(challenge)
        }
        state = .connecting(attempt)
        return .resend
    }

    public mutating func upstreamFailed(_ failure: Failure) -> Action {
        guard case .connecting = state else { return .nothing }
        return fail(failure)
    }

    private mutating func sendHead(_ attempt: Attempt, handshakeLeg: Bool) -> Action {
        var attempt = attempt
        attempt.carriesBody = !handshakeLeg && request.framing != .none
        attempt.responseBytesSeen = false
        state = .awaitingHead(attempt)
        let ownExpect = body.held && !handshakeLeg && !request.clientExpectsContinue
        let replay = attempt.carriesBody && body.started
        let armContinue = attempt.carriesBody && body.held
        let then: AfterHead
        if body.finished || !attempt.carriesBody {
            then = .armResponseTimer
        } else if body.held {
            then = .waitForContinue
        } else {
            then = .pumpRequestBody
        }
        return .sendHead(ownExpect: ownExpect, replay: replay, armContinueTimer: armContinue, then: then)
    }

    // MARK: - Request body

    /// Whether request body bytes may go upstream now.
    public var mayPumpRequestBody: Bool {
        guard !body.finished, !body.held else { return false }
        switch state {
        case .awaitingHead(let a): return a.carriesBody
        case .streaming(let s): return s.carriesBody
        default: return false
        }
    }

    /// Body bytes went upstream; `keptWhole`: all of them are still kept for a replay.
    public mutating func requestBodyProgressed(keptWhole: Bool) {
        body.started = true
        body.kept = keptWhole
    }

    /// Every request body byte went upstream.
    public mutating func requestBodyFinished() -> Action {
        body.finished = true
        switch state {
        case .awaitingHead: return .armResponseTimer
        default: return .nothing
        }
    }

    public mutating func requestBodyInvalid(_ failure: Failure) -> Action {
        responseStarted ? abort(.httpRequestError(status: 400)) : fail(failure)
    }

    /// No `100` came in time: servers that ignore `Expect` wait for the body.
    public mutating func continueTimerFired() -> Action {
        guard body.held, !isDone else { return .nothing }
        body.held = false
        return .pumpRequestBody
    }

    // MARK: - Response head

    /// Response bytes arrived before a head was complete.
    public mutating func responseBytesArrived() {
        guard case .awaitingHead(var a) = state else { return }
        a.responseBytesSeen = true
        state = .awaitingHead(a)
    }

    /// `challenged`: an answerer exists for this status (401 for the origin, 407 for the parent).
    public mutating func responseHead(_ response: ResponseHead, challenged: Bool) -> Action {
        guard case .awaitingHead = state else { return .nothing }
        responseBytesArrived()
        if response.status == 101 {
            guard request.wantsUpgrade else {
                return fail(Failure(.httpUpgradeFailed, details: "\(upstreamName) switched protocols without being asked"))
            }
            state = .upgraded
            return .switchProtocols(response)
        }
        if response.isInterim {
            if response.status == 100 && body.held {
                body.held = false
                return .releaseBody(forward: request.clientExpectsContinue && request.version != .http10 ? response : nil)
            }
            // HTTP/1.0 clients do not understand 1xx (RFC 9110 §15.2).
            return request.version == .http10 ? .nothing : .forwardInterim(response)
        }
        if challenged { return .decideChallenge(response) }
        return finalHead(response)
    }

    public mutating func invalidResponseHead(tooLarge: Bool, detail: String) -> Action {
        fail(Failure(tooLarge ? .httpResponseHeaderSectionSize : .httpProtocolError,
                     details: "invalid response from \(upstreamName): \(detail)"))
    }

    /// The auth rules' verdict on the challenge `decideChallenge` named.
    public mutating func challengeDecided(_ verdict: ChallengeVerdict, on response: ResponseHead) -> Action {
        switch state {
        case .awaitingHead(var attempt):
            switch verdict {
            case .passThrough:
                return finalHead(response)
            case .fail(let reason):
                return fail(Failure(.proxyConfigurationError, details: reason))
            case .answer(let binds):
                attempt.bindsConnection = binds
                return discard(response, attempt: attempt, then: .sendAgain)
            case .fetchToken(let credential):
                return discard(response, attempt: attempt, then: .fetchToken(credential: credential, challenge: response))
            case .prepareAnswer:
                // The challenge stays unread: if no answer comes of it, it goes to the client whole.
                state = .preparingAnswer(attempt, challenge: response)
                return .prepareAnswer
            }
        case .fetchingToken(let credential, _, let reusable):
            // Asked again after the token came: the 401's body is gone, so it cannot be shown.
            switch verdict {
            case .answer(let binds):
                var attempt = Attempt()
                attempt.bindsConnection = binds
                return retry(attempt, reusable: reusable)
            case .fail(let reason):
                return fail(Failure(.proxyConfigurationError, details: reason))
            case .fetchToken, .passThrough, .prepareAnswer:
                return fail(Failure(.proxyConfigurationError, details: "the OAuth2 token for credential \(credential) was not accepted"))
            }
        default:
            return .nothing
        }
    }

    private mutating func discard(_ response: ResponseHead, attempt: Attempt, then: AfterDiscard) -> Action {
        let framing = (try? BodyFraming.forResponse(response, requestMethod: request.method)) ?? .untilClose
        let reusable = !attempt.upstreamEnded && response.allowsKeepAlive && framing != .untilClose && (body.finished || !attempt.carriesBody)
        guard reusable else { return afterDiscard(then, attempt: attempt, reusable: false) }
        state = .discardingChallenge(attempt, then: then)
        return .discardChallengeBody(framing)
    }

    /// The challenge's body was read and dropped: the connection can carry the next attempt.
    public mutating func challengeBodyDiscarded() -> Action {
        guard case .discardingChallenge(let attempt, let then) = state else { return .nothing }
        return afterDiscard(then, attempt: attempt, reusable: true)
    }

    public mutating func challengeBodyInvalid() -> Action {
        guard case .discardingChallenge = state else { return .nothing }
        return fail(Failure(.httpProtocolError, details: "invalid 401 body from \(upstreamName)"))
    }

    private mutating func afterDiscard(_ then: AfterDiscard, attempt: Attempt, reusable: Bool) -> Action {
        switch then {
        case .sendAgain:
            return retry(attempt, reusable: reusable)
        case .fetchToken(let credential, let challenge):
            state = .fetchingToken(credential: credential, challenge: challenge, reusable: reusable)
            return .fetchToken
        }
    }

    /// The next attempt: on this connection when it can carry it, else a new one (a bound
    /// handshake cannot move: it belongs to one connection).
    private mutating func retry(_ attempt: Attempt, reusable: Bool) -> Action {
        var next = Attempt()
        next.bindsConnection = attempt.bindsConnection
        if reusable {
            state = .connecting(next)
            return .resend
        }
        if attempt.bindsConnection {
            return fail(Failure(.httpProtocolError, details: "\(upstreamName) closed the connection during a connection-bound (NTLM, Negotiate) handshake"))
        }
        state = .connecting(next)
        return .reconnect
    }

    private mutating func finalHead(_ response: ResponseHead) -> Action {
        let framing: BodyFraming
        do {
            framing = try BodyFraming.forResponse(response, requestMethod: request.method)
        } catch let error as HTTPParseError {
            return fail(Failure(.httpProtocolError, details: "invalid response from \(upstreamName): \(error.detail)"))
        } catch {
            return fail(Failure(.httpProtocolError, details: "invalid response from \(upstreamName)"))
        }
        // An HTTP/1.0 client cannot read chunked: the payload goes raw and the connection closes.
        let keepAlive = request.wantsKeepAlive && !clientMustClose && framing != .untilClose && !(framing == .chunked && request.version == .http10)
        state = .streaming(Streaming(framing: framing, clientKeepAlive: keepAlive, upstreamKeepAlive: response.allowsKeepAlive,
                                     carriesBody: attempt?.carriesBody ?? false))
        return .forwardResponse(response, framing: framing, clientKeepAlive: keepAlive)
    }

    /// The final head `forwardResponse` named must not reach the client after all (the server
    /// failed to prove its identity): the driver wrote none of it, so a proxy error answers.
    public mutating func finalHeadRefused(_ failure: Failure) -> Action {
        guard case .streaming = state else { return .nothing }
        state = .done
        return .fail(failure)
    }

    /// The worker is draining: the client connection closes after the response.
    public var clientMustClose = false

    // MARK: - Response body

    public mutating func responseBodyFinished() -> Action { finishIfDone(responseDone: true) }

    public mutating func responseBodyInvalid() -> Action {
        guard case .streaming = state else { return .nothing }
        return abort(.httpProtocolError)
    }

    private mutating func finishIfDone(responseDone: Bool) -> Action {
        guard case .streaming(let s) = state, responseDone else { return .nothing }
        state = .done
        let reusable = body.finished && s.upstreamKeepAlive && s.framing != .untilClose
        let disposition: Disposition
        if reusable && clientBound {
            disposition = s.clientKeepAlive ? .keepForClient : .close
        } else {
            disposition = reusable ? .pool : .close
        }
        // Unread request body bytes leave the client connection's framing unknown: close it.
        return .finish(disposition, clientKeepAlive: s.clientKeepAlive && body.finished)
    }

    // MARK: - Endings and timers

    /// The upstream closed its side.
    public mutating func upstreamClosed() -> Action {
        switch state {
        case .preparingAnswer(var attempt, let challenge?):
            // A server that closes after its challenge (keep-alive off): the challenge is read,
            // so the answer still goes, on a new connection.
            attempt.upstreamEnded = true
            state = .preparingAnswer(attempt, challenge: challenge)
            return .nothing
        case .connecting, .awaitingHead, .discardingChallenge, .preparingAnswer:
            let attempt = self.attempt ?? Attempt()
            if attempt.reusedConnection && !attempt.responseBytesSeen && request.framing == .none && !retriedStaleConnection {
                // A pooled connection the server had already closed: try once on a new one.
                retriedStaleConnection = true
                state = .connecting(Attempt())
                return .reconnect
            }
            return fail(Failure(.httpResponseIncomplete, details: "\(upstreamName) closed the connection without a response"))
        case .streaming(let s) where s.framing == .untilClose:
            // Close-delimited body: what is left is moved, and that is the end.
            var ended = s
            ended.upstreamKeepAlive = false
            state = .streaming(ended)
            return finishIfDone(responseDone: true)
        case .streaming:
            return abort(.httpResponseIncomplete)
        default:
            return .nothing
        }
    }

    /// The upstream connection failed or timed out (`reading`: on a read).
    public mutating func upstreamError(timeout: Bool, reading: Bool, detail: String) -> Action {
        switch state {
        case .awaitingHead, .discardingChallenge, .connecting, .preparingAnswer:
            // Silence while the request is still uploading is not a fault: keep waiting.
            if timeout && reading { return .nothing }
            return fail(Failure(timeout ? .httpResponseTimeout : .connectionTerminated,
                                details: "\(upstreamName) failed before responding (\(detail))"))
        case .streaming:
            return abort(timeout ? .connectionReadTimeout : .httpResponseIncomplete)
        default:
            return .nothing
        }
    }

    /// No response head within `header_timeout` after the request went.
    public mutating func responseTimerFired(after seconds: String) -> Action {
        switch state {
        case .awaitingHead, .discardingChallenge, .connecting:
            return fail(Failure(.httpResponseTimeout, details: "\(upstreamName) sent no response head within \(seconds)"))
        default:
            return .nothing
        }
    }

    /// The client went away: the exchange ends, nothing more is sent.
    public mutating func clientClosed() -> Action {
        guard !isDone else { return .nothing }
        state = .done
        return .abort(errorType: "client_closed")
    }

    private mutating func fail(_ failure: Failure) -> Action {
        guard !isDone else { return .nothing }
        if responseStarted { return abort(failure.type) }
        state = .done
        return .fail(failure)
    }

    private mutating func abort(_ type: ProxyErrorType) -> Action {
        guard !isDone else { return .nothing }
        state = .done
        return .abort(errorType: type.name)
    }
}
