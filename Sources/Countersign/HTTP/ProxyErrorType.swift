/// The RFC 9209 §2.3 proxy error types Countersign answers with, each carrying the status
/// code it is sent with. `name` is the registered token written in `Proxy-Status`, the access
/// log and the metrics; the wire text never depends on anything but the case.
public enum ProxyErrorType: Hashable, Sendable, CustomStringConvertible {
    case dnsError
    case destinationUnavailable
    case destinationIPProhibited
    case destinationIPUnroutable
    case connectionRefused
    case connectionTerminated
    case connectionTimeout
    case connectionReadTimeout
    case connectionLimitReached
    case tlsProtocolError
    case tlsCertificateError
    /// The client's request was malformed or too large (400, 408, 413, 431, ...).
    case httpRequestError(status: Int)
    /// Policy refused the request: 403, 407 (proxy authentication), 421 (misdirected).
    case httpRequestDenied(status: Int)
    case httpResponseIncomplete
    case httpResponseHeaderSectionSize
    /// A response body over what may be held (a verified response over signed_body_bytes).
    case httpResponseBodySize
    case httpResponseTimeout
    case httpUpgradeFailed
    case httpProtocolError
    case proxyInternalError
    case proxyConfigurationError

    public var name: String {
        switch self {
        case .dnsError: return "dns_error"
        case .destinationUnavailable: return "destination_unavailable"
        case .destinationIPProhibited: return "destination_ip_prohibited"
        case .destinationIPUnroutable: return "destination_ip_unroutable"
        case .connectionRefused: return "connection_refused"
        case .connectionTerminated: return "connection_terminated"
        case .connectionTimeout: return "connection_timeout"
        case .connectionReadTimeout: return "connection_read_timeout"
        case .connectionLimitReached: return "connection_limit_reached"
        case .tlsProtocolError: return "tls_protocol_error"
        case .tlsCertificateError: return "tls_certificate_error"
        case .httpRequestError: return "http_request_error"
        case .httpRequestDenied: return "http_request_denied"
        case .httpResponseIncomplete: return "http_response_incomplete"
        case .httpResponseHeaderSectionSize: return "http_response_header_section_size"
        case .httpResponseBodySize: return "http_response_body_size"
        case .httpResponseTimeout: return "http_response_timeout"
        case .httpUpgradeFailed: return "http_upgrade_failed"
        case .httpProtocolError: return "http_protocol_error"
        case .proxyInternalError: return "proxy_internal_error"
        case .proxyConfigurationError: return "proxy_configuration_error"
        }
    }

    /// The status of the response that carries this error: 504 when waiting ran out, 403 for
    /// a prohibited destination, the request's own status for request errors and denials,
    /// 502 for everything the upstream side got wrong.
    public var status: Int {
        switch self {
        case .httpRequestError(let status), .httpRequestDenied(let status): return status
        case .destinationIPProhibited: return 403
        case .connectionTimeout, .httpResponseTimeout: return 504
        case .dnsError, .destinationUnavailable, .destinationIPUnroutable, .connectionRefused, .connectionTerminated,
             .connectionReadTimeout, .connectionLimitReached, .tlsProtocolError, .tlsCertificateError,
             .httpResponseIncomplete, .httpResponseHeaderSectionSize, .httpResponseBodySize, .httpUpgradeFailed, .httpProtocolError,
             .proxyInternalError, .proxyConfigurationError:
            return 502
        }
    }

    public var description: String { name }
}
