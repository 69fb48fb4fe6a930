/// One small rule over the facts of a served chain; returns why it refuses, or nil.
public protocol TrustCheck: Sendable {
    func refusal(for facts: ServedChainFacts) -> TrustRefusal?
}

/// The chain must verify against one trust store.
public struct ChainCheck: TrustCheck {
    public let storeLabel: String

    public func refusal(for facts: ServedChainFacts) -> TrustRefusal? {
        switch facts.chainResults[storeLabel] {
        case .verified?:
            return nil
        case .failed(let failure)?:
            return TrustRefusal(kind: failure.kind, details: failure.details)
        case nil:
            return TrustRefusal(kind: .invalidChain, details: "the chain was not verified against the \(storeLabel)")
        }
    }
}

/// The leaf must be issued for the expected name.
public struct NameCheck: TrustCheck {
    public func refusal(for facts: ServedChainFacts) -> TrustRefusal? {
        guard case .mismatch(let presented) = facts.nameMatch else { return nil }
        let names = presented.isEmpty ? "no DNS name or IP address" : presented.joined(separator: ", ")
        return TrustRefusal(kind: .nameMismatch,
                            details: "name mismatch: served certificate is for \(names); expected \(facts.serverName)")
    }
}

/// One served (or chain-anchoring) certificate's public key must be pinned.
public struct PublicKeyPinCheck: TrustCheck {
    public let pins: [PublicKeyPin]
    /// The store whose verified chain also counts (so a pinned root that is not served matches).
    public let storeLabel: String?

    public func refusal(for facts: ServedChainFacts) -> TrustRefusal? {
        let presented = PresentedCertificates.of(facts, storeLabel: storeLabel)
        if presented.contains(where: { pins.contains($0.pin) }) { return nil }
        let served = presented.map(\.pin.description).joined(separator: ", ")
        let configured = pins.map(\.description).joined(separator: ", ")
        return TrustRefusal(kind: .pinMismatch,
                            details: "pin mismatch: served pins \(served); configured \(configured)")
    }
}

/// One served (or chain-anchoring) certificate must be byte-equal to a pinned certificate.
public struct CertificatePinCheck: TrustCheck {
    /// DER SHA-256 of each pinned certificate: equal digests stand for equal bytes.
    public let pinnedFingerprints: [[UInt8]]
    public let pinnedSubjects: [String]
    public let storeLabel: String?

    public func refusal(for facts: ServedChainFacts) -> TrustRefusal? {
        let presented = PresentedCertificates.of(facts, storeLabel: storeLabel)
        if presented.contains(where: { pinnedFingerprints.contains($0.sha256) }) { return nil }
        let served = presented.map(\.subject).joined(separator: "; ")
        return TrustRefusal(kind: .pinMismatch,
                            details: "pin mismatch: no served certificate equals a pinned one (served: \(served);"
                                + " pinned: \(pinnedSubjects.joined(separator: "; ")))")
    }
}

/// The certificates a pin may match: the served ones plus the chain built to the anchor.
enum PresentedCertificates {
    static func of(_ facts: ServedChainFacts, storeLabel: String?) -> [CertificateSummary] {
        var presented = facts.served
        if let storeLabel, case .verified(let chain)? = facts.chainResults[storeLabel] {
            for certificate in chain where !presented.contains(where: { $0.sha256 == certificate.sha256 }) {
                presented.append(certificate)
            }
        }
        return presented
    }
}
