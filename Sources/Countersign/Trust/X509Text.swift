import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// Turns X.509 names, times and algorithm identifiers into plain Swift values.
enum X509Text {
    /// RFC 2253 one-line form (most specific RDN first), keeping UTF-8 rather than escaping it.
    static func name(_ name: OpaquePointer?) -> String {
        guard let name else { return "" }
        let flags = cs_XN_FLAG_RFC2253() & ~UInt(ASN1_STRFLGS_ESC_MSB)
        return MemoryBIO.text { bio in _ = X509_NAME_print_ex(bio, name, 0, flags) }
    }

    /// An ASN.1 time as seconds since 1970 (UTC).
    static func seconds(_ time: UnsafePointer<ASN1_TIME>?, field: String) throws -> Int64 {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else {
            throw TrustError("certificate has an unreadable \(field) time")
        }
        return Int64(timegm(&parts))
    }

    /// The content octets of an ASN.1 string (IA5String, OCTET STRING, ...).
    static func bytes(_ string: UnsafePointer<ASN1_STRING>?) -> [UInt8]? {
        guard let string, let data = ASN1_STRING_get0_data(string) else { return nil }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))))
    }

    static func signatureDigest(_ x509: OpaquePointer) -> String {
        var digest: Int32 = NID_undef
        var publicKey: Int32 = NID_undef
        guard OBJ_find_sigid_algs(X509_get_signature_nid(x509), &digest, &publicKey) == 1,
              digest != NID_undef, let shortName = OBJ_nid2sn(digest) else {
            return "none"
        }
        return String(cString: shortName)
    }
}

/// The dNSName and iPAddress entries of a certificate's subjectAltName extension.
struct SubjectAltNames {
    var dnsNames: [String] = []
    var ipAddresses: [String] = []

    init(_ x509: OpaquePointer) {
        guard let raw = X509_get_ext_d2i(x509, NID_subject_alt_name, nil, nil) else { return }
        let names = OpaquePointer(raw)
        defer { cs_GENERAL_NAMES_free(names) }
        for index in 0..<cs_sk_GENERAL_NAME_num(names) {
            guard let entry = cs_sk_GENERAL_NAME_value(names, index) else { continue }
            switch entry.pointee.type {
            case GEN_DNS:
                if let text = SubjectAltNames.string(entry.pointee.d.dNSName) { dnsNames.append(text) }
            case GEN_IPADD:
                if let address = SubjectAltNames.bytes(entry.pointee.d.iPAddress),
                   let text = IPAddressText.format(address) {
                    ipAddresses.append(text)
                }
            default:
                continue
            }
        }
    }

    private static func bytes(_ string: UnsafeMutablePointer<ASN1_STRING>?) -> [UInt8]? {
        X509Text.bytes(string.map { UnsafePointer($0) })
    }

    private static func string(_ string: UnsafeMutablePointer<ASN1_STRING>?) -> String? {
        bytes(string).map { String(decoding: $0, as: UTF8.self) }
    }
}
