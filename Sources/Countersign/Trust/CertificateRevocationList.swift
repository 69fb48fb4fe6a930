import COpenSSL
import CountersignSupport

/// One CRL (RFC 5280 §5) loaded from a `crl_files` entry. Owns its `X509_CRL*`. What can be
/// judged without the issuer is judged at load, so a CRL Countersign cannot use honestly is a
/// configuration error naming the file: a critical extension it does not process (a delta
/// CRL, an issuingDistributionPoint that would make it partial, an indirect CRL's
/// certificateIssuer entry) or no cRLNumber (§5.2.3). Signature, issuer and dates are judged
/// per handshake (`RevocationLookup`), against the issuer on the verified path and the time.
public final class CertificateRevocationList: @unchecked Sendable {
    let crl: OpaquePointer
    /// The file it came from (or "PEM text"), for messages and metrics.
    public let source: String
    public let issuer: String
    public let thisUpdate: Int64
    /// nil when the CRL has none (RFC 5280 requires it; such a CRL is never current).
    public let nextUpdate: Int64?
    /// SPKI digests of issuer keys whose signature check passed: a large CRL is hashed once
    /// per issuer key, not once per handshake. Only successes are kept, so the set is bounded
    /// by the CA keys that really signed this CRL.
    private let verifiedBy = Mutex<Set<[UInt8]>>([])

    /// Takes ownership of `crl`.
    init(taking crl: OpaquePointer, source: String) throws {
        self.crl = crl
        self.source = source
        issuer = X509Text.name(X509_CRL_get_issuer(crl))
        do {
            thisUpdate = try X509Text.seconds(X509_CRL_get0_lastUpdate(crl), field: "thisUpdate")
        } catch {
            throw TrustError("CRL \(source) (issuer \(issuer)) has an unreadable thisUpdate")
        }
        nextUpdate = X509_CRL_get0_nextUpdate(crl).flatMap { try? X509Text.seconds($0, field: "nextUpdate") }
        try checkExtensions()
    }

    deinit {
        X509_CRL_free(crl)
    }

    /// How the CRL is named in refusals, /status and logs: its issuer and the file's name
    /// (not its directory: the refusal goes to the client in Proxy-Status).
    public var label: String {
        "the CRL of \(issuer) (\(source.split(separator: "/").last.map(String.init) ?? source))"
    }

    /// Whether the CRL names `certificate` as its issuer (X.509 name comparison).
    func isIssued(by certificate: Certificate) -> Bool {
        X509_NAME_cmp(X509_CRL_get_issuer(crl), X509_get_subject_name(certificate.x509)) == 0
    }

    /// Whether `certificate`'s public key verifies the CRL's signature.
    func isSigned(by certificate: Certificate) -> Bool {
        if verifiedBy.withLock({ $0.contains(certificate.spkiSHA256) }) { return true }
        defer { OpenSSLErrorQueue.clear() }
        guard let key = X509_get0_pubkey(certificate.x509), X509_CRL_verify(crl, key) == 1 else { return false }
        verifiedBy.withLock { _ = $0.insert(certificate.spkiSHA256) }
        return true
    }

    /// The entry revoking `certificate`'s serial, or nil. (A removeFromCRL entry, which
    /// only a delta CRL may carry, is not a revocation: OpenSSL answers 2 for it.)
    func entry(for certificate: Certificate) -> RevokedEntry? {
        var revoked: OpaquePointer?
        guard let serial = X509_get0_serialNumber(certificate.x509),
              X509_CRL_get0_by_serial(crl, &revoked, UnsafeMutablePointer(mutating: serial)) == 1,
              let revoked else { return nil }
        let date = (try? X509Text.seconds(X509_REVOKED_get0_revocationDate(revoked), field: "revocationDate")) ?? 0
        return RevokedEntry(revocationDate: date, reason: RevokedEntry.reason(of: revoked))
    }

