/// The served leaf and every intermediate must have a positive serial number of at most 20
/// octets (RFC 5280 4.1.2.2): a zero, negative or oversized serial is a malformed certificate.
/// A root anchor is trusted as shipped (Debian's store has roots with serial 0: Go Daddy
/// Class 2, SECOM RootCA2, HARICA 2015), but a leaf is judged even when it is its own anchor.
public struct SerialNumberCheck: VerifiedPathCheck {
    public let storeLabel: String

    public init(storeLabel: String) {
        self.storeLabel = storeLabel
    }

    public func refusal(path: [CertificateSummary]) -> TrustRefusal? {
        for (depth, certificate) in path.enumerated() where depth == 0 || depth < path.count - 1 {
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
