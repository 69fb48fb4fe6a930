/// The certificates a policy's settings name, loaded from their files. Kept apart from the
/// settings so policies can be compiled from certificates already in memory (tests, reloads).
public struct TrustMaterial: Sendable {
    public var anchors: [Certificate]
    public var pinnedCertificates: [Certificate]

    public init(anchors: [Certificate] = [], pinnedCertificates: [Certificate] = []) {
        self.anchors = anchors
        self.pinnedCertificates = pinnedCertificates
    }

    /// Loads every file named by `settings`; an unreadable file or one without a certificate
    /// is an error naming the file.
    public static func load(_ settings: TrustSettings) throws -> TrustMaterial {
        TrustMaterial(anchors: try settings.anchors.flatMap { try Certificate.loadPEMFile(path: $0) },
                      pinnedCertificates: try settings.pinnedCertificates.flatMap { try Certificate.loadPEMFile(path: $0) })
    }
}
