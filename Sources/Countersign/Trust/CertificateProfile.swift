import COpenSSL
import CountersignSupport

/// What a certificate says about its role and strength, read once when it is parsed: the
/// facts the path checks (key strength, end-entity role, name constraints, serial, names)
/// decide over. Kept apart from `CertificateSummary`'s identity fields so they can grow
/// without reshuffling them.
public struct CertificateProfile: Sendable, Equatable {
    public enum PublicKey: Sendable, Equatable {
        case rsa(bits: Int)
        /// `curve` is OpenSSL's group name (`prime256v1`, `secp384r1`, ...), nil for explicit parameters.
        case ec(curve: String?)
        case dsa(bits: Int)
        case ed25519
        case ed448
        case other(String)
    }

    /// A name constraint extension's DNS and IP subtrees (other kinds only counted).
    public struct NameConstraints: Sendable, Equatable {
        public var permittedDNS: [String] = []
        public var excludedDNS: [String] = []
        /// Any subtree at all, of any kind, in either list (RFC 5280 forbids an empty extension).
        public var subtreeCount = 0

        public init(permittedDNS: [String] = [], excludedDNS: [String] = [], subtreeCount: Int = 0) {
            self.permittedDNS = permittedDNS
            self.excludedDNS = excludedDNS
            self.subtreeCount = subtreeCount
        }
    }

    public var publicKey: PublicKey
    /// basicConstraints cA=TRUE.
    public var isCA: Bool
    /// keyUsage present and asserting keyCertSign.
    public var keyCertSign: Bool
    /// extKeyUsage present: whether it names serverAuth and whether it has anyExtendedKeyUsage; nil when absent.
    public var extendedKeyUsage: ExtendedKeyUsage?
    public var nameConstraints: NameConstraints?
    /// The serial number's DER content octets (sign byte included) and its sign.
    public var serialLength: Int
    public var serialIsPositive: Bool
    /// subject commonName values (UTF-8).
    public var commonNames: [String]
    /// authorityKeyIdentifier: absent, or present with (or without) a keyIdentifier.
    public var authorityKeyIdentifier: KeyIdentifier
    public var subjectKeyIdentifier: [UInt8]?
    /// Subject equals issuer and the certificate's own key verifies its signature (a root,
    /// not merely self-issued like a CA's key rollover certificate).
    public var isSelfSigned = false
    /// Extensions OpenSSL knows but cannot decode, by short name (e.g. "authorityInfoAccess").
    public var malformedExtensions: [String] = []
    /// A policyConstraints extension not marked critical (RFC 5280 4.2.1.11 requires critical).
    public var nonCriticalPolicyConstraints = false

    public enum KeyIdentifier: Sendable, Equatable {
        case absent
        case present(keyIdentifier: [UInt8]?)
    }

    public struct ExtendedKeyUsage: Sendable, Equatable {
        public var serverAuth: Bool
        public var any: Bool

        public init(serverAuth: Bool, any: Bool) {
            self.serverAuth = serverAuth
            self.any = any
        }
    }

    public init(publicKey: PublicKey = .other("unknown"), isCA: Bool = false, keyCertSign: Bool = false,
                extendedKeyUsage: ExtendedKeyUsage? = nil, nameConstraints: NameConstraints? = nil,
                serialLength: Int = 1, serialIsPositive: Bool = true, commonNames: [String] = [],
                authorityKeyIdentifier: KeyIdentifier = .absent, subjectKeyIdentifier: [UInt8]? = nil) {
        self.publicKey = publicKey
        self.isCA = isCA
        self.keyCertSign = keyCertSign
        self.extendedKeyUsage = extendedKeyUsage
        self.nameConstraints = nameConstraints
        self.serialLength = serialLength
        self.serialIsPositive = serialIsPositive
        self.commonNames = commonNames
        self.authorityKeyIdentifier = authorityKeyIdentifier
        self.subjectKeyIdentifier = subjectKeyIdentifier
    }

    init(_ x509: OpaquePointer) {
        self.init(publicKey: CertificateProfile.publicKey(x509))
        let flags = X509_get_extension_flags(x509)
        if let raw = X509_get_ext_d2i(x509, NID_basic_constraints, nil, nil) {
            let constraints = raw.assumingMemoryBound(to: BASIC_CONSTRAINTS.self)
            isCA = constraints.pointee.ca != 0
            BASIC_CONSTRAINTS_free(constraints)
        }
        keyCertSign = flags & UInt32(EXFLAG_KUSAGE) != 0 && X509_get_key_usage(x509) & UInt32(KU_KEY_CERT_SIGN) != 0
        if flags & UInt32(EXFLAG_XKUSAGE) != 0 {
            let usages = X509_get_extended_key_usage(x509)
            extendedKeyUsage = ExtendedKeyUsage(serverAuth: usages & UInt32(XKU_SSL_SERVER) != 0,
                                                any: usages & UInt32(XKU_ANYEKU) != 0)
        }
        nameConstraints = CertificateProfile.nameConstraints(x509)
        (serialLength, serialIsPositive) = CertificateProfile.serial(x509)
        commonNames = CertificateProfile.commonNames(x509)
        if X509_get_ext_by_NID(x509, NID_authority_key_identifier, -1) >= 0 {
            authorityKeyIdentifier = .present(keyIdentifier: X509_get0_authority_key_id(x509).flatMap(X509Text.bytes))
        }
        subjectKeyIdentifier = X509_get0_subject_key_id(x509).flatMap(X509Text.bytes)
        isSelfSigned = X509_NAME_cmp(X509_get_subject_name(x509), X509_get_issuer_name(x509)) == 0
            && X509_get0_pubkey(x509).map { X509_verify(x509, $0) == 1 } == true
        // A failed signature check or an undecodable extension leaves errors behind that a later
        // handshake failure report would otherwise pick up.
        OpenSSLErrorQueue.clear()
        malformedExtensions = CertificateProfile.malformedExtensions(x509)
        let policyConstraints = X509_get_ext_by_NID(x509, NID_policy_constraints, -1)
        if policyConstraints >= 0, let ext = X509_get_ext(x509, policyConstraints) {
            nonCriticalPolicyConstraints = X509_EXTENSION_get_critical(ext) == 0
        }
    }

