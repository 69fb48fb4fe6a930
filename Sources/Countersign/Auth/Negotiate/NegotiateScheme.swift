import FoundationEssentials

/// Negotiate (RFC 4559) as a scheme of the answering machine: SPNEGO through the system's
/// GSSAPI, a ticket for `HTTP@host` (or the rule's `spn`), the TLS channel binding, and the
/// server's final token checked when the response comes (`ChallengeAnswerer.complete`). Like
/// NTLM it authenticates the connection, which then stays with the credential; unlike NTLM it
/// can go first on a fresh connection (a preemptive first token), since Kerberos needs nothing
/// from the server to start.
enum NegotiateScheme: AuthenticationScheme {
    static let name = AuthSchemeName.negotiate
    /// A ticket is for one service, and with the channel binding for one TLS connection.
    static let isPasswordEquivalent = false
    static let bindsConnection = true

    static func canAnswer(with credential: CredentialMaterial) -> Bool {
        if case .kerberos = credential { return true }
        return false
    }

    /// A bare `Negotiate` starts a context; `Negotiate <token>` after our token continues it.
    static func preferred(_ challenges: [Challenge]) -> Challenge? {
        challenges.first { $0.token68 == nil } ?? challenges.first
    }

    static func answer(_ challenge: Challenge, context: inout SchemeContext) throws -> SchemeOutcome {
        if let handshake = context.exchange.negotiate, handshake.state == .tokenSent, let token = challenge.token68 {
            guard let next = try handshake.answer(challengeToken: token) else {
                throw AuthError("the server completed the Kerberos exchange and still answered \(context.space?.target.challengeStatus ?? 401)")
            }
            return .answer(value: SecretValue(next), isHandshakeLeg: false, digestSession: nil, digestProof: nil)
        }
        return try start(&context)
    }

    /// The first token on a connection no handshake ran on yet; nil before the connection is
    /// known (its certificate goes into the token) and on one already authenticated as this
    /// credential (IIS keeps a Negotiate authentication for the connection) unless the server
    /// was seen to check every request.
    static func preemptiveAnswer(_ learned: LearnedSpace, store: ProtectionSpaceStore, context: inout SchemeContext) throws -> SchemeOutcome? {
        guard let connection = context.request.connection,
              connection.authenticatedAs != context.credentialName || learned.authenticatesEachRequest == true else { return nil }
        return try start(&context)
    }

    private static func start(_ context: inout SchemeContext) throws -> SchemeOutcome {
        guard case .kerberos(let kerberos, _) = context.credential else {
            throw AuthError("credential \(context.credentialName) has no kerberos settings for Negotiate")
        }
        guard let target = context.space?.target else { throw AuthError("Negotiate needs the host it answers") }
        let service = context.spn ?? "HTTP@\(target.host)"
        let bindings = context.request.connectionIsTLS ? context.request.gssChannelBinding : nil
        if context.request.connectionIsTLS && bindings == nil && !target.isProxy {
            throw AuthError("the TLS channel binding of \(target) is not known, so no Kerberos token is made for it")
        }
        let request = KerberosRequest(credential: kerberos, service: service, bindings: bindings)
        // The first token may wait on the KDC: it is made off the event loop (KDCQueue) and
        // the exchange asks again with it in hand.
        guard let prepared = context.exchange.preparedNegotiate, prepared.request.matches(request) else {
            return .needsKerberos(request)
        }
        context.exchange.preparedNegotiate = nil
        let (handshake, first) = try prepared.result.get()
        context.exchange.negotiate = handshake
        return .answer(value: SecretValue(first), isHandshakeLeg: false, digestSession: nil, digestProof: nil)
    }
}
