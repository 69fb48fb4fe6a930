/// Reads a keytab file (MIT format version 2, big-endian, as written by kadmin and ktutil) for
/// the principals it holds: `check` refuses a keytab without the configured principal. Key
/// bytes are skipped, never kept.
public struct KeytabFile: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        /// "svc@REALM" or "HTTP/host@REALM".
        public var principal: String
        public var keyVersion: UInt32
        public var encryptionType: UInt16
    }

    public var entries: [Entry]

    public struct FormatError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public init(bytes: [UInt8]) throws {
        var reader = Reader(bytes: bytes, offset: 0)
        let version = try reader.u16()
        guard version == 0x0502 else {
            throw FormatError(description: version == 0x0501
                ? "is a version 1 keytab (native byte order); write it again with ktutil or kadmin, which write version 2"
                : "is not a keytab (it starts with 0x\(String(version, radix: 16)), not 0x0502)")
        }
        entries = []
        while reader.remaining > 0 {
            let size = try reader.i32()
            guard size != Int32.min else { throw FormatError(description: "has an entry of impossible size") }
            guard size > 0 else {   // a hole left by a removed entry
                try reader.skip(Int(-size))
                continue
            }
            var entry = Reader(bytes: try reader.take(Int(size)), offset: 0)
            var components = Int(try entry.u16())
            let realm = try entry.string()
            var names: [String] = []
            while components > 0 {
                names.append(try entry.string())
                components -= 1
            }
            _ = try entry.u32()                 // name type
            _ = try entry.u32()                 // timestamp
            let shortVersion = try entry.u8()
            let encryptionType = try entry.u16()
            try entry.skip(Int(try entry.u16()))  // the key itself
            // A 32-bit key version follows when the 8-bit one overflowed (and is 0 when unused).
            var keyVersion = UInt32(shortVersion)
            if entry.remaining >= 4, case let long = try entry.u32(), long != 0 { keyVersion = long }
            entries.append(Entry(principal: names.joined(separator: "/") + "@" + realm, keyVersion: keyVersion,
                                 encryptionType: encryptionType))
        }
    }

    /// Whether the keytab holds keys for `principal` (compared as Kerberos does: exactly).
    public func holds(_ principal: String) -> Bool {
        entries.contains { $0.principal == principal }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset: Int
        var remaining: Int { bytes.count - offset }

        mutating func take(_ count: Int) throws -> [UInt8] {
            guard count >= 0, count <= remaining else { throw FormatError(description: "is truncated or damaged") }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }
        mutating func skip(_ count: Int) throws { _ = try take(count) }
        mutating func u8() throws -> UInt8 { try take(1)[0] }
        mutating func u16() throws -> UInt16 { try take(2).reduce(0) { $0 << 8 | UInt16($1) } }
        mutating func u32() throws -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
        mutating func i32() throws -> Int32 { Int32(bitPattern: try u32()) }
        mutating func string() throws -> String { String(decoding: try take(Int(try u16())), as: UTF8.self) }
    }
}
