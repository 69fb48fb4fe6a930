import CountersignAdmin
import CountersignHTTP

/// The HTTP version a client spoke for an exchange: the access log's `protocol` field and the
/// `countersign_exchanges_total` label.
enum ClientProtocol {
    case http11
    /// One stream of an HTTP/2 connection, carried as an HTTP/1.1 exchange (`H2StreamBridge`).
    case http2

    var name: String {
        switch self {
        case .http11: return "HTTP/1.1"
        case .http2: return "HTTP/2.0"
        }
    }

    /// The version the client's requests were received in, when their translated HTTP/1.1 head
    /// does not say it (for `Via`).
    var receivedVersion: HTTPVersion? {
        switch self {
        case .http11: return nil
        case .http2: return .http2
        }
    }

    var exchanges: Counter {
        switch self {
        case .http11: return Metrics.shared.exchangesHTTP11
        case .http2: return Metrics.shared.exchangesHTTP2
        }
    }
}
