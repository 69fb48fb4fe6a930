import CountersignHTTP
/// An `Authorization` / `Proxy-Authorization` header to put on the replayed request.
/// An object: the exchange reads its answers several times while writing each head, and a
/// struct of this size was copied (five references) on every read.
public final class AuthAnswer: Sendable, CustomStringConvertible {
    /// `Authorization` or `Proxy-Authorization`, known to the head writer without a lookup.
    public let field: FieldName
    public var headerName: String { field.spelling.description }
    /// The header value: a secret, never printed, spliced into the head as bytes.
    public let value: SecretValue
    public let scheme: AuthSchemeName
    /// NTLM's first leg: send on the same connection with `Content-Length: 0`, no body.
    public let isHandshakeLeg: Bool
    /// NTLM, Negotiate: the upstream connection then belongs to this credential.
    public let bindsConnection: Bool
    /// A later leg of a handshake (NTLM's authenticate, a Negotiate continuation): it means
    /// something only on the connection that carried the earlier ones. A first leg may go on
    /// a new connection when the server closed the one that challenged.
    public let continuesHandshake: Bool
    /// The credential the answer comes from (what a bound connection is bound to).
    public let credentialName: String
    /// Why schemes preferred to this one were not used (Kerberos had no ticket, so NTLM
    /// answers), for the access log; nil when the first choice answered.
    public let fallbackReason: String?

    public init(field: FieldName, value: SecretValue, scheme: AuthSchemeName, isHandshakeLeg: Bool, bindsConnection: Bool,
                continuesHandshake: Bool = false, credentialName: String, fallbackReason: String? = nil) {
        self.field = field
        self.value = value
        self.scheme = scheme
        self.isHandshakeLeg = isHandshakeLeg
        self.bindsConnection = bindsConnection
        self.continuesHandshake = continuesHandshake
        self.credentialName = credentialName
        self.fallbackReason = fallbackReason
    }

    public var description: String {
        "\(headerName): \(scheme) answer" + (isHandshakeLeg ? " (handshake leg, no body)" : "")
    }
}

/// What to do with a 401/407 (RFC 9110 §11.6; SPEC "Answering challenges").
public enum ChallengeDecision: Sendable, CustomStringConvertible {
    /// Replay the request with this header.
    case answer(AuthAnswer)
    /// Hand the response to the client untouched; the reason is for the log.
    case passThrough(reason: String)
    /// Fail the exchange (502 with Proxy-Status); the reason names what is wrong.
    case fail(reason: String)
    /// Fetch a token for this OAuth2 credential, update the credentials, then ask again with the
    /// same response and exchange.
    case fetchToken(credentialName: String, client: OAuth2Client)
    /// Make this first Negotiate token off the event loop, give it to the exchange
    /// (`AuthExchange.adopt`), then ask again with the same response and exchange.
    case prepareKerberos(KerberosRequest)

    public var description: String {
        switch self {
        case .answer(let answer): return "answer: \(answer)"
        case .passThrough(let reason): return "pass through: \(reason)"
        case .fail(let reason): return "fail: \(reason)"
        case .fetchToken(let name, _): return "fetch an OAuth2 token for credential \(name)"
        case .prepareKerberos(let request): return "get a \(request) off the event loop"
        }
    }
}

/// How the exchange ended, for the access log (`digest:answered`).
public enum AuthOutcome: Hashable, Sendable, CustomStringConvertible {
    case notAttempted
    case answered(AuthSchemeName)
    case preemptive(AuthSchemeName)
    /// The last answer was refused; the final 401/407 went to the client.
    case rejected(AuthSchemeName)
    /// Refused for this request only, in a space where the credential was accepted for others
    /// (a path the account may not see): the 401/407 went to the client, nothing counted.
    case notAuthorized(AuthSchemeName)
    /// The server accepted the answer but its `rspauth` did not prove it knows the password.
    case serverProofMismatch(AuthSchemeName)
    /// The server's final Negotiate token did not prove it is the service the ticket was for:
    /// its response is refused.
    case mutualAuthFailed(AuthSchemeName)

    public var description: String {
        switch self {
        case .notAttempted: return "none"
        case .answered(let scheme): return "\(scheme):answered"
        case .preemptive(let scheme): return "\(scheme):preemptive"
        case .rejected(let scheme): return "\(scheme):rejected"
        case .notAuthorized(let scheme): return "\(scheme):not-authorized"
        case .serverProofMismatch(let scheme): return "\(scheme):rspauth-mismatch"
        case .mutualAuthFailed(let scheme): return "\(scheme):mutual-auth-failed"
        }
    }
}
