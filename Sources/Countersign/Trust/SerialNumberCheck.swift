/// Every certificate the path's CAs issued must have a positive serial number of at most 20
/// octets (RFC 5280 4.1.2.2): a zero, negative or oversized serial is a malformed certificate.
/// The anchor is trusted as configured and not judged.
public struct SerialNumberCheck: TrustCheck {
    public let storeLabel: String

    public init(storeLabel: String) {
        self.storeLabel = storeLabel
    }

    public func refusal(for facts: ServedChainFacts) -> TrustRefusal? {
        guard let path = VerifiedPath.of(facts, storeLabel: storeLabel) else { return nil }
        for (depth, certificate) in path.enumerated().dropLast() {
            let profile = certificate.profile
            let problem: String
            if !profile.serialIsPositive {
                problem = "a serial number that is not positive"
            } else if profile.serialLength > 20 {
                problem = "a \(profile.serialLength)-octet serial number (at most 20)"
            } else {
                continue
            }
            return TrustRefusal(kind: .invalidChain,
                                details: "malformed certificate: \(VerifiedPath.name(certificate, depth: depth)) has \(problem)")
        }
        return nil
    }
}
