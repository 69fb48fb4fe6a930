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
        var arrays = HeadArrays()
        return parseRequest(bytes, maxHeadBytes: maxHeadBytes, arrays: &arrays)
    }

    /// The head's fields are kept in `arrays`, which the head before left there (`HeadArrays`).
    public static func parseRequest(_ bytes: UnsafeRawBufferPointer, maxHeadBytes: Int, arrays: inout HeadArrays) -> HeadParse<RequestHead> {
        // RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request-line.
        var start = 0
        while start + 1 < bytes.count, bytes[start] == CR, bytes[start + 1] == LF { start += 2 }
        let usual = UsualRequestLine(bytes, from: start, limit: min(bytes.count, maxHeadBytes))
        // The usual line's target is copied with the fields: no String is made of it.
        var fieldLines = FieldLines(slots: arrays.takeSlots(), origin: usual.map { $0.methodEnd + 1 })
        defer { arrays.keep(slots: fieldLines.takeSlots()) }
        switch scanLines(bytes, from: start, startLineEnd: usual?.end, maxHeadBytes: maxHeadBytes, into: &fieldLines) {
        case .incomplete: return .incomplete
        case .invalid(let error): return .invalid(error)
        case .complete(let startLine, let end):
            do {
                let (method, targetRange, version) = try usual?.parts(bytes) ?? parseRequestLine(bytes, startLine)
                let (headers, target) = try fieldLines.requestHeaders(bytes, target: targetRange, arrays: &arrays)
                // RFC 9112 §3.2: more than one Host line is refused, not resolved by a guess.
                guard headers.count(of: .host) <= 1 else {
                    return .invalid(HTTPParseError(.badFieldValue, "more than one Host field"))
                }
                return .complete(RequestHead(method: method, targetText: target, version: version, headers: headers), consumed: end)
            } catch let error as HTTPParseError {
                return .invalid(error)
            } catch {
                return .invalid(HTTPParseError(.badStartLine, "unparseable request"))
            }
        }
    }

    public static func parseResponse(_ bytes: UnsafeRawBufferPointer, maxHeadBytes: Int) -> HeadParse<ResponseHead> {
        var arrays = HeadArrays()
        return parseResponse(bytes, maxHeadBytes: maxHeadBytes, arrays: &arrays)
    }

    /// The head's fields are kept in `arrays`, which the head before left there (`HeadArrays`).
    public static func parseResponse(_ bytes: UnsafeRawBufferPointer, maxHeadBytes: Int, arrays: inout HeadArrays) -> HeadParse<ResponseHead> {
        var fieldLines = FieldLines(slots: arrays.takeSlots())
        defer { arrays.keep(slots: fieldLines.takeSlots()) }
        switch scanLines(bytes, from: 0, startLineEnd: nil, maxHeadBytes: maxHeadBytes, into: &fieldLines) {
        case .incomplete: return .incomplete
        case .invalid(let error): return .invalid(error)
        case .complete(let startLine, let end):
            do {
                let (version, status, reason) = try parseStatusLine(bytes, startLine)
                let headers = try fieldLines.headers(bytes, arrays: &arrays)
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
        /// The start line (without CRLF) and the end of the head.
        case complete(startLine: Range<Int>, end: Int)
    }

    /// Finds the start line and the end of the head, checking the line structure, and checks
    /// and locates each field line in the same walk: every byte of a field line is looked at
    /// once, by the scan that also finds where the line ends. `startLineEnd`, when given, is
    /// where the start line's first CR or LF is, already known.
    private static func scanLines(_ bytes: UnsafeRawBufferPointer, from start: Int, startLineEnd: Int?, maxHeadBytes: Int,
                                  into fieldLines: inout FieldLines) -> Scan {
        // The limit counts from the first byte, leading empty lines included, so that
        // no shape of input can keep the parser waiting for ever.
        var startLine: Range<Int>?
        var lineStart = start
        let limit = min(bytes.count, maxHeadBytes)
        while lineStart < limit {
            let lineEnd: Int
            if startLine == nil {
                lineEnd = startLineEnd ?? ByteScan.firstLineBreak(bytes, from: lineStart, limit: limit)
            } else if bytes[lineStart] == CR || bytes[lineStart] == LF {
                lineEnd = lineStart
            } else {
                lineEnd = fieldLines.scanLine(bytes, from: lineStart, limit: limit)
            }
            guard lineEnd < limit else { break }
            if bytes[lineEnd] == LF {
                return .invalid(HTTPParseError(.bareLF, "bare LF in the message head"))
            }
            guard lineEnd + 1 < limit else { break }
            guard bytes[lineEnd + 1] == LF else {
                return .invalid(HTTPParseError(.bareCR, "bare CR in the message head"))
            }
            if lineEnd == lineStart {
                guard let startLine else {
                    return .invalid(HTTPParseError(.badStartLine, "empty start line"))
                }
                fieldLines.end(at: lineEnd)
                return .complete(startLine: startLine, end: lineEnd + 2)
            }
            if startLine == nil {
                startLine = lineStart..<lineEnd
                fieldLines.begin(at: lineEnd + 2)
            }
            lineStart = lineEnd + 2
        }
        if bytes.count >= maxHeadBytes {
            return .invalid(HTTPParseError(.headTooLarge, "message head larger than \(maxHeadBytes) bytes"))
        }
        return .incomplete
    }

    // MARK: - Start lines

    private static func parseRequestLine(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws -> (String, Range<Int>, HTTPVersion) {
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
        return (method(bytes, methodRange), targetRange, version)
    }

    /// The usual methods as literals: no decoding and no validation of bytes just checked.
    static func method(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
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
        // Usually the version's eight bytes and a space. (Should a space come earlier, the
        // version is refused the same way whichever space it is cut at.)
        let firstSpace = line.count > 8 && bytes[line.lowerBound + 8] == SP
            ? line.lowerBound + 8 : ByteScan.firstIndex(of: SP, in: bytes, from: line.lowerBound, limit: line.upperBound)
        guard firstSpace < line.upperBound else {
            throw HTTPParseError(.badStartLine, "status line has no status code")
        }
        let version = try parseVersion(bytes, line.lowerBound..<firstSpace)
        let codeStart = firstSpace + 1
        let codeEnd = codeStart + 3
        guard codeEnd <= line.upperBound, CharacterClass.isDigit(bytes[codeStart]), CharacterClass.isDigit(bytes[codeStart + 1]),
              CharacterClass.isDigit(bytes[codeStart + 2]), codeEnd == line.upperBound || bytes[codeEnd] == SP else {
            throw HTTPParseError(.badStartLine, "status code must be three digits")
        }
        let status = Int(bytes[codeStart] - 0x30) * 100 + Int(bytes[codeStart + 1] - 0x30) * 10 + Int(bytes[codeStart + 2] - 0x30)
        let reasonStart = min(codeEnd + 1, line.upperBound)
        let reasonRange = reasonStart..<line.upperBound
        // The usual reason, as a literal (its two letters need no further check).
        if reasonRange.count == 2, bytes[reasonStart] == UInt8(ascii: "O"), bytes[reasonStart + 1] == UInt8(ascii: "K") {
            return (version, status, "OK")
        }
        guard ByteScan.allFieldValueBytes(bytes, reasonRange) else {
            throw HTTPParseError(.badStartLine, "invalid character in reason phrase")
        }
        return (version, status, latin1(bytes, reasonRange))
    }

    static func parseVersion(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws -> HTTPVersion {
        guard let version = anyVersion(bytes, range) else {
            throw HTTPParseError(.badStartLine, "invalid HTTP version")
        }
        guard version.major == 1 else {
            throw HTTPParseError(.unsupportedVersion, "HTTP version \(version) is not supported")
        }
        return version
    }

    /// HTTP-version = "HTTP" "/" DIGIT "." DIGIT (case-sensitive), any digits: as one word,
    /// against "HTTP/?.?" with the digits masked out, then the two digits.
    @inline(__always) static func anyVersion(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> HTTPVersion? {
        let shape: UInt64 = 0x002E_002F_5054_5448
        let digits: UInt64 = 0xFF00_FF00_0000_0000
        guard range.count == 8 else { return nil }
        let word = UInt64(littleEndian: bytes.baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: range.lowerBound, as: UInt64.self))
        let major = UInt8(truncatingIfNeeded: word >> 40), minor = UInt8(truncatingIfNeeded: word >> 56)
        guard word & ~digits == shape, CharacterClass.isDigit(major), CharacterClass.isDigit(minor) else { return nil }
        return HTTPVersion(major: Int(major - 0x30), minor: Int(minor - 0x30))
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
