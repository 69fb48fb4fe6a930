/// Every certificate of the verified path, anchor included, must have extensions that
/// decode (an authorityInfoAccess that is not an AccessDescription list is not "unknown",
/// it is broken), and a CA's policyConstraints must be critical (RFC 5280 4.2.1.11: a relying
/// party that ignored it would accept policies the CA meant to forbid).
public struct ExtensionSyntaxCheck: VerifiedPathCheck {
    public let storeLabel: String

    public init(storeLabel: String) {
        self.storeLabel = storeLabel
    }

    public func refusal(path: [CertificateSummary]) -> TrustRefusal? {
        for (depth, certificate) in path.enumerated() {
            let who = VerifiedPath.name(certificate, depth: depth)
            if let broken = certificate.profile.malformedExtensions.first {
                return TrustRefusal(kind: .invalidChain, details: "malformed certificate: \(who) has an undecodable \(broken) extension")
            }
            if certificate.profile.nonCriticalPolicyConstraints {
                return TrustRefusal(kind: .invalidChain,
                                    details: "malformed certificate: \(who) has a policyConstraints extension not marked critical")
            }
        }
        return nil
    }
}
