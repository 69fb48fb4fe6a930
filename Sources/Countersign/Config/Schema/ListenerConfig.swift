public enum ListenerMode: String, Sendable, CaseIterable {
    /// Clients use it as HTTP_PROXY / HTTPS_PROXY (absolute-form requests and CONNECT).
    case forward
    /// Clients that cannot use a proxy send origin-form requests; all go to `upstream`.
    case gateway
}

public struct ListenerConfig: Sendable {
    public var address: ListenAddress
    public var mode: ListenerMode
    /// Set for gateway listeners only.
    public var upstream: EndpointURL?
    /// Clients allowed to connect; default loopback only.
    public var allow: [CIDR]
    /// When set, clients must answer a `407` Basic challenge with one of these users.
    public var proxyAuth: ProxyAuthConfig?

    public init(address: ListenAddress, mode: ListenerMode = .forward, upstream: EndpointURL? = nil,
                allow: [CIDR] = CIDR.loopback, proxyAuth: ProxyAuthConfig? = nil) {
        self.address = address
        self.mode = mode
        self.upstream = upstream
        self.allow = allow
        self.proxyAuth = proxyAuth
    }

    /// Whether a client at this address may connect.
    public func allows(_ client: IPAddress) -> Bool {
        allow.contains { $0.contains(client) }
    }
}

/// Basic authentication demanded from the proxy's own clients (`407 Proxy-Authenticate`).
public struct ProxyAuthConfig: Sendable {
    /// User name to password.
    public var users: [String: Secret]
    public var realm: String

    public init(users: [String: Secret], realm: String = "countersign") {
        self.users = users
        self.realm = realm
    }
}
