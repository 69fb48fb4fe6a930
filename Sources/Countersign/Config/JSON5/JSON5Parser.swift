/// A JSON5 (https://spec.json5.org) parser that keeps every value's line and column and refuses
/// duplicate keys, because the strict configuration decoder needs both and Foundation's
/// JSON5 support offers neither.
public struct JSON5Parser {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var column = 1
    /// Deep nesting is refused rather than risking the stack on a hostile file.
    private let maximumDepth = 256

    public init(text: String) {
        var scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        self.scalars = scalars
    }

    /// Parses one complete JSON5 text.
    public static func parse(_ text: String) throws -> JSON5Node {
        var parser = JSON5Parser(text: text)
        return try parser.parseDocument()
    }

    public mutating func parseDocument() throws -> JSON5Node {
        try skipWhitespaceAndComments()
        guard current != nil else { throw error("expected a value, found the end of the file") }
        let node = try parseValue(depth: 0)
        try skipWhitespaceAndComments()
        if let extra = current {
            throw error("expected the end of the file after the top-level value, found \(describe(extra))")
        }
        return node
    }

    // MARK: - Values

    private mutating func parseValue(depth: Int) throws -> JSON5Node {
        guard depth < maximumDepth else { throw error("values are nested more than \(maximumDepth) levels deep") }
        let start = position
        guard let c = current else { throw error("expected a value, found the end of the file") }
        switch c {
        case "{": return JSON5Node(value: try parseObject(depth: depth), position: start)
        case "[": return JSON5Node(value: try parseArray(depth: depth), position: start)
        case "\"", "'": return JSON5Node(value: .string(try parseString()), position: start)
        case "-", "+", ".", "0"..."9": return JSON5Node(value: .number(try parseNumber()), position: start)
        default:
            if isIdentifierStart(c) {
                let word = parseIdentifierName()
                switch word {
                case "true": return JSON5Node(value: .bool(true), position: start)
                case "false": return JSON5Node(value: .bool(false), position: start)
                case "null": return JSON5Node(value: .null, position: start)
                case "Infinity", "NaN":
                    throw error("\(word) is not accepted here; write a finite number", at: start)
                default:
                    throw error("expected a value, found the bare word '\(word)' (strings need quotes)", at: start)
                }
            }
            throw error("expected a value, found \(describe(c))")
        }
    }

