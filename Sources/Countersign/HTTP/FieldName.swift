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
    /// length and first letter (most names a message carries are passed over there), then
    /// one comparison. Inlined: the parser asks it of every field it stores.
    @inline(__always) public init(_ name: UnsafeBufferPointer<UInt8>) {
        guard let first = name.first.map({ $0 | 0x20 }) else {
            self = .other
            return
        }
        let candidate: FieldName
        switch name.count {
        case 2 where first == UInt8(ascii: "t"): candidate = .te
        case 4 where first == UInt8(ascii: "h"): candidate = .host
        case 6 where first == UInt8(ascii: "e"): candidate = .expect
        case 7 where first == UInt8(ascii: "t"): candidate = .trailer
        case 7 where first == UInt8(ascii: "u"): candidate = .upgrade
        case 10 where first == UInt8(ascii: "c"): candidate = .connection
        case 10 where first == UInt8(ascii: "k"): candidate = .keepAlive
        case 13 where first == UInt8(ascii: "a"): candidate = .authorization
        case 14 where first == UInt8(ascii: "c"): candidate = .contentLength
        case 16 where first == UInt8(ascii: "p"): candidate = .proxyConnection
        case 16 where first == UInt8(ascii: "w"): candidate = .wwwAuthenticate
        case 17 where first == UInt8(ascii: "t"): candidate = .transferEncoding
        case 18 where first == UInt8(ascii: "p"): candidate = .proxyAuthenticate
        case 19 where first == UInt8(ascii: "p"): candidate = .proxyAuthorization
        case 19 where first == UInt8(ascii: "a"): candidate = .authenticationInfo
        case 25 where first == UInt8(ascii: "p"): candidate = .proxyAuthenticationInfo
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

    /// Whether `name` (already known to be as long, two bytes or more) is this name, ignoring
    /// ASCII case: eight bytes at a time, the last word overlapping the one before; a name
    /// shorter than a word as two overlapping halves or quarters put together in one word.
    @inline(never) private func isSpelled(by name: UnsafeBufferPointer<UInt8>) -> Bool {
        let expected = UnsafeRawPointer(spelling.utf8Start)
        let given = UnsafeRawPointer(name.baseAddress.unsafelyUnwrapped)
        let count = name.count
        guard count >= 8 else {
            return Self.word(Self.ends(given, count), spells: Self.ends(expected, count))
        }
        var offset = 0
        while true {
            guard Self.word(given.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
                            spells: expected.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) else { return false }
            if offset == count - 8 { return true }
            offset = min(offset + 8, count - 8)
        }
    }

    /// The first and the last four of `count` (2 to 7) bytes as one word, or below four the
    /// first and the last two, twice: every byte is in it, and no byte of it is filler.
    @inline(__always) private static func ends(_ bytes: UnsafeRawPointer, _ count: Int) -> UInt64 {
        guard count >= 4 else {
            let half = UInt64(bytes.loadUnaligned(as: UInt16.self)) | UInt64(bytes.loadUnaligned(fromByteOffset: count - 2, as: UInt16.self)) << 16
            return half | half << 32
        }
        return UInt64(bytes.loadUnaligned(as: UInt32.self)) | UInt64(bytes.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)) << 32
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
