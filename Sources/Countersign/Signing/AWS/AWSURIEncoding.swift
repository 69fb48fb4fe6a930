/// SigV4's percent-encoding: RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`) as they
/// are, every other byte of the UTF-8 as `%XX` with upper-case hex. Paths keep their `/`.
enum AWSURIEncoding {
    static func isUnreserved(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
    }

    static func encode<Bytes: Sequence>(_ bytes: Bytes, keepingSlash: Bool = false) -> String where Bytes.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount)
        append(bytes, keepingSlash: keepingSlash, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func append<Bytes: Sequence>(_ bytes: Bytes, keepingSlash: Bool, to out: inout [UInt8]) where Bytes.Element == UInt8 {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        for byte in bytes {
            if isUnreserved(byte) || (keepingSlash && byte == 0x2F) {
                out.append(byte)
            } else {
                out.append(0x25)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
    }

    /// Undoes `%XX`; a `%` not followed by two hex digits stays a literal `%` (and is then
    /// encoded as `%25`), as AWS's own canonicalizers do. `+` stays `+`: SigV4 is not a form.
    static func decode(_ text: Substring) -> [UInt8] {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x25, index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }
}
