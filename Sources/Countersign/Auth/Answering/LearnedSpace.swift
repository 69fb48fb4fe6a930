import FoundationEssentials

/// What a successful answer taught about a protection space, enough to answer preemptively.
/// Never holds a secret: the credential is looked up by name when the answer is built.
public struct LearnedSpace: Codable, Equatable, Sendable {
    public var space: ProtectionSpace
    public var credentialName: String
    public var persistence: Persistence
    /// Digest's nonce and count; nil for the other schemes.
    public var digest: DigestSession?
    /// Negotiate: the server challenged a connection it had already authenticated (it checks
    /// every request, as mod_auth_gssapi does by default), so every request carries a token.
    public var authenticatesEachRequest: Bool?
    public var learnedAt: Date

    public init(space: ProtectionSpace, credentialName: String, persistence: Persistence, digest: DigestSession? = nil,
                authenticatesEachRequest: Bool? = nil, learnedAt: Date) {
        self.authenticatesEachRequest = authenticatesEachRequest
        self.space = space
        self.credentialName = credentialName
        self.persistence = persistence
        self.digest = digest
        self.learnedAt = learnedAt
    }
}
