import CountersignAuth
import CountersignConfig
import CountersignHTTP
import CountersignTrust

/// Challenge answering for one exchange with an origin: a preemptive answer before the
/// first attempt, a decision on each 401, and what worked recorded at the end. Built only
/// for hosts with `auth` rules, and never when the client brought its own `Authorization`
/// (nor on a connection the client authenticated itself: see `ClientBoundUpstreams`).
final class ExchangeAuthenticator {
    private var answerer: ChallengeAnswerer
    private var state = AuthExchange()
    /// Which of the runtime's token updates `answerer` has (0: none yet, as configured).
    private var tokenGeneration = 0
    /// The token generation of the last answer sent: a token rejected was of that one.
    private var answeredTokenGeneration: Int?
    /// The tokens this exchange has seen: a token fetch it asks for is for something newer.
    var tokenGenerationSeen: Int { answeredTokenGeneration ?? tokenGeneration }
    private let runtime: AuthRuntime
    private let target: AuthTarget
    /// What the target can be answered with ahead of a challenge, kept while the store stands
    /// still: asked before connecting and again once connected.
    private var plan: PreemptivePlan?
    /// The worker's last plan, where one exchange with the host finds the plan the one before
    /// it made (nil for the parent proxy's: asked of the answerer's shared plans).
    private let plans: PreemptivePlanMemo?
    /// The credential an NTLM handshake would bind a connection to, whose bound connections
    /// may be reused.
    var connectionBindingCredential: String? { answerer.connectionBindingCredential }

    /// For the origin's 401s; nil when nothing is to be answered. Decided before anything is
    /// allocated: this runs for every exchange, and most hosts have no `auth` rules. The host's
    /// answerer was resolved with its plan; `targets` keeps the worker's last target.
    static func forOrigin(runtime: AuthRuntime, plan: HostPlan?, upstream: UpstreamTarget, clientHeaders: HeaderFields,
                          targets: AuthTargetCache) -> ExchangeAuthenticator? {
        guard let answerer = plan?.answerer, !clientHeaders.contains(.authorization) else { return nil }
        return ExchangeAuthenticator(answerer: answerer, runtime: runtime, target: targets.target(host: upstream.host, port: upstream.port),
                                     plans: targets.plans)
    }

    /// For the parent proxy's 407s, with `parent_proxy.auth`.
    static func forParent(runtime: AuthRuntime, parent: ParentHop) -> ExchangeAuthenticator? {
        guard let answerer = runtime.parentAnswerer else { return nil }
        return ExchangeAuthenticator(answerer: answerer, runtime: runtime, target: AuthTarget(host: parent.host, port: Int(parent.port), isProxy: true))
    }

    private init(answerer: ChallengeAnswerer, runtime: AuthRuntime, target: AuthTarget, plans: PreemptivePlanMemo? = nil) {
        self.answerer = answerer
        self.runtime = runtime
        self.target = target
        self.plans = plans
    }

    /// Whether a challenge went unanswered because its protection space is locked out (its
    /// credential was rejected `max_failures` times: a wrong password must not lock an account out).
    var skippedLockedOutSpace: Bool { state.skippedLockedOut != nil }

    /// The lock-out this exchange ran into or caused, for the `Proxy-Status` of the response
    /// the client gets.
    private(set) var lockOut: LockOut?

    func tokenToFetchFirst() -> (credentialName: String, client: OAuth2Client)? {
        runtime.withCurrentTokens(&answerer, generation: &tokenGeneration)
        return answerer.tokenToFetchFirst(target: target)
    }

    /// `request` is made only when a learned space's scheme computes its answer.
    func preemptive(_ facts: @autoclosure () -> RequestFacts, _ request: @autoclosure () -> AuthRequest) -> AuthAnswer? {
        // Asked again once connected: a plan still current with nothing in it answers nothing
        // now either (and no first Kerberos token is waited for), so nothing is looked at.
        if let plan, plan.isEmpty, state.preemptiveKerberos == nil, answerer.isCurrent(plan) { return nil }
        runtime.withCurrentTokens(&answerer, generation: &tokenGeneration)
        let current: PreemptivePlan
        if let plan, answerer.isCurrent(plan) {
            current = plan
        } else {
            current = plans.map { answerer.preemptivePlan(for: target, memo: $0) } ?? answerer.preemptivePlan(for: target)
            plan = current
        }
        let answer = answerer.preemptiveAnswer(from: current, facts: facts, request: request, target: target, exchange: &state)
        if answer != nil { answeredTokenGeneration = tokenGeneration }
        return answer
    }

    func decide(on response: ResponseHead, request: AuthRequest) -> ChallengeDecision {
        runtime.withCurrentTokens(&answerer, generation: &tokenGeneration)
        let step = answerer.respond(to: AuthResponseHead(response), request: request, target: target, exchange: &state)
        let applied = runtime.apply(step.effects)
        if case .lockedOut(let caused, _)? = applied.refusal {
            lockOut = caused
        } else if let skipped = state.skippedLockedOut {
            lockOut = runtime.store.lockOut(of: skipped)
        }
        if case .answer = step.result { answeredTokenGeneration = tokenGeneration }
        return step.result
    }

    /// What a preemptive answer waits for: a first Kerberos token to make off the loop.
    var preemptiveKerberos: KerberosRequest? { state.preemptiveKerberos }

    /// A first Kerberos token made off the loop: the next `preemptive` or `decide` takes it.
    func adopt(_ prepared: PreparedNegotiate) { state.adopt(prepared) }

    /// Records the outcome with the response the client gets; `permanent` state is written out.
    func complete(_ response: ResponseHead) -> AuthOutcome {
        guard state.answeredScheme != nil else { return .notAttempted }  // nothing sent: nothing to record
        let step = answerer.complete(response: AuthResponseHead(response), target: target, exchange: &state)
        // The usual preemptive answer accepted again changes nothing: no applied effects are made.
        if !step.effects.isEmpty { runtime.apply(step.effects) }
        return step.result
    }

    /// Why the server's final Negotiate token did not prove its identity (its response is
    /// refused with a 502), or nil.
    var mutualAuthFailure: String? { state.mutualAuthFailure }

    /// Whether an answer went already in this exchange (a preemptive one, or to a challenge).
    var hasAnswered: Bool { state.answeredScheme != nil }

    /// `tls-server-end-point` of the certificate the upstream actually served (NTLM's
    /// Extended Protection); nil on plain connections.
    static func channelBinding(_ connection: UpstreamConnection?) -> [UInt8]? {
        certificateHash(connection).map(TLSChannelBinding.ntlmAVValue(certificateHash:))
    }

    /// The same binding as GSSAPI's application data (RFC 5929, RFC 4121 §4.1.1.2).
    static func gssChannelBinding(_ connection: UpstreamConnection?) -> [UInt8]? {
        certificateHash(connection).map(TLSChannelBinding.applicationData(certificateHash:))
    }

    private static func certificateHash(_ connection: UpstreamConnection?) -> [UInt8]? {
        guard let leaf = connection?.servedLeaf else { return nil }
        return try? TLSChannelBinding.certificateHash(der: leaf.der)
    }
}
