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
        if RequestMethod.equal(requestMethod, "HEAD") || head.isInterim || head.status == 204 || head.status == 304 {
            return .none
        }
        if RequestMethod.equal(requestMethod, "CONNECT"), (200..<300).contains(head.status) { return .none }
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
        // Scans the stored bytes in place, through their buffer: this runs for every request
        // and response (over slices, with a generic digit loop, it cost ~340 instructions).
        var result: UInt64?
        var fault: HTTPParseError?
        _ = headers.anyValue(of: .contentLength) { value in
            // Every comma-separated element, empty ones included (they are refused).
            var start = 0
            while true {
                var end = start
                while end < value.count, value[end] != UInt8(ascii: ",") { end += 1 }
                guard let number = decimal(UnsafeBufferPointer(rebasing: value[start..<end])) else {
                    fault = HTTPParseError(.badFraming, "invalid Content-Length")
                    return true
                }
                if let result, result != number {
                    fault = HTTPParseError(.badFraming, "differing Content-Length values")
                    return true
                }
                result = number
                guard end < value.count else { return false }
                start = end + 1
            }
        }
        if let fault { throw fault }
        return result
    }

    /// OWS, 1*DIGIT, OWS, at most 19 digits (so it fits in a UInt64); nil for anything else.
    private static func decimal(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        var index = 0
        while index < bytes.count, bytes[index] == SP || bytes[index] == HTAB { index += 1 }
        var number: UInt64 = 0
        var digits = 0
        while index < bytes.count, CharacterClass.isDigit(bytes[index]) {
            guard digits < 19 else { return nil }
            number = number * 10 + UInt64(bytes[index] - UInt8(ascii: "0"))
            digits += 1
            index += 1
        }
        while index < bytes.count, bytes[index] == SP || bytes[index] == HTAB { index += 1 }
        guard digits > 0, index == bytes.count else { return nil }
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
