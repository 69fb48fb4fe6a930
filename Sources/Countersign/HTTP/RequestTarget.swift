/// A host and port as they appear in an authority, with the host lower-cased and IPv6
/// literals kept without brackets.
public struct Authority: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public var isIPv6Literal: Bool { host.contains(":") }

    /// `host:port` with IPv6 literals bracketed, as in a `Host` field or a CONNECT target.
    public var description: String {
        isIPv6Literal ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The `Host` field value: the port is left out when it is the scheme's default.
    public func hostField(defaultPort: UInt16) -> String {
        let bracketed = isIPv6Literal ? "[\(host)]" : host
        return port == defaultPort ? bracketed : "\(bracketed):\(port)"
    }

    /// Parses `host[:port]` (RFC 3986 authority without userinfo).
    public static func parse(_ text: Substring, defaultPort: UInt16?) throws -> Authority {
        guard !text.isEmpty else { throw HTTPParseError(.badTarget, "empty host") }
        guard !text.contains("@") else {
            throw HTTPParseError(.badTarget, "userinfo in the request target is not allowed")
        }
        var hostPart: Substring
        var portPart: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw HTTPParseError(.badTarget, "unterminated IPv6 literal") }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw HTTPParseError(.badTarget, "garbage after IPv6 literal") }
                portPart = rest.dropFirst()
            }
            guard IPLiteral.isIPv6(hostPart) else { throw HTTPParseError(.badTarget, "invalid IPv6 literal") }
        } else {
            if let colon = text.lastIndex(of: ":") {
                hostPart = text[..<colon]
                portPart = text[text.index(after: colon)...]
            } else {
                hostPart = text
            }
            guard !hostPart.isEmpty, hostPart.utf8.allSatisfy(isRegNameChar) else {
                throw HTTPParseError(.badTarget, "invalid host name")
            }
        }
        let port: UInt16
        if let portPart {
            guard !portPart.isEmpty, portPart.count <= 5, portPart.utf8.allSatisfy(CharacterClass.isDigit),
                  let value = UInt16(portPart), value != 0 else {
                throw HTTPParseError(.badTarget, "invalid port")
            }
            port = value
        } else if let defaultPort {
            port = defaultPort
        } else {
            throw HTTPParseError(.badTarget, "a port is required")
        }
        return Authority(host: ASCIICase.lowercased(hostPart), port: port)
    }

    private static func isRegNameChar(_ byte: UInt8) -> Bool {
        // unreserved / pct-encoded / sub-delims (RFC 3986 §3.2.2)
        CharacterClass.isAlnum(byte) || "-._~%!$&'()*+,;=".utf8.contains(byte)
    }
}

/// The three request-target forms a forward proxy sees (RFC 9112 §3.2).
public enum RequestTarget: Equatable, Sendable {
    /// `/path?query` — gateway listeners and requests inside an intercepted tunnel.
    case origin(path: String)
    /// `http://host:port/path` — a forward proxy request.
    case absolute(scheme: URIScheme, authority: Authority, path: String)
    /// `host:port` — CONNECT only.
    case authority(Authority)
    /// `*` — server-wide OPTIONS.
    case asterisk

    private static func endsAuthority(_ character: Character) -> Bool {
        character == "/" || character == "?" || character == "#"
    }

    public static func parse(_ target: String, method: String) throws -> RequestTarget {
        if method == "CONNECT" {
            return .authority(try Authority.parse(Substring(target), defaultPort: nil))
        }
        // A fragment is for the user agent alone (RFC 9112 §3.2): never on the wire.
        if target.contains("#") { throw HTTPParseError(.badTarget, "fragment in the request target") }
        if target.hasPrefix("/") { return .origin(path: target) }
        if target == "*" {
            guard method == "OPTIONS" else { throw HTTPParseError(.badTarget, "asterisk-form is only for OPTIONS") }
            return .asterisk
        }
        guard let colon = target.firstIndex(of: ":"), target[colon...].hasPrefix("://") else {
            throw HTTPParseError(.badTarget, "request target is neither a path nor an absolute URI")
        }
        let schemeText = ASCIICase.lowercased(target[..<colon])
        guard let scheme = URIScheme(rawValue: schemeText) else {
            throw HTTPParseError(.badTarget, "unsupported URI scheme \"\(schemeText)\"")
        }
        let rest = target[target.index(colon, offsetBy: 3)...]
        let authorityEnd = rest.firstIndex(where: Self.endsAuthority) ?? rest.endIndex
        let authority = try Authority.parse(rest[..<authorityEnd], defaultPort: scheme.defaultPort)
        var path = String(rest[authorityEnd...])
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        return .absolute(scheme: scheme, authority: authority, path: path)
    }
}

public enum URIScheme: String, Sendable {
    case http, https

    public var defaultPort: UInt16 { self == .http ? 80 : 443 }
}

public enum IPLiteral {
    public static func isIPv4(_ text: some StringProtocol) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.utf8.allSatisfy(CharacterClass.isDigit) && (Int(part) ?? 256) <= 255
        }
    }

    /// A permissive syntactic check; the resolver has the final word.
    public static func isIPv6(_ text: some StringProtocol) -> Bool {
        guard text.contains(":"), text.count <= 45 else { return false }
        return text.utf8.allSatisfy { byte in
            CharacterClass.isDigit(byte) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46)
                || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
        }
    }
}
