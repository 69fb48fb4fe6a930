import CountersignHTTP
import CountersignSupport

/// The parsing algorithms of RFC 9651 §4.2, over the bytes of a field value (several field
/// lines combined with ", " first, as §4.2 says). Strict: any deviation is an error, so that
/// two readers of a signed field can never disagree about what it says.
public struct StructuredFieldParser {
    private let input: [UInt8]
    private var position = 0

    public static func parse(_ text: String, as type: StructuredFieldType) throws -> StructuredFieldValue {
        var parser = StructuredFieldParser(input: Array(text.utf8))
        return try parser.parseField(type)
    }

    public static func parseDictionary(_ text: String) throws -> StructuredDictionary {
        guard case .dictionary(let dictionary) = try parse(text, as: .dictionary) else { preconditionFailure("dictionary parse returned another type") }
        return dictionary
    }

    public static func parseList(_ text: String) throws -> StructuredList {
        guard case .list(let list) = try parse(text, as: .list) else { preconditionFailure("list parse returned another type") }
        return list
    }

    public static func parseItem(_ text: String) throws -> StructuredItem {
        guard case .item(let item) = try parse(text, as: .item) else { preconditionFailure("item parse returned another type") }
        return item
    }

    private init(input: [UInt8]) {
        self.input = input
    }

    // MARK: - Top level (§4.2)

    private mutating func parseField(_ type: StructuredFieldType) throws -> StructuredFieldValue {
        skip(while: isSP)
        let value: StructuredFieldValue
        switch type {
        case .list: value = .list(try parseList())
        case .dictionary: value = .dictionary(try parseDictionary())
        case .item: value = .item(try parseItem())
        }
        skip(while: isSP)
        guard atEnd else { throw fail("unexpected characters after the value") }
        return value
    }

    private mutating func parseList() throws -> StructuredList {
        var members: StructuredList = []
        while !atEnd {
            members.append(try parseMember())
            try skipMemberSeparator()
        }
        return members
    }

    private mutating func parseDictionary() throws -> StructuredDictionary {
        var dictionary = StructuredDictionary()
        while !atEnd {
            let key = try parseKey()
            if peek == UInt8(ascii: "=") {
                position += 1
                dictionary[key] = try parseMember()
            } else {
                dictionary[key] = .item(StructuredItem(.boolean(true), parameters: try parseParameters()))
            }
            try skipMemberSeparator()
        }
        return dictionary
    }

    /// After a list or dictionary member: optional whitespace, then the end or a comma that
    /// a member must follow.
    private mutating func skipMemberSeparator() throws {
        skip(while: isOWS)
        guard !atEnd else { return }
        guard peek == UInt8(ascii: ",") else { throw fail("expected a comma between members") }
        position += 1
        skip(while: isOWS)
        if atEnd { throw fail("a trailing comma") }
    }

    private mutating func parseMember() throws -> StructuredMember {
        peek == UInt8(ascii: "(") ? .innerList(try parseInnerList()) : .item(try parseItem())
    }

    private mutating func parseInnerList() throws -> StructuredInnerList {
        guard peek == UInt8(ascii: "(") else { throw fail("expected an inner list") }
        position += 1
        var items: [StructuredItem] = []
        while !atEnd {
            skip(while: isSP)
            if peek == UInt8(ascii: ")") {
                position += 1
                return StructuredInnerList(items, parameters: try parseParameters())
            }
            items.append(try parseItem())
            guard let next = peek, next == UInt8(ascii: " ") || next == UInt8(ascii: ")") else {
                throw fail("inner list members must be separated by spaces")
            }
        }
        throw fail("an inner list that never closes")
    }

    private mutating func parseItem() throws -> StructuredItem {
        let bare = try parseBareItem()
        return StructuredItem(bare, parameters: try parseParameters())
    }

    private mutating func parseParameters() throws -> StructuredParameters {
        var parameters = StructuredParameters()
        while peek == UInt8(ascii: ";") {
            position += 1
            skip(while: isSP)
            let key = try parseKey()
            var value = StructuredBareItem.boolean(true)
            if peek == UInt8(ascii: "=") {
                position += 1
                value = try parseBareItem()
            }
            parameters[key] = value
        }
        return parameters
    }