    private mutating func parseObject(depth: Int) throws -> JSON5Value {
        advance() // {
        var members: [JSON5Member] = []
        var seen: [String: SourcePosition] = [:]
        while true {
            try skipWhitespaceAndComments()
            guard let c = current else { throw error("expected a key or '}', found the end of the file") }
            if c == "}" { advance(); return .object(members) }
            let keyPosition = position
            let key: String
            if c == "\"" || c == "'" {
                key = try parseString()
            } else if isIdentifierStart(c) {
                key = parseIdentifierName()
            } else {
                throw error("expected a key (a name or a quoted string) or '}', found \(describe(c))")
            }
            if let first = seen[key] {
                throw error("duplicate key \"\(key)\" (first given at line \(first.line)); keep only one", at: keyPosition)
            }
            seen[key] = keyPosition
            try skipWhitespaceAndComments()
            guard current == ":" else {
                throw error("expected ':' after the key \"\(key)\", found \(describeCurrent())")
            }
            advance()
            try skipWhitespaceAndComments()
            let value = try parseValue(depth: depth + 1)
            members.append(JSON5Member(key: key, keyPosition: keyPosition, value: value))
            try skipWhitespaceAndComments()
            switch current {
            case ",": advance()
            case "}": advance(); return .object(members)
            default: throw error("expected ',' or '}' after the value of \"\(key)\", found \(describeCurrent())")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws -> JSON5Value {
        advance() // [
        var elements: [JSON5Node] = []
        while true {
            try skipWhitespaceAndComments()
            guard let c = current else { throw error("expected a value or ']', found the end of the file") }
            if c == "]" { advance(); return .array(elements) }
            elements.append(try parseValue(depth: depth + 1))
            try skipWhitespaceAndComments()
            switch current {
            case ",": advance()
            case "]": advance(); return .array(elements)
            default: throw error("expected ',' or ']' after an array element, found \(describeCurrent())")
            }
        }
    }

    // MARK: - Strings

    private mutating func parseString() throws -> String {
        let quote = current!
        let start = position
        advance()
        var result = String.UnicodeScalarView()
        while true {
            guard let c = current else {
                throw error("this string is not closed: expected \(quote) before the end of the file", at: start)
            }
            if c == quote { advance(); return String(result) }
            if isLineTerminator(c) {
                throw error("expected \(quote) to close the string before the end of the line (write \\n for a newline)")
            }
            if c == "\\" {
                advance()
                if let escaped = try parseEscape() { result.append(escaped) }
            } else {
                result.append(c)
                advance()
            }
        }
    }

    /// Returns nil for a line continuation, which contributes nothing to the string.
    private mutating func parseEscape() throws -> Unicode.Scalar? {
        guard let c = current else { throw error("expected an escape character after '\\', found the end of the file") }
        if isLineTerminator(c) {
            consumeLineTerminator()
            return nil
        }
        advance()
        switch c {
        case "b": return "\u{08}"
        case "f": return "\u{0C}"
        case "n": return "\n"
        case "r": return "\r"
        case "t": return "\t"
        case "v": return "\u{0B}"
        case "0":
            if let next = current, ("0"..."9").contains(next) {
                throw error("octal escapes such as \\0\(next) are not allowed; use \\u00XX")
            }
            return "\u{0}"
        case "1"..."9": throw error("the escape \\\(c) is not allowed; use \\u00XX for a code point")
        case "x": return Unicode.Scalar(try parseHexDigits(count: 2, escape: "\\x"))!
        case "u":
            let first = try parseHexDigits(count: 4, escape: "\\u")
            if (0xD800...0xDBFF).contains(first) {
                // A high surrogate must be followed by an escaped low surrogate to form one code point.
                guard current == "\\", peek(1) == "u" else {
                    throw error("expected a \\uDC00-\\uDFFF low surrogate after \\u\(hex(first))")
                }
                advance(); advance()
                let second = try parseHexDigits(count: 4, escape: "\\u")
                guard (0xDC00...0xDFFF).contains(second) else {
                    throw error("expected a \\uDC00-\\uDFFF low surrogate after \\u\(hex(first)), found \\u\(hex(second))")
                }
                return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(first) else {
                throw error("\\u\(hex(first)) is a lone low surrogate, not a character")
            }
            return scalar
        default:
            return c
        }
    }

    private mutating func parseHexDigits(count: Int, escape: String) throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<count {
            guard let c = current, let digit = hexValue(c) else {
                throw error("expected \(count) hex digits after \(escape), found \(describeCurrent())")
            }
            value = value * 16 + digit
            advance()
        }
        return value
    }

    // MARK: - Numbers

    private mutating func parseNumber() throws -> JSON5Number {
        let start = position
        var negative = false
        if current == "+" || current == "-" {
            negative = current == "-"
            advance()
        }
        if let c = current, isIdentifierStart(c) {
            let word = parseIdentifierName()
            if word == "Infinity" || word == "NaN" {
                throw error("\(word) is not accepted here; write a finite number", at: start)
            }
            throw error("expected digits after the sign, found '\(word)'", at: start)
        }
        if current == "0", let x = peek(1), x == "x" || x == "X" {
            advance(); advance()
            var digits = ""
            while let c = current, hexValue(c) != nil { digits.unicodeScalars.append(c); advance() }
            guard !digits.isEmpty else { throw error("expected hex digits after 0x, found \(describeCurrent())") }
            try requireNumberEnd()
            guard let magnitude = Int(digits, radix: 16) else {
                throw error("the hex number 0x\(digits) is too large", at: start)
            }
            let value = negative ? -magnitude : magnitude
            return JSON5Number(value: Double(value), integer: value)
        }
        var literal = negative ? "-" : ""
        var integral = true
        let integerDigits = takeDigits()
        if integerDigits.count > 1 && integerDigits.hasPrefix("0") {
            throw error("numbers may not start with 0 (found \(integerDigits)); remove the leading zero", at: start)
        }
        literal += integerDigits
        if current == "." {
            integral = false
            advance()
            let fraction = takeDigits()
            guard !integerDigits.isEmpty || !fraction.isEmpty else {
                throw error("expected digits in the number, found \(describeCurrent())", at: start)
            }
            literal += "." + (fraction.isEmpty ? "0" : fraction)
        } else if integerDigits.isEmpty {
            throw error("expected digits in the number, found \(describeCurrent())")
        }
        if current == "e" || current == "E" {
            integral = false
            advance()
            literal += "e"
            if current == "+" || current == "-" { literal.unicodeScalars.append(current!); advance() }
            let exponent = takeDigits()
            guard !exponent.isEmpty else { throw error("expected exponent digits after 'e', found \(describeCurrent())") }
            literal += exponent
        }
        try requireNumberEnd()
        guard let value = Double(literal), value.isFinite else {
            throw error("the number \(literal) is out of range", at: start)
        }
        return JSON5Number(value: value, integer: integral ? Int(literal) : nil)
    }

    private mutating func takeDigits() -> String {
        var digits = ""
        while let c = current, ("0"..."9").contains(c) { digits.unicodeScalars.append(c); advance() }
        return digits
    }

    /// `12px` or `1.2.3` must not parse as a number followed by garbage reported elsewhere.
    private func requireNumberEnd() throws {
        if let c = current, isIdentifierPart(c) || c == "." {
            throw error("unexpected \(describe(c)) in a number (strings such as \"10s\" need quotes)")
        }
    }

    // MARK: - Identifiers

    private mutating func parseIdentifierName() -> String {
        var name = String.UnicodeScalarView()
        while let c = current, isIdentifierPart(c) { name.append(c); advance() }
        return String(name)
    }

    private func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        c == "$" || c == "_" || c.properties.isAlphabetic
    }

    private func isIdentifierPart(_ c: Unicode.Scalar) -> Bool {
        if isIdentifierStart(c) { return true }
        switch c.properties.generalCategory {
        case .decimalNumber, .nonspacingMark, .spacingMark, .connectorPunctuation: return true
        default: return c == "\u{200C}" || c == "\u{200D}"
        }
    }

    // MARK: - Whitespace and comments

    private mutating func skipWhitespaceAndComments() throws {
        while let c = current {
            if isLineTerminator(c) {
                consumeLineTerminator()
            } else if isWhitespace(c) {
                advance()
            } else if c == "/" && peek(1) == "/" {
                while let d = current, !isLineTerminator(d) { advance() }
            } else if c == "/" && peek(1) == "*" {
                let start = position
                advance(); advance()
                while true {
                    guard let d = current else {
                        throw error("this comment is not closed: expected */ before the end of the file", at: start)
                    }
                    if d == "*" && peek(1) == "/" { advance(); advance(); break }
                    if isLineTerminator(d) { consumeLineTerminator() } else { advance() }
                }
            } else if c == "/" {
                throw error("expected // or /* to start a comment, found a lone '/'")
            } else {
                return
            }
        }
    }

    private func isWhitespace(_ c: Unicode.Scalar) -> Bool {
        switch c {
        case " ", "\t", "\u{0B}", "\u{0C}", "\u{A0}", "\u{FEFF}": return true
        default: return c.properties.generalCategory == .spaceSeparator
        }
    }

    private func isLineTerminator(_ c: Unicode.Scalar) -> Bool {
        c == "\n" || c == "\r" || c == "\u{2028}" || c == "\u{2029}"
    }

    /// Counts `\r\n` as one line break so line numbers match what editors show.
    private mutating func consumeLineTerminator() {
        if current == "\r" && peek(1) == "\n" { index += 1 }
        index += 1
        line += 1
        column = 1
    }

    // MARK: - Cursor

    private var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    private func peek(_ offset: Int) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private var position: SourcePosition { SourcePosition(line: line, column: column) }

    private mutating func advance() {
        index += 1
        column += 1
    }

    private func hexValue(_ c: Unicode.Scalar) -> UInt32? {
        switch c {
        case "0"..."9": return c.value - 48
        case "a"..."f": return c.value - 87
        case "A"..."F": return c.value - 55
        default: return nil
        }
    }

    private func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private func describeCurrent() -> String {
        current.map(describe) ?? "the end of the file"
    }

    private func describe(_ c: Unicode.Scalar) -> String {
        if isLineTerminator(c) { return "the end of the line" }
        if c.properties.generalCategory == .control { return "the control character U+\(hex(c.value))" }
        return "'\(c)'"
    }

    private func error(_ message: String, at position: SourcePosition? = nil) -> JSON5SyntaxError {
        JSON5SyntaxError(position: position ?? self.position, message: message)
    }
}
