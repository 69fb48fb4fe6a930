/// The served leaf must be a server certificate, not a CA: a certificate that may sign other
/// certificates (basicConstraints cA=TRUE, keyUsage keyCertSign) or carries name constraints
/// is not one a server should present (RFC 5280 4.2.1.3, 4.2.1.10; CA/Browser Forum 7.1.2.7),
/// nor is one whose extendedKeyUsage allows any purpose (anyExtendedKeyUsage, CA/Browser
/// Forum 7.1.2.7.10: a leaf states its purposes). A leaf without extendedKeyUsage is
/// accepted (RFC 5280; common in internal PKIs); one whose extendedKeyUsage lacks serverAuth
/// is already refused by OpenSSL's purpose check. A leaf that is itself the anchor (a
/// self-signed certificate configured in `anchors` or pinned) is trusted as configured:
/// `openssl req -x509` makes such certificates with cA=TRUE by default.
public struct EndEntityCheck: VerifiedPathCheck {
    public let storeLabel: String

    public init(storeLabel: String) {
        self.storeLabel = storeLabel
    }

    public func refusal(path: [CertificateSummary]) -> TrustRefusal? {
        guard path.count > 1 else { return nil }
        let profile = path[0].profile
        let problem: String
        if profile.isCA {
            problem = "is a CA certificate (basicConstraints cA=TRUE), not a server certificate"
        } else if profile.keyCertSign {
            problem = "may sign certificates (keyUsage keyCertSign), which a server certificate must not"
        } else if profile.nameConstraints != nil {
            problem = "carries name constraints, which only a CA certificate may"
        } else if let usage = profile.extendedKeyUsage, usage.any {
            problem = "allows any purpose (extendedKeyUsage anyExtendedKeyUsage)"
        } else {
            return nil
        }
        return TrustRefusal(kind: .invalidChain, details: "not a server certificate: the certificate \(problem)")
    }
}
