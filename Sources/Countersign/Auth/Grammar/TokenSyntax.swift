/// Character classes of RFC 9110 §5.6: tchar, token68 characters, whitespace, quoted-string text.
enum TokenSyntax {
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let comma = UInt8(ascii: ",")
    static let equals = UInt8(ascii: "=")
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")

    static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    static func isDigitOrAlpha(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
    }

    /// tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
    static func isTokenChar(_ byte: UInt8) -> Bool {
        if isDigitOrAlpha(byte) { return true }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    static func isToken68Char(_ byte: UInt8) -> Bool {
        if isDigitOrAlpha(byte) { return true }
        switch byte {
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    /// qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
    static func isQuotedText(_ byte: UInt8) -> Bool {
        byte == tab || byte == space || byte == 0x21 || (byte >= 0x23 && byte <= 0x5b)
            || (byte >= 0x5d && byte <= 0x7e) || byte >= 0x80
    }

    /// What may follow a backslash in a quoted-pair: HTAB / SP / VCHAR / obs-text.
    static func isQuotablePairChar(_ byte: UInt8) -> Bool {
        byte == tab || byte == space || (byte >= 0x21 && byte <= 0x7e) || byte >= 0x80
    }

    /// ASCII lowercase; text that has no capital letter (host names, mostly) is returned as it is.
    static func lowercased(_ text: String) -> String {
        let isCapital = { (byte: UInt8) in byte >= 0x41 && byte <= 0x5a }
        guard text.utf8.contains(where: isCapital) else { return text }
        return String(decoding: text.utf8.map { isCapital($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    static func equalsIgnoringCase(_ a: String, _ b: String) -> Bool {
        lowercased(a) == lowercased(b)
    }

    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenChar)
    }

    /// Where the list element `start` is in ends: the next comma outside a quoted string
    /// (RFC 9110 §5.6.1), at least one byte on when not at the end. The challenge scanner and
    /// the `Authentication-Info` reader both skip what they cannot read this way.
    static func listElementEnd<Bytes: RandomAccessCollection>(in bytes: Bytes, from start: Int) -> Int
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var cursor = start
        var inQuotes = false
        while cursor < bytes.endIndex {
            let byte = bytes[cursor]
            if inQuotes {
                if byte == backslash { cursor += 1 } else if byte == quote { inQuotes = false }
            } else if byte == quote {
                inQuotes = true
            } else if byte == comma {
                break
            }
            cursor += 1
        }
        cursor = min(cursor, bytes.endIndex)
        return cursor == start && cursor < bytes.endIndex ? cursor + 1 : cursor
    }
}
