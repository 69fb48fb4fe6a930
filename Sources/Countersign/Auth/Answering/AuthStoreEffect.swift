/// A change to learned state that an answerer decision implies. The answerer only reads the
/// store (and takes the Digest session and count its answer is built on); what it decided
/// to change comes back as these values, and the driver applies them in order with
/// `ProtectionSpaceStore.apply` once the call returns.
public enum AuthStoreEffect: Equatable, Sendable, CustomStringConvertible {
    /// An answer to a challenge was accepted: answer this space preemptively from now on.
    case learn(LearnedSpace)
    /// A preemptive answer was rejected (new password, server restart): answer afresh.
    case forget(ProtectionSpace)
    /// The credential was rejected `max_failures` times: not answered until a reload.
    case lockOut(ProtectionSpace)
    /// A Digest session whose answer went through, back for the next exchange to lease.
    case returnDigestSession(DigestSession, to: ProtectionSpace)
    /// A `permanent` rule learned something: write `state_dir` out.
    case persist

    /// Names spaces only: a learned space and a Digest session hold no secret, but say so little
    /// that a log line needs no more.
    public var description: String {
        switch self {
        case .learn(let learned): return "learn \(learned.space)"
        case .forget(let space): return "forget \(space)"
        case .lockOut(let space): return "lock out \(space)"
        case .returnDigestSession(_, let space): return "return a Digest session to \(space)"
        case .persist: return "persist"
        }
    }
}

/// An answerer's decision and the store effects that go with it.
public struct AuthStep<Result> {
    public let result: Result
    public let effects: [AuthStoreEffect]

    init(_ result: Result, effects: [AuthStoreEffect] = []) {
        self.result = result
        self.effects = effects
    }
}

extension AuthStep: Sendable where Result: Sendable {}

/// What applying effects left for the driver to do beyond the store.
public struct AppliedAuthEffects: Equatable, Sendable {
    /// Spaces locked out by these effects for the first time (each is reported once).
    public var newlyLockedOut: [ProtectionSpace] = []
    /// Whether `state_dir` must be written.
    public var persist = false
}

extension ProtectionSpaceStore {
    /// Applies an answerer's effects in the order given (a Digest session comes back after the
    /// space it belongs to was learned).
    @discardableResult
    public func apply(_ effects: [AuthStoreEffect]) -> AppliedAuthEffects {
        var applied = AppliedAuthEffects()
        for effect in effects {
            switch effect {
            case .learn(let learned): learn(learned)
            case .forget(let space): forget(space)
            case .lockOut(let space): if lockOut(space) { applied.newlyLockedOut.append(space) }
            case .returnDigestSession(let session, let space): returnDigestSession(session, to: space)
            case .persist: applied.persist = true
            }
        }
        return applied
    }
}
