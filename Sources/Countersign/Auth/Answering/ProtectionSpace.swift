import CountersignHTTP
/// Where a challenge came from: an origin (401) or the parent proxy (407), by host and port.
public struct AuthTarget: Hashable, Codable, Sendable, CustomStringConvertible {
    public let host: String
    public let port: Int
    public let isProxy: Bool
    /// Hashed once: the store looks a target's byte budget and spaces up on every answer.
    private let hashCode: Int

    public init(host: String, port: Int, isProxy: Bool = false) {
        self.host = TokenSyntax.lowercased(host)
        self.port = port
        self.isProxy = isProxy
        var hasher = Hasher()
        hasher.combine(self.host)
        hasher.combine(port)
        hasher.combine(isProxy)
        hashCode = hasher.finalize()
    }

    private enum CodingKeys: String, CodingKey { case host, port, isProxy }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(host: try container.decode(String.self, forKey: .host), port: try container.decode(Int.self, forKey: .port),
                  isProxy: try container.decode(Bool.self, forKey: .isProxy))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(host, forKey: .host)
        try container.encode(port, forKey: .port)
        try container.encode(isProxy, forKey: .isProxy)
    }

    public static func == (lhs: AuthTarget, rhs: AuthTarget) -> Bool {
        lhs.hashCode == rhs.hashCode && lhs.port == rhs.port && lhs.isProxy == rhs.isProxy && lhs.host == rhs.host
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(hashCode) }

    var challengeStatus: Int { isProxy ? 407 : 401 }
    var challengeField: String { isProxy ? "Proxy-Authenticate" : "WWW-Authenticate" }
    var authorizationField: FieldName { isProxy ? .proxyAuthorization : .authorization }
    var infoField: FieldName { isProxy ? .proxyAuthenticationInfo : .authenticationInfo }

    public var description: String { (isProxy ? "proxy " : "") + "\(host):\(port)" }
}

/// The key learned state and failures are kept under (NSURLProtectionSpace): host, port,
/// proxy or origin, scheme and realm.
public struct ProtectionSpace: Hashable, Codable, Sendable, CustomStringConvertible {
    public let target: AuthTarget
    public let scheme: AuthSchemeName
    public let realm: String?
    /// Hashed once: a space is looked up several times per answered request (standing,
    /// lock-out, learned entry), and hashing its strings each time showed in the profile.
    private let hashCode: Int

    public init(target: AuthTarget, scheme: AuthSchemeName, realm: String?) {
        self.target = target
        self.scheme = scheme
        self.realm = realm
        var hasher = Hasher()
        hasher.combine(target)
        hasher.combine(scheme)
        hasher.combine(realm)
        hashCode = hasher.finalize()
    }

    private enum CodingKeys: String, CodingKey { case target, scheme, realm }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(target: try container.decode(AuthTarget.self, forKey: .target),
                  scheme: try container.decode(AuthSchemeName.self, forKey: .scheme),
                  realm: try container.decodeIfPresent(String.self, forKey: .realm))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(target, forKey: .target)
        try container.encode(scheme, forKey: .scheme)
        try container.encodeIfPresent(realm, forKey: .realm)
    }

    public static func == (lhs: ProtectionSpace, rhs: ProtectionSpace) -> Bool {
        lhs.hashCode == rhs.hashCode && lhs.target == rhs.target && lhs.scheme == rhs.scheme && lhs.realm == rhs.realm
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(hashCode) }

    public var description: String { "\(target) \(scheme)" + (realm.map { " realm \"\($0)\"" } ?? "") }

    /// The longest realm answered: a space is kept under it (servers name realms in words).
    public static let maxRealmBytes = 256
}
