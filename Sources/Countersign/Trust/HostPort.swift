/// "host", "host:port", "[v6]:port" or a bare IPv6 literal, as the `pin` command takes it.
public struct HostPort: Equatable, Sendable {
    public let host: String
    public let port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public init(parsing text: String, defaultPort: UInt16 = 443) throws {
        func port(_ digits: Substring) throws -> UInt16 {
            guard let value = UInt16(digits), value > 0 else { throw TrustError("\"\(text)\" has an invalid port") }
            return value
        }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw TrustError("\"\(text)\" is missing ']'") }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty {
                self.port = defaultPort
            } else {
                guard rest.first == ":" else { throw TrustError("\"\(text)\" has text after ']' that is not :PORT") }
                self.port = try port(rest.dropFirst())
            }
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            host = String(text[..<colon])
            self.port = try port(text[text.index(after: colon)...])
        } else {
            host = text
            self.port = defaultPort
        }
        guard !host.isEmpty else { throw TrustError("\"\(text)\" names no host") }
    }

    /// The `hosts` key for this upstream: the host alone on 443, else host:port.
    public var configKey: String {
        if port == 443 { return host }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
