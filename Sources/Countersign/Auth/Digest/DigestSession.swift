/// What a Digest answer needs besides the password: the server's nonce and how many times it has
/// been used. Codable so that persistence "permanent" can keep it; it holds no secret.
public struct DigestSession: Codable, Equatable, Sendable {
    public var realm: String {
        get { fixed.realm }
        set { change { $0.realm = newValue } }
    }
    public var nonce: String {
        get { fixed.nonce }
        set { change { $0.nonce = newValue } }
    }
    public var opaque: String? {
        get { fixed.opaque }
        set { change { $0.opaque = newValue } }
    }
    public var algorithm: DigestAlgorithm {
        get { fixed.algorithm }
        set { change { $0.algorithm = newValue } }
    }
    public var qopOptions: [String]? {
        get { fixed.qopOptions }
        set { change { $0.qopOptions = newValue } }
    }
    public var userhash: Bool {
        get { fixed.userhash }
        set { change { $0.userhash = newValue } }
    }
    public var charset: String? {
        get { fixed.charset }
        set { change { $0.charset = newValue } }
    }
    /// The last nc sent with this nonce; 0 before the first answer.
    public var nonceCount: UInt32
    /// The highest count of this nonce the store gave this session (`ProtectionSpaceStore`
    /// reserves counts ahead for a shelved session); neither saved nor compared.
    var reservedCount: UInt32 = 0
    /// `ProtectionSpaceStore.countsEpoch` when the counts were reserved.
    var reservedEpoch: UInt64 = 0
    /// Whether the store already gave this session its next count.
    var hasReservedCount: Bool { reservedCount > nonceCount }
    /// The answer's parameters that stay the same from one request to the next, written once
    /// (`DigestResponder`); neither saved nor compared: it is made again from the fields above.
    var answerParts: DigestAnswerParts? {
        get { fixed.answerParts }
        set { change { $0.answerParts = newValue } }
    }
    /// The cnonce of this session's answers with its nonce (`DigestAnswerParts`); nil before the first.
    var clientNonce: String? { fixed.answerParts?.cnonce }
    /// KD's input up to the nonce, hashed once per nonce and credential; neither saved nor compared.
    var noncePrefix: DigestNoncePrefix? {
        get { fixed.noncePrefix }
        set { change { $0.noncePrefix = newValue } }
    }
    /// H(A2) of the last request answered; neither saved nor compared.
    var a2Memo: DigestA2Memo? {
        get { fixed.a2Memo }
        set { change { $0.a2Memo = newValue } }
    }

    /// What the server set for this nonce, in one object shared by the session's copies: a session
    /// goes from the store to an exchange and back on every answer, and copying seven fields
    /// each time was a retain and a release per string. Copied when a shared one changes.
    private final class Fixed: @unchecked Sendable {
        var realm: String
        var nonce: String
        var opaque: String?
        var algorithm: DigestAlgorithm
        var qopOptions: [String]?
        var userhash: Bool
        var charset: String?
        var answerParts: DigestAnswerParts?
        var noncePrefix: DigestNoncePrefix?
        var a2Memo: DigestA2Memo?

        init(realm: String, nonce: String, opaque: String?, algorithm: DigestAlgorithm, qopOptions: [String]?, userhash: Bool,
             charset: String?, answerParts: DigestAnswerParts? = nil, noncePrefix: DigestNoncePrefix? = nil, a2Memo: DigestA2Memo? = nil) {
            self.realm = realm
            self.nonce = nonce
            self.opaque = opaque
            self.algorithm = algorithm
            self.qopOptions = qopOptions
            self.userhash = userhash
            self.charset = charset
            self.answerParts = answerParts
            self.noncePrefix = noncePrefix
            self.a2Memo = a2Memo
            recount()
        }

        /// What the fields above hold by the store's measure (`ProtectionSpaceStore.cost`),
        /// counted when they are set: a session is measured on every return to the shelf, and
        /// its fields rarely change between answers.
        private(set) var heldBytes = 0
        /// `qopOptions` as the answers ask about it, read when the fields are set.
        private(set) var qopOffer: DigestQopOffer = []

        func recount() {
            qopOffer = DigestQopOffer(qopOptions)
            heldBytes = 64 + realm.utf8.count + nonce.utf8.count + (opaque?.utf8.count ?? 0) + (charset?.utf8.count ?? 0)
                + (qopOptions ?? []).reduce(0) { $0 + 16 + $1.utf8.count } + (answerParts?.byteCount ?? 0)
                + (a2Memo.map { 160 + $0.uri.utf8.count } ?? 0)
        }

        func copy() -> Fixed {
            Fixed(realm: realm, nonce: nonce, opaque: opaque, algorithm: algorithm, qopOptions: qopOptions, userhash: userhash,
                  charset: charset, answerParts: answerParts, noncePrefix: noncePrefix, a2Memo: a2Memo)
        }
    }

    private var fixed: Fixed

    /// Changes this session's own `Fixed` (copied first when shared), then counts it again.
    private mutating func change(_ body: (Fixed) -> Void) {
        if !isKnownUniquelyReferenced(&fixed) { fixed = fixed.copy() }
        body(fixed)
        fixed.recount()
    }

    /// What the session holds by the store's measure (`ProtectionSpaceStore.cost`).
    var heldBytes: Int { fixed.heldBytes }
    /// Which qop values `qopOptions` offers.
    var qopOffer: DigestQopOffer { fixed.qopOffer }

    private enum CodingKeys: String, CodingKey { case realm, nonce, opaque, algorithm, qopOptions, userhash, charset, nonceCount }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(realm: try container.decode(String.self, forKey: .realm), nonce: try container.decode(String.self, forKey: .nonce),
                  opaque: try container.decodeIfPresent(String.self, forKey: .opaque),
                  algorithm: try container.decode(DigestAlgorithm.self, forKey: .algorithm),
                  qopOptions: try container.decodeIfPresent([String].self, forKey: .qopOptions),
                  userhash: try container.decode(Bool.self, forKey: .userhash),
                  charset: try container.decodeIfPresent(String.self, forKey: .charset),
                  nonceCount: try container.decode(UInt32.self, forKey: .nonceCount))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(realm, forKey: .realm)
        try container.encode(nonce, forKey: .nonce)
        try container.encodeIfPresent(opaque, forKey: .opaque)
        try container.encode(algorithm, forKey: .algorithm)
        try container.encodeIfPresent(qopOptions, forKey: .qopOptions)
        try container.encode(userhash, forKey: .userhash)
        try container.encodeIfPresent(charset, forKey: .charset)
        try container.encode(nonceCount, forKey: .nonceCount)
    }

    public static func == (lhs: DigestSession, rhs: DigestSession) -> Bool {
        lhs.nonceCount == rhs.nonceCount && (lhs.fixed === rhs.fixed
            || (lhs.realm == rhs.realm && lhs.nonce == rhs.nonce && lhs.opaque == rhs.opaque && lhs.algorithm == rhs.algorithm
                && lhs.qopOptions == rhs.qopOptions && lhs.userhash == rhs.userhash && lhs.charset == rhs.charset))
    }

    public init(realm: String, nonce: String, opaque: String? = nil, algorithm: DigestAlgorithm = .md5,
                qopOptions: [String]? = ["auth"], userhash: Bool = false, charset: String? = nil, nonceCount: UInt32 = 0) {
        fixed = Fixed(realm: realm, nonce: nonce, opaque: opaque, algorithm: algorithm, qopOptions: qopOptions, userhash: userhash,
                      charset: charset)
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
        reservedCount = 0
        answerParts = nil
        noncePrefix = nil
        return true
    }
}
