/// Region and signing name from an AWS host name, when the name says them. The configuration
/// comes first and the client's own credential scope last; this is the middle step, and it
/// answers nil for what the name does not say rather than guess (an S3-compatible store on its
/// own name says nothing). Only names under AWS's own suffixes are read, matched on a label
/// boundary, so `s3.amazonaws.com.evil.example` and `evil-amazonaws.com` say nothing.
public enum AWSEndpointInference {
    public struct Endpoint: Equatable, Sendable {
        public let region: String?
        public let service: String?

        public init(region: String?, service: String?) {
            self.region = region
            self.service = service
        }
    }

    static let suffixes = [".amazonaws.com.cn", ".amazonaws.com", ".api.aws", ".amazonaws.eu"]

    /// Endpoint labels whose signing name differs from the label.
    static let signingNames: [String: String] = [
        "bedrock-runtime": "bedrock", "bedrock-agent": "bedrock", "bedrock-agent-runtime": "bedrock",
        "email": "ses", "s3-control": "s3", "s3-accesspoint": "s3", "s3-fips": "s3", "s3-external-1": "s3",
        "s3-object-lambda": "s3-object-lambda", "aoss": "aoss", "es": "es",
    ]

    /// Global endpoints (no region in the name) and the region they sign for.
    static let globalRegions: [String: String] = [
        "iam": "us-east-1", "sts": "us-east-1", "route53": "us-east-1", "cloudfront": "us-east-1",
        "s3": "us-east-1", "s3-external-1": "us-east-1", "organizations": "us-east-1", "globalaccelerator": "us-west-2",
        "shield": "us-east-1", "waf": "us-east-1",
    ]

    /// Labels between the service label and the region that qualify the endpoint.
    static let qualifiers: Set<String> = ["dualstack", "fips"]

    /// The services whose endpoints put the region *before* the service label
    /// (`search-domain-x.eu-west-1.es.amazonaws.com`, `id.us-east-1.aoss.amazonaws.com`).
    static let regionFirst: Set<String> = ["es", "aoss"]

    public static func infer(host: String) -> Endpoint? {
        var name = host.lowercased()
        if let colon = name.lastIndex(of: ":"), !name.contains("]") { name = String(name[..<colon]) }
        if name.hasSuffix(".") { name.removeLast() }
        guard let suffix = suffixes.first(where: { name.hasSuffix($0) }) else { return nil }
        let chinese = suffix == ".amazonaws.com.cn"
        var labels = name.dropLast(suffix.count).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !labels.isEmpty, !labels.contains(where: \.isEmpty) else { return nil }
        if labels.last == "vpce" { labels.removeLast() }   // bucket.vpce-….s3.us-east-1.vpce.amazonaws.com

        if labels.count >= 2, regionFirst.contains(labels[labels.count - 1]), isRegion(labels[labels.count - 2]) {
            return Endpoint(region: labels[labels.count - 2], service: labels[labels.count - 1])
        }
        var region: String?
        if let last = labels.last, isRegion(last) {
            region = last
            labels.removeLast()
        }
        while let last = labels.last, qualifiers.contains(last) { labels.removeLast() }
        guard let label = labels.last else { return region.map { Endpoint(region: $0, service: nil) } }

        // Legacy S3 names with the region in the label: s3-eu-west-1.amazonaws.com.
        if label.hasPrefix("s3-"), region == nil, isRegion(String(label.dropFirst(3))) {
            return Endpoint(region: String(label.dropFirst(3)), service: "s3")
        }
        let service = signingNames[label] ?? (isServiceLabel(label) ? label : nil)
        if region == nil, !chinese, let global = globalRegions[label] { region = global }
        guard service != nil || region != nil else { return nil }
        return Endpoint(region: region, service: service)
    }

    /// `us-east-1`, `eu-central-2`, `us-gov-west-1`, `cn-north-1`, `ap-southeast-5`,
    /// `us-iso-east-1`, `us-isob-east-1`, `eusc-de-east-1`.
    static func isRegion(_ label: String) -> Bool {
        let parts = label.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts.count <= 4, let number = parts.last, !number.isEmpty, number.count <= 2,
              number.allSatisfy(\.isNumber) else { return false }
        let letters = parts.dropLast()
        guard letters.allSatisfy({ !$0.isEmpty && $0.count <= 10 && $0.allSatisfy { $0 >= "a" && $0 <= "z" } }) else { return false }
        let area = letters.first!
        return area.count == 2 || area == "eusc"
    }

    static func isServiceLabel(_ label: String) -> Bool {
        !label.isEmpty && label.count <= 64 && label.first!.isLetter && label.allSatisfy { ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") || $0 == "-" }
    }
}