    /// The extensions OpenSSL has a decoder for whose contents do not decode.
    private static func malformedExtensions(_ x509: OpaquePointer) -> [String] {
        var malformed: [String] = []
        for index in 0..<X509_get_ext_count(x509) {
            guard let ext = X509_get_ext(x509, index), let method = X509V3_EXT_get(ext) else { continue }
            guard let value = X509V3_EXT_d2i(ext) else {
                let nid = OBJ_obj2nid(X509_EXTENSION_get_object(ext))
                malformed.append(OBJ_nid2ln(nid).map { String(cString: $0) } ?? "extension \(nid)")
                continue
            }
            if let item = method.pointee.it {
                ASN1_item_free(OpaquePointer(value), item())
            } else if let free = method.pointee.ext_free {
                free(value)
            }
        }
        return malformed
    }


    private static func publicKey(_ x509: OpaquePointer) -> PublicKey {
        guard let key = X509_get0_pubkey(x509) else { return .other("unreadable") }
        let bits = Int(EVP_PKEY_get_bits(key))
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA, EVP_PKEY_RSA_PSS:
            return .rsa(bits: bits)
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return .ec(curve: nil) }
            return .ec(curve: String(cString: name))
        case EVP_PKEY_DSA:
            return .dsa(bits: bits)
        case EVP_PKEY_ED25519:
            return .ed25519
        case EVP_PKEY_ED448:
            return .ed448
        default:
            return .other(EVP_PKEY_get0_type_name(key).map { String(cString: $0) } ?? "unknown")
        }
    }

    private static func nameConstraints(_ x509: OpaquePointer) -> NameConstraints? {
        guard X509_get_ext_by_NID(x509, NID_name_constraints, -1) >= 0 else { return nil }
        // An extension present but undecodable constrains nothing we can read: count it as empty.
        guard let raw = X509_get_ext_d2i(x509, NID_name_constraints, nil, nil) else { return NameConstraints() }
        let value = raw.assumingMemoryBound(to: NAME_CONSTRAINTS.self)
        defer { NAME_CONSTRAINTS_free(value) }
        let permitted = subtrees(value.pointee.permittedSubtrees)
        let excluded = subtrees(value.pointee.excludedSubtrees)
        return NameConstraints(permittedDNS: permitted.dns, excludedDNS: excluded.dns,
                               subtreeCount: permitted.count + excluded.count)
    }

    private static func subtrees(_ stack: OpaquePointer?) -> (dns: [String], count: Int) {
        guard let stack else { return ([], 0) }
        let count = Int(cs_sk_GENERAL_SUBTREE_num(stack))
        var dns: [String] = []
        for index in 0..<Int32(count) {
            guard let subtree = cs_sk_GENERAL_SUBTREE_value(stack, index), let base = subtree.pointee.base,
                  base.pointee.type == GEN_DNS, let name = base.pointee.d.dNSName,
                  let bytes = X509Text.bytes(UnsafePointer(name)) else { continue }
            dns.append(String(decoding: bytes, as: UTF8.self))
        }
        return (dns, count)
    }

    private static func serial(_ x509: OpaquePointer) -> (length: Int, positive: Bool) {
        guard let serial = X509_get0_serialNumber(x509) else { return (0, false) }
        let negative = ASN1_STRING_type(serial) == V_ASN1_NEG_INTEGER
        let length = Int(ASN1_STRING_length(serial))
        guard let data = ASN1_STRING_get0_data(serial), length > 0 else { return (1, false) }
        let magnitude = Array(UnsafeBufferPointer(start: data, count: length))
        let isZero = magnitude.allSatisfy { $0 == 0 }
        // DER adds a sign octet when the top bit of a positive magnitude is set.
        let contentLength = length + (!negative && magnitude[0] & 0x80 != 0 ? 1 : 0)
        return (contentLength, !negative && !isZero)
    }

    private static func commonNames(_ x509: OpaquePointer) -> [String] {
        guard let name = X509_get_subject_name(x509) else { return [] }
        var names: [String] = []
        var index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        while index >= 0 {
            if let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry) {
                var utf8: UnsafeMutablePointer<UInt8>?
                let length = ASN1_STRING_to_UTF8(&utf8, data)
                if length >= 0, let utf8 {
                    names.append(String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self))
                    CRYPTO_free(utf8, #file, #line)
                }
            }
            index = X509_NAME_get_index_by_NID(name, NID_commonName, index)
        }
        return names
    }
}
