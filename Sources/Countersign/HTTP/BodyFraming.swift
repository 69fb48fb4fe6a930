/// How a message body is delimited (RFC 9112 §6).
public enum BodyFraming: Equatable, Sendable {
    case none
    case contentLength(UInt64)
    case chunked
    /// Response only: the body ends when the server closes.
    case untilClose

    /// Decides a request's framing, refusing every ambiguous shape a smuggler relies on.
    public static func forRequest(_ head: RequestHead) throws -> BodyFraming {
        let hasTransferEncoding = head.headers.contains(.transferEncoding)
        let contentLength = try parseContentLength(head.headers)
        if hasTransferEncoding {
            if contentLength != nil {
                throw HTTPParseError(.badFraming, "both Content-Length and Transfer-Encoding")
            }
            if head.version == .http10 {
                throw HTTPParseError(.badFraming, "Transfer-Encoding in an HTTP/1.0 request")
            }
            try validateCodings(head.headers.listElements(.transferEncoding))
            return .chunked
        }
        if let contentLength { return contentLength == 0 ? .none : .contentLength(contentLength) }
        return .none
    }

    /// Decides a response's framing given the request it answers.
    public static func forResponse(_ head: ResponseHead, requestMethod: String) throws -> BodyFraming {
        if requestMethod == "HEAD" || head.isInterim || head.status == 204 || head.status == 304 {
            return .none
        }
        if requestMethod == "CONNECT", (200..<300).contains(head.status) { return .none }
        if head.headers.contains(.transferEncoding) {
            if head.headers.contains(.contentLength) {
                throw HTTPParseError(.badFraming, "upstream response has both Content-Length and Transfer-Encoding")
            }
            let codings = head.headers.listElements(.transferEncoding)
            guard let last = codings.last, ASCIICase.equal(last, "chunked") else { return .untilClose }
            try validateCodings(codings)
            return .chunked
        }
        if let length = try parseContentLength(head.headers) { return .contentLength(length) }
        return .untilClose
    }

    /// Content-Length as a list of identical decimal values (RFC 9110 §8.6); nil when absent.
    static func parseContentLength(_ headers: HeaderFields) throws -> UInt64? {
        // Scans the bytes in place: this runs for every request and response.
        var result: UInt64?
        var next = headers.firstIndex(.contentLength)
        while let index = next {
            next = headers.firstIndex(.contentLength, from: index + 1)
            // Every comma-separated element, empty ones included (they are refused).
            let value = headers.valueBytes(index)
            var start = value.startIndex
            while true {
                let end = value[start...].firstIndex(of: UInt8(ascii: ",")) ?? value.endIndex
                let number = try decimal(value[start..<end].drop { $0 == 0x20 || $0 == 0x09 })
                if let result, result != number {
                    throw HTTPParseError(.badFraming, "differing Content-Length values")
                }
                result = number
                guard end < value.endIndex else { break }
                start = end + 1
            }
        }
        return result
    }

    /// 1*DIGIT with optional trailing OWS, at most 19 digits (so it fits in a UInt64).
    private static func decimal(_ bytes: some Sequence<UInt8>) throws -> UInt64 {
        var number: UInt64 = 0
        var digits = 0
        var trailing = false
        for byte in bytes {
            if byte == 0x20 || byte == 0x09 {
                trailing = true
                continue
            }
            guard !trailing, CharacterClass.isDigit(byte), digits < 19 else {
                throw HTTPParseError(.badFraming, "invalid Content-Length")
            }
            number = number * 10 + UInt64(byte - UInt8(ascii: "0"))
            digits += 1
        }
        guard digits > 0 else { throw HTTPParseError(.badFraming, "invalid Content-Length") }
        return number
    }

    /// Chunked must come last and only once; the codings before it must be ones we know.
    static func validateCodings(_ codings: [String]) throws {
        guard let last = codings.last, ASCIICase.equal(last, "chunked") else {
            throw HTTPParseError(.badFraming, "Transfer-Encoding must end with chunked")
        }
        for coding in codings.dropLast() {
            if ASCIICase.equal(coding, "chunked") {
                throw HTTPParseError(.badFraming, "chunked applied more than once")
            }
            guard knownCodings.contains(where: { ASCIICase.equal($0, coding) }) else {
                throw HTTPParseError(.unsupportedTransferCoding, "unsupported transfer coding \"\(coding)\"")
            }
        }
    }

    private static let knownCodings = ["gzip", "x-gzip", "deflate", "compress", "x-compress"]
}
