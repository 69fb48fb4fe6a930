/// NSURLCredentialPersistence: how long what worked for a protection space is remembered.
public enum Persistence: String, Sendable, CaseIterable {
    /// Answer each challenge; remember nothing.
    case none
    /// Remember in memory and answer preemptively until restart or reload.
    case session
    /// Like session, and keep the learned state (never secrets) in `state_dir` across restarts.
    case permanent
}

/// One protection-space rule under `hosts.*.auth`; the first whose realm matches wins.
public struct AuthRule: Sendable {
    /// A name under `credentials`.
    public var credential: String
    /// Allowed schemes in order of preference.
    public var schemes: [AuthScheme]
    /// nil matches any realm.
    public var realm: String?
    public var persistence: Persistence
    public var preemptive: Bool
    public var maxFailures: Int
    /// Allow password-equivalent answers over an unencrypted upstream connection.
    public var allowPlaintext: Bool
    /// Negotiate: the service to ask a ticket for ("HTTP@host" or "HTTP/host@REALM"); nil: HTTP@ the request's host.
    public var spn: String?

    public init(credential: String, schemes: [AuthScheme], realm: String? = nil,
                persistence: Persistence = .session, preemptive: Bool? = nil, maxFailures: Int = 1,
                allowPlaintext: Bool = false, spn: String? = nil) {
        self.spn = spn
        self.credential = credential
        self.schemes = schemes
        self.realm = realm
        self.persistence = persistence
        self.preemptive = preemptive ?? (persistence != .none)
        self.maxFailures = maxFailures
        self.allowPlaintext = allowPlaintext
    }
}

/// The policy for one entry under `hosts`.
public struct HostConfig: Sendable {
    /// As written in the file, e.g. `api.example.com`, `api.example.com:8443`, `*.example.com`.
    public var pattern: String
    /// Terminate CONNECT to this host with a minted certificate (otherwise tunnel it blindly).
    public var intercept: Bool
    /// Send plain `http://` requests for this host upstream over TLS.
    public var upstreamTLS: Bool
    /// Offer HTTP/2 (ALPN `h2`) to intercepted clients and upstream.
    public var http2: Bool
    public var trust: TrustConfig
    /// A name under `credentials` of an identity kind, presented when the upstream asks.
    public var identity: String?
    public var auth: [AuthRule]
    /// Credentials set on every request to this host, replacing what the client sent.
    public var inject: [InjectRule]
    /// Credentials whose placeholders (`countersign:NAME`) are resolved toward this host.
    public var placeholders: [String]
    /// How requests to this host are signed, if they are.
    public var sign: SignConfig?
    /// How requests to this host are re-signed with AWS Signature V4, if they are.
    public var awsSign: AWSSignConfig?
    /// What every response from this host must carry, if anything.
    public var verifyResponses: VerifyConfig?

    public init(pattern: String, intercept: Bool = true, upstreamTLS: Bool = false, http2: Bool = true,
                trust: TrustConfig = TrustConfig(), identity: String? = nil, auth: [AuthRule] = [],
                inject: [InjectRule] = [], placeholders: [String] = [], sign: SignConfig? = nil, awsSign: AWSSignConfig? = nil, verifyResponses: VerifyConfig? = nil) {
        self.pattern = pattern
        self.intercept = intercept
        self.upstreamTLS = upstreamTLS
        self.http2 = http2
        self.trust = trust
        self.identity = identity
        self.auth = auth
        self.inject = inject
        self.placeholders = placeholders
        self.sign = sign
        self.awsSign = awsSign
        self.verifyResponses = verifyResponses
    }
}

/// One entry under `hosts.*.inject`: where a credential's secret goes on every request.
public struct InjectRule: Sendable, Equatable {
    public enum Placement: Sendable, Equatable {
        /// A header field, its value `prefix` + the secret.
        case header(name: String, prefix: String)
        /// A query parameter, the secret percent-encoded.
        case query(name: String)
    }

    public var placement: Placement
    /// A name under `credentials` with a password, token, value or OAuth2 client.
    public var credential: String

    public init(_ placement: Placement, credential: String) {
        self.placement = placement
        self.credential = credential
    }
}
