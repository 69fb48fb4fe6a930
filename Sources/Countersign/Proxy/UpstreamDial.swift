import CountersignAuth
import CountersignHTTP

/// The steps of opening one upstream connection — resolve and TCP, TLS to an https parent,
/// CONNECT through the parent and its 407s, TLS to the origin — as a value with no I/O.
/// `UpstreamConnection` performs each action and tells it what happened; which step a
/// libevent event belongs to is decided here, not by flags in the shell.
struct UpstreamDial {
    /// What this connection goes through, fixed when it opens.
    struct Plan {
        enum Security { case plain, tls }
        /// How the connection reaches the origin.
        enum Hop {
            case direct
            /// To the parent itself, for absolute-form requests (the exchange answers its 407s).
            case parentForwarding(name: String, security: Security)
            /// A CONNECT through the parent, whose 407 is answered when `answersChallenges`.
            case parentConnect(name: String, security: Security, answersChallenges: Bool)
        }

        /// The origin, by host and port (what the CONNECT asks for and errors name).
        var origin: Authority
        var hop: Hop = .direct
        /// TLS to the origin (inside the parent's, through an https parent).
        var originSecurity: Security = .plain
        var connectTimeout: Double = 10
        var headerTimeout: Double = 15

        /// The parent's name in messages, when the connection goes through one.
        var parentName: String? {
            switch hop {
            case .direct: return nil
            case .parentForwarding(let name, _), .parentConnect(let name, _, _): return name
            }
        }

        /// The stream is TLS to the parent (origin TLS, if any, runs inside it).
        var parentSecurity: Security {
            switch hop {
            case .direct: return .plain
            case .parentForwarding(_, let security), .parentConnect(_, let security, _): return security
            }
        }
    }

    /// Which step's failure a stream event reports; the shell words it (it alone can read the
    /// resolver's error, errno and OpenSSL's queue).
    enum Step: Equatable {
        case tcp
        case parentHandshake
        case originHandshake
    }

    /// Whose certificate a handshake presented.
    enum TLSPeer: Equatable {
        case parent
        case origin
    }

    enum State {
        /// Resolving and connecting TCP (to the parent, if any, else to the origin).
        case connecting
        case parentHandshake
        /// The CONNECT is written; its answer's head is awaited (bounded by header_timeout).
        case awaitingConnectAnswer
        /// The parent answered with this 407; the authenticator is being asked what to do.
        case decidingChallenge(ResponseHead)
        /// A first Kerberos token for the parent is being made off the loop; this 407 is
        /// decided again with it.
        case preparingParentCredential(ResponseHead)
        /// The 407 is answered: its body is read and dropped (`ChallengeBody`, as an origin's
        /// 401), then the CONNECT goes again on this connection with `answer`.
        case discardingChallengeBody(answer: AuthAnswer)
        case originHandshake
        case ready
        case failed
    }

    enum Event {
        /// libevent's "connected": TCP is up, or the current handshake finished.
        case connected
        /// After `checkSocket`: the socket's peer is Countersign's own listener at this address.
        case socketChecked(ownListener: String?)
        /// After `evaluateTrust`: the trust policy's verdict, a refusal already worded.
        case trustEvaluated(ProxyError?)
        /// The parent's complete answer head to the CONNECT.
        case connectAnswered(ResponseHead)
        /// After `completeParentAuth` (a 2xx): what mutual authentication found wrong, if anything.
        case parentAuthCompleted(mutualAuthFailure: String?)
        /// After `decideChallenge`: the authenticator's decision, and the lock-out that
        /// explains a refusal.
        case challengeDecided(ChallengeDecision, lockOut: String?)
        /// After `discardChallengeBody`: the 407's body is read to its end.
        case challengeBodyDiscarded
        /// The 407's body is not what its framing says.
        case challengeBodyInvalid(detail: String)
        case parentCredentialPrepared
        /// The shell could not take the step (no TLS, no socket): its own error.
        case stepImpossible(ProxyError)
        /// An error, end of file or read/write timeout on the stream.
        case streamFailed
        /// The current step's deadline passed, however steadily its bytes came.
        case stepTimedOut
    }

