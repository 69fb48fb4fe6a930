/// A host and port as they appear in an authority, with the host lower-cased and IPv6
/// literals kept without brackets.
public struct Authority: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public var isIPv6Literal: Bool {
        host.utf8.withContiguousStorageIfAvailable { $0.contains(UInt8(ascii: ":")) } ?? host.utf8.contains(UInt8(ascii: ":"))
    }

    /// `host:port` with IPv6 literals bracketed, as in a `Host` field or a CONNECT target.
    public var description: String { spelled(withPort: true) }

    /// The `Host` field value: the port is left out when it is the scheme's default.
    public func hostField(defaultPort: UInt16) -> String { spelled(withPort: port != defaultPort) }

    /// Written into one string's storage: this runs for every forwarded request, where
    /// interpolation cost ~1,000 instructions.
    private func spelled(withPort: Bool) -> String {
        let bracketed = isIPv6Literal
        if !bracketed && !withPort { return host }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0)
        var digitCount = 0
        if withPort {
            withUnsafeMutableBytes(of: &digits) { buffer in
                var value = Int(port)
                repeat {
                    buffer[4 - digitCount] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                    digitCount += 1
                } while value > 0
            }
        }
        var host = host
        return host.withUTF8 { name in
            let length = name.count + (bracketed ? 2 : 0) + (withPort ? 1 + digitCount : 0)
            return String(unsafeUninitializedCapacity: length) { out in
                var at = 0
                if bracketed { out[at] = UInt8(ascii: "["); at += 1 }
                for byte in name { out[at] = byte; at += 1 }
                if bracketed { out[at] = UInt8(ascii: "]"); at += 1 }
                if withPort {
                    out[at] = UInt8(ascii: ":")
                    at += 1
                    withUnsafeBytes(of: digits) { buffer in
                        for byte in buffer[(5 - digitCount)...] { out[at] = byte; at += 1 }
                    }
                }
                return at
            }
        }
    }

    /// Parses `host[:port]` (RFC 3986 authority without userinfo).
    public static func parse(_ text: Substring, defaultPort: UInt16?) throws -> Authority {
        var copy = String(text)
        return try copy.withUTF8 { try parse(bytes: UnsafeRawBufferPointer($0)[...], defaultPort: defaultPort) }
    }

    /// The same over bytes: this runs for every request, so no Character (grapheme) walking,
    /// and a reg-name is checked and lower-cased in the pass that copies it.
    static func parse(bytes text: Slice<UnsafeRawBufferPointer>, defaultPort: UInt16?) throws -> Authority {
        try parse(bytes: UnsafeRawBufferPointer(rebasing: text), defaultPort: defaultPort)
    }

    /// Offsets into a buffer, not a slice's indices: the slice's generic index walk was not
    /// specialized and cost more than the rest of the parse.
    private static func parse(bytes text: UnsafeRawBufferPointer, defaultPort: UInt16?) throws -> Authority {
        guard !text.isEmpty else { throw HTTPParseError(.badTarget, "empty host") }
        // One walk finds both: whether userinfo is there and where the port begins.
        var lastColon: Int?
        for index in 0..<text.count {
            switch text[index] {
            case UInt8(ascii: "@"): throw HTTPParseError(.badTarget, "userinfo in the request target is not allowed")
            case UInt8(ascii: ":"): lastColon = index
            default: continue
            }
        }
        let isRegName = text[0] != UInt8(ascii: "[")
        var hostPart: Range<Int>
        var portPart: Range<Int>?
        if !isRegName {
            guard let close = text.firstIndex(of: UInt8(ascii: "]")) else { throw HTTPParseError(.badTarget, "unterminated IPv6 literal") }
            hostPart = 1..<close
            if close + 1 < text.count {
                guard text[close + 1] == UInt8(ascii: ":") else { throw HTTPParseError(.badTarget, "garbage after IPv6 literal") }
                portPart = (close + 2)..<text.count
            }
            guard IPLiteral.isIPv6(String(decoding: text[hostPart], as: UTF8.self)) else { throw HTTPParseError(.badTarget, "invalid IPv6 literal") }
        } else if let colon = lastColon {
            hostPart = 0..<colon
            portPart = (colon + 1)..<text.count
        } else {
            hostPart = 0..<text.count
        }
        let port: UInt16
        if let portPart {
            var value = 0
            for index in portPart {
                let byte = text[index]
                guard CharacterClass.isDigit(byte), value < 10_000 else {
                    value = -1
                    break
                }
                value = value * 10 + Int(byte - 0x30)
            }
            guard value > 0, value <= 65535, !portPart.isEmpty, portPart.count <= 5 else {
                // A bad host name is the error a reg-name with a bad port gets first.
                throw HTTPParseError(.badTarget, isRegName && !isValidRegName(text[hostPart]) ? "invalid host name" : "invalid port")
            }
            port = UInt16(value)
        } else if let defaultPort {
            port = defaultPort
        } else {
            throw HTTPParseError(.badTarget, isRegName && !isValidRegName(text[hostPart]) ? "invalid host name" : "a port is required")
        }
        // Written straight into the string's storage, lower-cased and (a reg-name) checked on
        // the way: decoding a lazy map went through the generic non-contiguous path.
        var valid = !hostPart.isEmpty
        let host = String(unsafeUninitializedCapacity: hostPart.count) { buffer in
            var offset = 0
            for index in hostPart {
                let byte = text[index]
                if isRegName && !isRegNameChar(byte) { valid = false }
                buffer[offset] = ASCIICase.lower(byte)
                offset += 1
            }
            return offset
        }
        guard valid else { throw HTTPParseError(.badTarget, "invalid host name") }
        return Authority(host: host, port: port)
    }

    private static func isValidRegName(_ bytes: Slice<UnsafeRawBufferPointer>) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy(isRegNameChar)
    }

    private static func isRegNameChar(_ byte: UInt8) -> Bool {
        // unreserved / pct-encoded / sub-delims (RFC 3986 §3.2.2)
        if CharacterClass.isAlnum(byte) { return true }
        switch byte {
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "%"),
             UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
             UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
             UInt8(ascii: "="):
            return true
        default:
            return false
        }
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

    public static func parse(_ target: String, method: String) throws -> RequestTarget {
        var bytes = target
        return try bytes.withUTF8 { try parse(bytes: UnsafeRawBufferPointer($0), target: target, method: method) }
    }

    private static func parse(bytes: UnsafeRawBufferPointer, target: String, method: String) throws -> RequestTarget {
        if method == "CONNECT" {
            return .authority(try Authority.parse(bytes: bytes[...], defaultPort: nil))
        }
        // A fragment is for the user agent alone (RFC 9112 §3.2): never on the wire.
        if bytes.contains(UInt8(ascii: "#")) { throw HTTPParseError(.badTarget, "fragment in the request target") }
        if bytes.first == UInt8(ascii: "/") { return .origin(path: target) }
        if bytes.count == 1 && bytes[0] == UInt8(ascii: "*") {
            guard method == "OPTIONS" else { throw HTTPParseError(.badTarget, "asterisk-form is only for OPTIONS") }
            return .asterisk
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon + 2 < bytes.count,
              bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else {
            throw HTTPParseError(.badTarget, "request target is neither a path nor an absolute URI")
        }
        let schemeBytes = bytes[..<colon]
        // Compared as bytes: the scheme becomes a String only for the error message.
        guard let scheme = URIScheme(spelled: UnsafeRawBufferPointer(rebasing: schemeBytes)) else {
            let schemeText = String(decoding: schemeBytes.lazy.map(ASCIICase.lower), as: UTF8.self)
            throw HTTPParseError(.badTarget, "unsupported URI scheme \"\(schemeText)\"")
        }
        let rest = bytes[(colon + 3)...]
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
        let authority = try Authority.parse(bytes: rest[..<authorityEnd], defaultPort: scheme.defaultPort)
        let path = bytes[authorityEnd...]
        if path.isEmpty { return .absolute(scheme: scheme, authority: authority, path: "/") }
        let pathText = String(decoding: path, as: UTF8.self)
        return .absolute(scheme: scheme, authority: authority, path: path.first == UInt8(ascii: "?") ? "/" + pathText : pathText)
    }
}

public enum URIScheme: String, Sendable, CaseIterable {
    case http, https

    public var defaultPort: UInt16 { self == .http ? 80 : 443 }

    /// The scheme `bytes` spell in any case (`http` or `https`); a byte compare, where
    /// matching each case's name through a closure cost ~250 instructions per request.
    init?(spelled bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 4 || bytes.count == 5, ASCIICase.lower(bytes[0]) == UInt8(ascii: "h"),
              ASCIICase.lower(bytes[1]) == UInt8(ascii: "t"), ASCIICase.lower(bytes[2]) == UInt8(ascii: "t"),
              ASCIICase.lower(bytes[3]) == UInt8(ascii: "p") else { return nil }
        if bytes.count == 4 {
            self = .http
        } else if ASCIICase.lower(bytes[4]) == UInt8(ascii: "s") {
            self = .https
        } else {
            return nil
        }
    }
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
        guard text.utf8.contains(UInt8(ascii: ":")), text.utf8.count <= 45 else { return false }
        return text.utf8.allSatisfy { byte in
            CharacterClass.isDigit(byte) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46)
                || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
        }
    }
}
