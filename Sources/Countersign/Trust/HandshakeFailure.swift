import COpenSSL
import CountersignSupport

/// Turns a failed TLS handshake (SSL_get_error plus the OpenSSL reason codes) into a
/// sentence about the upstream a person can act on.
enum HandshakeFailure {
    static func describe(sslError: Int32, errors: [OpenSSLErrorQueue.Entry], identityConfigured: Bool,
                         minimumVersion: String = "1.2") -> String {
        for error in errors where error.library == ERR_LIB_SSL {
            if let sentence = sentence(for: error.reason, identityConfigured: identityConfigured, minimumVersion: minimumVersion) { return sentence }
        }
        switch sslError {
        case SSL_ERROR_SYSCALL, SSL_ERROR_ZERO_RETURN:
            return "the upstream closed the connection during the TLS handshake"
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return "the TLS handshake did not finish (the upstream stopped answering)"
        default:
            let texts = errors.map(\.text)
            return texts.isEmpty ? "the TLS handshake failed" : "the TLS handshake failed: \(texts.joined(separator: "; "))"
        }
    }

    private static func sentence(for reason: Int32, identityConfigured: Bool, minimumVersion: String) -> String? {
        switch reason {
        case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
            return identityConfigured
                ? "the upstream requires a client certificate and did not accept the configured identity"
                : "the upstream requires a client certificate and none is configured (set identity for this host)"
        case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE, SSL_R_TLSV1_ALERT_UNKNOWN_CA, SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN,
             SSL_R_TLSV1_ALERT_ACCESS_DENIED, SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
            return identityConfigured
                ? "the upstream rejected the client certificate (is it issued by a CA the upstream trusts, and still valid?)"
                : "the upstream requires a client certificate and none is configured (set identity for this host)"
        case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
            return identityConfigured
                ? "the upstream refused the handshake: no shared cipher or signature algorithm, or it rejected the client certificate"
                : "the upstream refused the handshake: no shared cipher or signature algorithm, or it requires a client certificate"
        case SSL_R_NO_SHARED_CIPHER:
            return "no shared cipher with the upstream"
        case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION, SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_NO_PROTOCOLS_AVAILABLE:
            return minimumVersion == "1.3"
                ? "no shared protocol version with the upstream: min_tls_version is 1.3 and the upstream offers only older versions"
                : "no shared protocol version with the upstream (Countersign offers TLS 1.2 and 1.3)"
        case SSL_R_WRONG_VERSION_NUMBER, SSL_R_PACKET_LENGTH_TOO_LONG, SSL_R_RECORD_LENGTH_MISMATCH:
            return "the upstream did not answer with TLS (is it a plain HTTP port?)"
        case SSL_R_UNEXPECTED_EOF_WHILE_READING:
            return "the upstream closed the connection during the TLS handshake"
        case SSL_R_TLSV1_UNRECOGNIZED_NAME:
            return "the upstream does not serve the requested server name (SNI)"
        case SSL_R_NO_APPLICATION_PROTOCOL, SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL:
            return "the upstream speaks neither HTTP/1.1 nor HTTP/2 (ALPN)"
        default:
            return nil
        }
    }
}
