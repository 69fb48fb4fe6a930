/// Bearer for static tokens and OAuth2 client-credentials tokens: password-equivalent.
enum BearerScheme: AuthenticationScheme {
    static let name = AuthSchemeName.bearer
    static let isPasswordEquivalent = true

    static func canAnswer(with credential: CredentialMaterial) -> Bool {
        switch credential {
        case .token, .oauth2: return true
        case .password, .ntHash, .kerberos: return false
        }
    }

    static func answer(_ challenge: Challenge, context: inout SchemeContext) throws -> SchemeOutcome {
        switch context.credential {
        case .token(let token):
            if let prepared = context.prepared?.bearer {
                return .answer(value: try prepared.get(), isHandshakeLeg: false, digestSession: nil, digestProof: nil)
            }
            return .answer(value: SecretValue(try BearerAnswer.authorization(token: token)), isHandshakeLeg: false, digestSession: nil, digestProof: nil)
        case .oauth2(let client, let token):
            // An expired token is never sent, and one close to expiry is replaced first.
            guard let token, token.isUsable(now: context.now), !token.needsRefresh(now: context.now) else {
                return .needsToken(client)
            }
            return .answer(value: try token.authorization(), isHandshakeLeg: false, digestSession: nil, digestProof: nil)
        case .password, .ntHash, .kerberos:
            throw AuthError("credential \(context.credentialName) holds no token for Bearer")
        }
    }

    static func preemptiveAnswer(_ learned: LearnedSpace, store: ProtectionSpaceStore, context: inout SchemeContext) throws -> SchemeOutcome? {
        try answer(Challenge(scheme: "Bearer"), context: &context)
    }
}
