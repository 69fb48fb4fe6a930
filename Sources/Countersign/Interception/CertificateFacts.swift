import COpenSSL
import CountersignTrust
import FoundationEssentials

/// What this module reads off a `Certificate` beyond what CountersignTrust computes.
enum CertificateFacts {
    /// Colon-separated upper-case hex of the DER's SHA-256, as browsers and `openssl x509 -fingerprint` show it.
    static func fingerprint(_ certificate: Certificate) -> String {
        certificate.sha256.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return byte < 16 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    static func commonName(_ certificate: Certificate) -> String? {
        guard let name = X509_get_subject_name(certificate.x509) else { return nil }
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
              let data = X509_NAME_ENTRY_get_data(entry) else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else { return nil }
        defer { CRYPTO_free(utf8, nil, 0) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

    static func date(_ seconds: Int64) -> Date {
        Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    static func timestamp(_ date: Date) -> String {
        UTCTimestamp.string(Int64(date.timeIntervalSince1970.rounded(.down)))
    }
}
