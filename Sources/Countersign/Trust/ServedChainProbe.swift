/// Connects once to an upstream, accepting whatever chain it serves, and records the chain
/// together with the facts a policy would see (against the system roots or given anchors).
public struct ServedChainProbe: Sendable {
    public let target: HostPort
    public let serverName: String?
    public let anchorsPath: String?

    public init(target: HostPort, serverName: String? = nil, anchorsPath: String? = nil) {
        self.target = target
        self.serverName = serverName
        self.anchorsPath = anchorsPath
    }

    public struct Result: Sendable {
        public let target: HostPort
        /// The name sent as SNI and validated.
        public let serverName: String
        /// The certificates as served, leaf first.
        public let served: [Certificate]
        public let facts: ServedChainFacts
        /// What the chain was verified against.
        public let storeLabel: String
        public let protocolVersion: String
    }

    /// Loads the anchors (a bad file is a usage problem, reported before connecting).
    public func makePolicy() throws -> TrustPolicy {
        try TrustPolicy.load(TrustSettings(anchors: anchorsPath.map { [$0] } ?? [], anchorsOnly: true))
    }

    public func run(policy: TrustPolicy) throws -> Result {
        // The probe must see chains the policy refuses: its handshake accepts any chain,
        // and `policy` judges the chain afterwards for the report. Nothing is sent.
        let context = try UpstreamTLSContext(policy: try TrustPolicy(settings: Self.acceptAnything, material: TrustMaterial()))
        let name = serverName ?? target.host
        let client = try BlockingTLSClient(host: target.host, port: target.port, context: context, serverName: name)
        defer { client.close() }
        let served = context.servedCertificates(ssl: client.ssl)
        guard !served.isEmpty else { throw TrustError("\(target.configKey) sent no certificate") }
        return Result(target: target, serverName: name, served: served,
                      facts: policy.gatherFacts(served: served, serverName: name),
                      storeLabel: policy.chainStore?.label ?? "nothing", protocolVersion: client.protocolVersion)
    }

    /// No chain, name or pin check: the handshake completes whatever is served.
    private static let acceptAnything = TrustSettings(validateDomain: false, allowInvalidCertificates: true)
}
