import CountersignTrust
import FoundationEssentials

/// A certificate minted for one intercepted host, with the process's shared leaf key.
public final class MintedLeaf: @unchecked Sendable {
    // Immutable after minting; shared by every connection to the host.
    /// The host as certificates name it: a lower-case DNS name or a canonical IP literal.
    public let host: String
    public let notBefore: Date
    public let notAfter: Date

    public let certificate: Certificate
    let privateKey: PrivateKey

    init(host: String, certificate: Certificate, privateKey: PrivateKey) {
        self.host = host
        self.certificate = certificate
        self.privateKey = privateKey
        self.notBefore = CertificateFacts.date(certificate.notBefore)
        self.notAfter = CertificateFacts.date(certificate.notAfter)
    }

    public var certificatePEM: String { certificate.pem }
}
