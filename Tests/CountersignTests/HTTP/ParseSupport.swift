import XCTest
@testable import CountersignHTTP

/// Helpers that run the parsers over literal messages and fail the calling test with a
/// readable message when the outcome is not the expected one.
enum Wire {
    /// Text where every character is one byte (ISO-8859-1), so "\u{E9}" is the byte 0xE9.
    static func bytes(_ text: String) -> [UInt8] {
        text.unicodeScalars.map { scalar in
            precondition(scalar.value < 0x100, "test input must be ISO-8859-1")
            return UInt8(scalar.value)
        }
    }

    static func request(_ bytes: [UInt8], maxHeadBytes: Int = 65536) -> HeadParse<RequestHead> {
        bytes.withUnsafeBytes { HeadParser.parseRequest($0, maxHeadBytes: maxHeadBytes) }
    }

    static func response(_ bytes: [UInt8], maxHeadBytes: Int = 65536) -> HeadParse<ResponseHead> {
        bytes.withUnsafeBytes { HeadParser.parseResponse($0, maxHeadBytes: maxHeadBytes) }
    }
}

extension XCTestCase {
    /// Parses a request that must be accepted whole; returns its head.
    @discardableResult
    func acceptRequest(_ text: String, maxHeadBytes: Int = 65536,
                       file: StaticString = #filePath, line: UInt = #line) -> RequestHead? {
        let raw = Wire.bytes(text)
        switch Wire.request(raw, maxHeadBytes: maxHeadBytes) {
        case .complete(let head, let consumed):
            XCTAssertEqual(consumed, raw.count, "the whole head should be consumed", file: file, line: line)
            return head
        case .incomplete:
            XCTFail("expected a complete request, got .incomplete for \(text.debugDescription)", file: file, line: line)
        case .invalid(let error):
            XCTFail("expected a complete request, got refusal \"\(error.detail)\" for \(text.debugDescription)", file: file, line: line)
        }
        return nil
    }

    /// Parses a request head that must be refused with `kind`; returns the error.
    @discardableResult
    func refuseRequest(_ text: String, _ kind: HTTPParseError.Kind, status: Int = 400, maxHeadBytes: Int = 65536,
                       file: StaticString = #filePath, line: UInt = #line) -> HTTPParseError? {
        switch Wire.request(Wire.bytes(text), maxHeadBytes: maxHeadBytes) {
        case .invalid(let error):
            XCTAssertEqual(error.kind, kind, "for \(text.debugDescription): \(error.detail)", file: file, line: line)
            XCTAssertEqual(error.status, status, "for \(text.debugDescription)", file: file, line: line)
            XCTAssertFalse(error.detail.isEmpty, "a refusal must say why", file: file, line: line)
            return error
        case .complete(let head, _):
            XCTFail("expected refusal \(kind), but \(text.debugDescription) was accepted as \(head)", file: file, line: line)
        case .incomplete:
            XCTFail("expected refusal \(kind), got .incomplete for \(text.debugDescription)", file: file, line: line)
        }
        return nil
    }

    @discardableResult
    func acceptResponse(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> ResponseHead? {
        let raw = Wire.bytes(text)
        switch Wire.response(raw) {
        case .complete(let head, let consumed):
            XCTAssertEqual(consumed, raw.count, "the whole head should be consumed", file: file, line: line)
            return head
        case .incomplete:
            XCTFail("expected a complete response, got .incomplete for \(text.debugDescription)", file: file, line: line)
        case .invalid(let error):
            XCTFail("expected a complete response, got refusal \"\(error.detail)\" for \(text.debugDescription)", file: file, line: line)
        }
        return nil
    }

    func refuseResponse(_ text: String, _ kind: HTTPParseError.Kind, file: StaticString = #filePath, line: UInt = #line) {
        switch Wire.response(Wire.bytes(text)) {
        case .invalid(let error):
            XCTAssertEqual(error.kind, kind, "for \(text.debugDescription): \(error.detail)", file: file, line: line)
        case .complete(let head, _):
            XCTFail("expected refusal \(kind), but \(text.debugDescription) was accepted as \(head)", file: file, line: line)
        case .incomplete:
            XCTFail("expected refusal \(kind), got .incomplete for \(text.debugDescription)", file: file, line: line)
        }
    }

    /// Decides the framing of a request that parses cleanly.
    func requestFraming(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> BodyFraming {
        let head = try XCTUnwrap(acceptRequest(text, file: file, line: line), file: file, line: line)
        return try BodyFraming.forRequest(head)
    }

    /// Expects `body` to throw an HTTPParseError of `kind` (and the matching client status).
    func assertRefusal<T>(_ kind: HTTPParseError.Kind, status: Int = 400, _ body: @autoclosure () throws -> T,
                          file: StaticString = #filePath, line: UInt = #line) {
        do {
            let value = try body()
            XCTFail("expected refusal \(kind), got \(value)", file: file, line: line)
        } catch let error as HTTPParseError {
            XCTAssertEqual(error.kind, kind, error.detail, file: file, line: line)
            XCTAssertEqual(error.status, status, error.detail, file: file, line: line)
        } catch {
            XCTFail("unexpected error type \(error)", file: file, line: line)
        }
    }
}

/// SplitMix64: the randomised tests run from a fixed seed, so any failure is reproducible.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
