import CountersignConfig
import CountersignSigning

/// For `countersign check`: the region and service each aws-sigv4 host signs for, each with
/// where it comes from (configuration, host name), or that it is left to the client's scope.
enum AWSScopeReport {
    static func lines(_ configuration: Configuration) -> [String] {
        configuration.hosts.entries.compactMap { host in
            guard let sign = host.awsSign else { return nil }
            let name = host.pattern.hasPrefix("*.") ? String(host.pattern.dropFirst(2)) : host.pattern
            let inferred = AWSEndpointInference.infer(host: name)
            func part(_ configured: String?, _ fromHost: String?) -> String {
                if let configured { return "\(configured) (configuration)" }
                if let fromHost { return "\(fromHost) (host name)" }
                return "from the client's credential scope"
            }
            return "aws-sigv4 \(host.pattern): region \(part(sign.region, inferred?.region)), service \(part(sign.service, inferred?.service)), payload \(sign.payload.rawValue), credential \(sign.credential)"
        }
    }
}
