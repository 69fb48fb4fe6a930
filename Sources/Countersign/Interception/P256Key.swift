import COpenSSL
import CountersignTrust

/// Generates and writes the EC P-256 keys of the CA and of leaves.
enum P256Key {
    /// A fresh key on NIST P-256: small certificates, fast signatures, accepted by every TLS client.
    static func generate() throws -> PrivateKey {
        ERR_clear_error()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw InterceptionError.withOpenSSLReason("cannot set up EC key generation")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var generated: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
              EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
              EVP_PKEY_generate(context, &generated) == 1, let generated else {
            throw InterceptionError.withOpenSSLReason("cannot generate a P-256 key")
        }
        defer { EVP_PKEY_free(generated) }
        // PrivateKey is built from PEM only (its pointer initialiser is internal to CountersignTrust).
        var pem = Array(pkcs8PEM(generated).utf8)
        defer { OPENSSL_cleanse(&pem, pem.count) }
        return try PrivateKey(pem: pem, source: "the generated P-256 key")
    }

    /// PKCS#8 PEM, unencrypted: the file mode (0600) is what protects the CA key.
    static func pkcs8PEM(_ key: OpaquePointer) -> String {
        MemoryBIOText.collect { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
    }
}

/// Collects what an OpenSSL writer puts into a memory BIO as text.
enum MemoryBIOText {
    static func collect(_ write: (OpaquePointer) -> Int32) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { preconditionFailure("BIO_new failed: out of memory") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return "" }
        var data: UnsafeMutablePointer<CChar>?
        let length = cs_BIO_get_mem_data(bio, &data)
        guard let data, length > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }
}
