/// One request forwarded upstream and its response brought back, as a value with no I/O:
/// the driver (Proxy/ForwardExchange) reports what happened on the sockets and the auth
/// rules' verdicts as `Event`s, and carries out the `Action` each returns. The machine
/// decides everything that follows; an event it cannot receive in its state is a bug in
/// the driver (`preconditionFailure`, Exchange+Transitions.swift).
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

        public init(_ head: borrowing RequestHead, framing: BodyFraming) {
            method = head.method
            version = head.version
            self.framing = framing
            clientExpectsContinue = head.headers.listContains(.expect, token: "100-continue")
            wantsUpgrade = HopByHop.requestsUpgrade(head.headers)
            wantsKeepAlive = head.wantsKeepAlive
        }
    }

    /// The response side. The cases that hold a credential or a challenge's head (met only
    /// when answering auth) are `indirect`: boxed, they leave the enum a few words of plain
    /// data, which every event on the usual path reads, copies and destroys cheaply (inline,
    /// the heads' fields made every tag test compare eleven words: ~500 instructions a request).
    public enum State: Equatable, Sendable {
        /// Before anything happened.
        case idle
        /// The driver picks the preemptive answers it knows (`answersChosen`), so the machine
        /// can plan how the body survives a challenge.
        case choosingAnswers
        /// An OAuth2 token is being fetched; `challenge` is the 401 to decide on again after it
        /// (nil before the first attempt), `reusable` whether its connection can carry the retry.
        indirect case fetchingToken(credential: String, challenge: ResponseHead?, reusable: Bool)
        /// Waiting for an upstream connection (pooled or new).
        case connecting(Attempt)
        /// An answer is being made off the event loop (a first Negotiate token, which may wait
        /// on the KDC) for `challenge` (still unread beyond its head), or, when nil, for a
        /// preemptive answer on the connection just attached; nothing is sent meanwhile.
        indirect case preparingAnswer(Attempt, challenge: ResponseHead?)
        /// The head went; interim responses may come before the final one.
        case awaitingHead(Attempt)
        /// A challenge was answered: its body is read and dropped before the retry goes on the
        /// same connection.
        indirect case discardingChallenge(Attempt, then: AfterDiscard)
        /// The final head went to the client; its body follows.
        case streaming(Streaming)
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
        /// `handshakeLeg`: the answer is an NTLM leg (the head carries no body).
        case sendAgain(handshakeLeg: Bool)
        case fetchToken(credential: String, challenge: ResponseHead)
    }

    public struct Streaming: Equatable, Sendable {
        public var framing: BodyFraming
        public var clientKeepAlive: Bool
        public var upstreamKeepAlive: Bool
        /// Whether the attempt that got this response announced the body (the upload goes on).
        public var carriesBody: Bool
    }

    /// The request side, by its phases.
    public enum RequestBody: Equatable, Sendable {
        /// No body byte is left to read, and none went (no body, or an empty one).
        case absent
        /// Not a byte went yet; `keep`: what goes is kept whole for a replay.
        case waiting(keep: Bool)
        /// Waits for `100 Continue` (our own `Expect`) or the continue timer: a challenge may
        /// come first, and the body is too large to keep.
        case held
        /// Bytes went; `kept`: every one is still kept for a replay.
        case uploading(kept: Bool)
        /// Every byte went; `kept`: all are kept for a replay.
        case sent(kept: Bool)

        public var finished: Bool {
            switch self {
            case .absent, .sent: return true
            case .waiting, .held, .uploading: return false
            }
        }

        var started: Bool {
            switch self {
            case .uploading, .sent: return true
            case .absent, .waiting, .held: return false
            }
        }

        var kept: Bool {
            switch self {
            case .waiting(let kept), .uploading(let kept), .sent(let kept): return kept
            case .absent, .held: return false
            }
        }
    }

    /// Which preemptive answers the driver could choose before the first attempt.
    public enum AnswerPlan: Equatable, Sendable {
        /// No auth rules apply: no challenge will be answered.
        case unauthenticated
        /// Rules apply; `allKnown`: every challenger already has its answer.
        case authenticated(allKnown: Bool)
    }

    /// How the answer for an attached connection stands.
    public enum FirstAnswer: Equatable, Sendable {
        /// Known (or none): the head can go; `handshakeLeg`, it is an NTLM leg (carries no body).
        case ready(handshakeLeg: Bool)
        /// It is made off the event loop first (`prepareAnswer`, then `answerPrepared`).
        case toPrepare
    }

    /// What the auth rules said about a challenge, without the answer itself (the driver
    /// keeps that and puts it in the next head).
    public enum ChallengeVerdict: Equatable, Sendable {
        /// `handshakeLeg`: the answers the next head carries include an NTLM leg (no body).
        case answer(bindsConnection: Bool, handshakeLeg: Bool = false)
        case passThrough
        case fail(reason: String)
        /// An OAuth2 token must be fetched for this credential before answering.
        case fetchToken(credential: String)
        /// The answer is made off the event loop first; then `answerPrepared`.
        case prepareAnswer
    }

    /// Where the upstream connection goes when the exchange ends.
    public enum UpstreamFate: Equatable, Sendable {
        case pool
        /// Back to the client that authenticated it itself (NTLM, Negotiate).
        case keepBound
        case close
        /// It carries the client's tunnel now (`101`).
        case handedToTunnel
    }

    /// What becomes of the client connection when the exchange ends.
    public enum ClientFate: Equatable, Sendable {
        /// It reads its next request.
        case keepAlive
        case closeAfterFlush
        /// Nothing more can be said to it honestly (the response started and broke).
        case closeNow
        /// It went away (or is being closed) already.
        case gone
        case becameTunnel
    }

    /// How an exchange ends, both sides named.
    public struct Ending: Equatable, Sendable {
        public var upstream: UpstreamFate
        public var client: ClientFate
        public init(upstream: UpstreamFate, client: ClientFate) {
            self.upstream = upstream
            self.client = client
        }
    }

    /// Which reader a readable upstream needs.
    public enum ReadMode: Equatable, Sendable {
        case none
        /// A response head (interim or final).
        case head
        /// An answered challenge's body, dropped.
        case discard
        /// The final response's body, to the client.
        case body
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

    public enum AfterHead: Equatable, Sendable {
        case armResponseTimer
        case pumpRequestBody
        case waitForContinue
    }

    public let request: Request
    public internal(set) var state: State = .idle
    public internal(set) var body: RequestBody
    /// The upstream connection belongs to the client (it authenticated it itself).
    public let clientBound: Bool
    /// Bodies up to this many bytes are kept whole for a replay after a challenge.
    let replayLimit: Int
    /// The worker is draining: the client connection closes after this exchange.
    var clientMustClose: Bool
    var retriedStaleConnection = false
    /// Names the upstream in errors; spelled only when one is made (most exchanges have none).
    let upstream: UpstreamLabel

    /// `bodyFinished`: the request has no body bytes to read. `draining`: the worker drains already.
    public init(request: Request, upstream: UpstreamLabel, clientBound: Bool, bodyFinished: Bool? = nil,
                replayLimit: Int = 0, draining: Bool = false) {
        self.request = request
        self.upstream = upstream
        self.clientBound = clientBound
        self.replayLimit = replayLimit
        clientMustClose = draining
        body = bodyFinished ?? (request.framing == .none) ? .absent : .waiting(keep: false)
    }

    public var responseStarted: Bool {
        if case .streaming = state { return true }
        return false
    }

    public var isDone: Bool { state == .done }

    public var readMode: ReadMode {
        switch state {
        case .awaitingHead: return .head
        case .discardingChallenge: return .discard
        case .streaming: return .body
        case .idle, .choosingAnswers, .fetchingToken, .connecting, .preparingAnswer, .done: return .none
        }
    }

    /// Whether what goes upstream of the body is to be kept for a replay.
    public var keepsBody: Bool { body.kept }

    public var bodyFinished: Bool { body.finished }

    /// Whether the body could be sent again: not started, or every byte sent is still kept.
    public var bodyReplayable: Bool { !body.started || body.kept }

    /// Whether request body bytes may go upstream now.
    public var mayPumpRequestBody: Bool {
        switch body {
        case .waiting, .uploading: break
        case .absent, .held, .sent: return false
        }
        switch state {
        case .awaitingHead(let a): return a.carriesBody
        case .streaming(let s): return s.carriesBody
        default: return false
        }
    }

    var upstreamName: String { upstream.description }

    var attempt: Attempt? {
        switch state {
        case .connecting(let a), .awaitingHead(let a), .discardingChallenge(let a, _), .preparingAnswer(let a, _): return a
        default: return nil
        }
    }
}

/// The upstream as errors name it (`https://origin:443`).
public struct UpstreamLabel: Equatable, Sendable, CustomStringConvertible {
    public var secure: Bool
    public var authority: Authority
    public init(secure: Bool, authority: Authority) {
        self.secure = secure
        self.authority = authority
    }
    public var description: String { "\(secure ? "https" : "http")://\(authority)" }
}
