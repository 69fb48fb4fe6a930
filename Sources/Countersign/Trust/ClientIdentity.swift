import COpenSSL
import CountersignSupport

/// A client certificate, its private key and the intermediates to send with it (mutual TLS).
/// Loading refuses a key that does not belong to the certificate.
public final class ClientIdentity: @unchecked Sendable {
    public let certificate: Certificate
    /// Intermediates presented after the certificate, in file order.
    public let chain: [Certificate]
    public let privateKey: PrivateKey

    public init(certificate: Certificate, chain: [Certificate], privateKey: PrivateKey) throws {
        guard privateKey.matches(certificate) else {
            throw TrustError("the private key does not match the client certificate \(certificate.subject)")
        }
        self.certificate = certificate
        self.chain = chain
        self.privateKey = privateKey
    }

    /// The certificate's expiry (seconds since 1970), for metrics.
    public var notAfter: Int64 { certificate.notAfter }

    /// A PEM certificate file (the client certificate first, optionally followed by its
    /// intermediates) and a PEM key file, encrypted or not.
    public static func load(pem certificatePath: String, keyPath: String, passphrase: String? = nil) throws -> ClientIdentity {
        let certificates = try Certificate.loadPEMFile(path: certificatePath)
        let key = try PrivateKey.loadPEMFile(path: keyPath, passphrase: passphrase)
        do {
            return try ClientIdentity(certificate: certificates[0], chain: Array(certificates.dropFirst()), privateKey: key)
        } catch {
            throw TrustError("the private key \(keyPath) does not match the certificate \(certificatePath)"
                + " (\(certificates[0].subject))")
        }
    }

    /// A PKCS#12 bundle holding the certificate, its key and optionally intermediates.
    public static func load(pkcs12 path: String, passphrase: String?) throws -> ClientIdentity {
        try PKCS12Bundle.parse(try FileBytes.read(path, what: "PKCS#12 file"), passphrase: passphrase, source: path)
    }
}

extension ClientIdentity: CustomStringConvertible {
    public var description: String { "ClientIdentity(\(certificate.subject))" }
}

/// Unpacks a PKCS#12 bundle with OpenSSL, loading the legacy provider once when the bundle
/// uses an old cipher (RC2, 3DES) as many exported bundles still do.
enum PKCS12Bundle {
    static func parse(_ bytes: [UInt8], passphrase: String?, source: String) throws -> ClientIdentity {
        OpenSSLErrorQueue.clear()
        let bundle: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PKCS12(nil, &cursor, buffer.count)
        }
        guard let bundle else { throw TrustError.withOpenSSLReason("\(source) is not a PKCS#12 file") }
        defer { PKCS12_free(bundle) }
        let password = passphrase ?? ""
        guard PKCS12_verify_mac(bundle, password, Int32(password.utf8.count)) == 1 else {
            OpenSSLErrorQueue.clear()
            throw TrustError(passphrase == nil
                ? "\(source) is protected by a passphrase: configure it"
                : "\(source) could not be opened: wrong passphrase")
        }
        if let identity = try unpack(bundle, password, source) { return identity }
        LegacyProvider.loadOnce()
        if let identity = try unpack(bundle, password, source) { return identity }
        throw TrustError.withOpenSSLReason("\(source) could not be decrypted")
    }

    private static func unpack(_ bundle: OpaquePointer, _ password: String, _ source: String) throws -> ClientIdentity? {
        var key: OpaquePointer?
        var x509: OpaquePointer?
        var extra: OpaquePointer?
        guard PKCS12_parse(bundle, password, &key, &x509, &extra) == 1 else { return nil }
        OpenSSLErrorQueue.clear()
        defer { if let extra { cs_sk_X509_pop_free(extra) } }
        let privateKey = key.map(PrivateKey.init(taking:))
        let certificate = try x509.map { try Certificate(taking: $0) }
        guard let privateKey, let certificate else {
            throw TrustError("\(source) must hold both a certificate and its private key")
        }
        var chain: [Certificate] = []
        if let extra {
            for index in 0..<cs_sk_X509_num(extra) {
                if let element = cs_sk_X509_value(extra, index) { chain.append(try Certificate(retaining: element)) }
            }
        }
        do {
            return try ClientIdentity(certificate: certificate, chain: chain, privateKey: privateKey)
        } catch {
            throw TrustError("the private key in \(source) does not match its certificate \(certificate.subject)")
        }
    }
}

/// OpenSSL 3 keeps old ciphers in the "legacy" provider; loading it also requires the
/// default provider to be loaded explicitly, or only legacy algorithms would remain.
enum LegacyProvider {
    private static let loaded: Bool = {
        _ = OSSL_PROVIDER_load(nil, "default")
        return OSSL_PROVIDER_load(nil, "legacy") != nil
    }()

    @discardableResult
    static func loadOnce() -> Bool { loaded }
}
