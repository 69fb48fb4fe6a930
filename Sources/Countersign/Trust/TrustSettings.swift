/// A host's trust settings as configured, mirroring the config's `trust` object with its
/// defaults already applied (the configuration layer maps its schema onto this).
public struct TrustSettings: Sendable, Equatable {
    public enum Pinning: String, Sendable {
        case none
        case publicKey = "public-key"
        case certificate
    }

    public enum TLSVersion: String, Sendable, Comparable {
        case tls12 = "1.2"
        case tls13 = "1.3"

        public static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// `revocation.ocsp_stapling`: whether to ask for a stapled OCSP response, and whether
    /// one must come back.
    public enum OCSPStapling: String, Sendable, CaseIterable {
        case off
        case prefer
        case require
    }

    /// PEM files whose certificates are the trust anchors; empty means the system roots.
    public var anchors: [String]
    /// With anchors: trust only them (true) or them plus the system roots (false).
    public var anchorsOnly: Bool
    public var pinning: Pinning
    /// SHA-256 digests of SubjectPublicKeyInfo (32 bytes each).
    public var pins: [[UInt8]]
    /// PEM files of pinned certificates (their keys are pins too in public-key mode).
    public var pinnedCertificates: [String]
    public var validateDomain: Bool
    public var allowInvalidCertificates: Bool
    /// SNI and the name validated; nil means the host being connected to.
    public var serverName: String?
    public var minTLSVersion: TLSVersion
    /// Most intermediates allowed on the verified path (self-issued ones not counted); nil: no
    /// bound of ours (OpenSSL's own limit of 100 certificates still applies).
    public var maxChainDepth: Int?
    /// `revocation.crl_files`: PEM or DER files, each with one or more CRLs.
    public var crlFiles: [String]
    public var ocspStapling: OCSPStapling

    public init(anchors: [String] = [], anchorsOnly: Bool = true, pinning: Pinning = .none, pins: [[UInt8]] = [],
                pinnedCertificates: [String] = [], validateDomain: Bool = true,
                allowInvalidCertificates: Bool = false, serverName: String? = nil, minTLSVersion: TLSVersion = .tls12,
                maxChainDepth: Int? = nil, crlFiles: [String] = [], ocspStapling: OCSPStapling = .off) {
        self.anchors = anchors
        self.anchorsOnly = anchorsOnly
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

    /// The system roots, name validation, no pins: what an unlisted upstream (or an OAuth2
    /// token endpoint without a host entry) is held to.
    public static let systemDefault = TrustSettings()
}
