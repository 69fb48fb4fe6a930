import COpenSSL
import CountersignTrust
import FoundationEssentials

/// An X.509 v3 certificate being assembled; `sign` finishes it. Used for both the CA and leaves.
final class CertificateDraft {
    private var certificate: OpaquePointer?

    /// A version 3 certificate for `subjectKey` with a random positive 127-bit serial
    /// (RFC 5280 wants serials unique per CA and at most 20 octets; randomness gives uniqueness).
    init(subjectKey: PrivateKey) throws {
        guard let certificate = X509_new() else {
            throw InterceptionError("cannot allocate a certificate: out of memory")
        }
        self.certificate = certificate
        X509_set_version(certificate, 2)
        X509_set_pubkey(certificate, subjectKey.evpKey)
        var serial = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&serial, Int32(serial.count)) == 1 else {
            throw InterceptionError.withOpenSSLReason("cannot draw a random certificate serial")
        }
        serial[0] = (serial[0] & 0x7F) | 0x40  // positive, and never zero
        let number = BN_bin2bn(serial, Int32(serial.count), nil)
        defer { BN_free(number) }
        BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate))
    }

    deinit {
        if let certificate { X509_free(certificate) }
    }

    private var draft: OpaquePointer { certificate! }

    func setValidity(notBefore: Date, notAfter: Date) {
        ASN1_TIME_set(X509_getm_notBefore(draft), time_t(notBefore.timeIntervalSince1970))
        ASN1_TIME_set(X509_getm_notAfter(draft), time_t(notAfter.timeIntervalSince1970))
    }

    /// Sets the subject; `commonName` nil leaves the subject empty (allowed when a
    /// critical subjectAltName carries the identity).
    func setSubject(commonName: String?) {
        let name = X509_NAME_new()
        defer { X509_NAME_free(name) }
        if let commonName {
            X509_NAME_add_entry_by_NID(name, NID_commonName, MBSTRING_UTF8, commonName, -1, -1, 0)
        }
        X509_set_subject_name(draft, name)
    }

    /// The issuer's name; nil means self-issued.
    func setIssuer(_ issuer: Certificate?) {
        X509_set_issuer_name(draft, X509_get_subject_name(issuer?.x509 ?? draft))
    }

    /// Adds an extension from OpenSSL's configuration syntax. Only for constant values
    /// written in this module: host names go through `addSubjectAltName`, never a string.
    func addExtension(_ nid: Int32, _ value: String, issuer: Certificate?) throws {
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.x509 ?? draft, draft, nil, nil, 0)
        ERR_clear_error()
        guard let made = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
            throw InterceptionError.withOpenSSLReason("cannot build the certificate extension \"\(value)\"")
        }
        defer { X509_EXTENSION_free(made) }
        X509_add_ext(draft, made, -1)
    }

    /// One subjectAltName entry for `host`: dNSName for a name, iPAddress for an IP literal.
    func addSubjectAltName(_ host: HostLiteral, critical: Bool) throws {
        let names = GENERAL_NAMES_new()
        defer { cs_GENERAL_NAMES_free(names) }
        switch host {
        case .dnsName(let name): _ = cs_sk_GENERAL_NAME_push(names, GeneralNames.make(dnsName: name))
        case .ipv4(let bytes), .ipv6(let bytes): _ = cs_sk_GENERAL_NAME_push(names, GeneralNames.make(ipOctets: bytes))
        }
        ERR_clear_error()
        guard X509_add1_ext_i2d(draft, NID_subject_alt_name, UnsafeMutableRawPointer(names), critical ? 1 : 0, 0) == 1 else {
            throw InterceptionError.withOpenSSLReason("cannot add the subjectAltName for \(host.text)")
        }
    }

    func addNameConstraints(_ constraints: NameConstraints) throws {
        try NameConstraintsExtension.add(constraints, to: draft)
    }

    /// Signs with ECDSA over SHA-256 and hands the finished certificate over.
    func sign(with key: PrivateKey) throws -> Certificate {
        ERR_clear_error()
        guard X509_sign(draft, key.evpKey, EVP_sha256()) > 0 else {
            throw InterceptionError.withOpenSSLReason("cannot sign the certificate")
        }
        // Certificate is built from DER only (its pointer initialiser is internal to CountersignTrust).
        let length = i2d_X509(draft, nil)
        guard length > 0 else { throw InterceptionError.withOpenSSLReason("cannot encode the signed certificate") }
        var der = [UInt8](repeating: 0, count: Int(length))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_X509(draft, &cursor)
        }
        return try Certificate(der: der)
    }
}