    private mutating func parseKey() throws -> String {
        guard let first = peek, isLowercaseLetter(first) || first == UInt8(ascii: "*") else { throw fail("a key must start with a lower-case letter or *") }
        let start = position
        skip { isLowercaseLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "*") }
        return String(decoding: input[start..<position], as: UTF8.self)
    }

    // MARK: - Bare items (§4.2.3.1)

    private mutating func parseBareItem() throws -> StructuredBareItem {
        guard let first = peek else { throw fail("a value is missing") }
        switch first {
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "*"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"): return .token(parseToken())
        case UInt8(ascii: ":"): return .byteSequence(try parseByteSequence())
        case UInt8(ascii: "?"): return .boolean(try parseBoolean())
        case UInt8(ascii: "@"): return .date(try parseDate())
        case UInt8(ascii: "%"): return .displayString(try parseDisplayString())
        default: throw fail("not the start of any structured value")
        }
    }

    private mutating func parseNumber() throws -> StructuredBareItem {
        var negative = false
        if peek == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        guard let first = peek, isDigit(first) else { throw fail("a number needs a digit") }
        var integerPart: Int64 = 0, integerDigits = 0
        while let byte = peek, isDigit(byte) {
            integerPart = integerPart * 10 + Int64(byte - UInt8(ascii: "0"))
            integerDigits += 1
            position += 1
            if integerDigits > 15 { throw fail("an integer has more than 15 digits") }
        }
        guard peek == UInt8(ascii: ".") else { return .integer(negative ? -integerPart : integerPart) }
        guard integerDigits <= 12 else { throw fail("a decimal has more than 12 integer digits") }
        position += 1
        var fraction: Int64 = 0, fractionDigits = 0
        while let byte = peek, isDigit(byte) {
            fractionDigits += 1
            if fractionDigits > 3 { throw fail("a decimal has more than 3 fractional digits") }
            fraction = fraction * 10 + Int64(byte - UInt8(ascii: "0"))
            position += 1
        }
        guard fractionDigits > 0 else { throw fail("a decimal ends with its point") }
        for _ in fractionDigits..<3 { fraction *= 10 }
        let thousandths = integerPart * 1000 + fraction
        return .decimal(thousandths: negative ? -thousandths : thousandths)
    }

    private mutating func parseString() throws -> String {
        position += 1
        var bytes: [UInt8] = []
        while let byte = next() {
            switch byte {
            case UInt8(ascii: "\\"):
                guard let escaped = next(), escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\") else {
                    throw fail("only \\\" and \\\\ may be escaped in a string")
                }
                bytes.append(escaped)
            case UInt8(ascii: "\""):
                return String(decoding: bytes, as: UTF8.self)
            case 0x20...0x7E:
                bytes.append(byte)
            default:
                throw fail("a string holds only printable ASCII")
            }
        }
        throw fail("a string that never closes")
    }

    private mutating func parseToken() -> String {
        let start = position
        position += 1
        skip { CharacterClass.isTokenChar($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "/") }
        return String(decoding: input[start..<position], as: UTF8.self)
    }

    private mutating func parseByteSequence() throws -> [UInt8] {
        position += 1
        let start = position
        skip { $0 != UInt8(ascii: ":") }
        guard !atEnd else { throw fail("a byte sequence that never closes") }
        let text = String(decoding: input[start..<position], as: UTF8.self)
        position += 1
        // RFC 9651 allows a parser to accept missing padding; a signature must not: strict.
        guard let bytes = Base64.decode(text) else { throw fail("a byte sequence is not base64") }
        return bytes
    }

    private mutating func parseBoolean() throws -> Bool {
        position += 1
        switch next() {
        case UInt8(ascii: "1"): return true
        case UInt8(ascii: "0"): return false
        default: throw fail("a boolean is ?0 or ?1")
        }
    }

    private mutating func parseDate() throws -> Int64 {
        position += 1
        guard case .integer(let seconds) = try parseNumber() else { throw fail("a date is an integer") }
        return seconds
    }

    private mutating func parseDisplayString() throws -> String {
        position += 1
        guard next() == UInt8(ascii: "\"") else { throw fail("a display string starts with %\"") }
        var bytes: [UInt8] = []
        while let byte = next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = next().flatMap(lowerHexValue), let low = next().flatMap(lowerHexValue) else {
                    throw fail("a display string escape is % and two lower-case hex digits")
                }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "\""):
                guard let text = String(validating: bytes, as: UTF8.self) else { throw fail("a display string is not UTF-8") }
                return text
            case 0x20...0x7E:
                bytes.append(byte)
            default:
                throw fail("a display string holds only printable ASCII")
            }
        }
        throw fail("a display string that never closes")
    }

    // MARK: - Bytes

    private var atEnd: Bool { position >= input.count }
    private var peek: UInt8? { atEnd ? nil : input[position] }

    private mutating func next() -> UInt8? {
        guard !atEnd else { return nil }
        defer { position += 1 }
        return input[position]
    }

    private mutating func skip(while predicate: (UInt8) -> Bool) {
        while let byte = peek, predicate(byte) { position += 1 }
    }

    private func fail(_ reason: String) -> StructuredFieldError {
        StructuredFieldError(reason: reason, offset: position)
    }

    private func lowerHexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}

private func isSP(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") }
private func isOWS(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
private func isLowercaseLetter(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }

