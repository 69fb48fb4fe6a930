public struct HTTPVersion: Equatable, Sendable, CustomStringConvertible {
    public var major: Int
    public var minor: Int

    public static let http10 = HTTPVersion(major: 1, minor: 0)
    public static let http11 = HTTPVersion(major: 1, minor: 1)
    /// HTTP/2 (RFC 9113): never on a parsed line, only the version a message was received in
    /// before it was translated to HTTP/1.1.
    public static let http2 = HTTPVersion(major: 2, minor: 0)

    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    public var description: String { "HTTP/\(major).\(minor)" }
}

public struct RequestHead: Equatable, Sendable {
    public var method: String
    /// The target as text, made when asked: what forwards a request reads `targetText`'s bytes.
    public var target: String {
        get { targetText.string }
        set { targetText = RequestTargetText(newValue) }
    }
    public var targetText: RequestTargetText
    public var version: HTTPVersion
    public var headers: HeaderFields

    public init(method: String, target: String, version: HTTPVersion = .http11, headers: HeaderFields = HeaderFields()) {
        self.init(method: method, targetText: RequestTargetText(target), version: version, headers: headers)
    }

    init(method: String, targetText: RequestTargetText, version: HTTPVersion, headers: HeaderFields) {
        self.method = method
        self.targetText = targetText
        self.version = version
        self.headers = headers
    }

    /// Whether the client wants the connection kept open after this exchange (RFC 9112 §9.3).
    public var wantsKeepAlive: Bool {
        KeepAlive.persists(version: version, headers: headers)
    }
}

public struct ResponseHead: Equatable, Sendable {
    public var version: HTTPVersion
    public var status: Int
    public var reason: String
    public var headers: HeaderFields

    public init(version: HTTPVersion = .http11, status: Int, reason: String, headers: HeaderFields = HeaderFields()) {
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    public var isInterim: Bool { status >= 100 && status < 200 }

    public var allowsKeepAlive: Bool {
        KeepAlive.persists(version: version, headers: headers)
    }
}

enum KeepAlive {
    static func persists(version: HTTPVersion, headers: HeaderFields) -> Bool {
        if headers.connection.contains(.close) { return false }
        if version == .http10 { return headers.connection.contains(.keepAlive) }
        return version.major == 1 && version.minor >= 1
    }
}
