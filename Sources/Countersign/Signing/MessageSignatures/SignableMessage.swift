import CountersignHTTP

/// What RFC 9421 reads of a request: its method, the parts of its target URI as sent, and its
/// field lines in order. The proxy fills it from the head it is about to send.
public struct SignableRequest: Sendable {
    public var method: String
    public var scheme: String
    /// `host[:port]` as the request names it (the `Host` / `:authority` value).
    public var authority: String
    /// The path as sent, percent-encoding untouched; empty means `/`.
    public var path: String
    /// The query without its `?`, as sent; nil when the target has none.
    public var query: String?
    public var fields: [(name: String, value: String)]

    public init(method: String, scheme: String, authority: String, path: String, query: String?, fields: [(name: String, value: String)]) {
        self.method = method
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.query = query
        self.fields = fields
    }

    /// Splits an origin-form target (`/foo?bar`) into path and query.
    public init(method: String, scheme: String, authority: String, target: String, fields: [(name: String, value: String)]) {
        if let question = target.firstIndex(of: "?") {
            self.init(method: method, scheme: scheme, authority: authority, path: String(target[..<question]),
                      query: String(target[target.index(after: question)...]), fields: fields)
        } else {
            self.init(method: method, scheme: scheme, authority: authority, path: target, query: nil, fields: fields)
        }
    }
}

/// What RFC 9421 reads of a response; `request` answers components marked `req`.
public struct SignableResponse: Sendable {
    public var status: Int
    public var fields: [(name: String, value: String)]
    public var request: SignableRequest?

    public init(status: Int, fields: [(name: String, value: String)], request: SignableRequest?) {
        self.status = status
        self.fields = fields
        self.request = request
    }
}

/// Either message, as the base builder sees it.
public enum SignableMessage: Sendable {
    case request(SignableRequest)
    case response(SignableResponse)

    var fields: [(name: String, value: String)] {
        switch self {
        case .request(let request): return request.fields
        case .response(let response): return response.fields
        }
    }

    /// The field lines named `name` (case-insensitively), in order.
    func fieldLines(_ name: String) -> [String] {
        // Compared without lower-casing a copy of every name: this runs per covered field.
        fields.compactMap { ASCIICase.equal($0.name, name) ? $0.value : nil }
    }
}
