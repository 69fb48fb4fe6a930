/// NTLM as a scheme of the answering state machine: two answers on one connection, never
/// preemptive (the authentication belongs to the connection, not to later requests).
enum NTLMScheme: AuthenticationScheme {
    static let name = AuthSchemeName.ntlm
    /// An NTLMv2 response proves the password for one server challenge only.
    static let isPasswordEquivalent = false
    static let bindsConnection = true

    static func canAnswer(with credential: CredentialMaterial) -> Bool {
        switch credential {
        case .password, .ntHash: return true
        case .token, .oauth2, .kerberos: return false
        }
    }

    static func answer(_ challenge: Challenge, context: inout SchemeContext) throws -> SchemeOutcome {
        var handshake = context.exchange.ntlm ?? NTLMHandshake()
        defer { context.exchange.ntlm = handshake }
        guard let token = challenge.token68 else {
            return .answer(value: SecretValue(handshake.start()), isHandshakeLeg: true, digestSession: nil, digestProof: nil)
        }
        let builder = NTLMAuthenticateBuilder(credentials: try credentials(context), workstation: workstation(context),
                                              channelBinding: context.request.channelBinding, entropy: context.ntlmEntropy)
        let value = try handshake.answer(challengeToken: token, with: builder)
        return .answer(value: SecretValue(value), isHandshakeLeg: false, digestSession: nil, digestProof: nil)
    }

    static func preemptiveAnswer(_ learned: LearnedSpace, store: ProtectionSpaceStore, context: inout SchemeContext) throws -> SchemeOutcome? {
        nil
    }

    private static func credentials(_ context: SchemeContext) throws -> NTLMCredentials {
        switch context.credential {
        case .password(let user, let password, _): return NTLMCredentials(account: user, password: password)
        case .ntHash(let user, let hash, _): return try NTLMCredentials(account: user, ntHash: hash)
        case .token, .oauth2, .kerberos: throw AuthError("credential \(context.credentialName) has no password or NT hash for NTLM")
        }
    }

    private static func workstation(_ context: SchemeContext) -> String {
        switch context.credential {
        case .password(_, _, let workstation), .ntHash(_, _, let workstation): return workstation ?? ""
        case .token, .oauth2, .kerberos: return ""
        }
    }
}
