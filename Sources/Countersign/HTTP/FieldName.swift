/// The field names the proxy itself acts on (framing, routing, hop-by-hop, auth), recognised
/// once when a field is stored. A lookup of one of them compares a byte per field instead of
/// the name's bytes, and one for a field the section does not have costs a bit test: a
/// forwarded message asks some twenty such questions, most of them about absent fields.
public enum FieldName: UInt8, Sendable, CaseIterable {
    /// Any name not listed here.
    case other
    case host
    case contentLength
    case transferEncoding
    case connection
    case upgrade
    case expect
    case te
    case trailer
    case keepAlive
    case proxyConnection
    case proxyAuthenticate
    case proxyAuthorization
    case proxyAuthenticationInfo
    case authorization
    case wwwAuthenticate
    case authenticationInfo

    /// Which of these `name` is, ignoring ASCII case; `.other` for any other name. Picked by
    /// length and first letter, then one comparison.
    public init(_ name: UnsafeBufferPointer<UInt8>) {
        let candidate: FieldName
        switch name.count {
        case 2: candidate = .te
        case 4: candidate = .host
        case 6: candidate = .expect
        case 7: candidate = name[0] | 0x20 == UInt8(ascii: "t") ? .trailer : .upgrade
        case 10: candidate = name[0] | 0x20 == UInt8(ascii: "c") ? .connection : .keepAlive
        case 13: candidate = .authorization
        case 14: candidate = .contentLength
        case 16: candidate = name[0] | 0x20 == UInt8(ascii: "p") ? .proxyConnection : .wwwAuthenticate
        case 17: candidate = .transferEncoding
        case 18: candidate = .proxyAuthenticate
        case 19: candidate = name[0] | 0x20 == UInt8(ascii: "p") ? .proxyAuthorization : .authenticationInfo
        case 25: candidate = .proxyAuthenticationInfo
        default: candidate = .other
        }
        self = candidate != .other && candidate.isSpelled(by: name) ? candidate : .other
    }

    /// Which of these a name given as text is (a lookup's argument).
    public init(_ name: String) {
        if let known = name.utf8.withContiguousStorageIfAvailable({ FieldName($0) }) {
            self = known
            return
        }
        var name = name
        self = name.withUTF8 { FieldName($0) }
    }

    /// Whether `name` (already known to be as long) is this name, ignoring ASCII case: eight
    /// bytes at a time (the last word overlapping the one before), a byte at a time for the
    /// short names.
    private func isSpelled(by name: UnsafeBufferPointer<UInt8>) -> Bool {
        let expected = UnsafeRawPointer(spelling.utf8Start)
        let given = UnsafeRawPointer(name.baseAddress.unsafelyUnwrapped)
        let count = name.count
        guard count >= 8 else {
            for offset in 0..<count {
                let byte = given.load(fromByteOffset: offset, as: UInt8.self)
                guard byte | 0x20 == expected.load(fromByteOffset: offset, as: UInt8.self) | 0x20, byte > 0x20 else { return false }
            }
            return true
        }
        var offset = 0
        while true {
            guard Self.word(given.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
                            spells: expected.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) else { return false }
            if offset == count - 8 { return true }
            offset = min(offset + 8, count - 8)
        }
    }

    /// Eight bytes of a name against eight of a spelling (letters and `-`): equal with the case
    /// bit set in both, and where the spelling has `-` the byte has that bit itself (CR would
    /// fold onto `-`; no other byte folds onto a letter or `-` without being one).
    @inline(__always) private static func word(_ word: UInt64, spells expected: UInt64) -> Bool {
        let caseBits: UInt64 = 0x2020_2020_2020_2020
        let dashes = (~expected & 0x4040_4040_4040_4040) >> 1
        return word | caseBits == expected | caseBits && word & dashes == dashes
    }

    /// The name as the proxy writes it (`""` for `.other`).
    public var spelling: StaticString {
        switch self {
        case .other: ""
        case .host: "Host"
        case .contentLength: "Content-Length"
        case .transferEncoding: "Transfer-Encoding"
        case .connection: "Connection"
        case .upgrade: "Upgrade"
        case .expect: "Expect"
        case .te: "TE"
        case .trailer: "Trailer"
        case .keepAlive: "Keep-Alive"
        case .proxyConnection: "Proxy-Connection"
        case .proxyAuthenticate: "Proxy-Authenticate"
        case .proxyAuthorization: "Proxy-Authorization"
        case .proxyAuthenticationInfo: "Proxy-Authentication-Info"
        case .authorization: "Authorization"
        case .wwwAuthenticate: "WWW-Authenticate"
        case .authenticationInfo: "Authentication-Info"
        }
    }
}

/// A set of `FieldName`s as one word: the names a section holds, the names a rewrite edits.
public struct FieldNames: Equatable, Sendable {
    private var bits: UInt32

    public init() { bits = 0 }

    public init(_ names: FieldName...) {
        bits = 0
        for name in names { insert(name) }
    }

    @inline(__always) public func contains(_ name: FieldName) -> Bool { bits & (1 << name.rawValue) != 0 }
    @inline(__always) public mutating func insert(_ name: FieldName) { bits |= 1 << name.rawValue }
    @inline(__always) public func intersects(_ other: FieldNames) -> Bool { bits & other.bits != 0 }
}
