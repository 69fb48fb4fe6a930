import CountersignSupport

/// Percent-encoding (RFC 3986 §2.1) for every URI part the signing code writes or reads back:
/// placeholders resolved into a target, injected query parameters, RFC 9421's `@query-param`,
/// and SigV4's canonical paths and queries. Upper-case hex, as both RFCs and AWS want.
enum PercentEncoding {
    /// What is written as it is; every other byte of the UTF-8 becomes `%XX`.
    enum Kept {
        /// RFC 3986 unreserved: `A-Z a-z 0-9 - . _ ~`.
        case unreserved
        /// The same and `/` (a path's segments stay apart).
        case unreservedAndSlash
        /// The application/x-www-form-urlencoded percent-encode set left out: `A-Z a-z 0-9 * - . _`
        /// (RFC 9421 §2.2.8 re-encodes query parameters with it).
        case formSafe

        func keeps(_ byte: UInt8) -> Bool {
            let alphanumeric = (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            switch self {
            case .unreserved: return alphanumeric || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            case .unreservedAndSlash: return Kept.unreserved.keeps(byte) || byte == 0x2F
            case .formSafe: return alphanumeric || byte == 0x2A || byte == 0x2D || byte == 0x2E || byte == 0x5F
            }
        }
    }

    static func append<Bytes: Sequence>(_ bytes: Bytes, keeping kept: Kept = .unreserved, to out: inout [UInt8]) where Bytes.Element == UInt8 {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        for byte in bytes {
            if kept.keeps(byte) {
                out.append(byte)
            } else {
                out += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
    }

    static func encode<Bytes: Sequence>(_ bytes: Bytes, keeping kept: Kept = .unreserved) -> [UInt8] where Bytes.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount)
        append(bytes, keeping: kept, to: &out)
        return out
    }

    static func string<Bytes: Sequence>(_ bytes: Bytes, keeping kept: Kept = .unreserved) -> String where Bytes.Element == UInt8 {
        String(decoding: encode(bytes, keeping: kept), as: UTF8.self)
    }

    /// Undoes `%XX`; a `%` not followed by two hex digits stays a literal `%`. With
    /// `plusIsSpace` (a form, not a URI) `+` is a space too.
    static func decode(_ text: Substring, plusIsSpace: Bool = false) -> [UInt8] {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x25, index + 2 < bytes.count, let high = Hex.digitValue(bytes[index + 1]), let low = Hex.digitValue(bytes[index + 2]) {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(plusIsSpace && bytes[index] == 0x2B ? 0x20 : bytes[index])
                index += 1
            }
        }
        return out
    }
}
