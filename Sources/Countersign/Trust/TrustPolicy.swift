/// A host's trust settings compiled once: the trust store it verifies against (built once and
/// shared by all its connections) and the ordered checks — chain, name, pin — that decide.
public final class TrustPolicy: @unchecked Sendable {
    public let settings: TrustSettings
    /// The store chains are verified against; nil when invalid certificates are allowed.
    public let chainStore: TrustStore?
    public let checks: [any TrustCheck]
    /// Every accepted public-key pin: configured pins plus the pinned certificates' keys.
    public let acceptedPins: [PublicKeyPin]
    /// The CRLs of `revocation.crl_files` (looked up on the verified path).
    public let crls: [CertificateRevocationList]

    /// Compiles `settings` with the certificates they name already loaded into `material`.
    public init(settings: TrustSettings, material: TrustMaterial) throws {
        try TrustPolicy.validate(settings, material)
        self.settings = settings
        let pins = try settings.pins.map { try PublicKeyPin(sha256: $0) }
            + material.pinnedCertificates.map { PublicKeyPin(of: $0) }
        acceptedPins = pins
        crls = material.crls
        chainStore = settings.allowInvalidCertificates ? nil : try TrustPolicy.makeStore(settings, material)

        var checks: [any TrustCheck] = []
        if let chainStore {
            checks.append(ChainCheck(storeLabel: chainStore.label))
            if settings.validateDomain { checks.append(NameCheck()) }
            if let depth = settings.maxChainDepth {
                checks.append(ChainDepthCheck(maxIntermediates: depth, storeLabel: chainStore.label))
            }
            checks += PathProfileChecks.make(storeLabel: chainStore.label, validateDomain: settings.validateDomain)
            if !material.crls.isEmpty { checks.append(RevocationCheck()) }
        }
        switch settings.pinning {
        case .none:
            break
        case .publicKey:
            checks.append(PublicKeyPinCheck(pins: pins, storeLabel: chainStore?.label))
        case .certificate:
            checks.append(CertificatePinCheck(pinnedFingerprints: material.pinnedCertificates.map(\.sha256),
                                              pinnedSubjects: material.pinnedCertificates.map(\.subject),
                                              storeLabel: chainStore?.label))
        }
        self.checks = checks
    }

    /// Loads the files `settings` names and compiles the policy.
    public static func load(_ settings: TrustSettings) throws -> TrustPolicy {
        try TrustPolicy(settings: settings, material: try TrustMaterial.load(settings))
    }

    /// The name to send as SNI and to validate when connecting to `host`.
    public func serverName(forHost host: String) -> String {
        settings.serverName ?? host
    }

    /// The facts this policy needs about `served` (leaf first).
    public func gatherFacts(served: [Certificate], serverName: String, at time: Int64? = nil) -> ServedChainFacts {
        ServedChainFacts.gather(served: served, serverName: serverName,
                                stores: chainStore.map { [$0] } ?? [], crls: crls, at: time)
    }

    /// The first check that refuses decides; when none does, the chain is trusted.
    public func evaluate(_ facts: ServedChainFacts) -> TrustDecision {
        for check in checks {
            if let refusal = check.refusal(for: facts) { return .refused(refusal) }
        }
        return .trusted
    }

    /// The one evaluation of a served chain (leaf first): what the handshake's verify
    /// callback runs and what `countersign check --chain` previews. `time` overrides "now".
    public func assess(served: [Certificate], serverName: String, at time: Int64? = nil) -> TrustAssessment {
        let facts = gatherFacts(served: served, serverName: serverName, at: time)
        return TrustAssessment(facts: facts, decision: evaluate(facts))
    }

    private static func makeStore(_ settings: TrustSettings, _ material: TrustMaterial) throws -> TrustStore {
        let anchors: [Certificate]
        let anchorsLabel: String
        if settings.pinning == .certificate {
            anchors = material.pinnedCertificates
            anchorsLabel = "pinned certificates"
        } else {
            anchors = material.anchors
            anchorsLabel = "configured anchors"
        }
        if anchors.isEmpty {
            return try TrustStore.sharedSystemRoots()
        }
        if settings.anchorsOnly {
            return try TrustStore(anchors: anchors, includeSystemRoots: false, label: anchorsLabel)
        }
        return try TrustStore(anchors: anchors, includeSystemRoots: true, label: "\(anchorsLabel) and system roots")
    }

    /// Refuses contradictory settings with a sentence naming the keys to change.
    static func validate(_ settings: TrustSettings, _ material: TrustMaterial) throws {
        let hasPins = !settings.pins.isEmpty || !material.pinnedCertificates.isEmpty
        switch settings.pinning {
        case .none where hasPins:
            throw TrustError("trust.pins or trust.pinned_certificates are set but trust.pinning is \"none\":"
                + " set pinning to \"public-key\" or \"certificate\", or remove the pins")
        case .publicKey where !hasPins:
            throw TrustError("trust.pinning is \"public-key\" but no trust.pins or trust.pinned_certificates are set")
        case .certificate where material.pinnedCertificates.isEmpty:
            throw TrustError("trust.pinning is \"certificate\" but trust.pinned_certificates is empty")
        default:
            break
        }
        if settings.validateDomain && settings.allowInvalidCertificates && !hasPins {
            throw TrustError("trust.validate_domain with trust.allow_invalid_certificates and no pins proves nothing"
                + " (a self-signed certificate can carry any name): add pins, or set validate_domain to false")
        }
        if settings.allowInvalidCertificates && (!settings.crlFiles.isEmpty || settings.ocspStapling != .off) {
            throw TrustError("trust.revocation is set with trust.allow_invalid_certificates, where no issuer is verified"
                + " that a CRL or OCSP response could be checked against: remove one of them")
        }
        if settings.pinning == .certificate && !material.anchors.isEmpty {
            throw TrustError("trust.anchors is set with trust.pinning \"certificate\", where the pinned certificates"
                + " are the anchors: remove trust.anchors")
        }
    }
}

extension TrustStore {
    private static let shared = Result { try TrustStore.systemRoots() }

    /// One system-roots store for every policy that uses only the system roots.
    static func sharedSystemRoots() throws -> TrustStore {
        try shared.get()
    }
}
