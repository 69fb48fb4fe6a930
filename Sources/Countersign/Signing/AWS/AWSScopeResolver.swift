/// Where a signature's region or service came from: for `check`, the access log and errors.
public enum AWSScopeSource: String, Sendable {
    case configuration
    case hostName = "host name"
    case clientScope = "client's credential scope"
}

/// The region and service a request is signed for, each with its source.
public struct AWSResolvedScope: Equatable, Sendable {
    public let region: String
    public let regionSource: AWSScopeSource
    public let service: String
    public let serviceSource: AWSScopeSource
}

/// Region and service, each decided on its own: the configuration, else the host name when it
/// names them, else the client's own credential scope (an S3-compatible store on its own name,
/// reached by an SDK told its region). Nothing left means a clear refusal naming the key to set.
public enum AWSScopeResolver {
    public static func resolve(configuredRegion: String?, configuredService: String?, host: String,
                               client: AWSCredentialScope?) throws -> AWSResolvedScope {
        let inferred = AWSEndpointInference.infer(host: host)
        func pick(_ configured: String?, _ fromHost: String?, _ fromClient: String?, _ key: String) throws -> (String, AWSScopeSource) {
            if let configured { return (configured, .configuration) }
            if let fromHost { return (fromHost, .hostName) }
            if let fromClient { return (fromClient, .clientScope) }
            throw AWSSigningError.invalidScope("neither the configuration, the host name nor the client's signature gives the \(key) for \(host): set sign.\(key)")
        }
        let (region, regionSource) = try pick(configuredRegion, inferred?.region, client?.region, "region")
        let (service, serviceSource) = try pick(configuredService, inferred?.service, client?.service, "service")
        return AWSResolvedScope(region: region, regionSource: regionSource, service: service, serviceSource: serviceSource)
    }
}
