/// The certificates a policy's settings name, loaded from their files. Kept apart from the
/// settings so policies can be compiled from certificates already in memory (tests, reloads).
public struct TrustMaterial: Sendable {
    public var anchors: [Certificate]
    public var pinnedCertificates: [Certificate]
    /// Every CRL of `revocation.crl_files`, in file order.
    public var crls: [CertificateRevocationList]

    public init(anchors: [Certificate] = [], pinnedCertificates: [Certificate] = [], crls: [CertificateRevocationList] = []) {
        self.anchors = anchors
        self.pinnedCertificates = pinnedCertificates
        self.crls = crls
    }

    /// Loads every file named by `settings`; an unreadable file or one without a certificate
    /// is an error naming the file.
    public static func load(_ settings: TrustSettings) throws -> TrustMaterial {
        TrustMaterial(anchors: try settings.anchors.flatMap { try Certificate.loadPEMFile(path: $0) },
                      pinnedCertificates: try settings.pinnedCertificates.flatMap { try Certificate.loadPEMFile(path: $0) },
                      crls: try settings.crlFiles.flatMap { try CertificateRevocationList.loadFile(path: $0) })
    }
}
