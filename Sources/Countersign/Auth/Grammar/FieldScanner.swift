/// A cursor over one field value's bytes with the small steps of the RFC 9110 list grammar.
/// Every step either consumes input or reports failure without moving, so loops built on it end.
struct FieldScanner {
    private let bytes: [UInt8]
    private(set) var position = 0

    init(_ text: String) { bytes = Array(text.utf8) }

    var atEnd: Bool { position >= bytes.count }
    var next: UInt8? { atEnd ? nil : bytes[position] }

    /// Skips OWS; returns how many bytes were skipped.
    @discardableResult
    mutating func skipWhitespace() -> Int {
        let start = position
        while let byte = next, TokenSyntax.isWhitespace(byte) { position += 1 }
        return position - start
    }

    /// Skips OWS and commas: empty list elements are allowed anywhere (RFC 9110 §5.6.1.2).
    mutating func skipListSeparators() {
        while let byte = next, TokenSyntax.isWhitespace(byte) || byte == TokenSyntax.comma { position += 1 }
    }

    mutating func readToken() -> String? {
        let start = position
        while let byte = next, TokenSyntax.isTokenChar(byte) { position += 1 }
        return position > start ? text(start, position) : nil
    }

    /// A token68 counts only when it is the whole rest of the list element.
    mutating func readToken68() -> String? {
        let start = position
        while let byte = next, TokenSyntax.isToken68Char(byte) { position += 1 }
        guard position > start else { return nil }
        while next == TokenSyntax.equals { position += 1 }
        let end = position
        skipWhitespace()
        guard atEnd || next == TokenSyntax.comma else {
            position = start
            return nil
        }
        return text(start, end)
    }

    /// quoted-string with quoted-pairs undone; nil (position unchanged) when unterminated or holding a control byte.
    mutating func readQuotedString() -> String? {
        guard next == TokenSyntax.quote else { return nil }
        let start = position
        var cursor = position + 1
        // Usually nothing is escaped: the value is the bytes between the quotes, taken whole.
        while cursor < bytes.count, bytes[cursor] != TokenSyntax.backslash, TokenSyntax.isQuotedText(bytes[cursor]) { cursor += 1 }
        if cursor < bytes.count, bytes[cursor] == TokenSyntax.quote {
            position = cursor + 1
            return text(start + 1, cursor)
        }
        var value = Array(bytes[(start + 1)..<cursor])
        while cursor < bytes.count {
            let byte = bytes[cursor]
            if byte == TokenSyntax.quote {
                position = cursor + 1
                return String(decoding: value, as: UTF8.self)
            }
            if byte == TokenSyntax.backslash {
                guard cursor + 1 < bytes.count, TokenSyntax.isQuotablePairChar(bytes[cursor + 1]) else { break }
                value.append(bytes[cursor + 1])
                cursor += 2
                continue
            }
            guard TokenSyntax.isQuotedText(byte) else { break }
            value.append(byte)
            cursor += 1
        }
        position = start
        return nil
    }

    /// auth-param = token BWS "=" BWS ( token / quoted-string ); nil (position unchanged) when malformed.
    mutating func readParam() -> (name: String, value: String)? {
        let start = position
        guard let name = readToken() else { return nil }
        skipWhitespace()
        guard next == TokenSyntax.equals else {
            position = start
            return nil
        }
        position += 1
        skipWhitespace()
        if let quoted = readQuotedString() { return (name, quoted) }
        if let token = readToken() { return (name, token) }
        position = start
        return nil
    }

    /// Whether the next list element starts like `name =` (a parameter) rather than a scheme.
    func nextLooksLikeParam() -> Bool {
        var probe = self
        guard probe.readToken() != nil else { return false }
        probe.skipWhitespace()
        return probe.next == TokenSyntax.equals
    }

    /// Moves past the rest of the current list element (to the next comma outside quotes),
    /// always consuming at least one byte when not at the end.
    mutating func skipElement() {
        let start = position
        var inQuotes = false
        while let byte = next {
            if inQuotes {
                if byte == TokenSyntax.backslash { position += 1 } else if byte == TokenSyntax.quote { inQuotes = false }
            } else if byte == TokenSyntax.quote {
                inQuotes = true
            } else if byte == TokenSyntax.comma {
                break
            }
            position += 1
        }
        position = min(position, bytes.count)
        if position == start && !atEnd { position += 1 }
    }

    private func text(_ start: Int, _ end: Int) -> String {
        String(decoding: bytes[start..<end], as: UTF8.self)
    }
}