    /// RFC 5280 §5.2 / §5.3: a CRL with a critical (entry) extension we do not process must
    /// not be used; none of the extensions we read may be critical.
    private func checkExtensions() throws {
        if let name = CertificateRevocationList.firstCritical(count: X509_CRL_get_ext_count(crl), { X509_CRL_get_ext(crl, $0) }) {
            throw TrustError("CRL \(source) (issuer \(issuer)) has a critical \(name) extension, which Countersign does not"
                + " process (delta and partitioned CRLs are not supported): give a complete CRL")
        }
        guard X509_CRL_get_ext_by_NID(crl, NID_crl_number, -1) >= 0 else {
            throw TrustError("CRL \(source) (issuer \(issuer)) has no cRLNumber extension, which RFC 5280 (5.2.3) requires")
        }
        guard let entries = X509_CRL_get_REVOKED(crl) else { return }
        for index in 0..<cs_sk_X509_REVOKED_num(entries) {
            guard let entry = cs_sk_X509_REVOKED_value(entries, index) else { continue }
            if let name = CertificateRevocationList.firstCritical(count: X509_REVOKED_get_ext_count(entry), { X509_REVOKED_get_ext(entry, $0) }) {
                throw TrustError("CRL \(source) (issuer \(issuer)) has an entry with a critical \(name) extension,"
                    + " which Countersign does not process (indirect CRLs are not supported)")
            }
        }
    }

    private static func firstCritical(count: Int32, _ extensionAt: (Int32) -> OpaquePointer?) -> String? {
        for index in 0..<max(count, 0) {
            guard let item = extensionAt(index), X509_EXTENSION_get_critical(item) != 0 else { continue }
            let nid = OBJ_obj2nid(X509_EXTENSION_get_object(item))
            return nid == NID_undef ? "unknown" : OBJ_nid2sn(nid).map { String(cString: $0) } ?? "unknown"
        }
        return nil
    }
}

/// A CRL entry that revokes a certificate.
public struct RevokedEntry: Sendable, Equatable {
    public var revocationDate: Int64
    /// RFC 5280 §5.3.1 CRLReason name, when the entry has one.
    public var reason: String?

    public init(revocationDate: Int64, reason: String?) {
        self.revocationDate = revocationDate
        self.reason = reason
    }

    static func reason(of revoked: OpaquePointer) -> String? {
        guard let raw = X509_REVOKED_get_ext_d2i(revoked, NID_crl_reason, nil, nil) else { return nil }
        let code = raw.assumingMemoryBound(to: ASN1_ENUMERATED.self)
        defer { ASN1_ENUMERATED_free(code) }
        return reasonName(ASN1_ENUMERATED_get(code))
    }

    /// RFC 5280 §5.3.1 (and the OCSP revocationReason, RFC 6960 §4.2.1, which reuses it).
    static func reasonName(_ code: Int) -> String {
        let names = [0: "unspecified", 1: "keyCompromise", 2: "cACompromise", 3: "affiliationChanged",
                     4: "superseded", 5: "cessationOfOperation", 6: "certificateHold", 8: "removeFromCRL",
                     9: "privilegeWithdrawn", 10: "aACompromise"]
        return names[code] ?? "reason \(code)"
    }
}

extension CertificateRevocationList {
    /// Every CRL of a file: PEM (one or more `X509 CRL` blocks) or a single DER CRL.
    public static func loadFile(path: String) throws -> [CertificateRevocationList] {
        try parse(try FileBytes.read(path, what: "CRL file"), source: path)
    }

    public static func parse(_ bytes: [UInt8], source: String) throws -> [CertificateRevocationList] {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        // DER starts with a SEQUENCE tag; anything else is read as PEM (which may carry text before its blocks).
        if bytes.first != 0x30 {
            let found: [CertificateRevocationList] = try MemoryBIO.reading(bytes) { bio in
                var found: [CertificateRevocationList] = []
                while let crl = PEM_read_bio_X509_CRL(bio, nil, nil, nil) {
                    found.append(try CertificateRevocationList(taking: crl, source: source))
                }
                return found
            }
            guard !found.isEmpty else {
                throw TrustError("\(source) contains no PEM CRL (expected -----BEGIN X509 CRL-----) and is not a DER CRL")
            }
            // OpenSSL stops at the first block it cannot read: a damaged CRL further down must not
            // silently leave its issuer unchecked.
            let blocks = PEMBlocks.count(of: "X509 CRL", in: bytes)
            guard blocks == found.count else {
                throw TrustError("\(source) has \(blocks) CRL blocks, but only the first \(found.count) can be read: block \(found.count + 1) is damaged")
            }
            return found
        }
        let parsed: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509_CRL(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            throw TrustError("\(source) is neither a PEM nor a DER CRL")
        }
        return [try CertificateRevocationList(taking: parsed, source: source)]
    }
}
