@testable import CountersignHTTP

/// The head grammar HeadParser enforces, written the plain way: one byte at a time, no word
/// scans, no fast paths, no merged passes. HeadParser must give the same outcome (the head,
/// or the same error kind and detail, or "incomplete") for any bytes; tests compare the two.
enum ReferenceHeadParser {
    /// An outcome as text both parsers can be described in and compared by.
    static func request(_ bytes: [UInt8], maxHeadBytes: Int) -> String {
        var start = 0
        while start + 1 < bytes.count, bytes[start] == CR, bytes[start + 1] == LF { start += 2 }
        return parse(bytes, from: start, maxHeadBytes: maxHeadBytes) { line, fields in
            let parts = line.split(separator: SP, omittingEmptySubsequences: false)
            guard parts.count == 3 else { throw HTTPParseError(.badStartLine, "request line must be METHOD SP TARGET SP VERSION") }
            guard !parts[0].isEmpty, parts[0].allSatisfy(CharacterClass.isTokenChar) else { throw HTTPParseError(.badStartLine, "invalid method") }
            guard !parts[1].isEmpty, parts[1].allSatisfy(CharacterClass.isVisible) else { throw HTTPParseError(.badStartLine, "invalid request target") }
            let version = try self.version(Array(parts[2]))
            let located = try fields()
            guard located.filter({ ASCIICase.equal($0.name, "host".utf8) }).count <= 1 else {
                throw HTTPParseError(.badFieldValue, "more than one Host field")
            }
            return "\(text(parts[0])) \(text(parts[1])) \(version)" + describe(located)
        }
    }

    static func response(_ bytes: [UInt8], maxHeadBytes: Int) -> String {
        parse(bytes, from: 0, maxHeadBytes: maxHeadBytes) { line, fields in
            guard let space = line.firstIndex(of: SP) else { throw HTTPParseError(.badStartLine, "status line has no status code") }
            let version = try self.version(Array(line[..<space]))
            let code = Array(line[(space + 1)...].prefix(3))
            let afterCode = space + 4
            guard code.count == 3, code.allSatisfy(CharacterClass.isDigit), afterCode == line.count || line[afterCode] == SP else {
                throw HTTPParseError(.badStartLine, "status code must be three digits")
            }
            let reason = line.count > afterCode ? Array(line[(afterCode + 1)...]) : []
            guard reason.allSatisfy(CharacterClass.isFieldValueChar) else {
                throw HTTPParseError(.badStartLine, "invalid character in reason phrase")
            }
            return "\(version) \(Int(text(code))!) \(text(reason))" + describe(try fields())
        }
    }

    typealias Field = (name: [UInt8], value: [UInt8])

    /// Lines first (their structure decides before anything in them), then the start line, then
    /// the fields in order, the first fault winning.
    private static func parse(_ bytes: [UInt8], from start: Int, maxHeadBytes: Int,
                              _ head: (_ startLine: [UInt8], _ fields: () throws -> [Field]) throws -> String) -> String {
        let limit = min(bytes.count, maxHeadBytes)
        var lines: [[UInt8]] = []
        var lineStart = start
        var index = start
        while index < limit {
            switch bytes[index] {
            case LF: return "invalid bareLF bare LF in the message head"
            case CR:
                guard index + 1 < limit else { return outOfBytes(bytes, maxHeadBytes) }
                guard bytes[index + 1] == LF else { return "invalid bareCR bare CR in the message head" }
                if index == lineStart {
                    guard let startLine = lines.first else { return "invalid badStartLine empty start line" }
                    do {
                        return "complete " + (try head(startLine) { try lines.dropFirst().map(field) }) + " consumed \(index + 2)"
                    } catch let error as HTTPParseError {
                        return "invalid \(error.kind) \(error.detail)"
                    } catch {
                        return "invalid \(error)"
                    }
                }
                lines.append(Array(bytes[lineStart..<index]))
                index += 2
                lineStart = index
            default:
                index += 1
            }
        }
        return outOfBytes(bytes, maxHeadBytes)
    }

    private static func outOfBytes(_ bytes: [UInt8], _ maxHeadBytes: Int) -> String {
        bytes.count >= maxHeadBytes ? "invalid headTooLarge message head larger than \(maxHeadBytes) bytes" : "incomplete"
    }

    static func field(_ line: [UInt8]) throws -> Field {
        if line[0] == SP || line[0] == HTAB { throw HTTPParseError(.obsoleteLineFolding, "obsolete line folding is not accepted") }
        var colon = 0
        while colon < line.count, line[colon] != COLON {
            if line[colon] == SP || line[colon] == HTAB {
                throw HTTPParseError(.whitespaceBeforeColon, "whitespace between field name and colon")
            }
            guard CharacterClass.isTokenChar(line[colon]) else { throw HTTPParseError(.badFieldName, "invalid character in a field name") }
            colon += 1
        }
        guard colon < line.count, colon > 0 else {
            throw HTTPParseError(.badFieldName, colon == 0 ? "empty field name" : "field line without a colon")
        }
        var value = line[(colon + 1)...]
        while let first = value.first, first == SP || first == HTAB { value = value.dropFirst() }
        while let last = value.last, last == SP || last == HTAB { value = value.dropLast() }
        guard value.allSatisfy(CharacterClass.isFieldValueChar) else {
            throw HTTPParseError(.badFieldValue, "invalid character in the value of a field")
        }
        return (Array(line[..<colon]), Array(value))
    }

    private static func version(_ bytes: [UInt8]) throws -> String {
        guard bytes.count == 8, Array(bytes[..<5]) == Array("HTTP/".utf8), CharacterClass.isDigit(bytes[5]),
              bytes[6] == UInt8(ascii: "."), CharacterClass.isDigit(bytes[7]) else {
            throw HTTPParseError(.badStartLine, "invalid HTTP version")
        }
        let version = HTTPVersion(major: Int(bytes[5] - 0x30), minor: Int(bytes[7] - 0x30))
        guard version.major == 1 else { throw HTTPParseError(.unsupportedVersion, "HTTP version \(version) is not supported") }
        return "\(version)"
    }

    /// Bytes as text, one scalar per byte (so obs-text shows as itself).
    static func text(_ bytes: some Sequence<UInt8>) -> String {
        String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    static func describe(_ fields: [Field]) -> String {
        fields.map { " [\(text($0.name)): \(text($0.value))]" }.joined()
    }

    // MARK: HeadParser's outcomes in the same words

    static func describe(_ parse: HeadParse<RequestHead>) -> String {
        switch parse {
        case .incomplete: return "incomplete"
        case .invalid(let error): return "invalid \(error.kind) \(error.detail)"
        case .complete(let head, let consumed):
            return "complete \(head.method) \(head.target) \(head.version)" + describe(head.headers) + " consumed \(consumed)"
        }
    }

    static func describe(_ parse: HeadParse<ResponseHead>) -> String {
        switch parse {
        case .incomplete: return "incomplete"
        case .invalid(let error): return "invalid \(error.kind) \(error.detail)"
        case .complete(let head, let consumed):
            return "complete \(head.version) \(head.status) \(head.reason)" + describe(head.headers) + " consumed \(consumed)"
        }
    }

    private static func describe(_ headers: HeaderFields) -> String {
        describe((0..<headers.count).map { (Array(headers.nameBytes($0)), Array(headers.valueBytes($0))) })
    }
}
