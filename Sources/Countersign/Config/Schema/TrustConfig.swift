/// AFSSLPinningMode's three modes.
public enum PinningMode: String, Sendable, CaseIterable {
    case none
    case publicKey = "public-key"
    case certificate
}

/// `revocation.ocsp_stapling`.
public enum OCSPStaplingMode: String, Sendable, CaseIterable {
    case off
    case prefer
    case require
}

public enum TLSVersion: String, Sendable, CaseIterable {
    case v1_2 = "1.2"
    case v1_3 = "1.3"
}

/// How an upstream's certificate chain is judged (SPEC "Trust evaluation").
public struct TrustConfig: Sendable {
    /// Absolute paths of PEM files with trusted roots; empty means the system roots.
    public var anchors: [String]
    /// Trust only `anchors`, not the system roots as well.
    public var anchorsOnly: Bool
    public var pinning: PinningMode
    /// SHA-256 hashes (32 bytes each) of SubjectPublicKeyInfo.
    public var pins: [[UInt8]]
    /// Absolute paths of PEM certificates.
    public var pinnedCertificates: [String]
    public var validateDomain: Bool
    public var allowInvalidCertificates: Bool
    /// SNI and the name validated; nil means the request's host.
    public var serverName: String?
    public var minTLSVersion: TLSVersion
    /// `max_chain_depth`: intermediates allowed on the verified path; nil means no bound.
    public var maxChainDepth: Int?
    /// `revocation.crl_files`: absolute paths of PEM or DER CRL files.
    public var crlFiles: [String]
    public var ocspStapling: OCSPStaplingMode

    public init(anchors: [String] = [], anchorsOnly: Bool? = nil, pinning: PinningMode = .none,
                pins: [[UInt8]] = [], pinnedCertificates: [String] = [], validateDomain: Bool = true,
                allowInvalidCertificates: Bool = false, serverName: String? = nil,
                minTLSVersion: TLSVersion = .v1_2, maxChainDepth: Int? = nil,
                crlFiles: [String] = [], ocspStapling: OCSPStaplingMode = .off) {
        self.anchors = anchors
        self.anchorsOnly = anchorsOnly ?? !anchors.isEmpty
        self.pinning = pinning
        self.pins = pins
        self.pinnedCertificates = pinnedCertificates
        self.validateDomain = validateDomain
        self.allowInvalidCertificates = allowInvalidCertificates
        self.serverName = serverName
        self.minTLSVersion = minTLSVersion
        self.maxChainDepth = maxChainDepth
        self.crlFiles = crlFiles
        self.ocspStapling = ocspStapling
    }
}
