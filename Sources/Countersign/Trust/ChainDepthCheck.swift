/// `max_chain_depth`: at most that many intermediates between the leaf and the anchor of the
/// verified path. As for RFC 5280's pathLenConstraint (6.1.4 (l)), a self-issued intermediate
/// (a CA re-keying under its own name) does not count: it is the same logical CA, which is how
/// x509-limbo's `pathlen::max-chain-depth-*` cases count too. Judged on the path chain
/// validation built, never on what the server sent, so padding the served chain changes nothing.
public struct ChainDepthCheck: VerifiedPathCheck {
    public let maxIntermediates: Int
    public let storeLabel: String

    public init(maxIntermediates: Int, storeLabel: String) {
        self.maxIntermediates = maxIntermediates
        self.storeLabel = storeLabel
    }

    public func refusal(path: [CertificateSummary]) -> TrustRefusal? {
        let counted = ChainDepthCheck.logicalIntermediates(path)
        guard counted.count > maxIntermediates else { return nil }
        return TrustRefusal(kind: .invalidChain,
                            details: "chain too deep: the verified path has \(ChainDepthCheck.count(counted.count))"
                                + " (\(counted.map(\.subject).joined(separator: "; "))), max_chain_depth is \(maxIntermediates)")
    }

    public var name: String { "chain depth" }

    public func acceptance(for facts: ServedChainFacts) -> String {
        let count = ChainDepthCheck.logicalIntermediates(facts.verifiedPath(storeLabel: storeLabel)).count
        return "\(ChainDepthCheck.count(count)), at most \(maxIntermediates) allowed"
    }

    private static func count(_ number: Int) -> String {
        number == 1 ? "1 intermediate" : "\(number) intermediates"
    }

    /// The certificates strictly between the leaf and the anchor, less the self-issued ones.
    static func logicalIntermediates(_ path: [CertificateSummary]) -> [CertificateSummary] {
        guard path.count > 2 else { return [] }
        return path[1..<(path.count - 1)].filter { $0.subject != $0.issuer }
    }
}
