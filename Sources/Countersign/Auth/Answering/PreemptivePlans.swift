import CountersignSupport

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
    /// Basic's value, or a static token's: the same for every request, so the answer is this.
    let fixedValue: SecretValue?

    init(learned: LearnedSpace, rule: AuthRule, scheme: AuthenticationScheme.Type, credential: CredentialMaterial?,
         prepared: PreparedCredential?, fixedValue: SecretValue?) {
        self.learned = learned
        self.rule = rule
        self.scheme = scheme
        self.credential = credential
        self.prepared = prepared
        self.fixedValue = fixedValue
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
    func candidates(for target: AuthTarget, generation: UInt64, make: () -> [PreemptiveCandidate]) -> [PreemptiveCandidate] {
        let known = lock.withLock { _ in byTarget[target] }
        if let known, known.generation == generation { return known.candidates }
        let made = make()
        lock.withLock { _ in
            if byTarget.count >= Self.maxTargets, byTarget[target] == nil { byTarget.removeAll(keepingCapacity: true) }
            byTarget[target] = (generation, made)
        }
        return made
    }
}