    enum Action {
        /// Check the connected socket (own listener), then report `socketChecked`.
        case checkSocket
        /// Start a client handshake with `peer` on the stream; its deadline is connect_timeout.
        case startTLS(TLSPeer)
        /// Evaluate the finished handshake with `peer`'s policy, then report `trustEvaluated`.
        case evaluateTrust(TLSPeer)
        /// Write the CONNECT (with the parent answer the authenticator holds); its answer's
        /// deadline is header_timeout.
        case sendConnect
        /// Read the 407's body by `framing` and drop it, then report `challengeBodyDiscarded`.
        case discardChallengeBody(BodyFraming)
        /// Write the CONNECT again, with `answer`, on this connection.
        case resendConnect(answer: AuthAnswer)
        /// The 407 cannot be read past on this connection: open a new one to the parent and
        /// go through every step again, answering with `answer`.
        case reconnectToParent(answer: AuthAnswer)
        case decideChallenge(ResponseHead)
        case completeParentAuth(ResponseHead)
        case prepareParentCredential(KerberosRequest)
        /// Word the failure of `step` from the stream's event.
        case failDescribing(Step)
        case fail(ProxyError)
        /// Hand the connection to its user.
        case ready
        case nothing
    }

    let plan: Plan
    private(set) var state: State = .connecting

    init(_ plan: Plan) { self.plan = plan }

    /// What the stream's input holds for this step.
    enum Reading: Equatable {
        case nothing
        /// The parent's answer head to the CONNECT.
        case connectAnswer
        /// An answered 407's body, dropped.
        case challengeBody
    }

    var reading: Reading {
        switch state {
        case .awaitingConnectAnswer: return .connectAnswer
        case .discardingChallengeBody: return .challengeBody
        case .connecting, .parentHandshake, .decidingChallenge, .preparingParentCredential, .originHandshake, .ready, .failed: return .nothing
        }
    }

    mutating func handle(_ event: Event) -> Action {
        switch (state, event) {
        case (.ready, _), (.failed, _):
            return .nothing

        case (.connecting, .connected):
            return .checkSocket
        case (.connecting, .socketChecked(let own?)):
            let name = plan.parentName ?? "\(plan.origin)"
            return fail(ProxyError(.destinationIPProhibited, details: "\(name) is Countersign's own listening address \(own)"))
        case (.connecting, .socketChecked(nil)):
            if plan.parentSecurity == .tls { return enter(.parentHandshake, .startTLS(.parent)) }
            return reachedParent()

        case (.parentHandshake, .connected):
            return .evaluateTrust(.parent)
        case (.parentHandshake, .trustEvaluated(nil)):
            return reachedParent()
        case (.originHandshake, .connected):
            return .evaluateTrust(.origin)
        case (.originHandshake, .trustEvaluated(nil)):
            return enter(.ready, .ready)
        case (.parentHandshake, .trustEvaluated(let refusal?)), (.originHandshake, .trustEvaluated(let refusal?)):
            return fail(refusal)

        case (.awaitingConnectAnswer, .connectAnswered(let response)):
            if (200..<300).contains(response.status) { return .completeParentAuth(response) }
            if response.status == 407, case .parentConnect(_, _, answersChallenges: true) = plan.hop { return enter(.decidingChallenge(response), .decideChallenge(response)) }
            return fail(connectRefused(response, lockOut: nil))
        case (.awaitingConnectAnswer, .parentAuthCompleted(let failure?)):
            return fail(ProxyError(.httpProtocolError, details: failure))
        case (.awaitingConnectAnswer, .parentAuthCompleted(nil)):
            return throughTheParent()
        case (.decidingChallenge(let response), .challengeDecided(let decision, let lockOut)):
            return challengeDecided(decision, on: response, lockOut: lockOut)
        case (.discardingChallengeBody(let answer), .challengeBodyDiscarded):
            return enter(.awaitingConnectAnswer, .resendConnect(answer: answer))
        case (.discardingChallengeBody, .challengeBodyInvalid(let detail)):
            return fail(ProxyError(.httpProtocolError, details: "\(parentName) answered CONNECT \(plan.origin.host):\(plan.origin.port) with an invalid 407 body: \(detail)"))
        case (.preparingParentCredential(let response), .parentCredentialPrepared):
            return enter(.decidingChallenge(response), .decideChallenge(response))

        case (.connecting, .streamFailed), (.preparingParentCredential, .streamFailed):
            return enter(.failed, .failDescribing(.tcp))
        case (.parentHandshake, .streamFailed):
            return enter(.failed, .failDescribing(.parentHandshake))
        case (.originHandshake, .streamFailed):
            return enter(.failed, .failDescribing(.originHandshake))
        case (.awaitingConnectAnswer, .streamFailed), (.decidingChallenge, .streamFailed), (.discardingChallengeBody, .streamFailed):
            return fail(ProxyError(.connectionTerminated, details: "\(parentName) closed the connection during CONNECT \(plan.origin.host):\(plan.origin.port)"))

        case (.awaitingConnectAnswer, .stepTimedOut), (.discardingChallengeBody, .stepTimedOut):
            return fail(ProxyError(.httpResponseTimeout,
                                   details: "\(parentName) did not answer CONNECT \(plan.origin.host):\(plan.origin.port) within \(Seconds.text(plan.headerTimeout))"))
        case (.parentHandshake, .stepTimedOut):
            return fail(ProxyError(.connectionTimeout, details: "TLS handshake with the \(parentName) not completed within \(Seconds.text(plan.connectTimeout))"))
        case (.originHandshake, .stepTimedOut):
            return fail(ProxyError(.connectionTimeout,
                                   details: "TLS handshake with \(plan.origin.host) port \(plan.origin.port) not completed within \(Seconds.text(plan.connectTimeout))"))
        case (.connecting, .stepTimedOut), (.decidingChallenge, .stepTimedOut), (.preparingParentCredential, .stepTimedOut):
            // No step deadline runs here (TCP has the stream's own timeout; the KDC's wait, its own).
            return .nothing

        case (_, .stepImpossible(let error)):
            return fail(error)
        case (.awaitingConnectAnswer, .connected), (.decidingChallenge, .connected), (.preparingParentCredential, .connected),
             (.discardingChallengeBody, .connected):
            // Nothing is connecting in these steps: a repeated report from a TLS layer changes nothing.
            return .nothing

        default:
            // Only the shell's answers to this machine's own requests reach here out of turn.
            preconditionFailure("UpstreamDial: internal inconsistency, \(event) in \(state)")
        }
    }

