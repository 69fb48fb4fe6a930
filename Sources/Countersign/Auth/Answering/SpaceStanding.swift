import FoundationEssentials

/// One request as a resource whose authorization a server decides: method and request-target.
/// Kept as a hash (a fixed 8 bytes, whatever the target's length); the per-process random seed
/// of `Hasher` means no client can aim a collision at a resource it wants to pass for another.
public struct ResourceKey: Hashable, Sendable {
    let hash: Int
    /// The request it was made from, kept (two references, no copy) so that `label` is spelled
    /// only when a refusal or a log line needs it, never on the accepted path.
    private let request: (method: String, target: String)?

    public init(method: String, target: String) {
        // Over the UTF-8 bytes: `String.hash(into:)` takes its Unicode-equivalence path, about
        // twice the cost for a method and a path. The NUL between them cannot occur in either.
        var hasher = Hasher()
        var method = method, target = target
        method.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(UInt8(0))
        target.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hash = hasher.finalize()
        request = (method, target)
    }

    init(_ request: AuthRequest) { self.init(method: request.method, target: request.target) }

    /// Whether this key was made for `method` and `target` (false for a `kept` one).
    func isFor(method: String, target: String) -> Bool {
        guard let request else { return false }
        return request.method == method && request.target == target
    }

    private init(hash: Int) {
        self.hash = hash
        request = nil
    }

    /// For log lines and `/status`: the method and path (no query, which may carry keys), cut short.
    var label: String {
        guard let (method, target) = request else { return "" }
        let path = target.prefix { $0 != "?" }
        return "\(method) \(path.prefix(Self.maxLabelLength))" + (path.count > Self.maxLabelLength ? "…" : "")
    }

    /// What a standing keeps: 8 bytes, the label left to the refusal being reported.
    var kept: ResourceKey { ResourceKey(hash: hash) }

    public static func == (lhs: ResourceKey, rhs: ResourceKey) -> Bool { lhs.hash == rhs.hash }
    public func hash(into hasher: inout Hasher) { hasher.combine(hash) }

    static let maxLabelLength = 120
}

/// Why a protection space is no longer answered: shown to the client (`Proxy-Status`), on
/// `/status` and in the log. Names the credential, never its secret.
public struct LockOut: Equatable, Sendable {
    public var space: ProtectionSpace
    public var credentialName: String
    public var since: Date
    public var reason: String

    /// One sentence for the client and the operator.
    public var sentence: String {
        "credential \(credentialName) is locked out of \(space) since \(since.ISO8601Format()): \(reason); "
            + "not answered again until the configuration reloads or the credential changes"
    }
}

/// What the server has shown about a credential in one protection space, which decides what a
/// refusal there means. A server answers "wrong password" and "this user may not see this
/// path" with the same 401 in the same realm (Apache's `Require user`, an application's own
/// checks), so a refusal alone proves nothing about the credential; what it was refused *for*,
/// against what it was accepted for, does.
public enum SpaceStanding: Equatable, Sendable {
    /// Never accepted here (in this configuration generation): refused on these resources.
    /// Refused on `unprovenLockOutResources` different ones with no success between, it is
    /// taken for a wrong credential; one resource alone could be a path it may not see.
    case unproven(refusedOn: [ResourceKey])
    /// Accepted here, on these resources (the most recent last, `maxAcceptedResources` kept). A
    /// refusal for another resource is an authorization failure and counts nothing; a refusal
    /// where it was accepted before means the credential changed (a rotated password).
    case accepted(on: [ResourceKey])
    case lockedOut(LockOut)

    static let unprovenLockOutResources = 2
    static let maxAcceptedResources = 64
}

/// What one refused answer means, given the space's standing.
public enum RefusalVerdict: Equatable, Sendable {
    /// The credential is good here; the server does not let it see this resource.
    case notAuthorized
    /// Counted towards a lock-out that has not happened (yet).
    case counted
    /// The space is locked out (by this refusal, or already).
    case lockedOut(LockOut, isNew: Bool)
}

extension SpaceStanding {
    var isLockedOut: Bool {
        if case .lockedOut = self { return true }
        return false
    }

    /// The standing after the credential was accepted on `resource`: every earlier refusal forgotten.
    func accepting(_ resource: ResourceKey) -> SpaceStanding {
        switch self {
        case .lockedOut:
            return self   // a success from before the lock-out, arriving late, proves nothing now
        case .unproven:
            return .accepted(on: [resource.kept])
        case .accepted(var resources):
            resources.removeAll { $0 == resource }
            resources.append(resource.kept)
            if resources.count > Self.maxAcceptedResources { resources.removeFirst(resources.count - Self.maxAcceptedResources) }
            return .accepted(on: resources)
        }
    }

    /// The verdict on a refusal on `resource`, and the standing after it.
    func refusing(_ resource: ResourceKey, space: ProtectionSpace, credentialName: String, at now: Date) -> (RefusalVerdict, SpaceStanding) {
        func lockOut(_ reason: String) -> (RefusalVerdict, SpaceStanding) {
            let lockOut = LockOut(space: space, credentialName: credentialName, since: now, reason: reason)
            return (.lockedOut(lockOut, isNew: true), .lockedOut(lockOut))
        }
        switch self {
        case .lockedOut(let lockOut):
            return (.lockedOut(lockOut, isNew: false), self)
        case .accepted(let resources):
            guard resources.contains(resource) else { return (.notAuthorized, self) }
            return lockOut("refused on \(resource.label), which it had been accepted for (a changed password?)")
        case .unproven(var refused):
            if !refused.contains(resource) { refused.append(resource.kept) }
            guard refused.count >= Self.unprovenLockOutResources else { return (.counted, .unproven(refusedOn: refused)) }
            return lockOut("refused on \(refused.count) different requests (the last \(resource.label)) and never accepted")
        }
    }
}
