/// Naming a certificate of the verified path in a refusal.
enum VerifiedPath {
    /// "the certificate" for the leaf, "certificate <subject>" for the others, as in the chain errors.
    static func name(_ certificate: CertificateSummary, depth: Int) -> String {
        depth == 0 ? "the certificate" : "certificate \(certificate.subject)"
    }
}

/// A check that judges the verified path; with no verified path it has nothing to say (the
/// chain check refuses that chain first).
public protocol VerifiedPathCheck: TrustCheck {
    var storeLabel: String { get }
    /// `path` is leaf first, anchor last.
    func refusal(path: [CertificateSummary]) -> TrustRefusal?
}

extension VerifiedPathCheck {
    public func refusal(for facts: ServedChainFacts) -> TrustRefusal? {
        // The path chain validation built (`ServedChainFacts.verifiedPath`); empty when the chain
        // did not verify, which the chain check refuses first.
        let path = facts.verifiedPath(storeLabel: storeLabel)
        return path.isEmpty ? nil : refusal(path: path)
    }
}