    private var parentName: String { plan.parentName ?? "parent proxy" }

    private mutating func enter(_ next: State, _ action: Action) -> Action {
        state = next
        return action
    }

    private mutating func fail(_ error: ProxyError) -> Action {
        enter(.failed, .fail(error))
    }

    /// The stream now speaks to the parent (or, without one, to the origin).
    private mutating func reachedParent() -> Action {
        if case .parentConnect = plan.hop { return enter(.awaitingConnectAnswer, .sendConnect) }
        return throughTheParent()
    }

    /// Bytes written now reach the origin (or the parent itself, when forwarding to it).
    private mutating func throughTheParent() -> Action {
        if plan.originSecurity == .tls { return enter(.originHandshake, .startTLS(.origin)) }
        return enter(.ready, .ready)
    }

    /// A 407 is answered when the rule can; its body leaves the connection before the next
    /// CONNECT by the rule an origin's 401 follows, else the next CONNECT goes on a new connection.
    private mutating func challengeDecided(_ decision: ChallengeDecision, on response: ResponseHead, lockOut: String?) -> Action {
        switch decision {
        case .answer(let next):
            switch ChallengeBody.disposal(of: response, requestMethod: "CONNECT", connectionFree: true) {
            case .discard(let framing):
                return enter(.discardingChallengeBody(answer: next), .discardChallengeBody(framing))
            case .leaveWithConnection:
                return enter(.connecting, .reconnectToParent(answer: next))
            }
        case .prepareKerberos(let request):
            return enter(.preparingParentCredential(response), .prepareParentCredential(request))
        case .passThrough, .fail, .fetchToken:
            return fail(connectRefused(response, lockOut: lockOut))
        }
    }

    private func connectRefused(_ response: ResponseHead, lockOut: String?) -> ProxyError {
        let type: ProxyErrorType = response.status == 407 ? .httpRequestDenied(status: 502) : .destinationUnavailable
        return ProxyError(type, details: "\(parentName) answered CONNECT \(plan.origin.host):\(plan.origin.port) with \(response.status) \(response.reason)"
                              + (lockOut.map { "; \($0)" } ?? ""))
    }
}
