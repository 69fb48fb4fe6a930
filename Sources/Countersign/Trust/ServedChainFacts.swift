/// What a served chain is, established once per handshake; policies only read these facts.
public struct ServedChainFacts: Sendable, Equatable {
    /// The name the connection asked for (SNI and the name to validate).
    public var serverName: String
    /// The certificates as served, leaf first.
    public var served: [CertificateSummary]
    /// The chain verification outcome per trust store label that the policy needs.
    public var chainResults: [String: ChainResult]
    /// Whether the leaf is issued for `serverName` (RFC 6125, subjectAltName only).
    public var nameMatch: NameMatch
    /// The leaf and the served certificates after it that each signed the one before
    /// (`SignedPath`): the verified path when chain validation is skipped.
    public var signedPath: [CertificateSummary]
    /// What the configured CRLs say about the certificates of the verified path (of the first
    /// store), leaf first; only certificates whose issuer has a CRL there appear.
    public var revocation: [RevocationFinding]
    /// The verified path's certificates (of the first store), leaf first: what a stapled OCSP
    /// response, which arrives after the chain is judged, is checked against.
    public var verifiedChain: [Certificate] = []

    public init(serverName: String, served: [CertificateSummary], chainResults: [String: ChainResult],
                nameMatch: NameMatch, signedPath: [CertificateSummary] = [], revocation: [RevocationFinding] = []) {
        self.serverName = serverName
        self.served = served
        self.chainResults = chainResults
        self.nameMatch = nameMatch
        self.signedPath = signedPath
        self.revocation = revocation
    }

    /// Establishes the facts for `served` (leaf first): verification against each of `stores`,
    /// the leaf's name match and the verified path's standing in `crls`. `time` overrides
    /// the verification time (tests, `check --chain --at`).
    public static func gather(served: [Certificate], serverName: String, stores: [TrustStore],
                              crls: [CertificateRevocationList] = [], at time: Int64? = nil) -> ServedChainFacts {
        var results: [String: ChainResult] = [:]
        var revocation: [RevocationFinding] = []
        var verifiedChain: [Certificate] = []
        for store in stores where results[store.label] == nil {
            let built = ChainVerifier.build(served, against: store, at: time)
            results[store.label] = built.result
            if store === stores.first {
                verifiedChain = built.path
                revocation = RevocationLookup.examine(path: built.path, crls: crls, at: time ?? UTCTimestamp.now())
            }
        }
        let nameMatch: NameMatch = served.first.map {
            HostnameMatcher.match(serverName, dnsNames: $0.dnsNames, ipAddresses: $0.ipAddresses)
        } ?? .mismatch(presented: [])
        var facts = ServedChainFacts(serverName: serverName, served: served.map(CertificateSummary.init),
                                     chainResults: results, nameMatch: nameMatch,
                                     signedPath: SignedPath.of(served).map(CertificateSummary.init), revocation: revocation)
        facts.verifiedChain = verifiedChain
        return facts
    }

    /// The certificates a pin may match (SPEC "verified path"): the chain verification built
    /// against `storeLabel` (empty when it failed), or without a store (allow-invalid) the
    /// signed prefix of what was served. Never a certificate the server merely appended.
    public func verifiedPath(storeLabel: String?) -> [CertificateSummary] {
        guard let storeLabel else { return signedPath }
        if case .verified(let chain)? = chainResults[storeLabel] { return chain }
        return []
    }

    /// Served certificates outside `path`: shown in a refusal so nobody wonders why their
    /// pin, sent by the server, did not count.
    public func servedOutside(_ path: [CertificateSummary]) -> [CertificateSummary] {
        served.filter { certificate in !path.contains { $0.sha256 == certificate.sha256 } }
    }

    public var leaf: CertificateSummary? { served.first }

    /// The leaf's expiry, for metrics.
    public var leafNotAfter: Int64? { served.first?.notAfter }

    /// SPKI pins of every served certificate, leaf first.
    public var servedPins: [PublicKeyPin] { served.map(\.pin) }
}

/// The facts about one certificate that policies and reports use.
public struct CertificateSummary: Sendable, Equatable {
    public var subject: String
    public var issuer: String
    public var notAfter: Int64
    public var pin: PublicKeyPin
    /// SHA-256 of the DER encoding.
    public var sha256: [UInt8]
    /// What the certificate says about its role and strength (for the path checks); also its
    /// subjectAltName DNS names and IP addresses.
    public var profile = CertificateProfile()
    public var dnsNames: [String] = []
    public var ipAddresses: [String] = []

    public init(subject: String, issuer: String, notAfter: Int64, pin: PublicKeyPin, sha256: [UInt8]) {
        self.subject = subject
        self.issuer = issuer
        self.notAfter = notAfter
        self.pin = pin
        self.sha256 = sha256
    }

    public init(_ certificate: Certificate) {
        self.init(subject: certificate.subject, issuer: certificate.issuer, notAfter: certificate.notAfter,
                  pin: PublicKeyPin(of: certificate), sha256: certificate.sha256)
        profile = certificate.profile
        dnsNames = certificate.dnsNames
        ipAddresses = certificate.ipAddresses
    }
}

/// The outcome of verifying a chain against one store.
public enum ChainResult: Sendable, Equatable {
    /// The chain OpenSSL built, leaf first, ending at the trusted anchor.
    case verified(chain: [CertificateSummary])
    case failed(ChainFailure)
}

public struct ChainFailure: Sendable, Equatable {
    public var kind: TrustRefusal.Kind
    public var details: String

    public init(kind: TrustRefusal.Kind, details: String) {
        self.kind = kind
        self.details = details
    }
}

public enum NameMatch: Sendable, Equatable {
    case matched
    /// `presented` lists the leaf's subjectAltName DNS names and IP addresses.
    case mismatch(presented: [String])
}
