import CountersignHTTP

/// A response the proxy makes itself: a status, an RFC 9209 `Proxy-Status` error type
/// and details, and a one-line plain-text body a person can read.
struct ProxyError: Error, CustomStringConvertible {
    /// RFC 9209 §2.3 error type, e.g. `destination_unavailable`; it carries the status.
    var type: ProxyErrorType
    var details: String
    var extraHeaders: [(String, String)] = []
    /// The type's status unless this error says otherwise (a budget of ours that is spent is a
    /// `503` with `connection_limit_reached`, where an upstream's limit is a `502`).
    private let statusOverride: Int?
    var status: Int { statusOverride ?? type.status }

    init(_ type: ProxyErrorType, details: String, status: Int? = nil) {
        self.type = type
        self.details = details
        self.statusOverride = status
    }

    init(_ failure: Exchange.Failure) {
        self.init(failure.type, details: failure.details, status: failure.status)
    }

    /// The same error as the exchange machine's event.
    var failure: Exchange.Failure { Exchange.Failure(type, details: details, status: status) }

    var description: String { "\(type): \(details)" }

    static func badRequest(_ error: HTTPParseError) -> ProxyError {
        ProxyError(.httpRequestError(status: error.status), details: error.detail)
    }

    static func denied(_ details: String) -> ProxyError {
        ProxyError(.httpRequestDenied(status: 403), details: details)
    }

    /// The head and body to send. `close` adds `Connection: close`.
    func response(close: Bool, version: HTTPVersion = .http11) -> [UInt8] {
        let body = details.isEmpty ? ReasonPhrase.for(status) + "\n" : "\(ReasonPhrase.for(status)): \(details)\n"
        var headers = HeaderFields()
        headers.append("Proxy-Status", ProxyStatusField.value(type: type.name, details: details))
        for (name, value) in extraHeaders { headers.append(name, value) }
        headers.append("Content-Type", "text/plain; charset=utf-8")
        headers.append("Content-Length", String(body.utf8.count))
        if close { headers.append("Connection", "close") }
        var bytes = HeadSerializer.response(ResponseHead(version: version, status: status, reason: ReasonPhrase.for(status), headers: headers))
        bytes.append(contentsOf: body.utf8)
        return bytes
    }
}

enum ProxyStatusField {
    static let proxyName = "countersign"

    /// `countersign; error=type; details="..."` with the details as an sf-string.
    static func value(type: String, details: String) -> String {
        var value = "\(proxyName); error=\(type)"
        if !details.isEmpty { value += "; details=\(sfString(details))" }
        return value
    }

    /// `countersign; details="..."`: what the proxy did to a response it forwards (no error of its own).
    static func notice(details: String) -> String {
        "\(proxyName); details=\(sfString(details))"
    }

    /// An RFC 8941 sf-string: printable ASCII, with `"` and `\` escaped.
    static func sfString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: out += (scalar.value >= 0x20 && scalar.value < 0x7F) ? String(scalar) : "?"
            }
        }
        return out + "\""
    }
}

enum ReasonPhrase {
    static func `for`(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 400: return "Bad Request"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 407: return "Proxy Authentication Required"
        case 408: return "Request Timeout"
        case 421: return "Misdirected Request"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        default: return "Error"
        }
    }
}
