/// Little-endian reading and writing for NTLM messages, with bounds checked on every read.
struct NTLMReader {
    let bytes: [UInt8]

    func uint16(at offset: Int) -> UInt16? {
        guard offset >= 0, offset + 2 <= bytes.count else { return nil }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    func uint32(at offset: Int) -> UInt32? {
        guard let low = uint16(at: offset), let high = uint16(at: offset + 2) else { return nil }
        return UInt32(low) | UInt32(high) << 16
    }

    func slice(at offset: Int, count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset + count <= bytes.count else { return nil }
        return Array(bytes[offset..<(offset + count)])
    }

    /// A security buffer (length, allocated, offset) pointing into the same message.
    func securityBuffer(at offset: Int) -> [UInt8]? {
        guard let length = uint16(at: offset), let start = uint32(at: offset + 4) else { return nil }
        // An empty field's offset means nothing (some servers, e.g. Squid's helpers, leave
        // it pointing past the end).
        if length == 0 { return [] }
        return slice(at: Int(start), count: Int(length))
    }
}

extension Array where Element == UInt8 {
    mutating func appendLittleEndian(_ value: UInt16) {
        append(UInt8(value & 0xff))
        append(UInt8(value >> 8))
    }

    mutating func appendLittleEndian(_ value: UInt32) {
        appendLittleEndian(UInt16(value & 0xffff))
        appendLittleEndian(UInt16(value >> 16))
    }

    mutating func appendLittleEndian(_ value: UInt64) {
        appendLittleEndian(UInt32(value & 0xffff_ffff))
        appendLittleEndian(UInt32(value >> 32))
    }
}

enum NTLMText {
    static let signature: [UInt8] = Array("NTLMSSP".utf8) + [0]

    static func utf16LittleEndian(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        for unit in text.utf16 { out.appendLittleEndian(unit) }
        return out
    }

    static func decodeUTF16LittleEndian(_ bytes: [UInt8]) -> String {
        var units: [UInt16] = []
        var index = 0
        while index + 1 < bytes.count {
            units.append(UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8)
            index += 2
        }
        return String(decoding: units, as: UTF16.self)
    }

    /// Strings in the negotiated encoding: UTF-16LE with NEGOTIATE_UNICODE, else the OEM code page
    /// (sent as ASCII; non-ASCII characters become '?').
    static func encode(_ text: String, unicode: Bool) -> [UInt8] {
        unicode ? utf16LittleEndian(text) : text.unicodeScalars.map { $0.isASCII ? UInt8($0.value) : UInt8(ascii: "?") }
    }

    static func decode(_ bytes: [UInt8], unicode: Bool) -> String {
        unicode ? decodeUTF16LittleEndian(bytes) : String(decoding: bytes, as: UTF8.self)
    }
}
