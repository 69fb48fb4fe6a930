/// An IPv4 or IPv6 address as bytes in network order.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4([UInt8])
    case v6([UInt8])

    /// Parses dotted-quad IPv4 and RFC 4291 IPv6 text (`::`, an embedded IPv4 tail, optional
    /// brackets). Zone identifiers (`fe80::1%eth0`) are not accepted.
    public init?(_ text: String) {
        var body = Substring(text)
        if body.hasPrefix("[") && body.hasSuffix("]") { body = body.dropFirst().dropLast() }
        if let bytes = IPAddress.parseV4(body) {
            self = .v4(bytes)
        } else if let bytes = IPAddress.parseV6(body) {
            self = .v6(bytes)
        } else {
            return nil
        }
    }

    public var bytes: [UInt8] {
        switch self {
        case .v4(let bytes), .v6(let bytes): return bytes
        }
    }

    /// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`), or self for IPv4.
    public var unmappedV4: IPAddress? {
        switch self {
        case .v4: return self
        case .v6(let bytes):
            guard bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return nil }
            return .v4(Array(bytes[12..<16]))
        }
    }

    /// IPv4 dotted quad; IPv6 in RFC 5952 canonical form (lower case, longest zero run as `::`).
    public var description: String {
        switch self {
        case .v4(let b):
            return b.map(String.init).joined(separator: ".")
        case .v6(let b):
            let groups = (0..<8).map { Int(b[2 * $0]) << 8 | Int(b[2 * $0 + 1]) }
            var bestStart = -1, bestLength = 0, runStart = -1
            for i in 0...8 {
                if i < 8 && groups[i] == 0 {
                    if runStart < 0 { runStart = i }
                } else if runStart >= 0 {
                    if i - runStart > bestLength { bestStart = runStart; bestLength = i - runStart }
                    runStart = -1
                }
            }
            let hex = groups.map { String($0, radix: 16) }
            guard bestLength >= 2 else { return hex.joined(separator: ":") }
            let head = hex[..<bestStart].joined(separator: ":")
            let tail = hex[(bestStart + bestLength)...].joined(separator: ":")
            return head + "::" + tail
        }
    }

    private static func parseV4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            // Leading zeros are refused: some resolvers read them as octal.
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                  part == "0" || !part.hasPrefix("0"), let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    private static func parseV6(_ text: Substring) -> [UInt8]? {
        guard text.contains(":"), !text.contains("%") else { return nil }
        let halves = text.splitAtDoubleColons()
        guard halves.count <= 2 else { return nil }
        guard let head = groups(halves[0]) else { return nil }
        if halves.count == 1 {
            return head.count == 16 ? head : nil
        }
        guard let tail = groups(halves[1]), head.count + tail.count <= 14 else { return nil }
        return head + Array(repeating: 0, count: 16 - head.count - tail.count) + tail
    }

    /// Bytes of colon-separated hex groups, the last of which may be a dotted IPv4 address.
    private static func groups(_ text: Substring) -> [UInt8]? {
        if text.isEmpty { return [] }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        var bytes: [UInt8] = []
        for (i, part) in parts.enumerated() {
            if i == parts.count - 1, part.contains(".") {
                guard let v4 = parseV4(part) else { return nil }
                bytes += v4
            } else {
                guard (1...4).contains(part.count), part.allSatisfy(\.isHexDigit),
                      let value = UInt16(part, radix: 16) else { return nil }
                bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
            }
        }
        return bytes
    }
}

private extension Substring {
    /// Splits at `::` (at most meaningful once in an IPv6 address).
    func splitAtDoubleColons() -> [Substring] {
        var parts: [Substring] = []
        var rest = self[...]
        while let range = rest.firstRange(of: "::") {
            parts.append(rest[..<range.lowerBound])
            rest = rest[range.upperBound...]
        }
        parts.append(rest)
        return parts
    }
}
