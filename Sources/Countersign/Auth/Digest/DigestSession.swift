/// What a Digest answer needs besides the password: the server's nonce and how many times it has
/// been used. Codable so that persistence "permanent" can keep it; it holds no secret.
public struct DigestSession: Codable, Equatable, Sendable {
    public var realm: String
    public var nonce: String
    public var opaque: String?
    public var algorithm: DigestAlgorithm
    public var qopOptions: [String]?
    public var userhash: Bool
    public var charset: String?
    /// The last nc sent with this nonce; 0 before the first answer.
    public var nonceCount: UInt32

    public init(realm: String, nonce: String, opaque: String? = nil, algorithm: DigestAlgorithm = .md5,
                qopOptions: [String]? = ["auth"], userhash: Bool = false, charset: String? = nil, nonceCount: UInt32 = 0) {
        self.realm = realm
        self.nonce = nonce
        self.opaque = opaque
        self.algorithm = algorithm
        self.qopOptions = qopOptions
        self.userhash = userhash
        self.charset = charset
        self.nonceCount = nonceCount
    }

    public init(challenge: DigestChallenge) {
        self.init(realm: challenge.realm, nonce: challenge.nonce, opaque: challenge.opaque, algorithm: challenge.algorithm,
                  qopOptions: challenge.qopOptions, userhash: challenge.userhash, charset: challenge.charset)
    }

    /// Counts one more use of the nonce and returns the count to send.
    public mutating func nextNonceCount() -> UInt32 {
        nonceCount &+= 1
        return nonceCount
    }

    /// `Authentication-Info: nextnonce` (RFC 7616 §3.5): the new nonce replaces the old and counting restarts.
    /// A `nextnonce` longer than `DigestChallenge.maxNonceBytes` is not taken (the current nonce
    /// goes on until the server challenges it): false then.
    @discardableResult
    public mutating func adopt(nextNonce: String) -> Bool {
        guard nextNonce.utf8.count <= DigestChallenge.maxNonceBytes, !nextNonce.isEmpty else { return false }
        nonce = nextNonce
        nonceCount = 0
        return true
    }
}
