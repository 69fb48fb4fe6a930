import CountersignHTTP

/// `Authentication-Info` / `Proxy-Authentication-Info` (RFC 9110 §11.6.3, RFC 7616 §3.5):
/// what a Digest server says after accepting an answer.
public struct AuthenticationInfo: Equatable, Sendable {
    public var nextnonce: String?
    public var rspauth: String?
    public var qop: String?
    public var nc: String?
    public var cnonce: String?

    public init(nextnonce: String? = nil, rspauth: String? = nil, qop: String? = nil, nc: String? = nil, cnonce: String? = nil) {
        self.nextnonce = nextnonce
        self.rspauth = rspauth
        self.qop = qop
        self.nc = nc
        self.cnonce = cnonce
    }

    /// Nil when no field carries any parameter.
    /// One pass over the parameters; the first of a repeated name counts, across fields too.
    public static func parse(fieldValues: [String]) -> AuthenticationInfo? {
        var reader = Reader()
        var info = AuthenticationInfo()
        for field in fieldValues {
            var field = field
            field.withUTF8 { bytes in reader.read(bytes) { info.keep($0, $1.text(isLatin1: false)) } }
        }
        return reader.any ? info : nil
    }

    /// The parameters known; the others are read past.
    public struct Parameters: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let nextnonce = Parameters(rawValue: 1)
        public static let rspauth = Parameters(rawValue: 2)
        public static let cnonce = Parameters(rawValue: 4)
        public static let nc = Parameters(rawValue: 8)
        public static let qop = Parameters(rawValue: 16)
    }

    /// The same from a response's fields as received, read from their bytes (ISO-8859-1).
    public static func parse(_ headers: HeaderFields, field name: FieldName) -> AuthenticationInfo? {
        var info = AuthenticationInfo()
        let any = forEachParameter(headers, field: name) { info.keep($0, $1.text(isLatin1: true)) }
        return any ? info : nil
    }

    /// Each known parameter of the fields `name`, the first of each name only, with its value
    /// where it lies (lent for the call; nothing made of it): `DigestReply` checks the server's
    /// proof on these bytes. True when any field carried a parameter.
    static func forEachParameter(_ headers: HeaderFields, field name: FieldName, _ visit: (Parameters, Value) -> Void) -> Bool {
        var reader = Reader()
        headers.forEachValue(name) { field in field.withUnsafeBufferPointer { reader.read($0, visit) } }
        return reader.any
    }

    private mutating func keep(_ parameter: Parameters, _ value: String) {
        switch parameter {
        case .nextnonce: nextnonce = value
        case .rspauth: rspauth = value
        case .cnonce: cnonce = value
        case .nc: nc = value
        default: qop = value
        }
    }

    /// A parameter's value in the field's bytes: a token, or the inside of a quoted-string
    /// whose quoted-pairs (`escaped`) are still in.
    struct Value {
        let raw: UnsafeBufferPointer<UInt8>
        let escaped: Bool

        /// The bytes as the server meant them (quoted-pairs undone), lent to `body`: where they
        /// lie unless a quoted-pair had to be undone.
        func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
            guard escaped else { return body(raw) }
            var unescaped: [UInt8] = []
            var cursor = 0
            while cursor < raw.count {
                if raw[cursor] == TokenSyntax.backslash { cursor += 1 }
                unescaped.append(raw[cursor])
                cursor += 1
            }
            return unescaped.withUnsafeBufferPointer(body)
        }

        /// As text: the bytes as UTF-8, or as ISO-8859-1 for a field as received.
        func text(isLatin1: Bool) -> String {
            withBytes { bytes in
                guard isLatin1, bytes.contains(where: { $0 >= 0x80 }) else { return String(decoding: bytes, as: UTF8.self) }
                var scalars = String.UnicodeScalarView()
                for byte in bytes { scalars.append(Unicode.Scalar(byte)) }
                return String(scalars)
            }
        }
    }

    /// A bare `#auth-param` list (RFC 9110 §11.2, §5.6) read over a field's bytes in place:
    /// malformed elements skipped, the first of each known name visited.
    private struct Reader {
        var seen: Parameters = []
        var any = false

        mutating func read(_ bytes: UnsafeBufferPointer<UInt8>, _ visit: (Parameters, Value) -> Void) {
            ByteClass.table.withUnsafeBufferPointer { table in
                let scan = Scan(bytes: bytes, table: table)
                var cursor = 0
                while true {
                    cursor = scan.end(of: ByteClass.separator, from: cursor)
                    if cursor >= bytes.count { return }
                    if let (name, value) = scan.param(at: &cursor) {
                        cursor = scan.end(of: ByteClass.whitespace, from: cursor)
                        if cursor >= bytes.count || bytes[cursor] == TokenSyntax.comma {
                            any = true
                            if let parameter = Self.parameter(named: name, in: bytes), !seen.contains(parameter) {
                                seen.insert(parameter)
                                visit(parameter, value)
                            }
                            continue
                        }
                    }
                    cursor = TokenSyntax.listElementEnd(in: bytes, from: cursor)
                }
            }
        }

        /// The known parameter `name` (in `bytes`) spells, in any case: its letters read as one
        /// word (the first in the low byte), each letter's 0x20 bit set, which folds upper case
        /// and makes no other byte a lower-case letter, and compared with each name at once
        /// (byte by byte, ~55 instructions a parameter).
        @inline(__always)
        private static func parameter(named name: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) -> Parameters? {
            let count = name.count
            guard count <= 9, (1 << count) & 0b10_1100_1100 != 0, let base = bytes.baseAddress else { return nil }
            let start = base + name.lowerBound
            var word: UInt64 = 0
            if name.lowerBound &+ 8 <= bytes.count {
                word = UInt64(littleEndian: UnsafeRawPointer(start).loadUnaligned(as: UInt64.self))
                if count < 8 { word &= (1 &<< (8 &* UInt64(truncatingIfNeeded: count))) &- 1 }
            } else {
                for index in 0..<min(count, 8) { word |= UInt64(start[index]) &<< (8 &* UInt64(truncatingIfNeeded: index)) }
            }
            word |= 0x2020_2020_2020_2020 & ((count >= 8 ? 0 : 1 &<< (8 &* UInt64(truncatingIfNeeded: count))) &- 1)
            // The names' letters as such words.
            switch count {
            case 9: return word == 0x636E_6F6E_7478_656E && start[8] | 0x20 == UInt8(ascii: "e") ? .nextnonce : nil
            case 7: return word == 0x0068_7475_6170_7372 ? .rspauth : nil
            case 6: return word == 0x0000_6563_6E6F_6E63 ? .cnonce : nil
            case 3: return word == 0x0070_6F71 ? .qop : nil
            default: return word == 0x636E ? .nc : nil
            }
        }
    }

    /// The character classes the reader asks about, one table lookup per byte (from
    /// `TokenSyntax`'s definitions).
    private enum ByteClass {
        static let token: UInt8 = 1
        static let quotedText: UInt8 = 2
        static let whitespace: UInt8 = 4
        static let comma: UInt8 = 8
        /// OWS and commas: empty list elements are allowed anywhere (RFC 9110 §5.6.1.2).
        static let separator: UInt8 = comma | whitespace

        static let table: [UInt8] = (0...255).map { (value: Int) -> UInt8 in
            let byte = UInt8(value)
            var classes: UInt8 = 0
            if TokenSyntax.isTokenChar(byte) { classes |= token }
            if TokenSyntax.isQuotedText(byte) { classes |= quotedText }
            if TokenSyntax.isWhitespace(byte) { classes |= whitespace }
            if byte == TokenSyntax.comma { classes |= comma }
            return classes
        }
    }

    /// The steps of the list grammar over one field's bytes.
    private struct Scan {
        let bytes: UnsafeBufferPointer<UInt8>
        let table: UnsafeBufferPointer<UInt8>

        /// The first index from `start` on whose byte is not of `classes` (the end when none).
        @inline(__always)
        func end(of classes: UInt8, from start: Int) -> Int {
            var end = start
            while end < bytes.count, table[Int(bytes[end])] & classes != 0 { end += 1 }
            return end
        }

        /// The first index from `start` on whose byte is not qdtext: eight bytes at a time while
        /// they are printable ASCII other than `"` and `\` (all qdtext), then byte by byte. A
        /// value (a hash, a nonce) is most of the field, and one byte at a time cost ~7
        /// instructions each.
        @inline(__always)
        func endOfQuotedText(from start: Int) -> Int {
            var end = start
            if let base = bytes.baseAddress {
                while end + 8 <= bytes.count, Self.isPlainQuotedText(UnsafeRawPointer(base).loadUnaligned(fromByteOffset: end, as: UInt64.self)) {
                    end += 8
                }
            }
            return self.end(of: ByteClass.quotedText, from: end)
        }

        /// Whether each byte of `word` is in 0x20...0x7E and neither `"` nor `\` (the exact
        /// "has a byte less than / more than / equal to" word tests: no byte is misjudged).
        @inline(__always)
        static func isPlainQuotedText(_ word: UInt64) -> Bool {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            let belowSpace = (word &- ones &* 0x20) & ~word
            let aboveTilde = (word &+ ones) | word
            let quotes = word ^ (ones &* UInt64(TokenSyntax.quote)), backslashes = word ^ (ones &* UInt64(TokenSyntax.backslash))
            let hasQuote = (quotes &- ones) & ~quotes, hasBackslash = (backslashes &- ones) & ~backslashes
            return (belowSpace | aboveTilde | hasQuote | hasBackslash) & highs == 0
        }

        /// auth-param = token BWS "=" BWS ( token / quoted-string ): where the name lies and
        /// the value; nil (`cursor` unchanged) when malformed.
        @inline(__always)
        func param(at cursor: inout Int) -> (Range<Int>, Value)? {
            let nameEnd = end(of: ByteClass.token, from: cursor)
            guard nameEnd > cursor else { return nil }
            var at = end(of: ByteClass.whitespace, from: nameEnd)
            guard at < bytes.count, bytes[at] == TokenSyntax.equals else { return nil }
            at = end(of: ByteClass.whitespace, from: at + 1)
            let value: Value
            if at < bytes.count, bytes[at] == TokenSyntax.quote {
                // The inside of a quoted-string: qdtext and quoted-pairs of allowed bytes, closed.
                var close = at + 1
                var escaped = false
                while true {
                    close = endOfQuotedText(from: close)
                    guard close < bytes.count else { return nil }
                    if bytes[close] == TokenSyntax.quote { break }
                    guard bytes[close] == TokenSyntax.backslash, close + 1 < bytes.count, TokenSyntax.isQuotablePairChar(bytes[close + 1]) else { return nil }
                    escaped = true
                    close += 2
                }
                value = Value(raw: UnsafeBufferPointer(rebasing: bytes[(at + 1)..<close]), escaped: escaped)
                at = close + 1
            } else {
                let tokenEnd = end(of: ByteClass.token, from: at)
                guard tokenEnd > at else { return nil }
                value = Value(raw: UnsafeBufferPointer(rebasing: bytes[at..<tokenEnd]), escaped: false)
                at = tokenEnd
            }
            defer { cursor = at }
            return (cursor..<nameEnd, value)
        }
    }
}
