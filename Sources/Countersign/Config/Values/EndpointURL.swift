/// An `http` or `https` URL naming an upstream: a gateway's `upstream`, `parent_proxy.url`,
/// an OAuth2 `token_url`.
public struct EndpointURL: Sendable, Hashable, CustomStringConvertible {
    public var scheme: String
    /// Lower-cased; IPv6 literals without brackets.
    public var host: String
    public var port: UInt16
    /// The path and query, at least "/".
    public var path: String

    public init(scheme: String, host: String, port: UInt16, path: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
    }

    public init(parsing text: String) throws {
        guard let separator = text.firstRange(of: "://") else {
            throw ValueError("\"\(text)\" is not a URL; write it like \"https://api.example.com\"")
        }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw ValueError("\"\(text)\" uses the scheme \"\(scheme)\"; only http and https are supported")
        }
        var rest = text[separator.upperBound...]
        if let hash = rest.firstIndex(of: "#") {
            guard rest[hash...].count == 1 else {
                throw ValueError("\"\(text)\" has a fragment (#...), which is never sent to a server; remove it")
            }
            rest = rest[..<hash]
        }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = String(rest[..<authorityEnd])
        var path = String(rest[authorityEnd...])
        if authority.contains("@") {
            throw ValueError("\"\(URLRedaction.redactUserinfo(text))\" contains a user name or password; credentials belong in `credentials`, never in a URL")
        }
        guard !authority.isEmpty, let (host, portText) = HostName.splitHostPort(authority) else {
            throw ValueError("\"\(text)\" has a bad host; IPv6 addresses go in brackets, e.g. \"https://[::1]:8443\"")
        }
        if host.contains(":") && !authority.hasPrefix("[") {
            throw ValueError("\"\(text)\": put IPv6 addresses in brackets, e.g. \"https://[::1]:8443\"")
        }
        if authority.hasPrefix("[") {
            guard case .v6? = IPAddress(host) else { throw ValueError("\"\(text)\": only IPv6 addresses go in brackets") }
        } else if IPAddress(host) == nil && !HostName.isValidDNSName(host) {
            throw ValueError("\"\(text)\" has a bad host \"\(host)\"")
        }
        var port: UInt16 = scheme == "https" ? 443 : 80
        if let portText {
            guard let parsed = HostName.parsePort(portText, allowZero: false) else {
                throw ValueError("\"\(text)\" has a bad port \"\(portText)\"; ports are 1 to 65535")
            }
            port = parsed
        }
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        self.init(scheme: scheme, host: HostName.normalize(host), port: port, path: path)
    }

    public var usesTLS: Bool { scheme == "https" }

    /// `host` or `host:port` when the port is not the scheme's default, with IPv6 in brackets,
    /// as a `Host` header or `CONNECT` target wants it.
    public var authority: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        let defaultPort: UInt16 = usesTLS ? 443 : 80
        return port == defaultPort ? host : "\(host):\(port)"
    }

    public var description: String { "\(scheme)://\(authority)\(path)" }
}

/// Keeps a password typed into a URL out of the error that reports it.
enum URLRedaction {
    static func redactUserinfo(_ text: String) -> String {
        guard let separator = text.firstRange(of: "://"),
              let at = text[separator.upperBound...].firstIndex(of: "@") else { return text }
        return String(text[..<separator.upperBound]) + "<redacted>" + String(text[at...])
    }
}
