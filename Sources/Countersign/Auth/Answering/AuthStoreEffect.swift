import FoundationEssentials

/// A change to learned state that an answerer decision implies. The answerer only reads the
/// store (and takes the Digest session and count its answer is built on); what it decided
/// to change comes back as these values, and the driver applies them in order with
/// `ProtectionSpaceStore.apply` once the call returns.
public enum AuthStoreEffect: Equatable, Sendable, CustomStringConvertible {
    /// An answer to a challenge was accepted: answer this space preemptively from now on.
    case learn(LearnedSpace)
    /// The credential was accepted (any answer but the challenge status) for this request.
    case accepted(ProtectionSpace, on: ResourceKey)
    /// The credential was refused `max_failures` times within one request: whether that
    /// locks the space out depends on what the server accepted before (`SpaceStanding`).
    case refused(Refusal)
    /// A Digest session whose answer went through, back for the next exchange to lease.
    case returnDigestSession(DigestSession, to: ProtectionSpace)
    /// A Digest session moved on to a `nextnonce`: the old nonce's count is dropped unless an
    /// idle session still holds it (counts are kept for live sessions only).
    case retireNonce(String, in: ProtectionSpace)
    /// A `permanent` rule learned something: write `state_dir` out.
    case persist

    /// Names spaces only: a learned space and a Digest session hold no secret, but say so little
    /// that a log line needs no more.
    public var description: String {
        switch self {
        case .learn(let learned): return "learn \(learned.space)"
        case .accepted(let space, let resource): return "accepted in \(space) for \(resource.label)"
        case .refused(let refusal): return "refused in \(refusal.space) for \(refusal.resource.label)"
        case .returnDigestSession(_, let space): return "return a Digest session to \(space)"
        case .retireNonce(_, let space): return "retire a Digest nonce of \(space)"
        case .persist: return "persist"
        }
    }
}

/// A credential refused for one request, `max_failures` times.
public struct Refusal: Equatable, Sendable {
    public var space: ProtectionSpace
    public var resource: ResourceKey
    public var credentialName: String
    public var at: Date
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
    public var newlyLockedOut: [LockOut] = []
    /// What the refusal among these effects meant, if there was one.
    public var refusal: RefusalVerdict?
    /// Whether `state_dir` must be written.
    public var persist = false

    public init() {}
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
            case .accepted(let space, let resource): accept(space, on: resource)
            case .refused(let refusal):
                let verdict = refuse(refusal.space, on: refusal.resource, credentialName: refusal.credentialName, at: refusal.at)
                applied.refusal = verdict
                if case .lockedOut(let lockOut, isNew: true) = verdict { applied.newlyLockedOut.append(lockOut) }
            case .returnDigestSession(let session, let space): returnDigestSession(session, to: space)
            case .retireNonce(let nonce, let space): retireNonce(nonce, in: space)
            case .persist: applied.persist = true
            }
        }
        return applied
    }
}
