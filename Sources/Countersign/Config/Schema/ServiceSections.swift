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

    public init(address: ListenAddress) {
        self.address = address
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

/// A proxy every upstream connection goes through.
public struct ParentProxyConfig: Sendable {
    public var url: EndpointURL
    public var auth: ProxyAuthRule?

    public init(url: EndpointURL, auth: ProxyAuthRule? = nil) {
        self.url = url
        self.auth = auth
    }
}

/// How to answer the parent proxy's `407` challenges.
public struct ProxyAuthRule: Sendable {
    /// A name under `credentials`.
    public var credential: String
    /// In order of preference; default every scheme the credential can answer.
    public var schemes: [AuthScheme]

    public init(credential: String, schemes: [AuthScheme]) {
        self.credential = credential
        self.schemes = schemes
    }
}
