import COpenSSL
import CountersignSupport

/// Why a client's TLS handshake with Countersign failed, in words that point at the fix.
/// The usual cause is a client that was never told to trust the interception CA: it
/// answers the minted leaf with an unknown_ca, bad_certificate or certificate_unknown alert.
public struct ClientHandshakeFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Cause: Equatable, Sendable {
        /// The client rejected the minted certificate as untrusted.
        case clientDoesNotTrustCA
        /// The client judged the minted certificate expired or not yet valid (a clock problem).
        case clientRejectsValidity
        /// Anything else, with OpenSSL's reasons.
        case other(String)
    }

    public let host: String
    public let cause: Cause

    public init(host: String, cause: Cause) {
        self.host = host
        self.cause = cause
    }

    /// Classifies packed OpenSSL error codes, e.g. from `bufferevent_get_openssl_error`.
    public init(host: String, openSSLErrors codes: [UInt]) {
        self.host = host
        let reasons = Set(codes.filter { ERR_GET_LIB($0) == ERR_LIB_SSL }.map { ERR_GET_REASON($0) })
        if !reasons.isDisjoint(with: Self.distrustAlerts) {
            cause = .clientDoesNotTrustCA
        } else if reasons.contains(SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED) {
            cause = .clientRejectsValidity
        } else {
            let texts = OpenSSLErrorQueue.reasons(of: codes)
            cause = .other(texts.isEmpty ? "the connection closed during the handshake" : texts.joined(separator: "; "))
        }
    }

    /// Classifies (and empties) the calling thread's OpenSSL error queue, after SSL_accept failed.
    public static func fromErrorQueue(host: String) -> ClientHandshakeFailure {
        ClientHandshakeFailure(host: host, openSSLErrors: OpenSSLErrorQueue.drainCodes())
    }

    public var description: String {
        switch cause {
        case .clientDoesNotTrustCA:
            return "the client does not trust Countersign's CA for \(host); see `countersign ca show`"
        case .clientRejectsValidity:
            return "the client rejected Countersign's certificate for \(host) as expired or not yet valid; "
                + "check the clocks of the client and of Countersign"
        case .other(let reasons):
            return "the TLS handshake with the client for \(host) failed: \(reasons)"
        }
    }

    /// Alerts a client sends when it cannot build a trusted path to the certificate.
    private static let distrustAlerts: Set<Int32> = [
        SSL_R_TLSV1_ALERT_UNKNOWN_CA,
        SSL_R_SSLV3_ALERT_BAD_CERTIFICATE,
        SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN,
    ]
}
