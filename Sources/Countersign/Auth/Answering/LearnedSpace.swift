import FoundationEssentials

/// What a successful answer taught about a protection space, enough to answer preemptively.
/// Never holds a secret: the credential is looked up by name when the answer is built.
public struct LearnedSpace: Codable, Equatable, Sendable {
    public var space: ProtectionSpace
    public var credentialName: String
    public var persistence: Persistence
    /// Digest's nonce and count; nil for the other schemes.
    public var digest: DigestSession?
    public var learnedAt: Date

    public init(space: ProtectionSpace, credentialName: String, persistence: Persistence, digest: DigestSession? = nil, learnedAt: Date) {
        self.space = space
        self.credentialName = credentialName
        self.persistence = persistence
        self.digest = digest
        self.learnedAt = learnedAt
    }
}
