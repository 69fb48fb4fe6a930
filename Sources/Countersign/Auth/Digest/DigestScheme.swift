/// Digest as a scheme of the answering state machine. Not password-equivalent; preemptive with
/// the cached nonce and the next count.
enum DigestScheme: AuthenticationScheme {
    static let name = AuthSchemeName.digest
    static let isPasswordEquivalent = false

    static func canAnswer(with credential: CredentialMaterial) -> Bool {
        if case .password = credential { return true }
        return false
    }

    /// The strongest algorithm offered that parses: SHA-512-256, then SHA-256, then MD5.
    static func preferred(_ challenges: [Challenge]) -> Challenge? {
        func strength(_ challenge: Challenge) -> Int {
            guard let parsed = try? DigestChallenge(challenge) else { return -1 }
            switch parsed.algorithm.hash {
            case .sha512_256: return 3
            case .sha256: return 2
            case .md5, .md4: return 1
            }
        }
        return challenges.filter { strength($0) >= 0 }.max { strength($0) < strength($1) }
            ?? challenges.first
    }

    static func answer(_ challenge: Challenge, context: inout SchemeContext) throws -> SchemeOutcome {
        var session = DigestSession(challenge: try DigestChallenge(challenge))
        if let store = context.store, let space = context.space {
            store.reserveNonceCount(&session, in: space)
        }
        return try authorize(&session, context: context)
    }

    /// With an idle session of the space (none while every one is lent to another exchange).
    static func preemptiveAnswer(_ learned: LearnedSpace, store: ProtectionSpaceStore, context: inout SchemeContext) throws -> SchemeOutcome? {
        guard var session = store.leaseCountedDigestSession(learned.space) else { return nil }
        return try authorize(&session, context: context)
    }

    private static func authorize(_ session: inout DigestSession, context: SchemeContext) throws -> SchemeOutcome {
        guard case .password(let user, let password, _) = context.credential else {
            throw AuthError("credential \(context.credentialName) has no password for Digest")
        }
        return try authorize(&session, user: user, password: password, request: context.request, prepared: context.prepared,
                             responder: context.digestResponder)
    }

    private static func authorize(_ session: inout DigestSession, user: String, password: String, request: AuthRequest,
                                  prepared: PreparedCredential?, responder: DigestResponder) throws -> SchemeOutcome {
        let authorization = try authorization(&session, user: user, password: password, request: request, prepared: prepared,
                                              responder: responder)
        return .answer(value: authorization.value, isHandshakeLeg: false, digestSession: session, digestProof: authorization.proof)
    }

    private static func authorization(_ session: inout DigestSession, user: String, password: String, request: AuthRequest,
                                      prepared: PreparedCredential?, responder: DigestResponder) throws -> DigestAuthorization {
        try authorization(&session, user: user, password: password, method: request.method, uri: request.target, body: { request.body },
                          prepared: prepared, responder: responder)
    }

    /// The answer to `method` and `uri` with `session` (`body` is asked only when the server
    /// offers auth-int).
    static func authorization(_ session: inout DigestSession, user: String, password: String, method: String, uri: String,
                              body: () -> RequestBodyHash, prepared: PreparedCredential?, responder: DigestResponder) throws -> DigestAuthorization {
        // H(body) only matters to qop=auth-int: not hashed per request when the server does not offer it.
        let offersBodyHash = session.qopOffer.contains(.authInt)
        let bodyHash = offersBodyHash ? body().hex(for: session.algorithm.hash) : nil
        let secret = prepared?.digestSecret(session.algorithm, realm: session.realm)
        return try responder.authorize(session: &session, user: user, password: password, method: method, uri: uri, bodyHash: bodyHash,
                                       userRealmPasswordHash: secret)
    }
}
