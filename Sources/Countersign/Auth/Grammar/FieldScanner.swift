import CountersignHTTP

/// A cursor over one field value's bytes with the small steps of the RFC 9110 list grammar.
/// Every step either consumes input or reports failure without moving, so loops built on it end.
struct FieldScanner {
    /// The value's bytes where they lie (a field value is not copied); positions are its indices.
    private let bytes: ArraySlice<UInt8>
    private(set) var position: Int
    /// How the bytes spell text: UTF-8 when scanning a `String`, ISO-8859-1 when scanning a
    /// field value as received (what `HeaderFields` would have decoded it as).
    private let isLatin1: Bool

    init(_ text: String) {
        bytes = Array(text.utf8)[...]
        position = bytes.startIndex
        isLatin1 = false
    }

    /// A field value's bytes as received, read without making a `String` of the whole value.
    init(fieldValue: ArraySlice<UInt8>) {
        bytes = fieldValue
        position = fieldValue.startIndex
        isLatin1 = true
    }

    /// Where a parameter's value lies: a token, or the inside of a quoted-string with its
    /// quoted-pairs still in (`escaped`); `text(of:)` makes it a `String`.
    enum ValueSpan {
        case token(Range<Int>)
        case quoted(Range<Int>, escaped: Bool)
    }

    var atEnd: Bool { position >= bytes.endIndex }
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
        readTokenSpan().map { text($0.lowerBound, $0.upperBound) }
    }

    /// Where a token lies; nil (position unchanged) when none starts here.
    private mutating func readTokenSpan() -> Range<Int>? {
        let start = position
        position = firstIndex(from: start) { !TokenSyntax.isTokenChar($0) }
        return position > start ? start..<position : nil
    }

    /// The index of the first byte from `start` on that `stops` (the end when none does), over
    /// the bytes in place: names, nonces and hashes are read a byte at a time with no bounds
    /// check per byte.
    private func firstIndex(from start: Int, where stops: (UInt8) -> Bool) -> Int {
        let base = bytes.startIndex
        return bytes.withUnsafeBufferPointer { buffer in
            var offset = start - base
            while offset < buffer.count, !stops(buffer[offset]) { offset += 1 }
            return base + offset
        }
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
        readQuotedSpan().map { text(of: .quoted($0.inside, escaped: $0.escaped)) }
    }

    /// The inside of a quoted-string, checked (quoted-pairs of allowed bytes, no control byte);
    /// nil (position unchanged) when unterminated or invalid.
    private mutating func readQuotedSpan() -> (inside: Range<Int>, escaped: Bool)? {
        guard next == TokenSyntax.quote else { return nil }
        var cursor = position + 1
        var escaped = false
        while true {
            // qdtext runs up to the closing quote, a quoted-pair, or a byte not allowed at all.
            cursor = firstIndex(from: cursor) { !TokenSyntax.isQuotedText($0) }
            guard cursor < bytes.endIndex else { return nil }
            let byte = bytes[cursor]
            if byte == TokenSyntax.quote {
                defer { position = cursor + 1 }
                return ((position + 1)..<cursor, escaped)
            }
            guard byte == TokenSyntax.backslash, cursor + 1 < bytes.endIndex, TokenSyntax.isQuotablePairChar(bytes[cursor + 1]) else { return nil }
            escaped = true
            cursor += 2
        }
    }

    /// auth-param = token BWS "=" BWS ( token / quoted-string ); nil (position unchanged) when malformed.
    mutating func readParam() -> (name: String, value: String)? {
        readParamSpan().map { (text($0.name.lowerBound, $0.name.upperBound), text(of: $0.value)) }
    }

    /// `readParam` without making strings: where the name and value lie.
    mutating func readParamSpan() -> (name: Range<Int>, value: ValueSpan)? {
        let start = position
        guard let name = readTokenSpan() else { return nil }
        skipWhitespace()
        guard next == TokenSyntax.equals else {
            position = start
            return nil
        }
        position += 1
        skipWhitespace()
        if let quoted = readQuotedSpan() { return (name, .quoted(quoted.inside, escaped: quoted.escaped)) }
        if let token = readTokenSpan() { return (name, .token(token)) }
        position = start
        return nil
    }

    /// Whether the bytes in `range` are `name` (written in lower case), ignoring ASCII case.
    func bytes(in range: Range<Int>, equal name: StaticString) -> Bool {
        guard range.count == name.utf8CodeUnitCount else { return false }
        let expected = name.utf8Start
        for (offset, index) in range.enumerated() where ASCIICase.lower(bytes[index]) != expected[offset] { return false }
        return true
    }

    func text(of value: ValueSpan) -> String {
        decode(valueBytes(of: value))
    }

    /// A value's bytes as the server meant them (quoted-pairs undone), without making a
    /// `String`: where they lie unless a quoted-pair had to be undone.
    func valueBytes(of value: ValueSpan) -> ArraySlice<UInt8> {
        switch value {
        case .token(let range), .quoted(let range, escaped: false):
            return bytes[range]
        case .quoted(let range, escaped: true):
            var unescaped: [UInt8] = []
            var cursor = range.lowerBound
            while cursor < range.upperBound {
                if bytes[cursor] == TokenSyntax.backslash { cursor += 1 }
                unescaped.append(bytes[cursor])
                cursor += 1
            }
            return unescaped[...]
        }
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
        position = TokenSyntax.listElementEnd(in: bytes, from: position)
    }

    private func text(_ start: Int, _ end: Int) -> String {
        decode(bytes[start..<end])
    }

    private func decode(_ slice: ArraySlice<UInt8>) -> String {
        guard isLatin1, slice.contains(where: { $0 >= 0x80 }) else { return String(decoding: slice, as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        for byte in slice { scalars.append(Unicode.Scalar(byte)) }
        return String(scalars)
    }
}
