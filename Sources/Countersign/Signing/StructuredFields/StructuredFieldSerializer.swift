import CountersignHTTP
import CountersignSupport

/// The serialization algorithms of RFC 9651 §4.1. Refuses what has no valid serialization (an
/// out-of-range number, a string with a control character, a bad key or token) rather than
/// writing something a strict reader would reject.
public enum StructuredFieldSerializer {
    public static func serialize(_ value: StructuredFieldValue) throws -> String {
        var out = ""
        switch value {
        case .item(let item): try append(item, to: &out)
        case .list(let list): try appendList(list, to: &out)
        case .dictionary(let dictionary): try appendDictionary(dictionary, to: &out)
        }
        return out
    }

    public static func serialize(_ item: StructuredItem) throws -> String { try serialize(StructuredFieldValue.item(item)) }
    public static func serialize(_ list: StructuredList) throws -> String { try serialize(StructuredFieldValue.list(list)) }
    public static func serialize(_ dictionary: StructuredDictionary) throws -> String { try serialize(StructuredFieldValue.dictionary(dictionary)) }

    public static func serialize(_ member: StructuredMember) throws -> String {
        var out = ""
        try append(member, to: &out)
        return out
    }

    static func appendList(_ list: StructuredList, to out: inout String) throws {
        for (index, member) in list.enumerated() {
            if index > 0 { out += ", " }
            try append(member, to: &out)
        }
    }

    static func appendDictionary(_ dictionary: StructuredDictionary, to out: inout String) throws {
        for (index, entry) in dictionary.entries.enumerated() {
            if index > 0 { out += ", " }
            try appendKey(entry.key, to: &out)
            if case .item(let item) = entry.value, item.bare == .boolean(true) {
                try appendParameters(item.parameters, to: &out)
            } else {
                out += "="
                try append(entry.value, to: &out)
            }
        }
    }

    static func append(_ member: StructuredMember, to out: inout String) throws {
        switch member {
        case .item(let item): try append(item, to: &out)
        case .innerList(let list): try append(list, to: &out)
        }
    }

    static func append(_ list: StructuredInnerList, to out: inout String) throws {
        out += "("
        for (index, item) in list.items.enumerated() {
            if index > 0 { out += " " }
            try append(item, to: &out)
        }
        out += ")"
        try appendParameters(list.parameters, to: &out)
    }

    static func append(_ item: StructuredItem, to out: inout String) throws {
        try appendBare(item.bare, to: &out)
        try appendParameters(item.parameters, to: &out)
    }

    static func appendParameters(_ parameters: StructuredParameters, to out: inout String) throws {
        for entry in parameters.entries {
            out += ";"
            try appendKey(entry.key, to: &out)
            if entry.value != .boolean(true) {
                out += "="
                try appendBare(entry.value, to: &out)
            }
        }
    }

    static func appendKey(_ key: String, to out: inout String) throws {
        let bytes = Array(key.utf8)
        guard let first = bytes.first, (first >= UInt8(ascii: "a") && first <= UInt8(ascii: "z")) || first == UInt8(ascii: "*"),
              bytes.allSatisfy({ ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || CharacterClass.isDigit($0) || "_-.*".utf8.contains($0) })
        else { throw invalid("key \(key.debugDescription)") }
        out += key
    }

    static func appendBare(_ bare: StructuredBareItem, to out: inout String) throws {
        switch bare {
        case .integer(let value):
            guard abs(value) <= 999_999_999_999_999 else { throw invalid("integer \(value)") }
            out += String(value)
        case .decimal(let thousandths):
            try appendDecimal(thousandths, to: &out)
        case .string(let text):
            guard text.utf8.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) else { throw invalid("string with a byte outside printable ASCII") }
            out += "\""
            if text.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                for character in text {
                    if character == "\"" || character == "\\" { out += "\\" }
                    out.append(character)
                }
            } else {
                // The usual case (component names, key ids, nonces): one append, no walk by Character.
                out += text
            }
            out += "\""
        case .token(let token):
            let bytes = Array(token.utf8)
            guard let first = bytes.first, first == UInt8(ascii: "*") || CharacterClass.isAlpha(first),
                  bytes.allSatisfy({ CharacterClass.isTokenChar($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "/") })
            else { throw invalid("token \(token.debugDescription)") }
            out += token
        case .byteSequence(let bytes):
            out += ":" + Base64.encode(bytes) + ":"
        case .boolean(let flag):
            out += flag ? "?1" : "?0"
        case .date(let seconds):
            guard abs(seconds) <= 999_999_999_999_999 else { throw invalid("date \(seconds)") }
            out += "@" + String(seconds)
        case .displayString(let text):
            out += "%\""
            let hex = Array("0123456789abcdef".utf8)
            for byte in text.utf8 {
                if byte == UInt8(ascii: "%") || byte == UInt8(ascii: "\"") || byte < 0x20 || byte > 0x7E {
                    out.unicodeScalars.append("%")
                    out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                    out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0x0F)]))
                } else {
                    out.unicodeScalars.append(Unicode.Scalar(byte))
                }
            }
            out += "\""
        }
    }

    /// At most 12 integer digits and the fewest fractional digits (at least one) that keep
    /// the value; thousandths are exact, so no rounding is left to do here.
    static func appendDecimal(_ thousandths: Int64, to out: inout String) throws {
        let magnitude = thousandths.magnitude
        guard magnitude / 1000 <= 999_999_999_999 else { throw invalid("decimal with more than 12 integer digits") }
        if thousandths < 0 { out += "-" }
        out += String(magnitude / 1000) + "."
        var fraction = String(magnitude % 1000)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.count > 1, fraction.hasSuffix("0") { fraction.removeLast() }
        out += fraction
    }

    private static func invalid(_ what: String) -> StructuredFieldError {
        StructuredFieldError(reason: "cannot serialize \(what)", offset: 0)
    }
}
