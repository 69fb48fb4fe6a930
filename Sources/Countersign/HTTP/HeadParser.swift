/// The result of offering the bytes received so far to the head parser.
public enum HeadParse<Head> {
    /// No complete head yet; offer more bytes.
    case incomplete
    /// A head, and how many bytes (including the blank line) it used.
    case complete(Head, consumed: Int)
    case invalid(HTTPParseError)
}

/// A strict RFC 9112 head parser over raw bytes. It refuses every shape that lets two
/// implementations disagree about where a message starts or ends: bare CR, bare LF,
/// obsolete line folding, whitespace before the colon, control characters.
public enum HeadParser {
    public static func parseRequest(_ bytes: UnsafeRawBufferPointer, maxHeadBytes: Int) -> HeadParse<RequestHead> {
        // RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request-line.
        var start = 0
        while start + 1 < bytes.count, bytes[start] == CR, bytes[start + 1] == LF { start += 2 }
        switch scanLines(bytes, from: start, maxHeadBytes: maxHeadBytes) {
        case .incomplete: return .incomplete
        case .invalid(let error): return .invalid(error)
        case .complete(let startLine, let fieldLines, let end):
            do {
                let (method, target, version) = try parseRequestLine(bytes, startLine)
                let headers = try fieldLines.headers(bytes)
                // RFC 9112 §3.2: more than one Host line is refused, not resolved by a guess.
                guard headers.count(of: .host) <= 1 else {
                    return .invalid(HTTPParseError(.badFieldValue, "more than one Host field"))
                }
                return .complete(RequestHead(method: method, target: target, version: version, headers: headers), consumed: end)
            } catch let error as HTTPParseError {
                return .invalid(error)
            } catch {
                return .invalid(HTTPParseError(.badStartLine, "unparseable request"))
            }
        }
    }

    public static func parseResponse(_ bytes: UnsafeRawBufferPointer, maxHeadBytes: Int) -> HeadParse<ResponseHead> {
        switch scanLines(bytes, from: 0, maxHeadBytes: maxHeadBytes) {
        case .incomplete: return .incomplete
        case .invalid(let error): return .invalid(error)
        case .complete(let startLine, let fieldLines, let end):
            do {
                let (version, status, reason) = try parseStatusLine(bytes, startLine)
                let headers = try fieldLines.headers(bytes)
                return .complete(ResponseHead(version: version, status: status, reason: reason, headers: headers), consumed: end)
            } catch let error as HTTPParseError {
                return .invalid(error)
            } catch {
                return .invalid(HTTPParseError(.badStartLine, "unparseable response"))
            }
        }
    }

    // MARK: - Line structure

    private enum Scan {
        case incomplete
        case invalid(HTTPParseError)
        /// The start line (without CRLF), the field lines located, and the end of the head.
        case complete(startLine: Range<Int>, fieldLines: FieldLines, end: Int)
    }

    /// Finds the start line and the end of the head, checking the line structure, and locates
    /// each field line as it passes (one walk over the head, not one for lines and one for fields).
    private static func scanLines(_ bytes: UnsafeRawBufferPointer, from start: Int, maxHeadBytes: Int) -> Scan {
        // The limit counts from the first byte, leading empty lines included, so that
        // no shape of input can keep the parser waiting for ever.
        var startLine: Range<Int>?
        var fieldLines = FieldLines()
        var lineStart = start
        var index = start
        let limit = min(bytes.count, maxHeadBytes)
        while index < limit {
            index = ByteScan.firstLineBreak(bytes, from: index, limit: limit)
            guard index < limit else { break }
            let byte = bytes[index]
            if byte == LF {
                return .invalid(HTTPParseError(.bareLF, "bare LF in the message head"))
            }
            if byte == CR {
                guard index + 1 < limit else { break }
                guard bytes[index + 1] == LF else {
                    return .invalid(HTTPParseError(.bareCR, "bare CR in the message head"))
                }
                if index == lineStart {
                    guard let startLine else {
                        return .invalid(HTTPParseError(.badStartLine, "empty start line"))
                    }
                    fieldLines.end(at: index)
                    return .complete(startLine: startLine, fieldLines: fieldLines, end: index + 2)
                }
                if startLine == nil {
                    startLine = lineStart..<index
                    fieldLines.begin(at: index + 2)
                } else {
                    fieldLines.locate(bytes, lineStart..<index)
                }
                index += 2
                lineStart = index
                continue
            }
        }
        if bytes.count >= maxHeadBytes {
            return .invalid(HTTPParseError(.headTooLarge, "message head larger than \(maxHeadBytes) bytes"))
        }
        return .incomplete
    }

    // MARK: - Start lines

    private static func parseRequestLine(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws -> (String, String, HTTPVersion) {
        guard let (methodRange, targetRange, versionRange) = splitOnSpaces(bytes, line) else {
            throw HTTPParseError(.badStartLine, "request line must be METHOD SP TARGET SP VERSION")
        }
        guard !methodRange.isEmpty, methodRange.allSatisfy({ CharacterClass.isTokenChar(bytes[$0]) }) else {
            throw HTTPParseError(.badStartLine, "invalid method")
        }
        guard !targetRange.isEmpty, targetRange.allSatisfy({ CharacterClass.isVisible(bytes[$0]) }) else {
            throw HTTPParseError(.badStartLine, "invalid request target")
        }
        let version = try parseVersion(bytes, versionRange)
        return (method(bytes, methodRange), ascii(bytes, targetRange), version)
    }

    /// The usual methods as literals: no decoding and no validation of bytes just checked.
    private static func method(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        switch range.count {
        case 3 where spells(bytes, range, "GET"): return "GET"
        case 3 where spells(bytes, range, "PUT"): return "PUT"
        case 4 where spells(bytes, range, "POST"): return "POST"
        case 4 where spells(bytes, range, "HEAD"): return "HEAD"
        case 7 where spells(bytes, range, "CONNECT"): return "CONNECT"
        default: return ascii(bytes, range)
        }
    }

    /// Whether `range` holds exactly the bytes of `literal` (case-sensitive).
    private static func spells(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ literal: StaticString) -> Bool {
        guard range.count == literal.utf8CodeUnitCount else { return false }
        let expected = literal.utf8Start
        for offset in 0..<range.count where bytes[range.lowerBound + offset] != expected[offset] { return false }
        return true
    }

    private static func parseStatusLine(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws -> (HTTPVersion, Int, String) {
        // status-line = HTTP-version SP status-code SP [ reason-phrase ]; the reason may contain spaces.
        guard let firstSpace = line.first(where: { bytes[$0] == SP }) else {
            throw HTTPParseError(.badStartLine, "status line has no status code")
        }
        let version = try parseVersion(bytes, line.lowerBound..<firstSpace)
        let codeStart = firstSpace + 1
        let codeEnd = codeStart + 3
        guard codeEnd <= line.upperBound,
              (codeStart..<codeEnd).allSatisfy({ CharacterClass.isDigit(bytes[$0]) }),
              codeEnd == line.upperBound || bytes[codeEnd] == SP else {
            throw HTTPParseError(.badStartLine, "status code must be three digits")
        }
        let status = (codeStart..<codeEnd).reduce(0) { $0 * 10 + Int(bytes[$1] - 0x30) }
        let reasonStart = min(codeEnd + 1, line.upperBound)
        let reasonRange = reasonStart..<line.upperBound
        guard reasonRange.allSatisfy({ CharacterClass.isFieldValueChar(bytes[$0]) }) else {
            throw HTTPParseError(.badStartLine, "invalid character in reason phrase")
        }
        return (version, status, spells(bytes, reasonRange, "OK") ? "OK" : latin1(bytes, reasonRange))
    }

    private static func parseVersion(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws -> HTTPVersion {
        // HTTP-version = "HTTP" "/" DIGIT "." DIGIT (case-sensitive).
        let at = range.lowerBound
        guard range.count == 8,
              bytes[at] == UInt8(ascii: "H"), bytes[at + 1] == UInt8(ascii: "T"), bytes[at + 2] == UInt8(ascii: "T"),
              bytes[at + 3] == UInt8(ascii: "P"), bytes[at + 4] == UInt8(ascii: "/"),
              CharacterClass.isDigit(bytes[range.lowerBound + 5]),
              bytes[range.lowerBound + 6] == UInt8(ascii: "."),
              CharacterClass.isDigit(bytes[range.lowerBound + 7]) else {
            throw HTTPParseError(.badStartLine, "invalid HTTP version")
        }
        let version = HTTPVersion(major: Int(bytes[range.lowerBound + 5] - 0x30), minor: Int(bytes[range.lowerBound + 7] - 0x30))
        guard version.major == 1 else {
            throw HTTPParseError(.unsupportedVersion, "HTTP version \(version) is not supported")
        }
        return version
    }

    /// The three parts of a line with exactly two spaces, or nil.
    private static func splitOnSpaces(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) -> (Range<Int>, Range<Int>, Range<Int>)? {
        var spaces = (0, 0)
        var found = 0
        for index in line where bytes[index] == SP {
            found += 1
            if found == 1 { spaces.0 = index } else if found == 2 { spaces.1 = index } else { return nil }
        }
        guard found == 2 else { return nil }
        return (line.lowerBound..<spaces.0, (spaces.0 + 1)..<spaces.1, (spaces.1 + 1)..<line.upperBound)
    }

    // MARK: - Fields

    /// The field lines of a head, located as the line scan finds them. A fault in one is kept
    /// and reported only once the head is known to be whole and its start line sound, so the
    /// error a head gets does not depend on how its bytes arrived.
    private struct FieldLines {
        private var base = 0
        private var end = 0
        private var slots: [HeaderFields.Slot] = []
        private var present = FieldNames()
        private var fault: HTTPParseError?

        /// The field lines start at `offset` (after the start line's CRLF).
        mutating func begin(at offset: Int) {
            base = offset
            end = offset
            slots.reserveCapacity(16)
        }

        /// The blank line is at `offset`: the field lines end there, their last CRLF left out.
        mutating func end(at offset: Int) { end = max(base, offset - 2) }

        /// Checks one field line (without its CRLF) and notes where its name and value lie.
        mutating func locate(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) {
            guard fault == nil else { return }
            do {
                let (name, value) = try locateField(bytes, line)
                let known = FieldName(UnsafeRawBufferPointer(rebasing: bytes[name]).assumingMemoryBound(to: UInt8.self))
                slots.append(HeaderFields.Slot(name: (name.lowerBound - base)..<(name.upperBound - base),
                                               value: (value.lowerBound - base)..<(value.upperBound - base), known: known))
                present.insert(known)
            } catch {
                fault = error
            }
        }

        /// The fields, copied once into the buffer they are ranges of; the first fault instead.
        func headers(_ bytes: UnsafeRawBufferPointer) throws(HTTPParseError) -> HeaderFields {
            if let fault { throw fault }
            guard !slots.isEmpty else { return HeaderFields() }
            return HeaderFields(bytes: Array(UnsafeRawBufferPointer(rebasing: bytes[base..<end])), slots: slots, present: present)
        }
    }

    static func parseField(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws -> HeaderField {
        let (name, value) = try locateField(bytes, line)
        return HeaderField(ascii(bytes, name), latin1(bytes, value))
    }

    /// Where the name and the value (without surrounding OWS) of one field line lie, after
    /// checking every byte of it.
    static func locateField(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws(HTTPParseError) -> (name: Range<Int>, value: Range<Int>) {
        let first = bytes[line.lowerBound]
        if first == SP || first == HTAB {
            throw HTTPParseError(.obsoleteLineFolding, "obsolete line folding is not accepted")
        }
        // Letters, digits and `-` word by word; the loop below checks whatever else comes.
        var colon = ByteScan.endOfPlainName(bytes, from: line.lowerBound, limit: line.upperBound)
        while colon < line.upperBound, bytes[colon] != COLON {
            let byte = bytes[colon]
            if byte == SP || byte == HTAB {
                throw HTTPParseError(.whitespaceBeforeColon, "whitespace between field name and colon")
            }
            guard CharacterClass.isTokenChar(byte) else {
                throw HTTPParseError(.badFieldName, "invalid character in a field name")
            }
            colon += 1
        }
        guard colon < line.upperBound, colon > line.lowerBound else {
            throw HTTPParseError(.badFieldName, colon == line.lowerBound ? "empty field name" : "field line without a colon")
        }
        var valueStart = colon + 1
        var valueEnd = line.upperBound
        while valueStart < valueEnd, bytes[valueStart] == SP || bytes[valueStart] == HTAB { valueStart += 1 }
        while valueEnd > valueStart, bytes[valueEnd - 1] == SP || bytes[valueEnd - 1] == HTAB { valueEnd -= 1 }
        guard ByteScan.allFieldValueBytes(bytes, valueStart..<valueEnd) else {
            throw HTTPParseError(.badFieldValue, "invalid character in the value of a field")
        }
        return (line.lowerBound..<colon, valueStart..<valueEnd)
    }

    // MARK: - Text

    static func ascii(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// ISO-8859-1: one scalar per byte, so obs-text is carried unchanged.
    static func latin1(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[range])
        if slice.allSatisfy({ $0 < 0x80 }) {
            return String(decoding: slice, as: UTF8.self)
        }
        var scalars = String.UnicodeScalarView()
        for byte in slice { scalars.append(Unicode.Scalar(byte)) }
        return String(scalars)
    }
}

let CR: UInt8 = 0x0D
let LF: UInt8 = 0x0A
let SP: UInt8 = 0x20
let HTAB: UInt8 = 0x09
let COLON: UInt8 = 0x3A

/// RFC 9110 character classes, as 256-entry tables so the hot path is one load per byte.
public enum CharacterClass {
    /// tchar (RFC 9110 §5.6.2) as two 64-bit masks over 0-127: a shift and a test per byte, with
    /// no table to initialise (a `static let` array cost a `swift_once` and a bounds check per byte).
    /// Bytes 0-63: `!#$%&'*+-.` and the digits; 64-127: the letters and `^_`|~`.
    private static let tokenMaskLow: UInt64 = 0x03FF_6CFA_0000_0000
    private static let tokenMaskHigh: UInt64 = 0x57FF_FFFF_C7FF_FFFE

    @inline(__always) public static func isTokenChar(_ byte: UInt8) -> Bool {
        byte < 64 ? tokenMaskLow >> UInt64(byte) & 1 != 0 : byte < 128 && tokenMaskHigh >> UInt64(byte - 64) & 1 != 0
    }
    @inline(__always) public static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    @inline(__always) public static func isVisible(_ byte: UInt8) -> Bool { byte >= 0x21 && byte <= 0x7E }
    /// field-vchar / SP / HTAB, with obs-text (0x80-0xFF) allowed.
    @inline(__always) public static func isFieldValueChar(_ byte: UInt8) -> Bool {
        byte == SP || byte == HTAB || (byte >= 0x21 && byte != 0x7F)
    }

    @inline(__always) public static func isAlpha(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    static func isAlnum(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    public static func isToken(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenChar)
    }
}
