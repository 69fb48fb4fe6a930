import COpenSSL
import CountersignSupport
#if canImport(Glibc)
import Glibc
#endif

/// An X.509 certificate. Owns its `X509*` (freed in deinit); every property is computed
/// once at init, so the value is immutable and safe to share between threads.
public final class Certificate: @unchecked Sendable {
    /// The owned `X509*`. Callers that hand it to OpenSSL must not free it.
    public let x509: OpaquePointer
    /// The DER encoding, exactly as served or loaded.
    public let der: [UInt8]
    /// SHA-256 of the DER encoding (the certificate fingerprint).
    public let sha256: [UInt8]
    /// SHA-256 of the DER SubjectPublicKeyInfo: what a public-key pin names.
    public let spkiSHA256: [UInt8]
    /// Subject and issuer in RFC 2253 order, e.g. `CN=api.example.com,O=Example`.
    public let subject: String
    public let issuer: String
    /// Validity bounds in seconds since 1970-01-01T00:00:00Z.
    public let notBefore: Int64
    public let notAfter: Int64
    /// subjectAltName entries: DNS names as written, IP addresses in their textual form.
    public let dnsNames: [String]
    public let ipAddresses: [String]
    /// The digest of the signature algorithm, e.g. `SHA256`, or `none` for Ed25519 and friends.
    public let signatureDigestName: String
    /// Subject equals issuer and the key identifiers do not contradict it.
    public let isSelfIssued: Bool
    /// Key, basic constraints, usages, name constraints, serial and common names.
    public let profile: CertificateProfile

    /// Takes ownership of `x509` (one reference).
    init(taking x509: OpaquePointer) throws {
        self.x509 = x509
        der = try Certificate.encodeDER(x509)
        sha256 = SHA256.hash(der)
        spkiSHA256 = SHA256.hash(try Certificate.encodeSPKI(x509))
        subject = X509Text.name(X509_get_subject_name(x509))
        issuer = X509Text.name(X509_get_issuer_name(x509))
        notBefore = try X509Text.seconds(X509_get0_notBefore(x509), field: "notBefore")
        notAfter = try X509Text.seconds(X509_get0_notAfter(x509), field: "notAfter")
        let names = SubjectAltNames(x509)
        dnsNames = names.dnsNames
        ipAddresses = names.ipAddresses
        signatureDigestName = X509Text.signatureDigest(x509)
        isSelfIssued = X509_check_issued(x509, x509) == X509_V_OK
        profile = CertificateProfile(x509)
    }

    /// Shares `x509` with its current owner (takes an extra reference).
    convenience init(retaining x509: OpaquePointer) throws {
        X509_up_ref(x509)
        try self.init(taking: x509)
    }

    /// Parses one DER-encoded certificate.
    public convenience init(der: [UInt8]) throws {
        OpenSSLErrorQueue.clear()
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw TrustError.withOpenSSLReason("not a DER certificate") }
        try self.init(taking: parsed)
    }

    /// Parses the first certificate of a PEM text.
    public convenience init(pem: String) throws {
        guard let first = try Certificate.parsePEM(Array(pem.utf8), source: "PEM text").first else {
            throw TrustError("no certificate in PEM text")
        }
        try self.init(retaining: first.x509)
    }

    /// All certificates of a PEM file, in file order (leaf first for a chain file).
    public static func loadPEMFile(path: String) throws -> [Certificate] {
        let bytes = try FileBytes.read(path, what: "certificate file")
        return try parsePEM(bytes, source: path)
    }

    /// All certificates of a PEM text; at least one, or an error naming `source`.
    public static func parsePEM(_ bytes: [UInt8], source: String) throws -> [Certificate] {
        OpenSSLErrorQueue.clear()
        let certificates: [Certificate] = try MemoryBIO.reading(bytes) { bio in
            var found: [Certificate] = []
            while let x509 = PEM_read_bio_X509(bio, nil, nil, nil) {
                found.append(try Certificate(taking: x509))
            }
            return found
        }
        // Reading past the last certificate leaves a "no start line" error: expected, not a failure.
        OpenSSLErrorQueue.clear()
        guard !certificates.isEmpty else {
            throw TrustError("\(source) contains no PEM certificate (expected -----BEGIN CERTIFICATE-----)")
        }
        let blocks = PEMBlocks.count(of: "CERTIFICATE", in: bytes)
        guard blocks <= certificates.count else {
            throw TrustError("\(source) has \(blocks) certificate blocks, but only the first \(certificates.count) can be read:"
                + " block \(certificates.count + 1) is damaged")
        }
        return certificates
    }

    /// The certificate as PEM text.
    public var pem: String {
        MemoryBIO.text { bio in _ = PEM_write_bio_X509(bio, x509) }
    }

    deinit {
        X509_free(x509)
    }

    private static func encodeDER(_ x509: OpaquePointer) throws -> [UInt8] {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { throw TrustError.withOpenSSLReason("certificate cannot be DER-encoded") }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_X509(x509, &cursor)
        }
        return bytes
    }

    private static func encodeSPKI(_ x509: OpaquePointer) throws -> [UInt8] {
        guard let spki = X509_get_X509_PUBKEY(x509) else {
            throw TrustError("certificate has no public key")
        }
        let length = i2d_X509_PUBKEY(spki, nil)
        guard length > 0 else { throw TrustError.withOpenSSLReason("certificate public key cannot be encoded") }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_X509_PUBKEY(spki, &cursor)
        }
        return bytes
    }
}

extension Certificate: Equatable {
    /// Certificates are equal when their DER encodings are byte-equal.
    public static func == (lhs: Certificate, rhs: Certificate) -> Bool { lhs.der == rhs.der }
}

extension Certificate: CustomStringConvertible {
    public var description: String { "Certificate(\(subject), issuer: \(issuer))" }
}
