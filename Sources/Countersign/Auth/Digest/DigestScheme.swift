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
        // H(body) only matters to qop=auth-int: not hashed per request when the server does not offer it.
        let offersBodyHash = session.qopOptions?.contains("auth-int") == true
        let request = DigestRequest(method: context.request.method, uri: context.request.target,
                                    bodyHash: offersBodyHash ? context.request.body.hex(for: session.algorithm.hash) : nil)
        let secret = context.prepared?.digestSecret(session.algorithm, realm: session.realm)
        let authorization = try context.digestResponder.authorize(session: &session, user: user, password: password, request: request,
                                                                  userRealmPasswordHash: secret)
        return .answer(value: authorization.value, isHandshakeLeg: false, digestSession: session, digestProof: authorization.proof)
    }
}
