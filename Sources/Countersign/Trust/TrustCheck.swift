/// One small rule over the facts of a served chain; returns why it refuses, or nil.
public protocol TrustCheck: Sendable {
    func refusal(for facts: ServedChainFacts) -> TrustRefusal?
    /// The check's name in `countersign check --chain`'s report.
    var name: String { get }
    /// Why the check passes, for that report (asked only when `refusal` is nil).
    func acceptance(for facts: ServedChainFacts) -> String
}

extension TrustCheck {
    public var name: String { String(describing: type(of: self)) }
    public func acceptance(for facts: ServedChainFacts) -> String { "passed" }
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

    public var name: String { "chain" }

    public func acceptance(for facts: ServedChainFacts) -> String {
        let path = facts.verifiedPath(storeLabel: storeLabel).map(\.subject).joined(separator: " <- ")
        return "validates against the \(storeLabel): \(path)"
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

    public var name: String { "name" }

    public func acceptance(for facts: ServedChainFacts) -> String { "certificate matches \(facts.serverName)" }
}


/// One certificate of the verified path must carry a pinned public key.
public struct PublicKeyPinCheck: TrustCheck {
    public let pins: [PublicKeyPin]
    /// The store whose built chain is the verified path (so a pinned root that is not served
    /// matches); nil with allow-invalid, where the path is the signed served prefix.
    public let storeLabel: String?

    public func refusal(for facts: ServedChainFacts) -> TrustRefusal? {
        let path = facts.verifiedPath(storeLabel: storeLabel)
        if path.contains(where: { pins.contains($0.pin) }) { return nil }
        let onPath = path.isEmpty ? "none (the chain did not verify)" : path.map(\.pin.description).joined(separator: ", ")
        let configured = pins.map(\.description).joined(separator: ", ")
        return TrustRefusal(kind: .pinMismatch,
                            details: "pin mismatch: verified path pins \(onPath); configured \(configured)"
                                + PinCheckText.ignored(facts.servedOutside(path).map(\.pin.description), separator: ", "))
    }

    public var name: String { "pins" }

    public func acceptance(for facts: ServedChainFacts) -> String {
        let path = facts.verifiedPath(storeLabel: storeLabel)
        let matched = path.filter { pins.contains($0.pin) }.map { "\($0.pin) (\($0.subject))" }
        return "pinned key on the verified path: " + matched.joined(separator: ", ")
    }
}

/// One certificate of the verified path must be byte-equal to a pinned certificate.
public struct CertificatePinCheck: TrustCheck {
    /// DER SHA-256 of each pinned certificate: equal digests stand for equal bytes.
    public let pinnedFingerprints: [[UInt8]]
    public let pinnedSubjects: [String]
    public let storeLabel: String?

    public func refusal(for facts: ServedChainFacts) -> TrustRefusal? {
        let path = facts.verifiedPath(storeLabel: storeLabel)
        if path.contains(where: { pinnedFingerprints.contains($0.sha256) }) { return nil }
        let onPath = path.isEmpty ? "none, the chain did not verify" : path.map(\.subject).joined(separator: "; ")
        return TrustRefusal(kind: .pinMismatch,
                            details: "pin mismatch: no certificate of the verified path equals a pinned one (verified path: \(onPath);"
                                + " pinned: \(pinnedSubjects.joined(separator: "; ")))"
                                + PinCheckText.ignored(facts.servedOutside(path).map(\.subject), separator: "; "))
    }

    public var name: String { "pinned certificates" }

    public func acceptance(for facts: ServedChainFacts) -> String {
        let matched = facts.verifiedPath(storeLabel: storeLabel).filter { pinnedFingerprints.contains($0.sha256) }
        return "pinned certificate on the verified path: " + matched.map(\.subject).joined(separator: "; ")
    }
}

enum PinCheckText {
    /// The refusal's tail naming what the server sent beyond the verified path.
    static func ignored(_ names: [String], separator: String) -> String {
        names.isEmpty ? "" : "; also served but not on the verified path, so not considered: "
            + names.joined(separator: separator)
    }
}
