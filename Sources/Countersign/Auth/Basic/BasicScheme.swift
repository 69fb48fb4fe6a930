/// Basic as a scheme of the answering state machine: password-equivalent, preemptive at once.
enum BasicScheme: AuthenticationScheme {
    static let name = AuthSchemeName.basic
    static let isPasswordEquivalent = true

    static func canAnswer(with credential: CredentialMaterial) -> Bool {
        if case .password = credential { return true }
        return false
    }

    static func answer(_ challenge: Challenge, context: inout SchemeContext) throws -> SchemeOutcome {
        try answer(charset: challenge[param: "charset"], context: context)
    }

    static func preemptiveAnswer(_ learned: LearnedSpace, store: ProtectionSpaceStore, context: inout SchemeContext) throws -> SchemeOutcome? {
        try answer(charset: nil, context: context)
    }

    private static func answer(charset: String?, context: SchemeContext) throws -> SchemeOutcome {
        guard case .password(let user, let password, _) = context.credential else {
            throw AuthError("credential \(context.credentialName) has no password for Basic")
        }
        // Prepared once per configuration snapshot; charset changes nothing (always UTF-8).
        if let prepared = context.prepared?.basic { return .answer(value: try prepared.get(), isHandshakeLeg: false, digestSession: nil, digestProof: nil) }
        let value = try BasicAnswer.authorization(user: user, password: password, charset: charset)
        return .answer(value: SecretValue(value), isHandshakeLeg: false, digestSession: nil, digestProof: nil)
    }
}
