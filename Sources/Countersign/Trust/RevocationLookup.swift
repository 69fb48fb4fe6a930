import COpenSSL
import CountersignSupport

/// What the configured CRLs say about one certificate of the verified path (a fact: the
/// `RevocationCheck` decides over it).
public struct RevocationFinding: Sendable, Equatable {
    public enum Status: Sendable, Equatable {
        /// A current CRL of its issuer, signed by the issuer's key, does not list it.
        case notRevoked(crl: String)
        case revoked(RevokedEntry, crl: String)
        /// Its issuer has a CRL here, but none that can vouch now: why, in a sentence.
        case unusable(String)
    }

    public var subject: String
    /// The serial in hex, as `openssl x509 -serial` and `openssl ca -revoke` write it.
    public var serial: String
    public var status: Status

    public init(subject: String, serial: String, status: Status) {
        self.subject = subject
        self.serial = serial
        self.status = status
    }
}

/// Looks each certificate of a verified path up in the CRLs of its issuer on that path (RFC
/// 5280 §6.3, for complete CRLs): the CRL must name the issuer, verify with the issuer's key,
/// the issuer may not lack cRLSign where it has a keyUsage, and the CRL must be current.
/// The anchor is not looked up: it is trusted as configured.
enum RevocationLookup {
    /// Allowed clock difference for thisUpdate/nextUpdate (also for OCSP staples): a CRL made a
    /// minute ago on a machine whose clock runs ahead is not "from the future".
    static let clockSkew: Int64 = 300

    static func examine(path: [Certificate], crls: [CertificateRevocationList], at now: Int64) -> [RevocationFinding] {
        guard !crls.isEmpty, path.count > 1 else { return [] }
        var findings: [RevocationFinding] = []
        for depth in 0..<(path.count - 1) {
            let certificate = path[depth], issuer = path[depth + 1]
            let named = crls.filter { $0.isIssued(by: issuer) }
            guard !named.isEmpty else { continue }
            findings.append(RevocationFinding(subject: certificate.subject, serial: serialHex(certificate),
                                              status: status(of: certificate, issuer: issuer, named: named, at: now)))
        }
        return findings
    }

    private static func status(of certificate: Certificate, issuer: Certificate, named: [CertificateRevocationList],
                               at now: Int64) -> RevocationFinding.Status {
        if IssuerKeyUsage.lacksCRLSign(issuer) {
            return .unusable("\(issuer.subject) may not sign CRLs (its keyUsage lacks cRLSign), so \(named[0].label) proves nothing")
        }
        let signed = named.filter { $0.isSigned(by: issuer) }
        guard !signed.isEmpty else {
            return .unusable("\(named[0].label) is not signed by the key of \(issuer.subject) on the verified path")
        }
        // A revocation is final: a CRL that says so is believed even when it is no longer current.
        for crl in signed where crl.thisUpdate <= now + clockSkew {
            if let entry = crl.entry(for: certificate) { return .revoked(entry, crl: crl.label) }
        }
        for crl in signed {
            if crl.thisUpdate > now + clockSkew {
                return .unusable("\(crl.label) is not valid before \(UTCTimestamp.string(crl.thisUpdate)) (its thisUpdate)")
            }
            guard let nextUpdate = crl.nextUpdate else {
                return .unusable("\(crl.label) has no nextUpdate, so it is never current")
            }
            if nextUpdate + clockSkew < now {
                return .unusable("\(crl.label) expired: its nextUpdate was \(UTCTimestamp.string(nextUpdate)); install a fresh CRL")
            }
        }
        return .notRevoked(crl: signed.map(\.label).joined(separator: ", "))
    }

    static func serialHex(_ certificate: Certificate) -> String {
        guard let serial = X509_get0_serialNumber(certificate.x509),
              let number = ASN1_INTEGER_to_BN(serial, nil) else { return "?" }
        defer { BN_free(number) }
        guard let hex = BN_bn2hex(number) else { return "?" }
        defer { CRYPTO_free(hex, #file, #line) }
        return String(cString: hex)
    }
}

/// RFC 5280 §4.2.1.3: where a CA certificate has a keyUsage, cRLSign must be among it for its
/// CRLs to count.
enum IssuerKeyUsage {
    static func lacksCRLSign(_ issuer: Certificate) -> Bool {
        let hasKeyUsage = (X509_get_extension_flags(issuer.x509) & UInt32(EXFLAG_KUSAGE)) != 0
        return hasKeyUsage && (X509_get_key_usage(issuer.x509) & UInt32(KU_CRL_SIGN)) == 0
    }
}
