import CountersignSupport
import struct Synchronization.Atomic

/// What a preemptive answer to a target can be, decided once per change of the learned state
/// instead of once per request: the learned spaces a rule of this answerer answers ahead of a
/// challenge, in the order they are tried, with the rule, the scheme and the credential.
/// Only what the request decides (a TLS connection, the answer itself) is left for each request.
/// A class: each request walks the plan, and a struct this size is copied field by field.
final class PreemptiveCandidate: @unchecked Sendable {
    let learned: LearnedSpace
    let rule: AuthRule
    let scheme: AuthenticationScheme.Type
    /// The credential's material for the scheme; nil for an OAuth2 credential, whose token
    /// changes under the answerer: looked up for each answer.
    let credential: CredentialMaterial?
    let prepared: PreparedCredential?
    /// Basic's answer, or a static token's: the same for every request, so made once.
    let fixedAnswer: AuthAnswer?
    /// Digest's sessions lent to this candidate between answers (not for a `permanent` rule,
    /// whose latest count the store keeps for `state_dir` on every answer).
    let digestShelf: DigestSessionShelf?
    /// The user and password a shelved Digest session answers with (`shelvedDigestAnswer`).
    let digestLogin: (user: String, password: String)?
    /// The learned space and the rule, shared by the records of this candidate's answers.
    private let spaceAndRule: AuthExchange.SpaceAndRule
    /// What each request asks of the rule and the space, read from here: reaching them
    /// through `rule` and `learned` copied those structures (a retain and a release a string).
    let schemeName: AuthSchemeName
    let credentialName: String
    /// The answer may cross an unencrypted connection (not password-equivalent, or the rule
    /// allows it): `ChallengeAnswerer.permitsConnection` decided once.
    let answersOverPlaintext: Bool
    /// Which resource the answers of this candidate were last accepted on.
    let acceptance = AcceptanceMemo()
    /// The record of the answer last sent, kept while requests repeat its resource: the same
    /// object, not one per request (hashing the method and target cost ~370 instructions).
    private let lastSent = Mutex<AuthExchange.Sent?>(nil)

    init(learned: LearnedSpace, rule: AuthRule, scheme: AuthenticationScheme.Type, credential: CredentialMaterial?,
         prepared: PreparedCredential?, fixedAnswer: AuthAnswer?, digestShelf: DigestSessionShelf? = nil) {
        self.learned = learned
        self.rule = rule
        spaceAndRule = AuthExchange.SpaceAndRule(space: learned.space, rule: rule)
        schemeName = learned.space.scheme
        credentialName = rule.credentialName
        answersOverPlaintext = !scheme.isPasswordEquivalent || rule.allowPlaintext
        self.scheme = scheme
        self.credential = credential
        self.prepared = prepared
        self.fixedAnswer = fixedAnswer
        self.digestShelf = digestShelf
        if digestShelf != nil, case .password(let user, let password, _)? = credential {
            digestLogin = (user, password)
        } else {
            digestLogin = nil
        }
    }

    /// Whether an answer of this candidate may go on the connection (`permitsConnection`).
    func permitsConnection(overTLS: Bool) -> Bool { overTLS || answersOverPlaintext }

    /// The record of a preemptive answer of this candidate for `method` and `target`: the
    /// one last made while requests repeat them (the usual client asks for the same thing
    /// again), compared as they are and hashed only for a new one. Shared by the answers: it
    /// holds nothing of one answer alone.
    func sent(method: String, target: String) -> AuthExchange.Sent {
        lastSent.withLock { last in
            if let last, last.resource.isFor(method: method, target: target) { return last }
            let made = AuthExchange.Sent(spaceAndRule: spaceAndRule, preemptive: true, resource: ResourceKey(method: method, target: target),
                                         acceptance: acceptance)
            last = made
            return made
        }
    }
}

/// The resource a candidate's answers were last accepted on (`ResourceKey`'s hash; 0 before
/// any): a space's standing changes only when it moves, so an answer accepted again on it
/// asks nothing of the store. A candidate lives for one store generation, and whatever changes
/// a standing in a way that matters (a lock-out, a standing dropped) moves the generation, so
/// this never outlives what it stands for. An object of its own, so that the records of
/// answers can point at it without holding the candidate that keeps one of them.
final class AcceptanceMemo: Sendable {
    private let lastAccepted = Atomic<Int>(0)

    /// Whether the answer was accepted on `resource` the last time (and notes that it is now).
    /// Nothing is skipped in the one case in 2^64 where the hash is 0.
    func acceptedBefore(on resource: ResourceKey) -> Bool {
        resource.hash != 0 && lastAccepted.exchange(resource.hash, ordering: .relaxed) == resource.hash
    }
}

/// A target's candidates as of one store generation, for the exchange that asked.
public struct PreemptivePlan: Sendable {
    let generation: UInt64
    let candidates: [PreemptiveCandidate]

    /// Whether a learned space could be answered ahead of a challenge.
    public var isEmpty: Bool { candidates.isEmpty }
}

/// The candidates of each target, shared by every copy of one answerer (every exchange with the
/// host), tagged with the store generation they were made at: a space learned, forgotten or
/// locked out makes the next request decide again. Bounded: a host pattern matching many
/// targets keeps at most `maxTargets` plans.
final class PreemptivePlans: @unchecked Sendable {
    private let lock = Mutex(())
    private var byTarget: [AuthTarget: (generation: UInt64, candidates: [PreemptiveCandidate])] = [:]

    static let maxTargets = 1024

    init() {}

    /// The plan for `target` as of `generation`, made by `make` when there is none or it is older.
    /// `make` is given the candidates of the older plan (their Digest shelves carry over).
    func candidates(for target: AuthTarget, generation: UInt64, make: ([PreemptiveCandidate]) -> [PreemptiveCandidate]) -> [PreemptiveCandidate] {
        let known = lock.withLock { _ in byTarget[target] }
        if let known, known.generation == generation { return known.candidates }
        let made = make(known?.candidates ?? [])
        lock.withLock { _ in
            if byTarget.count >= Self.maxTargets, byTarget[target] == nil { byTarget.removeAll(keepingCapacity: true) }
            byTarget[target] = (generation, made)
        }
        return made
    }
}

/// One worker's last plan: a worker sends one host request after request, and finding the
/// plan in the shared `PreemptivePlans` took its lock and a hashed lookup (~320 instructions
/// a request). Used again only for the same answerer's plans (the object itself is held, so
/// another never takes its place), the same target and a plan still current, so a request
/// never sees another host's plan nor one the store has moved past. One worker's: no lock.
public final class PreemptivePlanMemo {
    /// An object: read in place, where a tuple in an optional was copied out whole.
    private final class Kept {
        let plans: PreemptivePlans
        let target: AuthTarget
        let plan: PreemptivePlan

        init(plans: PreemptivePlans, target: AuthTarget, plan: PreemptivePlan) {
            self.plans = plans
            self.target = target
            self.plan = plan
        }
    }

    private var last: Kept?

    public init() {}

    /// The plan kept for `target` of `plans`, when it was made at `generation`.
    func plan(of plans: PreemptivePlans, for target: AuthTarget, at generation: UInt64) -> PreemptivePlan? {
        guard let last, last.plans === plans, last.plan.generation == generation, last.target == target else { return nil }
        return last.plan
    }

    func keep(_ plan: PreemptivePlan, of plans: PreemptivePlans, for target: AuthTarget) {
        last = Kept(plans: plans, target: target, plan: plan)
    }
}
