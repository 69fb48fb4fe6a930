/// What happens to a host that has no entry under `hosts`.
public enum UnlistedHostsPolicy: String, Sendable, CaseIterable {
    /// CONNECT becomes a blind tunnel and plain requests are forwarded untouched.
    case tunnel
    /// Refused with `403`.
    case deny
}

/// `reload`: when the configuration is re-read besides on `SIGHUP`.
public struct ReloadConfig: Sendable {
    /// Watch the configuration file and every file it names (inotify), and reload when one
    /// changes, as `SIGHUP` does.
    public var watch: Bool

    public init(watch: Bool = true) {
        self.watch = watch
    }
}

public struct AdminConfig: Sendable {
    public var address: ListenAddress
    /// Clients allowed to connect; default loopback only.
    public var allow: [CIDR]

    public init(address: ListenAddress, allow: [CIDR] = CIDR.loopback) {
        self.address = address
        self.allow = allow
    }
}

/// The local CA that mints certificates for intercepted hosts. The files may not exist yet:
/// `run` and `ca init` create them.
public struct InterceptionConfig: Sendable {
    /// Absolute paths.
    public var caCertificatePath: String
    public var caKeyPath: String

    public init(caCertificatePath: String, caKeyPath: String) {
        self.caCertificatePath = caCertificatePath
        self.caKeyPath = caKeyPath
    }
}

/// A proxy every upstream connection goes through. With an `https` URL the connection to
/// it is TLS, evaluated with `trust` like a host's, presenting `identity` when asked.
public struct ParentProxyConfig: Sendable {
    public var url: EndpointURL
    public var auth: ProxyAuthRule?
    public var trust: TrustConfig
    /// A credential name with a client certificate (https parents only).
    public var identity: String?

    public init(url: EndpointURL, auth: ProxyAuthRule? = nil, trust: TrustConfig = TrustConfig(), identity: String? = nil) {
        self.url = url
        self.auth = auth
        self.trust = trust
        self.identity = identity
    }

    public var usesTLS: Bool { url.scheme == "https" }
}

/// How to answer the parent proxy's `407` challenges.
public struct ProxyAuthRule: Sendable {
    /// A name under `credentials`.
    public var credential: String
    /// In order of preference; default every scheme the credential can answer.
    public var schemes: [AuthScheme]
    /// Whether a password-equivalent answer (Basic) may go to an `http://` parent.
    public var allowPlaintext: Bool
    /// Rejected answers before the parent's final `407` goes to the client.
    public var maxFailures: Int

    public init(credential: String, schemes: [AuthScheme], allowPlaintext: Bool = false, maxFailures: Int = 1) {
        self.credential = credential
        self.schemes = schemes
        self.allowPlaintext = allowPlaintext
        self.maxFailures = maxFailures
    }

    /// The listed schemes withheld from a plain parent: password-equivalent ones, unless allowed.
    public func withheld(overTLS: Bool) -> [AuthScheme] {
        overTLS || allowPlaintext ? [] : schemes.filter(\.isPasswordEquivalent)
    }
}

extension AuthScheme {
    /// Whether the answer reveals the secret itself (Basic's password, a bearer token), so
    /// that an eavesdropper could replay it.
    public var isPasswordEquivalent: Bool { self == .basic || self == .bearer }
}
