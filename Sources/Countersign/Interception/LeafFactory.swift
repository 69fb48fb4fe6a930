import COpenSSL
import CountersignTrust
import FoundationEssentials

/// Builds and signs one leaf certificate. Enforces nothing about which hosts may be minted:
/// that is `LeafMinter`'s decision (and the CA's name constraints are the clients').
enum LeafFactory {
    static let lifetime: TimeInterval = 7 * 24 * 3600
    static let backdating: TimeInterval = 3600

    static func mint(for host: HostLiteral, ca: InterceptionCA, key: PrivateKey, now: Date) throws -> MintedLeaf {
        let draft = try CertificateDraft(subjectKey: key)
        // An IPv4 literal in the common name would be judged as a DNS name against the CA's
        // DNS constraints (OpenSSL does so when no dNSName SAN exists) and fail; so IP leaves
        // carry an empty subject and a critical subjectAltName, as RFC 5280 §4.2.1.6 allows.
        let commonName: String? = host.isIP ? nil : String(host.text.prefix(64))
        draft.setSubject(commonName: commonName)
        draft.setIssuer(ca.certificate)
        draft.setValidity(notBefore: now - backdating, notAfter: min(now + lifetime, ca.notAfter))
        try draft.addExtension(NID_basic_constraints, "critical,CA:FALSE", issuer: ca.certificate)
        try draft.addExtension(NID_key_usage, "critical,digitalSignature", issuer: ca.certificate)
        try draft.addExtension(NID_ext_key_usage, "serverAuth", issuer: ca.certificate)
        try draft.addExtension(NID_subject_key_identifier, "hash", issuer: ca.certificate)
        // keyid when the CA has one (ours always does), issuer and serial for a CA made elsewhere.
        try draft.addExtension(NID_authority_key_identifier, "keyid,issuer", issuer: ca.certificate)
        try draft.addSubjectAltName(host, critical: commonName == nil)
        let certificate = try draft.sign(with: ca.privateKey)
        return MintedLeaf(host: host.text, certificate: certificate, privateKey: key)
    }
}
