/// What one host's configuration puts on every request without a challenge, with the secrets
/// resolved for one configuration snapshot: injected headers and query parameters, and the
/// placeholders that may be resolved toward this host. Prints no secret.
public struct InjectionPlan: Sendable, CustomStringConvertible {
    public struct Header: Sendable {
        public let name: String
        /// The prefix and the secret, as they go on the wire.
        public let value: [UInt8]

        public init(name: String, value: [UInt8]) {
            self.name = name
            self.value = value
        }
    }

    public struct QueryParameter: Sendable {
        public let name: String
        /// The raw secret; percent-encoded when written into the target.
        public let value: [UInt8]

        public init(name: String, value: [UInt8]) {
            self.name = name
            self.value = value
        }
    }

    /// How the host is named in a refusal (`api.example.com:443`).
    public let host: String
    public let headers: [Header]
    public let query: [QueryParameter]
    /// Credential name → secret, for the placeholders this host lists.
    public let placeholders: [String: [UInt8]]

    public init(host: String, headers: [Header] = [], query: [QueryParameter] = [], placeholders: [String: [UInt8]] = [:]) {
        self.host = host
        self.headers = headers
        self.query = query
        self.placeholders = placeholders
    }

    public var injects: Bool { !headers.isEmpty || !query.isEmpty }

    public var description: String {
        "InjectionPlan(\(host): headers \(headers.map(\.name)), query \(query.map(\.name)), placeholders \(placeholders.keys.sorted()))"
    }
}
