/// What one host's configuration puts on every request without a challenge, with the secrets
/// resolved for one configuration snapshot: injected headers and query parameters, and the
/// placeholders that may be resolved toward this host. Prints no secret.
public struct InjectionPlan: Sendable, CustomStringConvertible {
    /// Where a value comes from: a secret of the configuration, or an OAuth2 credential's access
    /// token, which is fetched (and refreshed) at run time and handed in as `tokens`.
    public enum Value: Sendable {
        case secret([UInt8])
        case accessToken(credential: String)
    }

    public struct Header: Sendable {
        public let name: String
        /// Written before the value (`Bearer `, `Token `).
        public let prefix: [UInt8]
        public let value: Value

        public init(name: String, prefix: [UInt8] = [], value: Value) {
            self.name = name
            self.prefix = prefix
            self.value = value
        }
    }

    public struct QueryParameter: Sendable {
        public let name: String
        /// Percent-encoded when written into the target.
        public let value: Value

        public init(name: String, value: Value) {
            self.name = name
            self.value = value
        }
    }

    /// How the host is named in a refusal (`api.example.com:443`).
    public let host: String
    public let headers: [Header]
    public let query: [QueryParameter]
    /// Credential name → value, for the placeholders this host lists.
    public let placeholders: [String: Value]
    /// The access tokens fetched for this request, by credential name.
    public var tokens: [String: [UInt8]] = [:]

    public init(host: String, headers: [Header] = [], query: [QueryParameter] = [], placeholders: [String: Value] = [:]) {
        self.host = host
        self.headers = headers
        self.query = query
        self.placeholders = placeholders
    }

    public var injects: Bool { !headers.isEmpty || !query.isEmpty }

    /// The bytes of `value`; throws `TokenNeeded` for an access token not fetched yet.
    func bytes(of value: Value) throws -> [UInt8] {
        switch value {
        case .secret(let bytes): return bytes
        case .accessToken(let credential):
            guard let token = tokens[credential] else { throw TokenNeeded(credential: credential) }
            return token
        }
    }

    public var description: String {
        "InjectionPlan(\(host): headers \(headers.map(\.name)), query \(query.map(\.name)), placeholders \(placeholders.keys.sorted()))"
    }
}

/// An OAuth2 access token the request needs before it can be injected.
struct TokenNeeded: Error {
    let credential: String
}
