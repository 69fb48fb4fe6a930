import FoundationEssentials

/// What a scheme needs to build an answer.
struct SchemeContext {
    var credential: CredentialMaterial
    var credentialName: String
    var request: AuthRequest
    var digestResponder: DigestResponder
    var ntlmEntropy: NTLMEntropy
    var exchange: AuthExchange
    var now: Date
    /// Where learned state lives, and the space being answered: a fresh challenge whose nonce
    /// is already being counted by other exchanges continues that count.
    var store: ProtectionSpaceStore? = nil
    var space: ProtectionSpace? = nil
    /// This snapshot's precomputed values for `credential`, when it has them.
    var prepared: PreparedCredential? = nil
    /// Negotiate: the service to ask a ticket for, from the rule (`spn`); nil: HTTP@ the target's host.
    var spn: String? = nil
}

/// What a scheme produced.
enum SchemeOutcome {
    case answer(value: SecretValue, isHandshakeLeg: Bool, digestSession: DigestSession?, digestProof: DigestProof?)
    case needsToken(OAuth2Client)
    /// A first Negotiate token must be made off the event loop (it may wait on the KDC).
    case needsKerberos(KerberosRequest)
}

/// One HTTP authentication scheme, one file each (curl's `lib/vauth` layout): which credentials
/// it can use, whether its answer is password-equivalent, and how it answers.
protocol AuthenticationScheme {
    static var name: AuthSchemeName { get }
    /// An eavesdropper could replay the answer as the credential itself.
    static var isPasswordEquivalent: Bool { get }
    /// The handshake authenticates the connection (NTLM, Negotiate): it then stays with that
    /// credential and is never handed to another.
    static var bindsConnection: Bool { get }
    static func canAnswer(with credential: CredentialMaterial) -> Bool
    /// Picks the challenge to answer when the server offered several of this scheme.
    static func preferred(_ challenges: [Challenge]) -> Challenge?
    static func answer(_ challenge: Challenge, context: inout SchemeContext) throws -> SchemeOutcome
    /// An answer sent before any challenge, from learned state; nil when the scheme cannot.
    static func preemptiveAnswer(_ learned: LearnedSpace, store: ProtectionSpaceStore, context: inout SchemeContext) throws -> SchemeOutcome?
}

extension AuthenticationScheme {
    static func preferred(_ challenges: [Challenge]) -> Challenge? { challenges.first }
    static var bindsConnection: Bool { false }
}

enum AuthenticationSchemes {
    static func scheme(_ name: AuthSchemeName) -> AuthenticationScheme.Type {
        switch name {
        case .basic: return BasicScheme.self
        case .digest: return DigestScheme.self
        case .ntlm: return NTLMScheme.self
        case .negotiate: return NegotiateScheme.self
        case .bearer: return BearerScheme.self
        }
    }
}
