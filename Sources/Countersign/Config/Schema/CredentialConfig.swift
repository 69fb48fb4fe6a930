/// Authentication schemes Countersign can answer, named as the challenges name them (an
/// OAuth2 credential answers `bearer` challenges).
public enum AuthScheme: String, Sendable, CaseIterable {
    case basic, digest, ntlm, negotiate, bearer

    /// Other names accepted in `schemes`: "oauth2" was this scheme's name for OAuth2 credentials.
    public static let aliases: [String: AuthScheme] = ["oauth2": .bearer]

    /// A name as written in `schemes`: a scheme or an alias of one.
    public init?(configName: String) {
        guard let scheme = AuthScheme(rawValue: configName) ?? Self.aliases[configName] else { return nil }
        self = scheme
    }
}

/// One entry under `credentials`. Each has exactly one kind.
public indirect enum CredentialConfig: Sendable {
    /// A user and password, for Basic, Digest and NTLM. `user` may be `DOMAIN\user` for NTLM.
    case password(user: String, password: Secret, workstation: String?)
    /// An NT hash (MD4 of the UTF-16LE password) instead of the password, for NTLM only.
    case ntHash(user: String, ntHash: Secret, workstation: String?)
    /// A bearer token sent as is.
    case token(Secret)
    /// A bare secret (an API key) for `inject` and placeholders; it answers no challenge.
    case value(Secret)
    /// A key that signs requests (`hosts.*.sign`).
    case signing(SigningKeyConfig)
    /// A key that verifies responses (`hosts.*.verify_responses`).
    case verifying(VerifyingKeyConfig)
    /// AWS keys that sign requests with Signature Version 4 (`sign.format: "aws-sigv4"`).
    case aws(AWSCredentialsConfig)
    /// An OAuth2 client whose client-credentials tokens answer Bearer challenges.
    case oauth2(OAuth2Config)
    /// A Kerberos principal for Negotiate, optionally with a password or NT hash credential
    /// (`alongside`) for the schemes it falls back to (NTLM) when no ticket can be had.
    case kerberos(KerberosConfig, alongside: CredentialConfig?)
    /// A client certificate and key in PEM files (absolute paths).
    case pemIdentity(certificatePath: String, privateKeyPath: String, passphrase: Secret?)
    /// A client certificate and key in a PKCS#12 file (absolute path).
    case pkcs12Identity(path: String, passphrase: Secret?)

    /// The schemes this credential can answer, in the default order of preference.
    /// Identities answer none: they are presented during the TLS handshake.
    public var answerableSchemes: [AuthScheme] {
        switch self {
        case .password: return [.digest, .ntlm, .basic]
        case .ntHash: return [.ntlm]
        case .token: return [.bearer]
        case .value, .signing, .verifying, .aws: return []
        case .oauth2: return [.bearer]
        case .kerberos(_, let alongside): return [.negotiate] + (alongside?.answerableSchemes ?? [])
        case .pemIdentity, .pkcs12Identity: return []
        }
    }

    public var isIdentity: Bool {
        switch self {
        case .pemIdentity, .pkcs12Identity: return true
        default: return false
        }
    }

    /// A short, secret-free name of the kind, for summaries and messages.
    public var kindName: String {
        switch self {
        case .password: return "password"
        case .ntHash: return "NT hash"
        case .token: return "token"
        case .value: return "value"
        case .signing: return "signing key"
        case .verifying: return "verifying key"
        case .aws: return "AWS keys"
        case .oauth2: return "OAuth2 client"
        case .kerberos(_, nil): return "Kerberos"
        case .kerberos(_, let alongside?): return "Kerberos and \(alongside.kindName)"
        case .pemIdentity: return "PEM identity"
        case .pkcs12Identity: return "PKCS#12 identity"
        }
    }
}

public struct OAuth2Config: Sendable {
    public enum ClientAuthentication: String, Sendable, CaseIterable {
        /// client_id and client_secret in an `Authorization: Basic` header (RFC 6749 §2.3.1).
        case basic
        /// client_id and client_secret in the form body.
        case body
    }

    public var tokenURL: EndpointURL
    public var clientID: String
    public var clientSecret: Secret
    public var scope: String?
    public var auth: ClientAuthentication

    public init(tokenURL: EndpointURL, clientID: String, clientSecret: Secret, scope: String? = nil,
                auth: ClientAuthentication = .basic) {
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scope = scope
        self.auth = auth
    }
}

/// `credentials.<name>.kerberos`: the principal and the one place its tickets come from.
public struct KerberosConfig: Sendable {
    public enum Source: Sendable {
        /// A keytab file (absolute path): tickets are obtained, and obtained again, from it.
        case keytab(path: String)
        /// A password (from `password_env` / `password_file`), exchanged for tickets in memory.
        case password(Secret)
        /// An existing credential cache such as "FILE:/tmp/krb5cc_app", kept fresh by whoever fills it.
        case ccache(String)
    }

    /// "svc@CORP.EXAMPLE".
    public var principal: String
    public var source: Source
    /// A krb5.conf (absolute path) to use instead of the system's; process-wide (KRB5_CONFIG).
    public var krb5Conf: String?

    public init(principal: String, source: Source, krb5Conf: String? = nil) {
        self.principal = principal
        self.source = source
        self.krb5Conf = krb5Conf
    }
}

extension CredentialConfig {
    /// What `inject` sets and a placeholder `countersign:NAME` stands for: the password, token
    /// or value (for a Kerberos credential, the password kept beside it for NTLM). Nil for kinds
    /// with no such secret: NT hashes, identities, and OAuth2 clients (whose access tokens are
    /// fetched at run time and cannot be injected yet).
    public var injectableSecret: Secret? {
        switch self {
        case .password(_, let password, _): return password
        case .token(let token), .value(let token): return token
        case .kerberos(_, let alongside?): return alongside.injectableSecret
        case .ntHash, .oauth2, .kerberos, .pemIdentity, .pkcs12Identity, .signing, .verifying, .aws: return nil
        }
    }

    /// The Kerberos part of a credential, if it has one.
    public var kerberos: KerberosConfig? {
        if case .kerberos(let settings, _) = self { return settings }
        return nil
    }
}
