/// Where a challenge came from: an origin (401) or the parent proxy (407), by host and port.
public struct AuthTarget: Hashable, Codable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var isProxy: Bool

    public init(host: String, port: Int, isProxy: Bool = false) {
        self.host = TokenSyntax.lowercased(host)
        self.port = port
        self.isProxy = isProxy
    }

    var challengeStatus: Int { isProxy ? 407 : 401 }
    var challengeField: String { isProxy ? "Proxy-Authenticate" : "WWW-Authenticate" }
    var authorizationField: String { isProxy ? "Proxy-Authorization" : "Authorization" }
    var infoField: String { isProxy ? "Proxy-Authentication-Info" : "Authentication-Info" }

    public var description: String { (isProxy ? "proxy " : "") + "\(host):\(port)" }
}

/// The key learned state and failures are kept under (NSURLProtectionSpace): host, port,
/// proxy or origin, scheme and realm.
public struct ProtectionSpace: Hashable, Codable, Sendable, CustomStringConvertible {
    public var target: AuthTarget
    public var scheme: AuthSchemeName
    public var realm: String?

    public init(target: AuthTarget, scheme: AuthSchemeName, realm: String?) {
        self.target = target
        self.scheme = scheme
        self.realm = realm
    }

    public var description: String { "\(target) \(scheme)" + (realm.map { " realm \"\($0)\"" } ?? "") }

    /// The longest realm answered: a space is kept under it (servers name realms in words).
    public static let maxRealmBytes = 256
}
