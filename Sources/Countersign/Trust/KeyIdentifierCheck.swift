/// Key identifiers in the verified path, anchor included, must be usable for building it
/// (RFC 5280 4.2.1.1): an authorityKeyIdentifier carries its keyIdentifier, and a
/// self-signed certificate's names its own key (its subjectKeyIdentifier). OpenSSL's strict
/// mode already requires one in every certificate it verifies; an anchor without one (a
/// cross-signed root configured as the anchor) is accepted, as x509-limbo's cve-2024-0567
/// expects. The issuer-and-serial form some older roots still carry alongside (Go Daddy and
/// Starfield Class 2, QuoVadis Root CA 2 and 3 in Debian's store) is accepted.
public struct KeyIdentifierCheck: VerifiedPathCheck {
    public let storeLabel: String

    public init(storeLabel: String) {
        self.storeLabel = storeLabel
    }

    public func refusal(path: [CertificateSummary]) -> TrustRefusal? {
        for (depth, certificate) in path.enumerated() {
            guard case .present(let keyIdentifier) = certificate.profile.authorityKeyIdentifier else { continue }
            let problem: String
            if keyIdentifier == nil {
                problem = "an authorityKeyIdentifier without a keyIdentifier"
            } else if certificate.profile.isSelfSigned, let own = certificate.profile.subjectKeyIdentifier,
                      own != keyIdentifier {
                problem = "a self-signed authorityKeyIdentifier that does not match its subjectKeyIdentifier"
            } else {
                continue
            }
            return TrustRefusal(kind: .invalidChain,
                                details: "malformed certificate: \(VerifiedPath.name(certificate, depth: depth)) has \(problem)")
        }
        return nil
    }
}
