/// The path chain validation built from the served leaf to its anchor (leaf first, anchor
/// last): what the path checks judge, rather than whatever else the server sent.
enum VerifiedPath {
    /// Nil when the chain did not verify against `storeLabel` (the chain check refuses then).
    static func of(_ facts: ServedChainFacts, storeLabel: String) -> [CertificateSummary]? {
        guard case .verified(let chain)? = facts.chainResults[storeLabel] else { return nil }
        return chain
    }

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
        VerifiedPath.of(facts, storeLabel: storeLabel).flatMap(refusal(path:))
    }
}
